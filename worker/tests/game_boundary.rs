//! The game boundary end to end on one host: real jobs of every game (bomberman, 钳王, Nim)
//! played by `JobRunner::execute` with real sandboxed bots, then held to their jobs by the one
//! `games::accept::accept`. Each record passes as played; a record of another seed, other
//! seats, other programs, another clock or a tampered move is refused, as is a report of
//! another job and a failed job. Nim's faults (an illegal move, no answer) lose the game; in the
//! three-seat lowest unique, a faulty seat answers no more and ranks last.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use games::accept::{accept, AcceptError, Accepted};
use sandbox::{CoreTokens, SandboxMode};
use sha2::{Digest, Sha256};
use shared::msg::{
    BombermanClock, BombermanJob, GameJob, Job, JobFailure, JobReport, LowestJob, NimJob,
    ProgramRef, QianwangJob, SeatSpec,
};
use worker::job::{JobRunner, LocalArtifacts};
use worker::CompileCache;

fn runner(dir: &Path) -> JobRunner {
    let cfg = config(SandboxMode::Auto);
    JobRunner {
        cache: CompileCache::new(dir.join("cache"), cfg.clone()).expect("compile cache"),
        sandbox: cfg,
        tokens: CoreTokens::new(2),
        worker_id: "boundary/1".into(),
        speed: None,
        js_program: Some(env!("CARGO_BIN_EXE_qianwang-js-host").into()),
    }
}

fn seat(arts: &mut LocalArtifacts, name: &str, path: &Path) -> SeatSpec {
    let sha = hex::encode(Sha256::digest(std::fs::read(path).unwrap()));
    arts.insert(sha.clone(), PathBuf::from(path));
    SeatSpec {
        name: name.into(),
        program: ProgramRef::for_file(&sha, path),
    }
}

fn bot_file(rel: &str) -> PathBuf {
    repo().join("bots").join(rel)
}

fn job(game: GameJob, seats: Vec<SeatSpec>) -> Job {
    games::job::job("boundary", 3, seats, game)
}

fn nim_job(seed: u64, seats: Vec<SeatSpec>) -> Job {
    job(
        GameJob::Nim(NimJob {
            seed,
            turn_ms: 2000,
        }),
        seats,
    )
}

/// The report with its record rewritten by `edit` (as JSON).
fn edited(report: &JobReport, edit: impl Fn(&mut serde_json::Value)) -> JobReport {
    let mut v: serde_json::Value = serde_json::from_str(report.outcome.as_ref().unwrap()).unwrap();
    edit(&mut v);
    JobReport {
        outcome: Ok(v.to_string()),
        ..report.clone()
    }
}

fn refused(job: &Job, report: &JobReport) -> AcceptError {
    match accept(job, report) {
        Ok(a) => panic!("accepted a {} record that is not the job's", a.name()),
        Err(e) => e,
    }
}

#[test]
fn nim_games_are_played_accepted_and_their_faults_lose() {
    let dir = tempfile::tempdir().unwrap();
    let mut arts = LocalArtifacts::new();
    let xor = seat(&mut arts, "xor", &bot_file("nim/xor.cpp"));
    let first = seat(&mut arts, "first", &bot_file("nim/first.cpp"));
    let cheat = seat(&mut arts, "cheat", &bot_file("nim/cheat.cpp"));
    // A bomberman bot reads TURN..END and never answers a Nim turn.
    let mute = seat(&mut arts, "mute", &bot_file("test/answer.cpp"));
    let r = runner(dir.path());

    // The perfect player wins every start it can win (a non-zero nim-sum) when it moves first.
    let mut won = 0;
    for seed in 1..=6 {
        let j = nim_job(seed, vec![xor.clone(), first.clone()]);
        let report = r.execute(&j, &arts);
        let Accepted::Nim(rec) = accept(&j, &report).expect("a played game is accepted") else {
            panic!("not a Nim record");
        };
        assert!(rec.fault.is_none(), "{:?}", rec.fault);
        if games::nim::start(seed).iter().fold(0, |x, h| x ^ h) != 0 {
            assert_eq!(rec.winner, 0, "seed {seed}: {rec:?}");
            won += 1;
        }
    }
    assert!(won > 0, "no seed in 1..=6 starts from a winning position");
    // Each job's duration is on /metrics under its own game, never another's.
    let seconds = &worker::metrics::global().match_seconds;
    assert!(seconds.with_label_values(&["nim", "2"]).get_sample_count() >= 6);
    assert_eq!(
        seconds
            .with_label_values(&["bomberman", "2"])
            .get_sample_count(),
        0,
        "a Nim job counted as bomberman"
    );

    let j = nim_job(5, vec![first.clone(), cheat.clone()]);
    let Accepted::Nim(rec) = accept(&j, &r.execute(&j, &arts)).unwrap() else {
        panic!()
    };
    let f = rec.fault.as_ref().expect("an illegal move is a fault");
    assert_eq!((f.seat, f.kind.as_str(), rec.winner), (1, "bad_output", 0));
    assert!(f.detail.contains("cannot take 99"), "{}", f.detail);

    let j = nim_job(5, vec![mute, first]);
    let Accepted::Nim(rec) = accept(&j, &r.execute(&j, &arts)).unwrap() else {
        panic!()
    };
    let f = rec.fault.as_ref().expect("no answer is a fault");
    assert_eq!((f.seat, f.kind.as_str(), rec.winner), (0, "timeout", 1));
}

