//! qianwang matches as farm jobs: `JobRunner::execute` on a job whose seats name JavaScript files
//! by sha256 (through `LocalArtifacts`) returns the match record as JSON; bad programs lose,
//! missing or tampered artifacts are host failures.

use std::path::{Path, PathBuf};

use games::qianwang::{verify, EndReason, MatchRecord, Side};
use sandbox::{CoreTokens, SandboxConfig};
use sha2::{Digest, Sha256};
use shared::msg::{GameJob, Job, JobFailure, ProgramRef, QianwangJob, SeatSpec};
use worker::job::{unsupported, version_of, JobRunner, LocalArtifacts};
use worker::CompileCache;

const RANDOM: &str = include_str!("../../bots/qianwang/random.js");
const GREEDY: &str = include_str!("../../bots/qianwang/greedy.js");

fn runner(dir: &Path) -> JobRunner {
    let cfg = SandboxConfig::plain();
    JobRunner {
        cache: CompileCache::new(dir.join("cache"), cfg.clone()).expect("compile cache"),
        sandbox: cfg,
        tokens: CoreTokens::new(1),
        worker_id: "test/1".into(),
        speed: None,
        js_program: Some(env!("CARGO_BIN_EXE_qianwang-js-host").into()),
    }
}

/// Writes `bytes` as `<sha>.js` and registers it; returns the seat.
fn seat(dir: &Path, arts: &mut LocalArtifacts, name: &str, bytes: &[u8]) -> SeatSpec {
    let sha = hex::encode(Sha256::digest(bytes));
    let path: PathBuf = dir.join(format!("{sha}.js"));
    std::fs::write(&path, bytes).unwrap();
    arts.insert(sha.clone(), path.clone());
    SeatSpec {
        name: name.into(),
        program: ProgramRef::for_file(&sha, &path),
    }
}

fn job(number: u64, seed: u64, seats: Vec<SeatSpec>) -> Job {
    games::job::job(
        "qw-test",
        number,
        seats,
        GameJob::Qianwang(QianwangJob { seed }),
    )
}

#[test]
fn a_qianwang_job_returns_a_verified_record() {
    assert_eq!(
        version_of(&GameJob::Qianwang(QianwangJob { seed: 1 })),
        games::qianwang::VERSION
    );
    assert!(unsupported(&job(1, 1, Vec::new())).is_none());
    let dir = tempfile::tempdir().unwrap();
    let mut arts = LocalArtifacts::new();
    let black = seat(dir.path(), &mut arts, "greedy", GREEDY.as_bytes());
    let red = seat(dir.path(), &mut arts, "random", RANDOM.as_bytes());
    let r = runner(dir.path());
    let report = r.execute(&job(5, 77, vec![black.clone(), red.clone()]), &arts);
    assert_eq!((report.tournament.as_str(), report.number), ("qw-test", 5));
    let json = report.outcome.expect("the job succeeds");
    let rec = MatchRecord::from_json(&json).unwrap();
    verify(&rec).unwrap();
    assert_eq!(rec.seed, 77);
    assert_eq!(rec.black.name, "greedy");
    assert_eq!(rec.black.code_sha256, black.program.sha256);
    assert_eq!(rec.red.code_sha256, red.program.sha256);
    assert!(!rec.outcome.reason.is_fault(), "{:?}", rec.outcome);
    // The same job again: the same record (seeded randomness, deterministic bots).
    let again = r.execute(&job(5, 77, vec![black, red]), &arts);
    assert_eq!(again.outcome.unwrap(), json);
}

#[test]
fn bad_programs_lose_inside_a_successful_job() {
    let dir = tempfile::tempdir().unwrap();
    let mut arts = LocalArtifacts::new();
    let good = seat(dir.path(), &mut arts, "random", RANDOM.as_bytes());
    let latin1 = seat(
        dir.path(),
        &mut arts,
        "latin1",
        b"module.exports = function () { return '\xff'; };",
    );
    let thrower = seat(
        dir.path(),
        &mut arts,
        "thrower",
        b"module.exports = function () { throw new Error('no'); };",
    );
    let r = runner(dir.path());
    let rec = |j: &Job| MatchRecord::from_json(&r.execute(j, &arts).outcome.unwrap()).unwrap();

    let a = rec(&job(1, 1, vec![latin1, good.clone()]));
    verify(&a).unwrap();
    assert_eq!(
        (a.outcome.winner, a.outcome.reason, a.outcome.turn),
        (Some(Side::Red), EndReason::Error, 1)
    );
    assert!(a.outcome.detail.contains("UTF-8"), "{}", a.outcome.detail);

    let b = rec(&job(2, 1, vec![good, thrower]));
    verify(&b).unwrap();
    assert_eq!(
        (b.outcome.winner, b.outcome.reason, b.outcome.turn),
        (Some(Side::Black), EndReason::Error, 2)
    );
}

#[test]
fn missing_or_tampered_artifacts_are_host_failures() {
    let dir = tempfile::tempdir().unwrap();
    let mut arts = LocalArtifacts::new();
    let good = seat(dir.path(), &mut arts, "random", RANDOM.as_bytes());
    let tampered = seat(dir.path(), &mut arts, "greedy", GREEDY.as_bytes());
    let r = runner(dir.path());

    let mut missing = good.clone();
    missing.program.sha256 = "0".repeat(64);
    let rep = r.execute(&job(1, 1, vec![good.clone(), missing]), &arts);
    assert!(
        matches!(rep.outcome, Err(JobFailure::Artifact(_))),
        "{:?}",
        rep.outcome
    );

    std::fs::write(
        dir.path().join(&tampered.program.file_name),
        b"module.exports = 1;",
    )
    .unwrap();
    let rep = r.execute(&job(2, 1, vec![good.clone(), tampered]), &arts);
    match rep.outcome {
        Err(JobFailure::Artifact(m)) => assert!(m.contains("hashes to"), "{m}"),
        other => panic!("{other:?}"),
    }

    let rep = r.execute(&job(3, 1, vec![good]), &arts);
    match rep.outcome {
        Err(JobFailure::Unsupported(m)) => assert!(m.contains("2 seats"), "{m}"),
        other => panic!("{other:?}"),
    }
}
