//! The viewer index of a folder of Nim games (`farm run --game nim`): one page,
//! `replays/index.html` ([`INDEX_PAGE`], the same bytes for every folder), listing the games
//! from the list file beside it (one `matchfarmMatch({...})` line per game, the list format of
//! every game's index: [`crate::script::index_list_line`]) and re-playing a game heap by heap
//! when it is opened (`#N`), from its data file `NNNNN.js` ([`match_script`]: the record,
//! written once when its result arrives). Both files are loaded with `<script>` elements, so the
//! page works from disk with no server and no network. The list file carries no seat faults, so
//! the page reads a listed game's fault from its data file once its row is in view.

use serde_json::Value;

use crate::nim::NimRecord;
use crate::script::script_safe_json;

/// The index page.
pub const INDEX_PAGE: &str = include_str!("nim_viewer_index.html");

/// The function a game's data file calls with its number and record.
pub const MATCH_CALLBACK: &str = "matchfarmNim";

/// Game `n`'s data file: a call of [`MATCH_CALLBACK`] with the number and the record (as the
/// replay holds it: start heaps, moves, fault, winner), as JSON that cannot end its `<script>`.
pub fn match_script(n: u64, record: &NimRecord) -> String {
    let data = serde_json::to_value(record).unwrap_or(Value::Null);
    format!("{MATCH_CALLBACK}({n},{});\n", script_safe_json(&data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nim::{self, Move, Player, SeatFault, VERSION};

    #[test]
    fn a_game_file_carries_the_record_and_cannot_end_its_script() {
        let seed = 5;
        let record = NimRecord {
            version: VERSION.into(),
            seed,
            players: vec![
                Player {
                    name: "<img src=x onerror=alert(1)>&".into(),
                    code_sha256: "aa".into(),
                },
                Player {
                    name: "</script><b>\u{2028}".into(),
                    code_sha256: "bb".into(),
                },
            ],
            heaps: nim::start(seed),
            moves: vec![Move { heap: 0, take: 1 }],
            fault: Some(SeatFault {
                seat: 1,
                kind: "bad_output".into(),
                detail: "</script><script>alert(1)</script>".into(),
            }),
            winner: 0,
        };
        nim::verify(&record).expect("a record of the rules");
        let script = match_script(12, &record);
        assert!(script.starts_with("matchfarmNim(12,{"), "{script}");
        assert!(script.ends_with(");\n"), "{script}");
        assert!(
            !script.contains('<') && !script.contains('&') && !script.contains('\u{2028}'),
            "{script}"
        );
        let json = &script["matchfarmNim(12,".len()..script.len() - 3];
        let back: NimRecord = serde_json::from_str(json).expect("the record's JSON");
        assert_eq!(back, record);
        assert!(INDEX_PAGE.contains(MATCH_CALLBACK));
        assert!(INDEX_PAGE.contains(crate::script::LIST_CALLBACK));
        assert!(INDEX_PAGE.contains(crate::script::INDEX_LIST_NAME));
    }
}
