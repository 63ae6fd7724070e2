//! The viewer index of a folder of 钳王 matches (`farm run --game qianwang`): one page,
//! `replays/index.html` ([`INDEX_PAGE`], the same bytes for every folder), listing the matches
//! from the list file beside it (one `matchfarmMatch({...})` line per match, the list format of
//! every game's index) and showing a match on its board when it is opened (`#N`), from its data
//! file `NNNNN.js` ([`match_script`]: the record and the initial board, written once when its
//! result arrives). Both files are loaded with `<script>` elements, so the page works from disk
//! with no server and no network.

use serde_json::Value;

use super::{Board, MatchRecord};
use crate::script::script_safe_json;

/// The index page.
pub const INDEX_PAGE: &str = include_str!("viewer_index.html");

/// The function a match's data file calls with its number and record.
pub const MATCH_CALLBACK: &str = "matchfarmQianwang";

/// Match `n`'s data file: a call of [`MATCH_CALLBACK`] with the number and the record, plus
/// `initialBoard` (the board before the first ply, `[x][y]`) for the page to re-play it.
pub fn match_script(n: u64, record: &MatchRecord) -> String {
    let mut data = serde_json::to_value(record).unwrap_or(Value::Null);
    if let Some(o) = data.as_object_mut() {
        let board = serde_json::to_value(Board::initial().cells()).unwrap_or(Value::Null);
        o.insert("initialBoard".into(), board);
    }
    format!("{MATCH_CALLBACK}({n},{});\n", script_safe_json(&data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qianwang::{Game, Player, VERSION};

    #[test]
    fn a_match_file_carries_the_record_and_cannot_end_its_script() {
        let mut game = Game::new();
        game.forfeit(crate::qianwang::Forfeit::Error, "</script><b>")
            .expect("black to move");
        let record = MatchRecord {
            version: VERSION.into(),
            seed: 1,
            black: Player {
                name: "<A&B>".into(),
                code_sha256: "aa".into(),
            },
            red: Player {
                name: "R".into(),
                code_sha256: "bb".into(),
            },
            plies: game.history().to_vec(),
            outcome: game.outcome().expect("over").clone(),
        };
        let script = match_script(7, &record);
        assert!(script.starts_with("matchfarmQianwang(7,{"), "{script}");
        assert!(!script.contains('<') && !script.contains('&'), "{script}");
        let json = &script["matchfarmQianwang(7,".len()..script.len() - 3];
        let back: Value = serde_json::from_str(json).expect("JSON");
        assert_eq!(back["black"]["name"], "<A&B>");
        assert_eq!(back["initialBoard"][0][3], "black");
        assert_eq!(back["initialBoard"][1][1], Value::Null);
        assert!(INDEX_PAGE.contains(MATCH_CALLBACK));
    }
}
