//! Host time: CPU time that the machine itself took from whatever ran on a CPU — a hypervisor's
//! steal (the virtual CPU not running at all), hard and soft interrupts — so that the fair clock
//! never charges it to a bot.
//!
//! Why: the scheduler's clocks of a thread (`/proc/<pid>/schedstat`: on-CPU time and run-queue
//! wait, and the cgroup's `cpuacct.usage`) leave host time out of both. A bot that was running,
//! or asleep until a timer, on a virtual CPU the hypervisor stopped for 20 ms therefore showed
//! 20 ms of wall time that was neither its CPU nor its wait, and the fair clock (wall minus
//! waits) charged them to the bot: a bot burning 30 ms a turn timed out against a 50 ms limit
//! on a quiet guest (issue 21). Measured on this project's VMs: a pinned thread burning 30 ms
//! a turn lost up to 9 ms of a turn this way while a build ran beside it, and in every such turn
//! that lost time equalled the thread's perf task-clock minus its on-CPU time.
//!
//! `/proc/stat` counts host time per CPU (steal + irq + softirq, in ticks of 1/USER_HZ s), but
//! reading it costs about 11 µs, too much for every turn (a turn costs ~40 µs in all). So one
//! sampler thread per process reads it every [`PERIOD`] while any bot is alive ([`enlist`]), and
//! a turn that has reached its deadline asks [`since`] how much host time the CPUs it ran on lost
//! from the last sample before its start until now. The answer is coarse (a tick, a period) and
//! errs towards the bot: host time in the period just before the turn started may be counted.
//! That only matters when the host really took time, and a bot's own CPU time is still a floor
//! of its charge, so a bot that computes too long still times out.
//!
//! Not all host time is the bot's loss: it delays a thread only while the thread is on a core,
//! waiting for one, or waking. It comes in two kinds ([`losses`]). Bursts (a stolen virtual CPU,
//! an interrupt storm: [`BURST_TICKS`] or more ticks within [`BURST_WINDOW`] samples of each
//! other that fill at least half of those samples' wall time) stall whatever runs or wakes on
//! that CPU; a bot is credited those that fall in the stretch at the end of its turn that holds
//! its exposure (its CPU time and run-queue waits), where a bot that answers was on a core
//! ([`HostLoss::bursts_at_the_end`]). A thin spread (interrupts of microseconds, summed into a
//! lone tick now and then) is credited only in the share that matches the bot's exposure
//! ([`HostLoss::credited`]). Without that split a bot sleeping 3 s a turn was given 10–40 ms a
//! turn of lone interrupts, and with bursts credited wherever they fell, up to 420 ms a turn of
//! a busy host's softirq bursts during its sleep: it drew less than it used from its time bank.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How often the sampler reads `/proc/stat` while bots are alive.
pub const PERIOD: Duration = Duration::from_millis(10);

/// Samples kept: enough for turns of [`KEPT`] × [`PERIOD`] (a turn longer than that is given
/// the host time since the oldest sample, less than it lost, never more).
const KEPT: usize = 1500;

/// Host time of every CPU at one moment: ticks of steal + irq + softirq, by CPU number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub at: Instant,
    pub ticks: Vec<(usize, u64)>,
}

/// The per-CPU host ticks (steal + irq + softirq) of a `/proc/stat` text, by CPU number; the
/// total `cpu ` line is skipped. Lines that do not parse are left out.
pub fn parse_proc_stat(text: &str) -> Vec<(usize, u64)> {
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("cpu")?;
            let (num, fields) = rest.split_once(' ')?;
            let cpu: usize = num.parse().ok()?;
            // user nice system idle iowait irq softirq steal ...
            let v: Vec<u64> = fields
                .split_ascii_whitespace()
                .map_while(|f| f.parse().ok())
                .collect();
            let host = v.get(5)?.checked_add(*v.get(6)?)?.checked_add(*v.get(7)?)?;
            Some((cpu, host))
        })
        .collect()
}

