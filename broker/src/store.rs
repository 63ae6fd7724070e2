//! The farm's Redis vocabulary: content-addressed artifacts (`farm:art:<sha256>`), the active
//! tournaments workers serve (`farm:tournaments`), each tournament's completed match numbers
//! (`farm:t:<id>:done`, for de-duplication; only ever a subset of what the coordinator made
//! durable, and reset from its log at every start), dead-letter reports (`farm:t:<id>:dead`),
//! the coordinator's ownership lease of a tournament (`farm:t:<id>:owner`, expiring) and worker
//! heartbeats (`farm:worker:<id>`, expiring) and the tournaments that quarantined a worker,
//! with their evidence (`farm:quarantine:<worker id>`, a hash of tournament → evidence), and
//! the terms each active tournament is served on (`farm:terms`, tournament → [`Terms`] JSON).

use std::collections::HashMap;

use redis::aio::ConnectionManager;
use redis::{AsyncCommands, RedisError};
use serde::{Deserialize, Serialize};

use crate::{redact, Terms, HEARTBEAT_TTL};

/// What went wrong talking to Redis (URLs in messages have their password hidden).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("bad Redis URL {url}")]
    BadUrl {
        url: String,
        #[source]
        source: RedisError,
    },
    #[error("connecting to Redis at {url}")]
    Connect {
        url: String,
        #[source]
        source: RedisError,
    },
    /// A command failed (connection lost, wrong type...).
    #[error(transparent)]
    Redis(#[from] RedisError),
    /// A heartbeat could not be written as JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// What a worker announces about itself.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Heartbeat {
    pub id: String,
    pub host: String,
    pub slots: usize,
    /// Match numbers (with tournament prefix) being played now.
    pub current: Vec<String>,
    pub version: String,
    /// What the worker is doing; absent in heartbeats of workers older than the field (ready).
    #[serde(default)]
    pub state: WorkerState,
    /// The worker's speed signature from its self-test (reference bot-turns per second);
    /// absent before the self-test and from workers older than the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
}

/// A live worker's phase, as its heartbeat says.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerState {
    /// Taking jobs.
    #[default]
    Ready,
    /// Running its self-test: takes no job yet.
    SelfTest,
}

/// A connection to the farm's Redis (reconnects by itself).
#[derive(Clone)]
pub struct Store {
    con: ConnectionManager,
}

pub fn artifact_key(sha256: &str) -> String {
    format!("farm:art:{sha256}")
}

fn done_key(tournament: &str) -> String {
    format!("farm:t:{tournament}:done")
}

fn owner_key(tournament: &str) -> String {
    format!("farm:t:{tournament}:owner")
}

fn dead_key(tournament: &str) -> String {
    format!("farm:t:{tournament}:dead")
}

const TOURNAMENTS: &str = "farm:tournaments";
const TERMS: &str = "farm:terms";

/// What a worker follows, read in one round trip.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Followed {
    /// The announced tournaments with the terms they are served on (sorted by id).
    pub tournaments: Vec<(String, Terms)>,
    /// The tournaments that quarantined the worker, with their evidence (sorted).
    pub quarantined: Vec<(String, String)>,
}

fn quarantine_key(worker: &str) -> String {
    format!("farm:quarantine:{worker}")
}

impl Store {
    pub async fn connect(url: &str) -> Result<Store> {
        let client = redis::Client::open(url).map_err(|source| StoreError::BadUrl {
            url: redact(url),
            source,
        })?;
        let con = client
            .get_connection_manager()
            .await
            .map_err(|source| StoreError::Connect {
                url: redact(url),
                source,
            })?;
        Ok(Store { con })
    }

    /// Upload bytes under their hash unless already there; returns true when written.
    pub async fn put_artifact(&self, sha256: &str, bytes: &[u8], overwrite: bool) -> Result<bool> {
        let mut con = self.con.clone();
        let key = artifact_key(sha256);
        if overwrite {
            let _: () = con.set(&key, bytes).await?;
            Ok(true)
        } else {
            Ok(con.set_nx(&key, bytes).await?)
        }
    }

    pub async fn has_artifact(&self, sha256: &str) -> Result<bool> {
        let mut con = self.con.clone();
        Ok(con.exists(artifact_key(sha256)).await?)
    }

    pub async fn get_artifact(&self, sha256: &str) -> Result<Option<Vec<u8>>> {
        let mut con = self.con.clone();
        Ok(con.get(artifact_key(sha256)).await?)
    }

