//! The flag groups several commands share (clap), each turned into the plain settings the
//! engine and the bot preparation take: the host's bot settings ([`SandboxArgs`] →
//! [`HostSettings`]), the match clock ([`ClockArgs`] → [`ClockSpec`]), the farm key
//! ([`KeyArgs`] → [`FarmKey`]), the cluster of a run ([`ClusterArgs`] → [`Cluster`]) and the
//! metrics endpoint ([`MetricsArgs`]). Nothing below the `cmd` layer sees a clap type.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};

use games::bomberman::clock::{ClockSpec, RULES_TURN_MS};
use sandbox::{SandboxConfig, SandboxMode};
use shared::codec::FarmKey;

use crate::botprep::{default_cache_dir, HostSettings};
use crate::cluster::Cluster;

/// `--sandbox`: which isolation bots (and proboj servers) run under.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModeArg {
    /// Full as root with CAP_SYS_ADMIN, else unprivileged.
    #[default]
    Auto,
    /// No isolation: own session, empty environment, rlimits (trusted bots, benchmarks).
    Off,
    /// No privileges needed: rlimits, no_new_privs, Landlock, seccomp, a reaping init.
    Unprivileged,
    /// Everything: cgroups, namespaces, private mounts, the uid pool, and all of unprivileged.
    /// Fails at start on a host that cannot give it (the self-test says why).
    Full,
}

impl From<ModeArg> for SandboxMode {
    fn from(m: ModeArg) -> SandboxMode {
        match m {
            ModeArg::Auto => SandboxMode::Auto,
            ModeArg::Off => SandboxMode::Off,
            ModeArg::Unprivileged => SandboxMode::Unprivileged,
            ModeArg::Full => SandboxMode::Full,
        }
    }
}

/// How bots run on this host: the sandbox mode, compile cache, cores and the uid pool.
#[derive(Args, Debug, Clone)]
pub struct SandboxArgs {
    /// Isolation of every bot (and of the compiler): auto picks full where the host allows it.
    #[arg(long, env = "FARM_SANDBOX", value_enum, default_value_t = ModeArg::Auto, value_name = "MODE")]
    pub sandbox: ModeArg,
    /// Folder for compiled bots (content-addressed; safe to share between runs).
    /// Default: /var/cache/matchfarm as root (the sandboxed compiler's uid must be able to reach
    /// it), else $XDG_CACHE_HOME/matchfarm or ~/.cache/matchfarm.
    #[arg(long, env = "FARM_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// How many bots may think at once on this host (default: number of cores).
    #[arg(long, env = "FARM_CORES", value_name = "N")]
    pub cores: Option<usize>,
    /// Where each bot's private folder (its program copy and scratch) is made. Must be on a
    /// filesystem that allows exec (a `noexec` /tmp, as Docker mounts a compose tmpfs, stops
    /// every bot: the self-test says so). Default: /dev/shm/matchfarm-scratch when the full
    /// sandbox is in force and /dev/shm is an exec tmpfs with 256 MiB free (bot start-up and
    /// teardown make and remove files there), else $TMPDIR/matchfarm-scratch.
    #[arg(long, env = "FARM_SCRATCH_DIR", value_name = "DIR")]
    pub scratch_dir: Option<PathBuf>,
    /// Folder of the per-bot uid leases (flocks). Every worker on one host must share it (mount
    /// the same host folder into every worker container), or get disjoint --uid-base ranges:
    /// bots of two workers must never run under one host uid. Default: /run/matchfarm/uids as
    /// root.
    #[arg(long, env = "FARM_UID_LEASE_DIR", value_name = "DIR")]
    pub uid_lease_dir: Option<PathBuf>,
    /// First host uid of the pool bots run under (root workers; one uid per concurrent bot).
    #[arg(
        long,
        env = "FARM_UID_BASE",
        value_name = "UID",
        default_value_t = 60001
    )]
    pub uid_base: u32,
    /// Size of the uid pool from --uid-base.
    #[arg(long, env = "FARM_UID_COUNT", value_name = "N", default_value_t = 256)]
    pub uid_count: u32,
}