/// The length of one `/proc/stat` tick (1/USER_HZ s).
pub fn tick() -> Duration {
    // SAFETY: sysconf reads a constant of the C library.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = u64::try_from(hz).ok().filter(|&h| h > 0).unwrap_or(100);
    Duration::from_nanos(1_000_000_000 / hz)
}

/// Environment variable naming a file read instead of `/proc/stat` (tests only: a guest cannot
/// make its hypervisor steal on demand, so a test plays the host through it).
pub const TEST_SOURCE_ENV: &str = "FARM_TEST_PROC_STAT";

/// The file the host time is read from: `/proc/stat`, unless [`TEST_SOURCE_ENV`] names another
/// (read once per process).
fn source() -> &'static std::path::Path {
    static SOURCE: OnceLock<std::path::PathBuf> = OnceLock::new();
    SOURCE.get_or_init(|| {
        std::env::var_os(TEST_SOURCE_ENV)
            .map(Into::into)
            .unwrap_or_else(|| "/proc/stat".into())
    })
}

/// Read `/proc/stat` now (None when it cannot be read or parsed).
pub fn read_now() -> Option<Sample> {
    let text = std::fs::read_to_string(source()).ok()?;
    let ticks = parse_proc_stat(&text);
    (!ticks.is_empty()).then(|| Sample {
        at: Instant::now(),
        ticks,
    })
}

/// The process-wide sampler: a ring of recent samples and how many bots want it running.
struct Sampler {
    ring: Mutex<VecDeque<Sample>>,
    alive: AtomicUsize,
    wake: Condvar,
    /// Guards the sleeping sampler's wait (paired with `wake`).
    idle: Mutex<()>,
}

fn sampler() -> &'static Sampler {
    static SAMPLER: OnceLock<&'static Sampler> = OnceLock::new();
    SAMPLER.get_or_init(|| {
        let s: &'static Sampler = Box::leak(Box::new(Sampler {
            ring: Mutex::new(VecDeque::with_capacity(KEPT)),
            alive: AtomicUsize::new(0),
            wake: Condvar::new(),
            idle: Mutex::new(()),
        }));
        let spawned = std::thread::Builder::new()
            .name("farm-hosttime".into())
            .spawn(move || s.run());
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "no host-time sampler: host time will be charged to bots");
        }
        s
    })
}

impl Sampler {
    fn run(&self) {
        loop {
            {
                let mut guard = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                while self.alive.load(Ordering::Acquire) == 0 {
                    guard = self.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
                }
            }
            if let Some(s) = read_now() {
                let mut ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
                if ring.len() == KEPT {
                    ring.pop_front();
                }
                ring.push_back(s);
            }
            std::thread::sleep(PERIOD);
        }
    }

    /// The samples from the last one taken at or before `t` (the oldest kept if all are later)
    /// until the newest.
    fn from(&self, t: Instant) -> Vec<Sample> {
        let ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        let start = ring.iter().rposition(|s| s.at <= t).unwrap_or(0);
        ring.iter().skip(start).cloned().collect()
    }
}

/// Keeps the sampler running while held (one per live bot with the fair clock).
#[derive(Debug)]
pub struct Enlisted(());

/// Ask for host-time samples from now on, until the returned guard is dropped.
pub fn enlist() -> Enlisted {
    let s = sampler();
    if s.alive.fetch_add(1, Ordering::AcqRel) == 0 {
        // Take one at once, so that a turn starting right away has a sample before it.
        if let Some(now) = read_now() {
            let mut ring = s.ring.lock().unwrap_or_else(|e| e.into_inner());
            if ring.len() == KEPT {
                ring.pop_front();
            }
            ring.push_back(now);
        }
        let _guard = s.idle.lock().unwrap_or_else(|e| e.into_inner());
        s.wake.notify_all();
    }
    Enlisted(())
}