    /// Announce a tournament to the workers, served on `terms`.
    pub async fn register(&self, tournament: &str, terms: &Terms) -> Result<()> {
        let mut con = self.con.clone();
        let json = serde_json::to_string(terms)?;
        let _: () = redis::pipe()
            .atomic()
            .hset(TERMS, tournament, json)
            .ignore()
            .sadd(TOURNAMENTS, tournament)
            .ignore()
            .query_async(&mut con)
            .await?;
        Ok(())
    }

    pub async fn unregister(&self, tournament: &str) -> Result<()> {
        let mut con = self.con.clone();
        let _: () = redis::pipe()
            .srem(TOURNAMENTS, tournament)
            .ignore()
            .hdel(TERMS, tournament)
            .ignore()
            .query_async(&mut con)
            .await?;
        Ok(())
    }

    pub async fn tournaments(&self) -> Result<Vec<String>> {
        let mut con = self.con.clone();
        Ok(con.smembers(TOURNAMENTS).await?)
    }

    /// What a worker follows: the announced tournaments with their terms and those that
    /// quarantined `worker`, in one round trip, since every worker asks it each refresh.
    pub async fn following(&self, worker: &str) -> Result<Followed> {
        let mut con = self.con.clone();
        type Read = (Vec<String>, HashMap<String, String>, Vec<(String, String)>);
        let (ids, terms, mut quarantined): Read = redis::pipe()
            .smembers(TOURNAMENTS)
            .hgetall(TERMS)
            .hgetall(quarantine_key(worker))
            .query_async(&mut con)
            .await?;
        let mut tournaments: Vec<(String, Terms)> = ids
            .into_iter()
            .map(|t| {
                let terms = Terms::parse(terms.get(&t).map(String::as_str));
                (t, terms)
            })
            .collect();
        tournaments.sort_by(|a, b| a.0.cmp(&b.0));
        quarantined.sort();
        Ok(Followed {
            tournaments,
            quarantined,
        })
    }

    pub async fn mark_done(&self, tournament: &str, numbers: &[u64]) -> Result<()> {
        if numbers.is_empty() {
            return Ok(());
        }
        let mut con = self.con.clone();
        let _: () = con.sadd(done_key(tournament), numbers).await?;
        Ok(())
    }

    /// Make the completed set exactly `numbers` (what the coordinator's log holds), dropping
    /// whatever an earlier run of the same tournament left there.
    pub async fn reset_done(&self, tournament: &str, numbers: &[u64]) -> Result<()> {
        let mut con = self.con.clone();
        let mut pipe = redis::pipe();
        pipe.atomic().del(done_key(tournament)).ignore();
        for chunk in numbers.chunks(4096) {
            pipe.sadd(done_key(tournament), chunk).ignore();
        }
        let _: () = pipe.query_async(&mut con).await?;
        Ok(())
    }

    /// Take a match out of the completed set (it is being played again).
    pub async fn undo_done(&self, tournament: &str, number: u64) -> Result<()> {
        let mut con = self.con.clone();
        let _: () = con.srem(done_key(tournament), number).await?;
        Ok(())
    }

    /// Claim or renew the tournament's ownership lease for `holder` (one coordinator per
    /// tournament): Ok(None) when held now, Ok(Some(other)) when another holder has it.
    pub async fn claim_owner(
        &self,
        tournament: &str,
        holder: &str,
        ttl: std::time::Duration,
    ) -> Result<Option<String>> {
        let mut con = self.con.clone();
        let key = owner_key(tournament);
        let ms = ttl.as_millis().max(1) as u64;
        let set: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(holder)
            .arg("NX")
            .arg("PX")
            .arg(ms)
            .query_async(&mut con)
            .await?;
        if set.is_some() {
            return Ok(None);
        }
        let now: Option<String> = con.get(&key).await?;
        match now {
            Some(h) if h == holder => {
                let _: () = con.pexpire(&key, ms as i64).await?;
                Ok(None)
            }
            Some(other) => Ok(Some(other)),
            // Expired between the two commands: try once more.
            None => Ok(redis::cmd("SET")
                .arg(&key)
                .arg(holder)
                .arg("NX")
                .arg("PX")
                .arg(ms)
                .query_async::<Option<String>>(&mut con)
                .await?
                .map_or(Some("another coordinator".to_string()), |_| None)),
        }
    }

    /// Give the ownership lease up (if `holder` still has it).
    pub async fn release_owner(&self, tournament: &str, holder: &str) -> Result<()> {
        let mut con = self.con.clone();
        let key = owner_key(tournament);
        let now: Option<String> = con.get(&key).await?;
        if now.as_deref() == Some(holder) {
            let _: () = con.del(&key).await?;
        }
        Ok(())
    }

