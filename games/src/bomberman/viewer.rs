//! The self-contained HTML replay viewer: one file with inline CSS and JavaScript and the viewer
//! data (see `replay::viewer_data`) embedded as a JSON script block. No network, works from file://.
//!
//! Two pages are built on it. [`render_html`] is one match's page (`farm view`, `farm play`).
//! [`render_index`] is a tournament's one viewer page, `replays/index.html`, the same bytes for
//! every folder, so it never has to be rewritten as results arrive. It lists the matches of the
//! list file beside it ([`INDEX_LIST_NAME`], one [`index_list_line`] appended per match), and
//! opening a match (a click, or the address `replays/index.html#12` for match 12, leading zeros
//! allowed) loads that match's data file `NNNNN.js` ([`match_script`]: its viewer data as the
//! index stores it ([`pack_for_index`]: as a rule only the moves, which the page re-plays with
//! its JavaScript copy of the engine, `viewer_sim.js`; else the frames, packed) and gzipped,
//! written once when its result arrived), decompresses it with the browser's
//! `DecompressionStream("gzip")`, rebuilds the frames and shows them in an iframe running this
//! same viewer page; `#` alone (or the "all matches" button) goes back to the list. Both files are
//! loaded with `<script>` elements: a page opened from disk (file://) may do that with no server
//! and no network, where `fetch` of a sibling file is refused (Chromium). Other pages (a
//! tournament report) link to a match as `replays/index.html#N`.

// The list file of every game's viewer index (the page here reads it).
use crate::script::script_safe_json;
pub use crate::script::{index_list_line, INDEX_LIST_NAME, LIST_CALLBACK};

/// The page template; `DATA_PLACEHOLDER` marks where the JSON goes.
const TEMPLATE: &str = include_str!("viewer.html");

/// The marker in the template that `render_html` replaces with the viewer data.
const DATA_PLACEHOLDER: &str = "__MATCHFARM_REPLAY_DATA__";

/// The id of the `<script type="application/json">` element that holds the data.
pub const DATA_ELEMENT_ID: &str = "replay-data";

/// Renders the viewer page for `data` (the viewer data JSON of one replay).
///
/// The JSON is written so that it can sit inside a `<script>` element whatever strings it holds:
/// `<`, `>` and `&` become `\u003c`, `\u003e`, `\u0026` and U+2028/U+2029 become `\u2028`/`\u2029`.
/// All of them can only occur inside JSON strings, where these escapes mean the same characters,
/// so `JSON.parse` of the element's text gives back exactly `data`.
pub fn render_html(data: &serde_json::Value) -> String {
    let json = script_safe_json(data);
    match TEMPLATE.split_once(DATA_PLACEHOLDER) {
        Some((head, tail)) => {
            let mut out = String::with_capacity(TEMPLATE.len() + json.len());
            out.push_str(head);
            out.push_str(&json);
            out.push_str(tail);
            out
        }
        // The template is compiled in and has the marker; a test guards this.
        None => TEMPLATE.to_string(),
    }
}

/// The index page template; see [`render_index`].
const INDEX_TEMPLATE: &str = include_str!("viewer_index.html");

/// The marker of the index template where the viewer page template goes (as a JSON string).
const INDEX_VIEWER: &str = "__MATCHFARM_VIEWER_TEMPLATE__";

/// The function a match's data file ([`match_script`]) calls with its number and bytes.
pub const MATCH_CALLBACK: &str = "matchfarmReplay";

/// The viewer data as the pages embed it: JSON with `<`, `>`, `&`, U+2028 and U+2029 escaped
/// (see [`render_html`]); the index page gzips exactly this text.
pub fn viewer_json(data: &serde_json::Value) -> String {
    script_safe_json(data)
}

pub use super::index_pack::{index_form, pack_for_index, pack_frames, unpack_index_data};


/// The index page's Bomberman engine in JavaScript, which re-plays a data file in the compact
/// form (`index_sim`) into its frames.
const SIM_SCRIPT: &str = include_str!("viewer_sim.js");

/// The marker of the index template where [`SIM_SCRIPT`] goes (inside a `<script>` element).
const INDEX_SIM: &str = "__MATCHFARM_VIEWER_SIM__";

/// Renders a tournament's viewer index page. It is the same for every folder: it loads the list
/// of matches from [`INDEX_LIST_NAME`] beside it, and a match's data file ([`match_script`],
/// `NNNNN.js`) when that match is opened, each with a `<script>` element, which a page opened
/// from disk may do (it may not `fetch` its sibling files). It carries the engine in
/// JavaScript (`viewer_sim.js`) that turns a data file in the compact form back into frames.
pub fn render_index() -> String {
    let viewer = script_safe_json(&serde_json::Value::String(TEMPLATE.to_string()));
    // The template is compiled in and has each marker once; a test guards it.
    INDEX_TEMPLATE
        .replacen(INDEX_VIEWER, &viewer, 1)
        .replacen(INDEX_SIM, SIM_SCRIPT, 1)
}

