//! JSON inside an HTML `<script>` element, as the viewer pages embed their data and the list
//! and match files of a folder's viewer index call their callbacks with it: nothing in the
//! data can end the element or confuse the parser. The list file's format is every game's
//! ([`index_list_line`]): each game's index page reads it.

/// The file beside a viewer index page that lists the matches: one [`index_list_line`] each.
pub const INDEX_LIST_NAME: &str = "index.js";

/// The function each line of the list file calls with one match's entry.
pub const LIST_CALLBACK: &str = "matchfarmMatch";

/// One line of the list file: `entry` (an object with `n`, `size`, `names`, `ranks`, `points`,
/// `turns`, `valid`, `failed` and `replay`, the replay's file name when the match can be
/// opened, any of them optional) as a call of [`LIST_CALLBACK`]. Lines are appended as results
/// arrive; the page takes the last line of each match.
pub fn index_list_line(entry: &serde_json::Value) -> String {
    format!("{LIST_CALLBACK}({});\n", script_safe_json(entry))
}

/// Serializes `data` as JSON that cannot end or confuse the `<script>` element holding it.
pub fn script_safe_json(data: &serde_json::Value) -> String {
    let raw = data.to_string();
    let mut out = String::with_capacity(raw.len() + raw.len() / 16);
    for c in raw.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}
