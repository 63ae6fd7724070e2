//! The ladder's two public pages, self-contained HTML+JS (no external requests): the leaderboard
//! (`/`, from `/api/leaderboard`) and the replay viewer (`/match/{urlId}`, from `/api/match/{urlId}`).

pub const LEADERBOARD: &str = include_str!("pages/leaderboard.html");
pub const REPLAY: &str = include_str!("pages/replay.html");
