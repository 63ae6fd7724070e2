//! One broker session of the worker: connect, follow the tournaments announced in Redis (and
//! their terms), take a job (`basic.get`, the served queues in the order their shares and
//! priorities give, `shares`) whenever a slot is free, backing off
//! while the queues are empty until a coordinator's wake-up (`broker::wake`), admit it
//! (signature, tournament, referee version, pin, not already completed) or refuse it to the
//! dead-letter queue with the reason, and deliver the outbox. A refusal of a job signed with the
//! farm key is itself signed (a [`Refusal`] naming the job's publication): only such a refusal
//! can fail a match; a job that does not verify goes to the dead-letter queue as it came, to be
//! listed. A session ends with Ok after a
//! graceful stop, with a [`SessionError`] when the connection broke (the caller reconnects).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lapin::message::Delivery;
use lapin::options::*;
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{Channel, Connection};
use tokio::task::JoinSet;

use broker::{connect, persistent, wake, Names, Terms, REASON_HEADER};
use shared::codec;
use shared::msg::{Job, Posting, Refusal};

use super::outbox::{deliver, play};
use super::{Chain, Ctx, SessionError, Taken};

type Result<T, E = SessionError> = std::result::Result<T, E>;

async fn open_channel(conn: &Connection) -> Result<Channel> {
    let ch = conn.create_channel().await?;
    ch.confirm_select(ConfirmSelectOptions::default()).await?;
    Ok(ch)
}

/// One broker connection: Ok(()) after a graceful stop, Err when the connection broke.
pub(super) async fn session(ctx: Arc<Ctx>, tasks: &mut JoinSet<()>) -> Result<()> {
    let conn = connect(&ctx.cfg.broker).await?;
    let mut ch = open_channel(&conn).await?;
    tracing::info!("connected to the broker");
    let mut wake = Wake::listen(&conn, &ctx.cfg.id).await;
    let mut following = Following::default();
    let mut listed = Instant::now() - Duration::from_secs(60);
    // Looks in a row that found no job with a slot free (the back-off of an idle worker).
    let mut empty = 0u32;
    loop {
        deliver(&ctx, &ch).await?;
        if ctx.stopping() {
            if tasks.is_empty() && ctx.outbox_len() == 0 {
                let _ = ch.close(200, "worker stopping").await;
                let _ = conn.close(200, "worker stopping").await;
                return Ok(());
            }
            tokio::select! {
                _ = ctx.finished.notified() => {},
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {},
                _ = tokio::time::sleep(Duration::from_millis(500)) => {},
            }
            continue;
        }
        // Redis is read every 500 ms, and less often as an idle worker backs off.
        let idle_max = ctx.cfg.idle_poll_max;
        if listed.elapsed() >= wake::next_poll(empty, idle_max).max(REFRESH_EVERY) {
            listed = Instant::now();
            refresh(&ctx, &mut ch, &conn, &mut following).await?;
        }
        let (mut took, mut looked) = (false, false);
        if let Ok(permit) = ctx.slots.clone().try_acquire_owned() {
            looked = true;
            let served = &mut following.served;
            if let Some(job) = take(&ctx, &mut ch, &conn, served).await? {
                tasks.spawn(play(ctx.clone(), job, permit));
                took = true;
            }
        }
        if took {
            empty = 0;
            continue;
        }
        // Busy: look again when a match ends. Idle: later and later, or when woken.
        let pause = if looked {
            empty = empty.saturating_add(1);
            wake::next_poll(empty - 1, idle_max)
        } else {
            wake::IDLE_POLL_MIN
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {},
            _ = ctx.finished.notified() => {},
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {},
            _ = ctx.stop.wait() => {},
            () = wake.next() => {
                empty = 0;
                listed = Instant::now() - REFRESH_EVERY;
            },
        }
    }
}

/// How often a worker that is not idle reads the tournaments and its quarantine from Redis.
const REFRESH_EVERY: Duration = Duration::from_millis(500);

/// A session's wake-ups from coordinators (`broker::wake`), on a channel of their own; None
/// when they cannot be had (the worker then only backs off, to at most `wake::IDLE_POLL_MAX`).
struct Wake(Option<lapin::Consumer>);

impl Wake {
    async fn listen(conn: &Connection, worker: &str) -> Wake {
        let listening = async {
            let ch = conn.create_channel().await?;
            wake::listen(&ch, worker).await
        };
        match listening.await {
            Ok(c) => Wake(Some(c)),
            Err(e) => {
                tracing::warn!(
                    "no wake-ups from the broker ({}); an idle worker looks at least every {:?}",
                    Chain(&e),
                    wake::IDLE_POLL_MAX
                );
                Wake(None)
            }
        }
    }

    /// The next wake-up; pending for ever once the consumer has ended (its channel closed).
    async fn next(&mut self) {
        use futures_lite::StreamExt;
        let Some(c) = self.0.as_mut() else {
            return std::future::pending().await;
        };
        match c.next().await {
            Some(Ok(_)) => {}
            _ => {
                tracing::warn!("wake-ups stopped (their channel closed); backing off only");
                self.0 = None;
                std::future::pending::<()>().await;
            }
        }
    }
}