impl Drop for Enlisted {
    fn drop(&mut self) {
        sampler().alive.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Ticks of one CPU within this many samples of each other that make a burst.
pub const BURST_TICKS: u64 = 2;

/// How many sample periods on either side of a tick are looked at for the rest of its burst.
pub const BURST_WINDOW: usize = 2;

/// Host time lost on some CPUs over an interval, by kind (see the module's notes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostLoss {
    /// Lost in bursts, period by period from the oldest to the newest: (the period's wall
    /// time, the burst ticks counted in it). Whatever ran or woke on the CPU then was stalled.
    pub bursts: Vec<(Duration, Duration)>,
    /// Lost in lone ticks spread over the interval.
    pub spread: Duration,
}

/// Wall time before the end of a turn, beyond the bot's exposure, in which a burst is still
/// taken to have held the bot up, at the least: the sampling is coarse (a burst of steal is
/// counted in the period in which its virtual CPU ran again, a period may be late). It is the
/// turn's limit when that is longer: a bot may sleep as it likes within its limit, so a burst
/// anywhere in a turn of normal length is credited (the clock errs towards the bot where it
/// decides a timeout); only a turn that runs past its limit asleep is not credited the bursts
/// it slept through before its last `limit`.
pub const BURST_SLACK: Duration = Duration::from_millis(20);

impl HostLoss {
    /// All the burst time, wherever it fell.
    pub fn burst(&self) -> Duration {
        self.bursts
            .iter()
            .fold(Duration::ZERO, |sum, (_, lost)| sum.saturating_add(*lost))
    }

    /// What a bot is credited for a turn of `elapsed` (against `limit`) during which it was on
    /// a core or waiting for one for `exposed`: the bursts that fall where the bot was exposed
    /// ([`HostLoss::bursts_at_the_end`]), and the share `exposed / elapsed` of the spread.
    pub fn credited(&self, exposed: Duration, elapsed: Duration, limit: Duration) -> Duration {
        let (spread, elapsed_ns) = (self.spread.as_nanos(), elapsed.as_nanos());
        let exposed_ns = exposed.as_nanos().min(elapsed_ns);
        let share = spread
            .checked_mul(exposed_ns)
            .and_then(|v| v.checked_div(elapsed_ns))
            .unwrap_or(0);
        self.bursts_at_the_end(exposed, limit.max(BURST_SLACK))
            .saturating_add(Duration::from_nanos(
                u64::try_from(share).unwrap_or(u64::MAX),
            ))
    }

