//! Jobs the wire tests start from: one of each game (two of bomberman: with and without its
//! clock), each with plain, deterministic fields.

use shared::msg::{
    BombermanClock, BombermanJob, GameJob, Job, LowestJob, NimJob, PackageFile, ProbojJob,
    ProgramRef, QianwangJob, SeatSpec,
};

fn seat(i: usize) -> SeatSpec {
    SeatSpec {
        name: format!("bot{i}"),
        program: ProgramRef {
            sha256: format!("{i:064x}"),
            file_name: format!("bot{i}.cpp"),
        },
    }
}

/// One job of each game kind, in the order of `GameJob`'s variants.
pub fn jobs() -> Vec<Job> {
    let games = [
        GameJob::Bomberman(BombermanJob {
            seed: 42,
            manifest_digest: "d".repeat(64),
            clock: None,
        }),
        GameJob::Bomberman(BombermanJob {
            seed: 43,
            manifest_digest: "d".repeat(64),
            clock: Some(BombermanClock {
                turn_ms: 1000,
                time_bank_ms: 7000,
                reference_speed: Some(240),
            }),
        }),
        GameJob::Qianwang(QianwangJob { seed: 44 }),
        GameJob::Proboj(ProbojJob {
            manifest_digest: "d".repeat(64),
            config_json: "{\"game_root\": \"g\"}".into(),
            game_json: "{\"name\": \"x\"}".into(),
            files: vec![PackageFile {
                path: "g/server".into(),
                sha256: "ab".repeat(32),
                executable: true,
            }],
            fair: true,
            server_timeout_ms: Some(5000),
        }),
        GameJob::Nim(NimJob {
            seed: 45,
            turn_ms: 250,
        }),
        GameJob::Lowest(LowestJob {
            seed: 46,
            turn_ms: 200,
        }),
    ];
    games
        .into_iter()
        .enumerate()
        .map(|(i, game)| Job {
            tournament: format!("t{i}"),
            number: i as u64 + 1,
            referee_version: "v1".into(),
            seats: vec![seat(0), seat(1)],
            game,
        })
        .collect()
}