    pub async fn is_done(&self, tournament: &str, number: u64) -> Result<bool> {
        let mut con = self.con.clone();
        Ok(con.sismember(done_key(tournament), number).await?)
    }

    pub async fn add_dead(&self, tournament: &str, entry: &str) -> Result<()> {
        let mut con = self.con.clone();
        let _: () = con.rpush(dead_key(tournament), entry).await?;
        Ok(())
    }

    pub async fn dead(&self, tournament: &str) -> Result<Vec<String>> {
        let mut con = self.con.clone();
        Ok(con.lrange(dead_key(tournament), 0, -1).await?)
    }

    /// Forget a finished tournament's bookkeeping.
    pub async fn forget(&self, tournament: &str) -> Result<()> {
        let mut con = self.con.clone();
        let _: () = con.srem(TOURNAMENTS, tournament).await?;
        let _: () = con.hdel(TERMS, tournament).await?;
        let _: () = con
            .del(&[
                done_key(tournament),
                dead_key(tournament),
                owner_key(tournament),
            ])
            .await?;
        Ok(())
    }

    /// Tournament `tournament` quarantined `worker` (`evidence` says why): the worker takes
    /// no more of its jobs until released.
    pub async fn quarantine(&self, tournament: &str, worker: &str, evidence: &str) -> Result<()> {
        let mut con = self.con.clone();
        let _: () = con
            .hset(quarantine_key(worker), tournament, evidence)
            .await?;
        Ok(())
    }

    /// Release `worker` from the quarantine of `tournament`, or of every tournament when None;
    /// returns the tournaments it was released from.
    pub async fn release(&self, worker: &str, tournament: Option<&str>) -> Result<Vec<String>> {
        let mut con = self.con.clone();
        let key = quarantine_key(worker);
        let held: Vec<String> = con.hkeys(&key).await?;
        let gone: Vec<String> = held
            .into_iter()
            .filter(|t| tournament.is_none_or(|x| x == t))
            .collect();
        if !gone.is_empty() {
            let _: () = con.hdel(&key, &gone).await?;
        }
        Ok(gone)
    }

    /// The tournaments that quarantined `worker`, with their evidence.
    pub async fn quarantined_by(&self, worker: &str) -> Result<Vec<(String, String)>> {
        let mut con = self.con.clone();
        let mut v: Vec<(String, String)> = con.hgetall(quarantine_key(worker)).await?;
        v.sort();
        Ok(v)
    }

    /// Every quarantined worker: (worker, tournament, evidence), sorted.
    pub async fn quarantines(&self) -> Result<Vec<(String, String, String)>> {
        let mut con = self.con.clone();
        let keys = self.keys("farm:quarantine:*").await?;
        let mut out = Vec::new();
        for k in keys {
            let worker = k.trim_start_matches("farm:quarantine:").to_string();
            let entries: Vec<(String, String)> = con.hgetall(&k).await?;
            out.extend(entries.into_iter().map(|(t, e)| (worker.clone(), t, e)));
        }
        out.sort();
        Ok(out)
    }

    pub async fn heartbeat(&self, hb: &Heartbeat) -> Result<()> {
        let mut con = self.con.clone();
        let json = serde_json::to_string(hb)?;
        let _: () = con
            .set_ex(
                format!("farm:worker:{}", hb.id),
                json,
                HEARTBEAT_TTL.as_secs(),
            )
            .await?;
        Ok(())
    }

    pub async fn drop_heartbeat(&self, id: &str) -> Result<()> {
        let mut con = self.con.clone();
        let _: () = con.del(format!("farm:worker:{id}")).await?;
        Ok(())
    }

    /// Live workers (heartbeats not yet expired), read in one round trip after the key scan.
    pub async fn workers(&self) -> Result<Vec<Heartbeat>> {
        let keys = self.keys("farm:worker:*").await?;
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut con = self.con.clone();
        let values: Vec<Option<String>> =
            redis::cmd("MGET").arg(&keys).query_async(&mut con).await?;
        let mut out: Vec<Heartbeat> = values
            .into_iter()
            .flatten()
            .filter_map(|v| serde_json::from_str(&v).ok())
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    /// Every key matching `pattern` (SCAN, so a large keyspace does not block Redis).
    async fn keys(&self, pattern: &str) -> Result<Vec<String>> {
        let mut con = self.con.clone();
        let mut it = con.scan_match::<_, String>(pattern).await?;
        let mut keys = Vec::new();
        while let Some(k) = it.next_item().await {
            keys.push(k);
        }
        Ok(keys)
    }
}