    /// The bursts in the stretch of the turn that ends at its end and holds the bot's
    /// `exposure` and `reach` (see [`BURST_SLACK`]) besides the bursts themselves: periods are taken from
    /// the newest back while the time they leave to the bot does not yet cover its exposure.
    /// A bot answers when its last stretch on a core ends, so that is where a burst stalled
    /// it; a burst while it slept (say in the middle of a 3 s sleep) held nothing up. A bot
    /// that computed all turn is exposed all turn and is credited every burst.
    pub fn bursts_at_the_end(&self, exposure: Duration, reach: Duration) -> Duration {
        let mut left = exposure.saturating_add(reach);
        let mut credit = Duration::ZERO;
        for &(wall, lost) in self.bursts.iter().rev() {
            if left.is_zero() {
                break;
            }
            credit = credit.saturating_add(lost);
            left = left.saturating_sub(wall.saturating_sub(lost));
        }
        credit
    }
}

/// The host time the CPUs `cpus` lost over consecutive `samples`, split into bursts and spread:
/// each period's burst is the largest of any one CPU's in it, the spread the largest of any
/// one CPU's sum (the bot and the thread talking to it wait for whichever CPU is slowest). A
/// CPU missing from a sample, or a counter that went back, loses nothing in that period.
pub fn losses(samples: &[Sample], cpus: &[usize], tick: Duration) -> HostLoss {
    let periods = samples.len().saturating_sub(1);
    let mut burst_ticks = vec![0u64; periods];
    let mut spread_most = 0u64;
    for cpu in cpus {
        let deltas: Vec<u64> = samples
            .windows(2)
            .map(|w| match (ticks_of(&w[0], *cpu), ticks_of(&w[1], *cpu)) {
                (Some(b), Some(a)) => a.saturating_sub(b),
                _ => 0,
            })
            .collect();
        let mut spread = 0u64;
        for (i, &d) in deltas.iter().enumerate() {
            if is_burst(samples, &deltas, i, tick) {
                if let Some(most) = burst_ticks.get_mut(i) {
                    *most = (*most).max(d);
                }
            } else {
                spread = spread.saturating_add(d);
            }
        }
        spread_most = spread_most.max(spread);
    }
    let time = |ticks: u64| tick.saturating_mul(u32::try_from(ticks).unwrap_or(u32::MAX));
    HostLoss {
        bursts: samples
            .windows(2)
            .zip(&burst_ticks)
            .map(|(w, &t)| (w[1].at.saturating_duration_since(w[0].at), time(t)))
            .collect(),
        spread: time(spread_most),
    }
}

/// Whether the ticks of period `i` of one CPU (`deltas`, per period) belong to a burst: with
/// the periods within [`BURST_WINDOW`] of it, [`BURST_TICKS`] or more ticks that fill at least
/// half the wall time from the window's first ticked period to its last (a sampler held up by
/// a busy host stretches its periods, and the ticks of a long period are no burst unless they
/// fill half of it).
fn is_burst(samples: &[Sample], deltas: &[u64], i: usize, tick: Duration) -> bool {
    let lo = i.saturating_sub(BURST_WINDOW);
    let hi = (i + BURST_WINDOW).min(deltas.len().saturating_sub(1));
    let near = deltas
        .iter()
        .skip(lo)
        .take(hi + 1 - lo)
        .fold(0u64, |sum, &v| sum.saturating_add(v));
    let ticked = |j: &usize| deltas.get(*j).is_some_and(|&v| v > 0);
    let first = (lo..=hi).find(ticked).unwrap_or(i);
    let last = (lo..=hi).rev().find(ticked).unwrap_or(i);
    let span = match (samples.get(first), samples.get(last + 1)) {
        (Some(a), Some(b)) => b.at.saturating_duration_since(a.at),
        _ => Duration::ZERO,
    };
    let lost = tick.saturating_mul(u32::try_from(near).unwrap_or(u32::MAX));
    near >= BURST_TICKS && lost.saturating_mul(2) >= span
}

fn ticks_of(s: &Sample, cpu: usize) -> Option<u64> {
    s.ticks.iter().find(|(c, _)| *c == cpu).map(|(_, t)| *t)
}

/// Host time lost on `cpus` since `t0`, from the last sample before it, through every sample
/// since, until now (nothing when nothing could be read).
pub fn since(t0: Instant, cpus: &[usize]) -> HostLoss {
    let Some(now) = read_now() else {
        return HostLoss::default();
    };
    let mut samples = sampler().from(t0);
    if samples.is_empty() {
        return HostLoss::default();
    }
    samples.push(now);
    losses(&samples, cpus, tick())
}

/// The CPU the main thread of process `pid` last ran on (field 39 of `/proc/<pid>/stat`).
pub fn last_cpu(pid: i32) -> Option<usize> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(stat.get(close + 1..)?).ok()?;
    // Fields after the name start at 3 (state); processor is field 39.
    rest.split_ascii_whitespace().nth(39 - 3)?.parse().ok()
}