#[test]
fn every_game_is_held_to_its_job() {
    let dir = tempfile::tempdir().unwrap();
    let mut arts = LocalArtifacts::new();
    let r = runner(dir.path());

    // --- Nim
    let a = seat(&mut arts, "xor", &bot_file("nim/xor.cpp"));
    let b = seat(&mut arts, "first", &bot_file("nim/first.cpp"));
    let j = nim_job(11, vec![a.clone(), b.clone()]);
    let report = r.execute(&j, &arts);
    accept(&j, &report).unwrap();
    let other_seed = nim_job(12, vec![a.clone(), b.clone()]);
    assert!(matches!(
        refused(&other_seed, &report),
        AcceptError::Mismatch { .. }
    ));
    let swapped = nim_job(11, vec![b.clone(), a.clone()]);
    assert!(matches!(
        refused(&swapped, &report),
        AcceptError::Mismatch { .. }
    ));
    let forged = edited(&report, |v| {
        v["winner"] = (1 - v["winner"].as_u64().unwrap()).into()
    });
    assert!(matches!(
        refused(&j, &forged),
        AcceptError::Invalid { game: "nim", .. }
    ));
    let mut elsewhere = report.clone();
    elsewhere.number = 4;
    assert!(matches!(
        refused(&j, &elsewhere),
        AcceptError::NotThisJob { .. }
    ));
    let failed = JobReport {
        outcome: Err(JobFailure::Infrastructure("disk full".into())),
        ..report.clone()
    };
    let e = refused(&j, &failed);
    assert!(e.to_string().contains("disk full"), "{e}");

    // --- 钳王: the record's seed, seats and code hashes are the job's, its plies re-play.
    let black = seat(&mut arts, "greedy", &bot_file("qianwang/greedy.js"));
    let red = seat(&mut arts, "random", &bot_file("qianwang/random.js"));
    let qw = |seed, seats| job(GameJob::Qianwang(QianwangJob { seed }), seats);
    let j = qw(77, vec![black.clone(), red.clone()]);
    let report = r.execute(&j, &arts);
    assert!(matches!(accept(&j, &report), Ok(Accepted::Qianwang(_))));
    assert!(matches!(
        refused(&qw(78, vec![black.clone(), red.clone()]), &report),
        AcceptError::Mismatch { .. }
    ));
    let mut other_code = red.clone();
    other_code.program.sha256 = "ab".repeat(32);
    let e = refused(&qw(77, vec![black.clone(), other_code]), &report);
    assert!(e.to_string().contains("seat 1"), "{e}");
    let forged = edited(&report, |v| {
        v["black"]["code_sha256"] = "cd".repeat(32).into();
    });
    assert!(matches!(refused(&j, &forged), AcceptError::Mismatch { .. }));
    let tampered = edited(&report, |v| {
        v["plies"].as_array_mut().unwrap().truncate(1);
    });
    assert!(matches!(
        refused(&j, &tampered),
        AcceptError::Invalid {
            game: "qianwang",
            ..
        }
    ));

    // --- bomberman: re-simulated; seed, seats, programs and clock are the job's.
    let p = seat(&mut arts, "p", &bot_file("test/answer.cpp"));
    let q = seat(&mut arts, "q", &bot_file("bomberman/baseline.cpp"));
    let clock = Some(BombermanClock {
        turn_ms: 1000,
        time_bank_ms: 3000,
        reference_speed: None,
    });
    let bm = |seed, seats, clock| {
        let game = BombermanJob {
            seed,
            manifest_digest: String::new(),
            clock,
        };
        job(GameJob::Bomberman(game), seats)
    };
    let j = bm(9, vec![p.clone(), q.clone()], clock);
    let report = r.execute(&j, &arts);
    assert!(matches!(accept(&j, &report), Ok(Accepted::Bomberman(_))));
    assert!(matches!(
        refused(&bm(10, vec![p.clone(), q.clone()], clock), &report),
        AcceptError::Mismatch { .. }
    ));
    let e = refused(&bm(9, vec![p.clone(), q.clone()], None), &report);
    assert!(e.to_string().contains("time bank"), "{e}");
    let other_bank = Some(BombermanClock {
        turn_ms: 1000,
        time_bank_ms: 4000,
        reference_speed: None,
    });
    assert!(matches!(
        refused(&bm(9, vec![p.clone(), q.clone()], other_bank), &report),
        AcceptError::Mismatch { .. }
    ));
    let tampered = edited(&report, |v| v["result"]["turns"] = 1.into());
    assert!(matches!(
        refused(&j, &tampered),
        AcceptError::Invalid {
            game: "bomberman",
            ..
        }
    ));
    // A Nim job does not take a bomberman replay.
    assert!(matches!(
        refused(&nim_job(9, vec![p, q]), &report),
        AcceptError::Invalid { game: "nim", .. }
    ));
}