impl SandboxArgs {
    /// The settings these flags describe (checked: a bad value is refused naming its flag).
    pub fn settings(&self) -> Result<HostSettings> {
        let mut sandbox = self.config()?;
        sandbox.mode = self.sandbox.into();
        if self.scratch_dir.is_none() {
            let full = sandbox.effective_mode() == SandboxMode::Full;
            let (root, why) = sandbox::scratch_root::default_root(full);
            if let Some(why) = why {
                tracing::debug!(root = %root.display(), why, "bot folders not on /dev/shm");
            }
            sandbox.scratch_root = root;
        }
        let cores = match self.cores {
            Some(n) => Some(NonZeroUsize::new(n).context("--cores must be positive")?),
            None => None,
        };
        Ok(HostSettings {
            cache_dir: self.cache_dir.clone().unwrap_or_else(default_cache_dir),
            cores,
            sandbox,
        })
    }

    fn config(&self) -> Result<SandboxConfig> {
        anyhow::ensure!(self.uid_count > 0, "--uid-count must be positive");
        anyhow::ensure!(
            self.uid_base > 0 && self.uid_base.checked_add(self.uid_count).is_some(),
            "--uid-base {} with --uid-count {} leaves the range of uids",
            self.uid_base,
            self.uid_count
        );
        let mut cfg = SandboxConfig::default();
        if let Some(d) = &self.scratch_dir {
            cfg.scratch_root = d.clone();
        }
        if let Some(d) = &self.uid_lease_dir {
            cfg.uid_lock_dir = d.clone();
        }
        cfg.uid_base = self.uid_base;
        cfg.uid_count = self.uid_count;
        Ok(cfg)
    }
}

/// The match clock of `farm run`, `farm sprt` and `farm play`: read here, by clap, and nowhere
/// else; a tournament puts it in every job (see [`crate::clock`]).
#[derive(Args, Debug, Clone, PartialEq, Eq)]
pub struct ClockArgs {
    /// Answer limit of every turn after turn 0, in milliseconds (turn 0 keeps at least the
    /// rules' 2000). The rules say 50: set more only for calibration or test suites on loaded
    /// machines, never for a real tournament.
    #[arg(
        long,
        env = "FARM_TURN_MS",
        default_value_t = RULES_TURN_MS,
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(1..=3_600_000)
    )]
    pub turn_ms: u64,
    /// Time bank: each bot gets N ms per match to draw on when a turn exceeds its limit (as
    /// Kaggle's overage time and chess clocks); a bot whose bank cannot cover a turn times out
    /// as it would without one. Recorded in every replay, and re-checked by `farm verify`.
    /// 0: no bank.
    #[arg(
        long,
        env = "FARM_TIME_BANK_MS",
        default_value_t = 0,
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(0..=86_400_000)
    )]
    pub time_bank_ms: u64,
}

impl ClockArgs {
    /// The clock as the referee and the jobs take it.
    pub fn spec(&self) -> ClockSpec {
        ClockSpec {
            turn_ms: self.turn_ms,
            bank_ms: self.time_bank_ms,
        }
    }
}

/// `--scale-clock`: a tournament's clock stated for a reference host, scaled to each worker.
#[derive(Args, Debug, Clone, Default)]
pub struct ScaleClockArgs {
    /// State --turn-ms and --time-bank-ms for a host of this speed (reference bot-turns per
    /// second, the speed signature every worker's self-test prints and publishes as
    /// farm_worker_speed): each worker plays them times SPEED / its own speed, so a slower host
    /// gets a longer clock and a bot plays alike everywhere (fishtest's scaled time control).
    /// Every replay records the scaling and `farm verify` re-derives the limits from it; part of
    /// the run's identity. Without it every worker plays the limits as given.
    #[arg(
        long,
        env = "FARM_SCALE_CLOCK",
        value_name = "SPEED",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub scale_clock: Option<u32>,
}

