//! Quarantine of a bad worker, for real (issue 25 §2): three `farm worker` processes on
//! RabbitMQ and Redis; one of them, a host of its own mounts (`unshare -m`), goes bad mid-run:
//! its g++ is replaced by a broken one that turns every program into one that exits at once, so
//! every bot it compiles afterwards fails to play, whichever bot it is. (A corrupted compile
//! cache is no longer such a fault: the worker checks cached executables and compiles again.) The coordinator quarantines it
//! within a bounded number of its reports, it takes no more jobs (and says so in its log),
//! its matches are played elsewhere, and the tournament ends with every match once, the same
//! ranking as the clean embedded run and every result from the good workers identical to it;
//! 汇总.md, report.html, quarantine.json and `farm quarantine list` name it with the
//! evidence; `farm run --resume --redo-suspect` plays the matches it gave results of again,
//! after which every result is the clean run's; and `farm quarantine release` lets it go. A
//! genuinely crashing bot on a clean fleet gets no worker quarantined.

mod cluster_support;

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cluster_support::*;
use serde_json::Value;

/// Most reports the bad worker may send before it is quarantined: one clean match, then every
/// seat it plays fails (the pure test's bound for a host that spoils every seat is 12).
const BOUND: usize = 14;

/// A compile cache folder the sandboxed compiler can reach (a tempdir is 0700), removed on drop.
struct Cache(PathBuf);