/// A match's data file for the index page: a call of [`MATCH_CALLBACK`] with the match number
/// and `gzip` (the gzip of [`viewer_json`] of its [`pack_for_index`]ed viewer data) as a string
/// literal of the raw bytes. The page loads the file as `x-user-defined` text, where each byte
/// is one character (0x00–0x7F as ASCII, 0x80–0xFF as U+F780–U+F7FF: the low byte is the
/// byte). Only `"`, `\`, LF and CR are escaped, so the file is about 1% larger than the gzip,
/// where base64 would make it a third larger.
pub fn match_script(number: u64, gzip: &[u8]) -> Vec<u8> {
    let head = format!("{MATCH_CALLBACK}({number},\"");
    let mut out = Vec::with_capacity(head.len() + gzip.len() + gzip.len() / 32 + 4);
    out.extend_from_slice(head.as_bytes());
    for &b in gzip {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b => out.push(b),
        }
    }
    out.extend_from_slice(b"\");\n");
    out
}

/// The inverse of [`match_script`]: the match number and the bytes; None if `file` is not one.
pub fn parse_match_script(file: &[u8]) -> Option<(u64, Vec<u8>)> {
    let rest = file.strip_prefix(format!("{MATCH_CALLBACK}(").as_bytes())?;
    let comma = rest.iter().position(|&b| b == b',')?;
    let number = std::str::from_utf8(&rest[..comma]).ok()?.parse().ok()?;
    let body = rest[comma + 1..]
        .strip_prefix(b"\"")?
        .strip_suffix(b"\");\n")?;
    let mut out = Vec::with_capacity(body.len());
    let mut it = body.iter();
    while let Some(&b) = it.next() {
        match b {
            b'\\' => out.push(match it.next()? {
                b'n' => b'\n',
                b'r' => b'\r',
                &c @ (b'"' | b'\\') => c,
                _ => return None,
            }),
            b'"' | b'\n' | b'\r' => return None,
            b => out.push(b),
        }
    }
    Some((number, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_has_exactly_one_placeholder() {
        assert_eq!(TEMPLATE.matches(DATA_PLACEHOLDER).count(), 1);
        assert!(TEMPLATE.contains(&format!("id=\"{DATA_ELEMENT_ID}\"")));
    }

    #[test]
    fn index_template_has_the_viewer_marker_once() {
        assert_eq!(INDEX_TEMPLATE.matches(INDEX_VIEWER).count(), 1);
        assert!(!INDEX_TEMPLATE.contains(DATA_PLACEHOLDER));
        assert!(INDEX_TEMPLATE.contains(INDEX_LIST_NAME));
        assert!(INDEX_TEMPLATE.contains(LIST_CALLBACK));
        assert!(INDEX_TEMPLATE.contains(MATCH_CALLBACK));
        assert_eq!(INDEX_TEMPLATE.matches(INDEX_SIM).count(), 1);
    }

    #[test]
    fn the_index_engine_is_for_these_rules_and_script_safe() {
        let rules = format!("const RULES = \"{}\";", crate::bomberman::VERSION);
        assert!(SIM_SCRIPT.contains(&rules), "viewer_sim.js names {rules}");
        assert!(!SIM_SCRIPT.to_ascii_lowercase().contains("</script"));
        assert!(!SIM_SCRIPT.contains("<!--"));
        let page = render_index();
        assert!(page.contains(SIM_SCRIPT) && !page.contains(INDEX_SIM));
    }

    #[test]
    fn index_embeds_the_viewer_and_list_lines_are_script_safe() {
        let page = render_index();
        assert!(page.contains(&script_safe_json(&serde_json::Value::String(
            TEMPLATE.into()
        ))));
        assert!(!page.contains(INDEX_VIEWER));
        let entry = serde_json::json!({"n": 3, "names": ["</script>", "\u{2028}"]});
        let line = index_list_line(&entry);
        assert_eq!(
            line,
            "matchfarmMatch({\"n\":3,\"names\":[\"\\u003c/script\\u003e\",\"\\u2028\"]});\n"
        );
    }

    #[test]
    fn match_scripts_keep_every_byte() {
        let all: Vec<u8> = (0..=255u8).chain([b'"', b'\\', b'\n', b'\r']).collect();
        let file = match_script(12, &all);
        assert!(file.starts_with(b"matchfarmReplay(12,\""));
        assert!(file.ends_with(b"\");\n"));
        assert_eq!(
            file.len(),
            20 + all.len() + 8 + 4,
            "one escape per \", \\, LF, CR"
        );
        let body = &file[20..file.len() - 4];
        assert!(!body.contains(&b'\n') && !body.contains(&b'\r'), "one line");
        assert_eq!(parse_match_script(&file), Some((12, all)));
        assert_eq!(parse_match_script(b"matchfarmReplay(1,\"a\");"), None);
        assert_eq!(parse_match_script(b"matchfarmReplay(1,\"\\x\");\n"), None);
    }


    #[test]
    fn escapes_only_inside_strings() {
        let v = serde_json::json!({"a": "</script>&\u{2028}\u{2029}"});
        let s = script_safe_json(&v);
        assert_eq!(
            s, r#"{"a":"\u003c/script\u003e\u0026\u2028\u2029"}"#,
            "escaped form"
        );
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }
}