impl ScaleClockArgs {
    /// The tournament's clock: `clock`'s limits, stated for this reference speed if any.
    pub fn tournament(&self, clock: &ClockArgs) -> crate::clock::TournamentClock {
        crate::clock::TournamentClock {
            spec: clock.spec(),
            reference_speed: self.scale_clock,
        }
    }
}

/// The farm key (every job and report is signed with it): a file, or the key itself in the
/// environment. One clap group for every command that talks to the cluster.
#[derive(Args, Debug, Clone, Default)]
pub struct KeyArgs {
    /// File holding the farm key (HMAC); used before FARM_KEY when both are given.
    #[arg(long, env = "FARM_KEY_FILE", value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    /// The farm key itself. Prefer the environment variable or --key-file: a command-line
    /// value is visible to other users in `ps`.
    #[arg(
        long = "farm-key",
        env = "FARM_KEY",
        value_name = "KEY",
        hide_env_values = true
    )]
    pub key: Option<String>,
}

impl KeyArgs {
    /// Read the key: the file's contents without trailing whitespace, else the given key.
    pub fn load(&self) -> Result<FarmKey> {
        let bytes = match (&self.key_file, &self.key) {
            (Some(p), _) => {
                let mut b = std::fs::read(p)
                    .with_context(|| format!("reading the farm key file {}", p.display()))?;
                while b.last().is_some_and(|c| c.is_ascii_whitespace()) {
                    b.pop();
                }
                b
            }
            (None, Some(k)) => k.clone().into_bytes(),
            (None, None) => {
                bail!("cluster mode needs the farm key: give --key-file FILE or set FARM_KEY")
            }
        };
        if bytes.is_empty() {
            bail!("the farm key is empty (--key-file or FARM_KEY)");
        }
        Ok(FarmKey::new(bytes))
    }
}

/// The cluster a run dispatches to (shared by `farm run` and `farm sprt`).
#[derive(Args, Debug, Clone)]
pub struct ClusterArgs {
    /// Run on a cluster: the RabbitMQ broker (amqp://user:pass@host:5672/vhost); embedded
    /// local workers when absent.
    #[arg(long, env = "FARM_BROKER", value_name = "URL", hide_env_values = true)]
    pub broker: Option<String>,
    /// Cluster mode: the Redis holding artifacts, heartbeats and the completed set.
    #[arg(long, env = "FARM_REDIS", value_name = "URL", hide_env_values = true)]
    pub redis: Option<String>,
    #[command(flatten)]
    pub key: KeyArgs,
    /// Cluster mode: this run's share of the workers' time against the other tournaments of
    /// the same --priority on the fleet (fishtest's throughput): at 3 against another's 1 it
    /// gets three quarters of the time both want. Each worker keeps the split by slot time.
    #[arg(long, env = "FARM_SHARE", value_name = "WEIGHT", default_value_t = 1.0, value_parser = positive_share)]
    pub share: f64,
    /// Cluster mode: workers serve a tournament of a higher priority first whenever it has a
    /// job ready, whatever the shares (a ladder serves at 1 by default, tournaments at 0).
    #[arg(
        long,
        env = "FARM_PRIORITY",
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub priority: i32,
    /// Refuse hosts slower than this (reference bot-turns per second, the speed signature
    /// `farm worker --self-test` prints): on a cluster slower workers take none of this run's
    /// jobs and a report from one is refused and played elsewhere; embedded, a slower host
    /// stops the run before it starts.
    #[arg(long, env = "FARM_MIN_SPEED", value_name = "TURNS_PER_S", value_parser = positive_speed)]
    pub min_speed: Option<f64>,
}

/// `--min-speed`: a positive number of reference turns per second.
pub fn positive_speed(s: &str) -> Result<f64> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => bail!(
            "{s:?} is not a positive number of reference turns per second (see the speed \
             `farm worker --self-test` prints)"
        ),
    }
}