impl Cache {
    fn new(name: &str) -> Cache {
        let dir = PathBuf::from(format!(
            "/var/cache/matchfarm-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        Cache(dir)
    }
}

impl Drop for Cache {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A g++ that "compiles" every program into `false` (it exits at once, having said nothing), as a
/// damaged toolchain might. `--version` and `-dumpmachine` are asked only when a worker starts.
const BROKEN_COMPILER: &str = "#!/bin/sh\nout=\nwhile [ $# -gt 0 ]; do\n  \
    if [ \"$1\" = -o ]; then out=$2; shift; fi\n  shift\ndone\n\
    exec cp /usr/bin/false \"$out\"\n";

/// Break the compiler of the worker `pid` (it runs in a mount namespace of its own: only its
/// host is affected) and clear its compile cache as a tmp cleaner would, so that every bot it
/// starts from now on was compiled by the broken g++. The number of cached files removed.
fn break_compiler(pid: u32, scratch: &Path, cache: &Path) -> usize {
    let real = std::fs::canonicalize("/usr/bin/g++").unwrap();
    let fake = scratch.join("broken-g++");
    std::fs::write(&fake, BROKEN_COMPILER).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mounted = Command::new("nsenter")
        .args(["-t", &pid.to_string(), "-m", "mount", "--bind"])
        .arg(&fake)
        .arg(&real)
        .output()
        .unwrap();
    assert!(
        mounted.status.success(),
        "nsenter mount: {}",
        String::from_utf8_lossy(&mounted.stderr)
    );
    clear_cache(cache)
}

/// Mend the compiler of the worker `pid` that [`break_compiler`] broke and clear the programs
/// the broken one made, as an operator fixing the host would.
fn mend_compiler(pid: u32, cache: &Path) {
    let real = std::fs::canonicalize("/usr/bin/g++").unwrap();
    let unmounted = Command::new("nsenter")
        .args(["-t", &pid.to_string(), "-m", "umount"])
        .arg(&real)
        .output()
        .unwrap();
    assert!(
        unmounted.status.success(),
        "nsenter umount: {}",
        String::from_utf8_lossy(&unmounted.stderr)
    );
    clear_cache(cache);
}

/// Remove the compiled programs of a worker's compile cache (`compile/` in its cache folder);
/// how many files were removed.
fn clear_cache(cache: &Path) -> usize {
    let mut removed = 0;
    for entry in std::fs::read_dir(cache.join("compile")).unwrap().flatten() {
        let path = entry.path();
        if path
            .extension()
            .is_some_and(|e| e == "bin" || e == "sha256")
        {
            std::fs::remove_file(&path).unwrap();
            removed += 1;
        }
    }
    removed
}

/// How many reports `worker` gave (accepted or not), from played-by.jsonl.
fn reports_by(out: &Path, worker: &str) -> usize {
    played_by(out)
        .iter()
        .filter(|(_, w, _)| w == worker)
        .count()
}

/// played-by.jsonl of the run: (match, worker, failed).
fn played_by(out: &Path) -> Vec<(u64, String, Option<String>)> {
    std::fs::read_to_string(out.join("played-by.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| {
            (
                v["number"].as_u64().unwrap(),
                v["worker"].as_str().unwrap().to_string(),
                v["failed"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn quarantined(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("quarantine.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// The Bradley–Terry ranking (best first) of a results.json.
fn ranking(results: &[Value]) -> Vec<String> {
    let games: Vec<shared::results::GameResult> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| !r["result"].is_null())
        .map(|(i, r)| shared::results::GameResult::from_results_row(r, i + 1).unwrap())
        .collect();
    let fit = shared::bt::fit(&games, &["A", "R", "Base"], &[2, 3], "Base").unwrap();
    fit.ranked()
        .into_iter()
        .map(|(n, _)| n.to_string())
        .collect()
}

fn farm_cmd(args: &[&str]) -> (bool, String) {
    let out = Command::new(farm()).args(args).output().unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A fleet of two good workers and one whose compiler goes bad (in a mount namespace of its
/// own) after its first clean match, and the cluster coordinator of the tournament, run until
/// the coordinator has quarantined the bad one (`extra`: the coordinator's extra flags).
struct Quarantined {
    farm: Farm,
    cache: Cache,
    bad_id: String,
    _good: [Proc; 2],
    bad: Proc,
    coord: Proc,
    out: PathBuf,
    /// Reports of the bad worker before its compiler broke.
    before: usize,
}

fn run_until_quarantined(name: &str, db: u32, extra: &[&str]) -> Quarantined {
    let farm = Farm::new(name, db);
    let cache = Cache::new(name);
    let bad_id = format!("{}-bad", farm.name);
    let good = [farm.worker("good1", 1), farm.worker("good2", 1)];
    let cache_arg = cache.0.display().to_string();
    let bad = farm.worker_under(
        &["unshare", "-m", "--propagation", "private"],
        "bad",
        1,
        "bad",
        &["--cache-dir", &cache_arg],
    );
    let mut coord = farm.start_cluster(extra);
    let out = farm.output();

    // The bad worker plays one clean match (compiling the bots into its own cache), then its
    // compiler goes bad and its cache is cleared.
    wait_until(Duration::from_secs(180), || {
        assert!(
            coord.running(),
            "coordinator ended early:\n{}",
            coord.stderr()
        );
        played_by(&out)
            .iter()
            .any(|(_, w, failed)| *w == bad_id && failed.is_none())
            .then_some(())
            .ok_or_else(|| format!("the bad worker played no match:\n{}", bad.stderr()))
    });
    let cleared = break_compiler(bad.pid(), farm.dir.path(), &cache.0);
    assert!(cleared >= 1, "no compiled bot in {}", cache.0.display());
    let before = reports_by(&out, &bad_id);

    // Quarantined within a bounded number of its reports.
    wait_until(Duration::from_secs(240), || {
        assert!(
            coord.running(),
            "the run ended with no quarantine:\n{}",
            coord.stderr()
        );
        (!quarantined(&out).is_empty())
            .then_some(())
            .ok_or_else(|| format!("no quarantine; played-by: {:?}", played_by(&out)))
    });
    Quarantined {
        farm,
        cache,
        bad_id,
        _good: good,
        bad,
        coord,
        out,
        before,
    }
}

#[test]
fn a_worker_gone_bad_is_quarantined_and_the_tournament_ends_as_on_a_clean_fleet() {
    let Some(_serial) = setup() else { return };
    let reference = reference();
    let Quarantined {
        farm,
        cache: _cache,
        bad_id,
        _good,
        bad,
        mut coord,
        out,
        before,
    } = run_until_quarantined("quar", 9, &[]);
    let q = quarantined(&out);
    assert_eq!(q.len(), 1, "{q:?}");
    assert_eq!(q[0]["worker"], bad_id.as_str(), "{q:?}");
    let reports = q[0]["reports"].as_u64().unwrap() as usize;
    eprintln!("quarantined after {reports} reports ({before} before its compiler broke): {q:?}");
    let bad_rows: Vec<_> = played_by(&out)
        .into_iter()
        .filter(|(_, w, _)| *w == bad_id)
        .collect();
    eprintln!("its reports: {bad_rows:?}");
    assert!(
        reports <= BOUND && reports >= before,
        "quarantined after {reports} reports ({before} before its compiler broke): {q:?}"
    );

    // The quarantined worker stops taking the tournament's jobs and says why.
    wait_until(Duration::from_secs(30), || {
        let log = bad.stderr();
        log.contains("quarantined by the tournament")
            .then_some(())
            .ok_or(log)
    });
    let taken_then = reports_by(&out, &bad_id);

    let done = coord.wait_limit(Duration::from_secs(600));
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    assert!(
        done.stderr.contains("quarantined worker"),
        "{}",
        done.stderr
    );
    let rows = played_by(&out);
    let by_bad = rows.iter().filter(|(_, w, _)| *w == bad_id).count();
    // At most the matches it had in hand when the quarantine reached it (one slot), refused.
    assert!(by_bad <= taken_then + 1, "{by_bad} > {taken_then} + 1");
    let accepted_late = rows
        .iter()
        .filter(|(_, w, _)| *w == bad_id)
        .skip(reports)
        .filter(|(_, _, failed)| failed.is_none())
        .count();
    assert_eq!(
        accepted_late, 0,
        "a quarantined worker's report was accepted"
    );

    // Every match once; the ranking of the clean embedded run; every result a good worker gave
    // is the embedded run's.
    let got = results(&out);
    assert_eq!(got.len(), reference.len());
    assert_eq!(ranking(&got), ranking(&reference));
    let mut giver: HashMap<u64, String> = HashMap::new();
    for (n, w, failed) in &rows {
        if failed.is_none() {
            giver.entry(*n).or_insert_with(|| w.clone());
        }
    }
    let mut compared = 0;
    for (g, r) in got.iter().zip(&reference) {
        let n = g["match"].as_u64().unwrap();
        if giver.get(&n).is_some_and(|w| *w != bad_id) {
            assert_eq!(g["result"]["ranks"], r["result"]["ranks"], "match {n}");
            assert_eq!(g["result"]["points"], r["result"]["points"], "match {n}");
            compared += 1;
        }
    }
    assert!(compared + reports >= got.len(), "{compared} compared");

    // Every view names it with the evidence.
    let summary = std::fs::read_to_string(out.join("汇总.md")).unwrap();
    assert!(
        summary.contains("被隔离的工作机") && summary.contains(&bad_id),
        "{summary}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        page.contains(&format!("Quarantined: {bad_id}")),
        "report.html"
    );

    // The results it gave before it was quarantined are suspect: a resume with
    // --redo-suspect (here embedded) takes them back and plays them again, and then every
    // result is the clean run's.
    let suspect = giver.values().filter(|w| **w == bad_id).count();
    assert!(suspect >= 1, "the bad worker gave no result");
    let redo = Command::new(cluster_support::farm())
        .current_dir(root())
        .arg("run")
        .args(tournament_args())
        .args(["--workers", "2", "--resume", "--redo-suspect", "--output"])
        .arg(&out)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&redo.stderr);
    assert!(redo.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "playing again {suspect} matches whose results came from workers quarantined since"
        )),
        "{said}"
    );
    assert_same_results(&out, &reference);
    let log = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert_eq!(
        log.matches("\"retracted: ").count(),
        suspect,
        "one retraction line each"
    );

    // Released by the operator (the run has ended: the tournament's entry went with it, so
    // plant one as a running coordinator would have left it).
    let redis = farm.redis_url();
    let (ok, listed) = farm_cmd(&["quarantine", "--redis", &redis, "list"]);
    assert!(
        ok && listed.contains("no worker is quarantined"),
        "{listed}"
    );
    let mut con = redis::Client::open(redis.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let _: () = redis::cmd("HSET")
        .arg(format!("farm:quarantine:{bad_id}"))
        .arg("t1")
        .arg("3 of 4 seats with a bot fault")
        .query(&mut con)
        .unwrap();
    let (ok, listed) = farm_cmd(&["quarantine", "--redis", &redis, "list"]);
    assert!(
        ok && listed.contains(&format!("{bad_id}\tt1\t3 of 4")),
        "{listed}"
    );
    let (ok, said) = farm_cmd(&["quarantine", "--redis", &redis, "release", &bad_id]);
    assert!(ok && said.contains("released"), "{said}");
    let (ok, said) = farm_cmd(&["quarantine", "--redis", &redis, "release", &bad_id]);
    assert!(!ok && said.contains("is not quarantined"), "{said}");
}

/// The live release (`farm quarantine release` while the tournament runs): the operator mends
/// the quarantined worker's host and releases it; the worker serves the tournament again, the
/// coordinator counts its reports again from a clean record (quarantine.json empty again), its
/// later results are accepted (re-verified on arrival, as every result is), and the
/// tournament ends with every match once and no one quarantined. A longer tournament than the
/// scenario's (150 seeds), so that it is still running when the release takes effect.
#[test]
fn a_released_worker_serves_the_running_tournament_again() {
    let Some(_serial) = setup() else { return };
    let Quarantined {
        farm,
        cache,
        bad_id,
        _good,
        bad,
        mut coord,
        out,
        ..
    } = run_until_quarantined("qrel", 8, &["--seeds", "150"]);
    wait_until(Duration::from_secs(30), || {
        let log = bad.stderr();
        log.contains("quarantined by the tournament")
            .then_some(())
            .ok_or(log)
    });

    mend_compiler(bad.pid(), &cache.0);
    let redis = farm.redis_url();
    let (ok, said) = farm_cmd(&["quarantine", "--redis", &redis, "release", &bad_id]);
    assert!(ok && said.contains("released"), "{said}");
    let at_release = reports_by(&out, &bad_id);
    wait_until(Duration::from_secs(240), || {
        assert!(
            coord.running(),
            "the run ended before the released worker played again:\n{}",
            coord.stderr()
        );
        let again = played_by(&out)
            .into_iter()
            .filter(|(_, w, _)| *w == bad_id)
            .skip(at_release)
            .any(|(_, _, failed)| failed.is_none());
        // The coordinator noticed (it rewrote quarantine.json without the worker) and took a
        // result of it again.
        (again && quarantined(&out).is_empty())
            .then_some(())
            .ok_or_else(|| {
                format!(
                    "after the release: quarantine.json {:?}\nplayed-by {:?}\nworker: {}",
                    quarantined(&out),
                    played_by(&out),
                    bad.stderr()
                )
            })
    });

    let done = coord.wait_limit(Duration::from_secs(600));
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    assert!(
        quarantined(&out).is_empty(),
        "quarantined again: {:?}",
        quarantined(&out)
    );
    let schedule: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("schedule.json")).unwrap()).unwrap();
    let matches = schedule["entries"].as_array().unwrap().len();
    let got = results(&out);
    assert_eq!(got.len(), matches, "every match once");
    // The mended worker's results after its release were accepted.
    let rows = played_by(&out);
    let after: Vec<u64> = rows
        .iter()
        .filter(|(_, w, _)| *w == bad_id)
        .skip(at_release)
        .filter(|(_, _, failed)| failed.is_none())
        .map(|(n, _, _)| *n)
        .collect();
    assert!(!after.is_empty(), "{rows:?}");
    eprintln!(
        "released after {at_release} reports; {} results from it accepted after the release, of {matches} matches",
        after.len()
    );
}

#[test]
fn a_crashing_bot_gets_no_good_worker_quarantined() {
    let Some(_serial) = setup() else { return };
    let farm = Farm::new("quarcrash", 9);
    let _w: Vec<Proc> = ["w1", "w2", "w3"]
        .iter()
        .map(|id| farm.worker(id, 1))
        .collect();
    let mut coord = farm.start_tournament(&[
        "--bots",
        "C=bots/test/crasher.cpp",
        &format!("A={ANSWER_BOT}"),
        "Base=bots/bomberman/baseline.cpp",
        "--anchor",
        "Base",
        "--sizes",
        "2",
        "3",
        "--seeds",
        "10",
        "--seed",
        "99",
    ]);
    let done = coord.wait_limit(Duration::from_secs(600));
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    let out = farm.output();
    let rows = played_by(&out);
    let workers: std::collections::HashSet<&str> =
        rows.iter().map(|(_, w, _)| w.as_str()).collect();
    assert!(workers.len() >= 2, "only {workers:?} played");
    let crashes = results(&out)
        .iter()
        .filter(|r| {
            r["result"]["names"]
                .as_array()
                .zip(r["result"]["errors"].as_array())
                .is_some_and(|(n, e)| {
                    n.iter()
                        .zip(e)
                        .any(|(n, e)| n == "C" && e.as_i64() > Some(0))
                })
        })
        .count();
    assert!(
        crashes >= 20,
        "the crasher crashed in only {crashes} matches"
    );
    assert!(quarantined(&out).is_empty(), "{:?}", quarantined(&out));
    assert!(
        !done.stderr.contains("quarantined worker"),
        "{}",
        done.stderr
    );
}