/// How long a tournament announced in Redis whose queues are not on the broker (it just ended,
/// or its queues were removed by hand) is left alone before it is checked again.
const GONE_RECHECK: Duration = Duration::from_secs(10);

/// The tournaments a session follows: those served (with their terms), those found without
/// queues (by when), those that quarantined this worker (with their evidence) and those whose
/// `--min-speed` this host does not reach (with why).
#[derive(Default)]
struct Following {
    served: Vec<(Names, Terms)>,
    gone: HashMap<String, Instant>,
    quarantined: HashMap<String, String>,
    too_slow: HashMap<String, String>,
}

impl Following {
    /// The tournaments that quarantined this worker now (from Redis): logged as they change,
    /// and not served while they last.
    fn quarantined_by(&mut self, now: Vec<(String, String)>) {
        let now: HashMap<String, String> = now.into_iter().collect();
        for (t, evidence) in &now {
            if !self.quarantined.contains_key(t) {
                tracing::warn!(tournament = %t, "this worker is quarantined by the tournament ({evidence}); it takes none of its jobs until an operator runs `farm quarantine release`");
            }
        }
        for t in self.quarantined.keys() {
            if !now.contains_key(t) {
                tracing::info!(tournament = %t, "released from quarantine; serving the tournament again");
            }
        }
        self.quarantined = now;
        let q = &self.quarantined;
        self.served.retain(|(n, _)| !q.contains_key(&n.tournament));
    }

    /// The announced tournaments whose terms refuse a host of `speed`: logged as they change,
    /// and not served.
    fn too_slow_for(&mut self, announced: &[(String, Terms)], speed: Option<f64>) {
        let now: HashMap<String, String> = announced
            .iter()
            .filter_map(|(t, terms)| Some((t.clone(), terms.refuses(speed)?)))
            .collect();
        for (t, why) in &now {
            if !self.too_slow.contains_key(t) {
                tracing::warn!(tournament = %t, "not serving the tournament: {why}");
            }
        }
        self.too_slow = now;
        let slow = &self.too_slow;
        self.served
            .retain(|(n, _)| !slow.contains_key(&n.tournament));
    }
}