fn lowest_job(seed: u64, seats: Vec<SeatSpec>) -> Job {
    job(
        GameJob::Lowest(LowestJob {
            seed,
            turn_ms: 2000,
        }),
        seats,
    )
}

#[test]
fn lowest_unique_games_are_played_held_to_their_jobs_and_faulty_seats_rank_last() {
    let dir = tempfile::tempdir().unwrap();
    let mut arts = LocalArtifacts::new();
    let one = seat(&mut arts, "one", &bot_file("lowest/one.cpp"));
    let random = seat(&mut arts, "random", &bot_file("lowest/random.cpp"));
    let broken = seat(&mut arts, "broken", &bot_file("lowest/broken.cpp"));
    // A bomberman bot reads TURN..END and never answers a round.
    let mute = seat(&mut arts, "mute", &bot_file("test/answer.cpp"));
    let r = runner(dir.path());

    let j = lowest_job(21, vec![broken.clone(), one.clone(), random.clone()]);
    let report = r.execute(&j, &arts);
    let Accepted::Lowest(rec) = accept(&j, &report).expect("a played game is accepted") else {
        panic!("not a lowest-unique record");
    };
    assert_eq!(rec.answers.len() as u32, games::lowest::rounds(21));
    // The broken bot answers 2 twice, then 6: out in round 2 (0-based), ranked last.
    assert_eq!(rec.faults.len(), 1, "{rec:?}");
    let f = &rec.faults[0];
    assert_eq!((f.seat, f.round, f.kind.as_str()), (0, 2, "bad_output"));
    assert!(f.detail.contains("not between 1 and 5"), "{}", f.detail);
    assert_eq!(rec.answers[1][0], Some(2));
    assert!(rec.answers[2..].iter().all(|a| a[0].is_none()), "{rec:?}");
    assert_eq!(rec.ranks[0], 3);

    // No answer is a fault too; two faulty seats tie last below the one that played on.
    let j = lowest_job(22, vec![mute, one.clone(), broken.clone()]);
    let Accepted::Lowest(rec) = accept(&j, &r.execute(&j, &arts)).unwrap() else {
        panic!()
    };
    assert_eq!(rec.faults[0].kind, "timeout", "{rec:?}");
    assert_eq!(rec.ranks, vec![2, 1, 2]);

    // Held to its job: another seed, other seats, forged scores or ranks are refused.
    let j = lowest_job(23, vec![one.clone(), random.clone(), broken.clone()]);
    let report = r.execute(&j, &arts);
    accept(&j, &report).unwrap();
    let other_seed = lowest_job(24, vec![one.clone(), random.clone(), broken.clone()]);
    assert!(matches!(
        refused(&other_seed, &report),
        AcceptError::Mismatch { .. }
    ));
    let swapped = lowest_job(23, vec![random.clone(), one.clone(), broken.clone()]);
    assert!(matches!(
        refused(&swapped, &report),
        AcceptError::Mismatch { .. }
    ));
    let forges: [fn(&mut serde_json::Value); 5] = [
        |v| v["scores"][2] = 9.into(),
        |v| v["ranks"] = serde_json::json!([1, 1, 1]),
        |v| v["faults"] = serde_json::json!([]),
        |v| v["answers"][0][1] = 0.into(),
        |v| v["rounds"] = 10.into(),
    ];
    for forge in forges {
        assert!(matches!(
            refused(&j, &edited(&report, forge)),
            AcceptError::Invalid { game: "lowest", .. }
        ));
    }
    // A Nim job does not take a lowest-unique record.
    let nim = nim_job(23, vec![one, random]);
    assert!(matches!(
        refused(&nim, &report),
        AcceptError::Invalid { game: "nim", .. }
    ));
}