/// `--share`: a positive weight.
fn positive_share(s: &str) -> Result<f64> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => bail!("{s:?} is not a positive weight (e.g. 3 for three times another's 1)"),
    }
}

impl ClusterArgs {
    /// The cluster to run on (None: embedded local workers), its key loaded.
    pub fn cluster(&self) -> Result<Option<Cluster>> {
        let Some(broker) = &self.broker else {
            return Ok(None);
        };
        let redis = self
            .redis
            .clone()
            .context("cluster mode needs --redis (or FARM_REDIS)")?;
        Ok(Some(Cluster {
            broker: broker.clone(),
            redis,
            key: self.key.load()?,
            terms: broker::Terms {
                share: self.share,
                priority: self.priority,
                min_speed: self.min_speed,
            },
        }))
    }
}

/// Where a run serves its metrics (shared by `farm run` and `farm sprt`).
#[derive(Args, Debug, Clone)]
pub struct MetricsArgs {
    /// Serve Prometheus metrics at http://HOST:PORT/metrics while the run goes (port 0: any
    /// free port; the address is printed on stderr).
    #[arg(long, env = "FARM_METRICS_ADDR", value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
    /// With --metrics-addr: keep serving this many seconds after the run ends (a last scrape).
    #[arg(long, default_value_t = 0, value_name = "SECONDS")]
    pub linger_secs: u64,
}

impl MetricsArgs {
    /// Run `work` on the coordinator's runtime, serving /metrics meanwhile when asked (and
    /// lingering after it).
    pub fn run<F: std::future::Future>(&self, work: F) -> Result<F::Output> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .worker_threads(2)
            .build()?;
        let metrics = match &self.metrics_addr {
            Some(addr) => Some(runtime.block_on(crate::metrics::serve(addr))?),
            None => None,
        };
        let out = runtime.block_on(work);
        if metrics.is_some() && self.linger_secs > 0 {
            let linger = std::time::Duration::from_secs(self.linger_secs);
            runtime.block_on(async { tokio::time::sleep(linger).await });
        }
        Ok(out)
    }
}

/// `--game NAME` (env `FARM_GAME`): the names and one-line summaries come from `run::game::GAMES`.
impl clap::ValueEnum for crate::run::game::Game {
    fn value_variants<'a>() -> &'a [Self] {
        crate::run::game::GAMES
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.summary()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use shared::msg::BombermanClock;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        key: KeyArgs,
        #[command(flatten)]
        clock: ClockArgs,
        #[command(flatten)]
        sandbox: SandboxArgs,
    }

    /// The keys of `argv` agree when a message one signs, the other accepts.
    fn same_key(a: &FarmKey, b: &FarmKey) -> bool {
        let bytes = shared::codec::encode(&"probe", a).unwrap();
        shared::codec::decode::<String>(&bytes, b).is_ok()
    }