/// Follow the tournaments announced in Redis: check that the queues of new ones exist (only
/// the coordinator creates them), take their terms, drop ended ones, those that quarantined
/// this worker and those that ask for a faster host. A missing queue closes the channel: open another and
/// leave that tournament alone for [`GONE_RECHECK`].
async fn refresh(ctx: &Ctx, ch: &mut Channel, conn: &Connection, f: &mut Following) -> Result<()> {
    let announced = match ctx.store.following(&ctx.cfg.id).await {
        Ok(followed) => {
            f.quarantined_by(followed.quarantined);
            followed.tournaments
        }
        Err(e) => {
            tracing::warn!(
                "listing tournaments and this worker's quarantine: {}",
                Chain(&e)
            );
            return Ok(());
        }
    };
    f.too_slow_for(&announced, ctx.runner.speed);
    f.served.retain_mut(
        |(n, terms)| match announced.iter().find(|(t, _)| *t == n.tournament) {
            Some((_, now)) => {
                *terms = *now;
                true
            }
            None => false,
        },
    );
    f.gone
        .retain(|t, since| announced.iter().any(|(a, _)| a == t) && since.elapsed() < GONE_RECHECK);
    for (tid, terms) in announced {
        if f.served.iter().any(|(n, _)| n.tournament == tid)
            || f.gone.contains_key(&tid)
            || f.quarantined.contains_key(&tid)
            || f.too_slow.contains_key(&tid)
        {
            continue;
        }
        let names = Names::for_tournament(&tid);
        match names.check(ch).await {
            Ok(()) => {
                tracing::info!(queue = %names.jobs, share = terms.share, priority = terms.priority, "serving tournament");
                f.served.push((names, terms));
            }
            Err(e) if not_found(&e) => {
                tracing::info!(tournament = %tid, "announced, but its queues are gone (it ended); not served");
                f.gone.insert(tid, Instant::now());
                *ch = open_channel(conn).await?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// True when the broker answered NOT_FOUND (a queue or exchange that does not exist).
fn not_found(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(e) = next {
        if e.to_string().contains("NOT_FOUND") {
            return true;
        }
        next = e.source();
    }
    false
}

/// Take at most one job from the served queues, looking first where the shares say
/// ([`super::shares::Shares::order`]). A queue deleted under us (its tournament ended) closes the channel:
/// open another and forget that tournament.
async fn take(
    ctx: &Ctx,
    ch: &mut Channel,
    conn: &Connection,
    served: &mut Vec<(Names, Terms)>,
) -> Result<Option<Taken>> {
    let terms: Vec<(String, Terms)> = served
        .iter()
        .map(|(n, t)| (n.tournament.clone(), *t))
        .collect();
    let order = match ctx.shares.lock() {
        Ok(mut s) => s.order(&terms),
        Err(_) => (0..terms.len()).collect(),
    };
    for (pos, &k) in order.iter().enumerate() {
        let Some((names, _)) = served.get(k) else {
            continue;
        };
        let got = ch
            .basic_get(&names.jobs, BasicGetOptions { no_ack: false })
            .await;
        let msg = match got {
            Ok(Some(m)) => m,
            Ok(None) => continue,
            Err(e) if not_found(&e) => {
                tracing::info!(queue = %names.jobs, "tournament queue gone");
                served.remove(k);
                *ch = open_channel(conn).await?;
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        };
        let names = names.clone();
        let charged = match ctx.shares.lock() {
            Ok(mut s) => s.took(&terms, &order[..pos], k),
            Err(_) => 0.0,
        };
        let d = msg.delivery;
        if d.redelivered {
            if let Some(counter) = &ctx.cfg.redelivered {
                counter.inc();
            }
        }
        let admitted = admit(ctx, ch, names, d).await?;
        if admitted.is_none() {
            // Refused or already completed: no slot time used.
            if let Ok(mut s) = ctx.shares.lock() {
                s.ended(&terms[k].0, charged, 0.0);
            }
        }
        return Ok(admitted.map(|t| Taken { charged, ..t }));
    }
    Ok(None)
}

/// Check a delivery; refuse it to the dead-letter queue, drop it as already completed, or make
/// it this worker's (listed in the heartbeat, then acked).
async fn admit(ctx: &Ctx, ch: &Channel, names: Names, d: Delivery) -> Result<Option<Taken>> {
    let posting: Posting = match codec::decode(&d.data, &ctx.cfg.key) {
        Ok(p) => p,
        Err(e) => {
            // Not a job this worker can tell apart: listed by the coordinator, never counted.
            let why = format!("refused by worker {}: {e}", ctx.cfg.id);
            dead_letter(ctx, ch, &names, &d, &why, &d.data).await?;
            return Ok(None);
        }
    };
    let Posting { publication, job } = posting;
    if let Some(why) = refusal(ctx, &names, &job) {
        let refusal = Refusal {
            tournament: job.tournament.clone(),
            number: job.number,
            publication,
            worker: ctx.cfg.id.clone(),
            reason: why.clone(),
        };
        let body = codec::encode(&refusal, &ctx.cfg.key).map_err(SessionError::Sign)?;
        dead_letter(ctx, ch, &names, &d, &why, &body).await?;
        return Ok(None);
    }
    if ctx
        .store
        .is_done(&job.tournament, job.number)
        .await
        .unwrap_or(false)
    {
        tracing::debug!(number = job.number, "already completed; dropped");
        d.acker.ack(BasicAckOptions::default()).await?;
        return Ok(None);
    }
    let label = format!("{}#{}", job.tournament, job.number);
    if let Ok(mut c) = ctx.current.lock() {
        c.insert(label.clone());
    }
    // Listed before acked: the coordinator never sees the job neither queued nor held.
    ctx.beat().await;
    if let Err(e) = d.acker.ack(BasicAckOptions::default()).await {
        if let Ok(mut c) = ctx.current.lock() {
            c.remove(&label);
        }
        return Err(SessionError::Ack(e));
    }
    Ok(Some(Taken {
        names,
        job,
        label,
        charged: 0.0,
    }))
}

/// Why this worker refuses a job signed with the farm key, if it does.
fn refusal(ctx: &Ctx, names: &Names, job: &Job) -> Option<String> {
    if job.tournament != names.tournament {
        return Some(format!(
            "job of tournament {} sent to the queue of {}",
            job.tournament, names.tournament
        ));
    }
    if let Some(failure) = crate::job::unsupported(job) {
        return Some(format!("worker {}: {failure}", ctx.cfg.id));
    }
    let needs = job.game.payload().referee_package();
    if let (Some(mine), Some(needs)) = (&ctx.cfg.manifest_digest, needs) {
        if mine != needs {
            return Some(format!(
                "match {}: needs the referee package with MANIFEST digest {needs}; worker {} is pinned to {mine}",
                job.number, ctx.cfg.id
            ));
        }
    }
    None
}

/// Send `body` (a signed [`Refusal`], or the unreadable job itself) to the dead-letter exchange
/// with the reason in a header (for people reading the queue; the coordinator trusts only the
/// signed body), then ack the original.
async fn dead_letter(
    ctx: &Ctx,
    ch: &Channel,
    names: &Names,
    d: &Delivery,
    why: &str,
    body: &[u8],
) -> Result<()> {
    tracing::warn!(queue = %names.jobs, "dead-lettering a job: {why}");
    let mut headers = FieldTable::default();
    headers.insert(
        REASON_HEADER.into(),
        AMQPValue::LongString(LongString::from(why.as_bytes().to_vec())),
    );
    headers.insert(
        "x-farm-worker".into(),
        AMQPValue::LongString(LongString::from(ctx.cfg.id.as_bytes().to_vec())),
    );
    let confirm = ch
        .basic_publish(
            &names.dlx,
            "",
            BasicPublishOptions::default(),
            body,
            persistent().with_headers(headers),
        )
        .await?
        .await?;
    if !confirm.is_ack() {
        return Err(SessionError::DeadLetterRefused);
    }
    d.acker.ack(BasicAckOptions::default()).await?;
    Ok(())
}