/// The CPU the calling thread runs on.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: plain libc call without arguments.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  11352 0 4301 13610 414 0 108 145 0 0\n\
        cpu0 5684 0 1782 7369 48 0 12 64 0 0\n\
        cpu1 5667 0 2519 6240 366 3 95 80 0 0\n\
        intr 1 2 3\nctxt 99\n";

    #[test]
    fn parses_per_cpu_host_ticks() {
        assert_eq!(parse_proc_stat(STAT), vec![(0, 76), (1, 178)]);
        assert_eq!(parse_proc_stat("cpu0 1 2 3\n"), vec![]);
        assert_eq!(parse_proc_stat("cpux 1 2 3 4 5 6 7 8\n"), vec![]);
    }

    /// Samples of `cpus` host-tick counters, one per period.
    fn run_of(counters: &[&[u64]]) -> Vec<Sample> {
        let t = Instant::now();
        counters
            .iter()
            .enumerate()
            .map(|(i, c)| Sample {
                at: t + PERIOD * i as u32,
                ticks: c.iter().copied().enumerate().collect(),
            })
            .collect()
    }

    const TICK: Duration = Duration::from_millis(10);

    #[test]
    fn loss_is_the_largest_of_the_cpus_asked() {
        let s = run_of(&[&[10, 20, 5], &[12, 20, 9]]);
        let burst = |cpus: &[usize]| losses(&s, cpus, TICK).burst();
        assert_eq!(burst(&[0, 1]), Duration::from_millis(20));
        assert_eq!(burst(&[1]), Duration::ZERO);
        assert_eq!(burst(&[0, 2]), Duration::from_millis(40));
        // A CPU that vanished, or a counter that went back, lose nothing.
        let nothing = |l: HostLoss| (l.burst(), l.spread);
        assert_eq!(
            nothing(losses(&s, &[7], TICK)),
            (Duration::ZERO, Duration::ZERO)
        );
        let back: Vec<Sample> = s.iter().rev().cloned().collect();
        assert_eq!(
            nothing(losses(&back, &[0], TICK)),
            (Duration::ZERO, Duration::ZERO)
        );
    }

    #[test]
    fn lone_ticks_are_spread_and_close_ones_a_burst() {
        // cpu0: one tick at period 1 and one at period 9 (far apart); cpu1: 15 at once, then
        // two ticks two periods apart.
        let c: Vec<[u64; 2]> = vec![
            [0, 0],
            [1, 0],
            [1, 15],
            [1, 15],
            [1, 15],
            [1, 16],
            [1, 16],
            [1, 17],
            [1, 17],
            [2, 17],
        ];
        let rows: Vec<&[u64]> = c.iter().map(|r| &r[..]).collect();
        let s = run_of(&rows);
        let cpu0 = losses(&s, &[0], TICK);
        assert_eq!((cpu0.burst(), cpu0.spread), (Duration::ZERO, TICK * 2));
        let cpu1 = losses(&s, &[1], TICK);
        assert_eq!((cpu1.burst(), cpu1.spread), (TICK * 17, Duration::ZERO));
        let both = losses(&s, &[0, 1], TICK);
        assert_eq!((both.burst(), both.spread), (TICK * 17, TICK * 2));
    }

    #[test]
    fn ticks_of_a_sampler_held_up_are_no_burst() {
        // Three ticks in one period that lasted 200 ms (the sampler was not scheduled): the
        // host took 15% of that time, no burst; the same ticks in 10 ms are one.
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        let s = |ms: u64, c: u64| Sample {
            at: at(ms),
            ticks: vec![(0, c)],
        };
        let slow = [s(0, 0), s(200, 3), s(210, 3)];
        let loss = losses(&slow, &[0], TICK);
        assert_eq!((loss.burst(), loss.spread), (Duration::ZERO, TICK * 3));
        let quick = [s(0, 0), s(10, 3), s(20, 3)];
        let loss = losses(&quick, &[0], TICK);
        assert_eq!((loss.burst(), loss.spread), (TICK * 3, Duration::ZERO));
    }

    /// A turn of `periods` periods of 10 ms, with burst ticks at the given (period, lost ms).
    fn turn_of(periods: usize, at: &[(usize, u64)], spread_ms: u64) -> HostLoss {
        let mut bursts = vec![(PERIOD, Duration::ZERO); periods];
        for &(p, ms) in at {
            bursts[p].1 = Duration::from_millis(ms);
        }
        HostLoss {
            bursts,
            spread: Duration::from_millis(spread_ms),
        }
    }

    #[test]
    fn spread_is_credited_by_exposure_and_bursts_where_the_bot_was_exposed() {
        let ms = Duration::from_millis;
        // A 3 s turn: a 150 ms burst in its middle, 40 ms of lone ticks.
        let middle = turn_of(300, &[(150, 150)], 40);
        assert_eq!(middle.burst(), ms(150));
        // A bot asleep all turn loses neither the spread nor a burst while it slept.
        assert_eq!(
            middle.credited(Duration::ZERO, ms(3000), BURST_SLACK),
            Duration::ZERO
        );
        // A bot on a core a quarter of the turn (at its end) loses a quarter of the spread.
        assert_eq!(middle.credited(ms(750), ms(3000), BURST_SLACK), ms(10));
        // A bot on a core all turn (less what the host took) loses all of it. Exposure is
        // capped at the turn for the spread (its threads' CPU time may add up past it).
        assert_eq!(
            middle.credited(ms(2850), ms(3000), BURST_SLACK),
            ms(150 + 38)
        );
        assert_eq!(middle.credited(ms(9000), ms(3000), BURST_SLACK), ms(190));
        // A burst as the bot woke (its virtual CPU ran again in the last periods) is credited
        // even to a sleeper; one a little earlier only with the exposure to reach it.
        let end = turn_of(300, &[(298, 50)], 0);
        assert_eq!(end.credited(Duration::ZERO, ms(3000), BURST_SLACK), ms(50));
        let before = turn_of(300, &[(290, 50)], 0);
        assert_eq!(
            before.credited(Duration::ZERO, ms(3000), BURST_SLACK),
            Duration::ZERO
        );
        assert_eq!(before.credited(ms(80), ms(3000), BURST_SLACK), ms(50));
        // Or with a turn's limit to reach it: a bot may sleep within its limit.
        assert_eq!(before.credited(Duration::ZERO, ms(3000), ms(100)), ms(50));
        assert_eq!(
            middle.credited(Duration::ZERO, ms(3000), ms(1000)),
            Duration::ZERO
        );
        // A long burst that fills its periods is walked through whole: 15 periods held.
        let held: Vec<(usize, u64)> = (280..295).map(|p| (p, 10)).collect();
        let held = turn_of(300, &held, 0);
        assert_eq!(held.credited(ms(60), ms(3000), BURST_SLACK), ms(150));
        assert_eq!(
            HostLoss::default().credited(ms(1000), Duration::ZERO, BURST_SLACK),
            Duration::ZERO
        );
    }

    #[test]
    fn this_host_is_readable() {
        let s = read_now().expect("/proc/stat");
        assert!(!s.ticks.is_empty());
        let me = std::process::id() as i32;
        assert!(last_cpu(me).is_some());
        assert!(current_cpu().is_some());
        assert!(tick() > Duration::ZERO);
    }

    #[test]
    fn the_sampler_runs_while_enlisted() {
        let t0 = Instant::now();
        let guard = enlist();
        std::thread::sleep(PERIOD * 5);
        let got = sampler().from(t0);
        assert!(
            got.len() >= 2,
            "samples taken since enlisting: {}",
            got.len()
        );
        assert!(
            got.last().is_some_and(|s| s.at >= t0),
            "the newest is since enlisting"
        );
        let cpu = current_cpu().unwrap_or(0);
        // No claim on the amount: a quiet host loses nothing, a busy one may.
        let _ = since(t0, &[cpu]);
        drop(guard);
    }
}
