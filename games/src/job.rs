//! The job a coordinator sends, built in one place so that its referee version is always the
//! game's own ([`version_of`]), never typed where a job is made: `farm run`, the ladder and
//! `farm proboj` build theirs with [`job`], and a worker refuses a job whose version is not the
//! one it runs for that game.

use shared::msg::{GameJob, Job, SeatSpec};

pub use crate::version_of;

/// Match `number` of `tournament`: its seats and its game, the referee version derived.
pub fn job(tournament: &str, number: u64, seats: Vec<SeatSpec>, game: GameJob) -> Job {
    Job {
        tournament: tournament.to_string(),
        number,
        referee_version: version_of(&game).to_string(),
        seats,
        game,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{nim, qianwang};
    use shared::msg::{NimJob, QianwangJob};

    #[test]
    fn a_job_names_its_games_version() {
        let j = job(
            "t",
            3,
            Vec::new(),
            GameJob::Qianwang(QianwangJob { seed: 9 }),
        );
        assert_eq!(j.referee_version, qianwang::VERSION);
        let j = job(
            "t",
            4,
            Vec::new(),
            GameJob::Nim(NimJob {
                seed: 1,
                turn_ms: 5,
            }),
        );
        assert_eq!(j.referee_version, nim::VERSION);
        assert_eq!(j.game.seed(), Some(1));
    }
}