    #[test]
    fn the_farm_key_comes_from_a_file_first_then_the_flag_or_farm_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("farm.key");
        std::fs::write(&file, "sekrit\n").unwrap();
        let flag = Cli::try_parse_from(["t", "--farm-key", "sekrit"])
            .unwrap()
            .key;
        let from_file = Cli::try_parse_from(["t", "--key-file", file.to_str().unwrap()])
            .unwrap()
            .key;
        let both = Cli::try_parse_from([
            "t",
            "--farm-key",
            "other",
            "--key-file",
            file.to_str().unwrap(),
        ])
        .unwrap()
        .key;
        let (a, b, c) = (
            flag.load().unwrap(),
            from_file.load().unwrap(),
            both.load().unwrap(),
        );
        assert!(
            same_key(&a, &b),
            "trailing newline of the file is not part of the key"
        );
        assert!(same_key(&b, &c), "the file wins over the flag/env");
        let other = FarmKey::new("other");
        assert!(!same_key(&a, &other));
        let none = KeyArgs::default().load().unwrap_err().to_string();
        assert!(
            none.contains("--key-file") && none.contains("FARM_KEY"),
            "{none}"
        );
        let empty = Cli::try_parse_from(["t", "--farm-key", ""]).unwrap().key;
        assert!(empty.load().unwrap_err().to_string().contains("empty"));
        let missing = Cli::try_parse_from(["t", "--key-file", "/nonexistent/farm.key"])
            .unwrap()
            .key;
        let err = format!("{:#}", missing.load().unwrap_err());
        assert!(err.contains("/nonexistent/farm.key"), "{err}");
    }

    #[test]
    fn the_clock_flags_become_the_jobs_clock() {
        // The defaults are the rules' (judged on clap's declared defaults, as FARM_TURN_MS may
        // be set by whoever runs the tests).
        let cmd = <Cli as clap::CommandFactory>::command();
        let default = |id: &str| {
            let arg = cmd.get_arguments().find(|a| a.get_id() == id).unwrap();
            arg.get_default_values()[0]
                .to_str()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        };
        let rules = ClockArgs {
            turn_ms: default("turn_ms"),
            time_bank_ms: default("time_bank_ms"),
        };
        assert_eq!(rules.spec(), ClockSpec::default());
        assert_eq!(crate::clock::identity_entry(&rules.spec().into()), None);
        let c = Cli::try_parse_from(["x", "--turn-ms", "1000", "--time-bank-ms", "5000"])
            .unwrap()
            .clock;
        assert_eq!(
            crate::clock::identity_entry(&c.spec().into()),
            Some((
                crate::clock::CLOCK_KEY.into(),
                "turn_ms=1000 time_bank_ms=5000".into()
            ))
        );
        assert_eq!(
            crate::clock::job_clock(&c.spec().into()),
            Some(BombermanClock {
                turn_ms: 1000,
                time_bank_ms: 5000,
                reference_speed: None,
            })
        );
        // A clock scaled to a reference speed is another clock, even with the rules' limits.
        let scaled = ScaleClockArgs {
            scale_clock: Some(240),
        }
        .tournament(&rules);
        assert_eq!(
            crate::clock::identity_entry(&scaled),
            Some((
                crate::clock::CLOCK_KEY.into(),
                "turn_ms=50 time_bank_ms=0 reference_speed=240".into()
            ))
        );
        assert!(matches!(
            crate::clock::job_clock(&scaled),
            Some(BombermanClock {
                reference_speed: Some(240),
                ..
            })
        ));
        assert!(Cli::try_parse_from(["x", "--turn-ms", "0"]).is_err());
    }

    #[test]
    fn every_command_can_choose_the_sandbox_mode_and_bad_values_name_their_flag() {
        let s = Cli::try_parse_from(["x", "--sandbox", "off", "--cores", "3"])
            .unwrap()
            .sandbox
            .settings()
            .unwrap();
        assert_eq!(s.sandbox.mode, SandboxMode::Off);
        assert_eq!(s.cores.map(|n| n.get()), Some(3));
        let s = Cli::try_parse_from(["x", "--sandbox", "unprivileged", "--cache-dir", "/c"])
            .unwrap()
            .sandbox
            .settings()
            .unwrap();
        assert_eq!(s.sandbox.mode, SandboxMode::Unprivileged);
        assert_eq!(s.cache_dir, PathBuf::from("/c"));
        let bad = Cli::try_parse_from(["x", "--sandbox", "chroot"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            bad.contains("--sandbox") && bad.contains("unprivileged"),
            "{bad}"
        );
        let zero = Cli::try_parse_from(["x", "--cores", "0"])
            .unwrap()
            .sandbox
            .settings()
            .unwrap_err()
            .to_string();
        assert!(zero.contains("--cores"), "{zero}");
        let wrap = Cli::try_parse_from(["x", "--uid-base", "4294967000", "--uid-count", "1000"])
            .unwrap()
            .sandbox
            .settings()
            .unwrap_err()
            .to_string();
        assert!(wrap.contains("--uid-base"), "{wrap}");
    }
}
