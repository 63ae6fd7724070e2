//! Tests of the HTML replay viewer page (`games::bomberman::viewer::render_html`): the embedded
//! data survives the trip exactly, hostile strings cannot leave their script block, and the page
//! refers to nothing outside itself.

use games::bomberman::viewer::{render_html, DATA_ELEMENT_ID};
use serde_json::{json, Value};

/// The committed hand-written sample (a 2-player game of 49 turns).
fn sample() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/browser/sample-data.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The text of the `<script id="replay-data">` element, as a browser's HTML parser would cut it:
/// from the end of the opening tag to the first `</script` (case-insensitive).
fn embedded_text(html: &str) -> &str {
    let open = format!("<script id=\"{DATA_ELEMENT_ID}\" type=\"application/json\">");
    let start = html.find(&open).expect("data script element") + open.len();
    let rest = &html[start..];
    let end = rest
        .to_ascii_lowercase()
        .find("</script")
        .expect("end of the data script");
    &rest[..end]
}

fn embedded(html: &str) -> Value {
    serde_json::from_str(embedded_text(html)).expect("embedded data is JSON")
}

/// A small viewer-data document whose player names are `names`.
fn with_names(names: &[&str]) -> Value {
    let mut v = sample();
    let names: Vec<Value> = names.iter().map(|n| json!(n)).collect();
    v["meta"]["names"] = Value::Array(names.clone());
    v["result"]["names"] = Value::Array(names);
    v
}

const HOSTILE: &[&str] = &[
    "</script><script>alert(1)</script>",
    "</SCRIPT ><img src=x onerror=alert(2)>",
    "<!-- <script>",
    "quote \" and ' and ` backtick",
    "new\nline\r\nand\ttab",
    "line\u{2028}separator\u{2029}paragraph",
    "unicode: żółw 🐢 \u{0}",
    "&lt;entity&gt; &amp;",
    "__MATCHFARM_REPLAY_DATA__",
];

#[test]
fn data_round_trips_exactly() {
    let data = sample();
    let html = render_html(&data);
    assert_eq!(embedded(&html), data);
}

#[test]
fn empty_game_round_trips() {
    let mut data = sample();
    data["frames"] = json!([]);
    let html = render_html(&data);
    assert_eq!(embedded(&html), data);
    assert_eq!(embedded(&html)["frames"], json!([]));
}

#[test]
fn hostile_names_stay_inside_the_script_block() {
    let data = with_names(HOSTILE);
    let html = render_html(&data);
    // The parsed-as-HTML script text is still the whole, exact JSON.
    assert_eq!(embedded(&html), data);
    let text = embedded_text(&html);
    for bad in ["<", ">", "&", "\u{2028}", "\u{2029}"] {
        assert!(!text.contains(bad), "raw {bad:?} inside the data block");
    }
    // Nothing the names carry shows up as markup anywhere in the page (their text, such as
    // "alert(1)", is only inside JSON strings, with every `<` escaped).
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("<img"));
    assert!(!lower.contains("<script>alert"));
    let template = render_html(&json!({})).to_ascii_lowercase();
    assert_eq!(
        lower.matches("<script").count(),
        template.matches("<script").count(),
        "no extra script elements"
    );
    assert_eq!(
        lower.matches("</script").count(),
        template.matches("</script").count(),
        "no extra script ends"
    );
    assert_eq!(
        html.matches("<!--").count(),
        template.matches("<!--").count()
    );
}

#[test]
fn every_hostile_string_alone_round_trips() {
    for name in HOSTILE {
        let data =
            json!({"meta": {"names": [name]}, "frames": [], "nested": {"k": [name, {"x": name}]}});
        assert_eq!(embedded(&render_html(&data)), data, "{name:?}");
    }
}

#[test]
fn hostile_object_keys_are_escaped_too() {
    let data = json!({"</script><b>": {"\u{2028}": "x"}});
    let html = render_html(&data);
    assert_eq!(embedded(&html), data);
    assert!(!html.contains("<b>"));
}

#[test]
fn no_external_urls() {
    let html = render_html(&sample()).to_ascii_lowercase();
    for bad in [
        "http:", "https:", "ftp:", "@import", "url(", "<link", "<iframe", "<img",
    ] {
        assert!(!html.contains(bad), "page contains {bad:?}");
    }
    for attr in ["src", "href", "action"] {
        for quote in ["\"", "'", ""] {
            let needle = format!("{attr}={quote}//");
            assert!(!html.contains(&needle), "page contains {needle:?}");
        }
        let with_space = format!("{attr} = ");
        assert!(!html.contains(&with_space), "page contains {with_space:?}");
    }
    // Scripts are inline only; the page forbids every network fetch by policy as well.
    assert!(!html.contains("<script src"));
    assert!(html.contains("default-src 'none'"));
}

#[test]
fn page_has_the_controls_tests_and_users_rely_on() {
    let html = render_html(&sample());
    for id in [
        "board",
        "turn",
        "first",
        "prev",
        "play",
        "next",
        "last",
        "slider",
        "speed",
        "players",
        "events",
        "final",
        "final-ranks",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "missing #{id}");
    }
    assert!(html.starts_with("<!DOCTYPE html>"));
}

/// The text of the `<script id="{id}">` element of a page (to the first `</script`).
fn block<'a>(html: &'a str, id: &str) -> &'a str {
    let open = format!("<script id=\"{id}\" type=\"application/json\">");
    let start = html.find(&open).expect("script element") + open.len();
    let end = html[start..]
        .to_ascii_lowercase()
        .find("</script")
        .expect("end of script")
        + start;
    &html[start..end]
}

#[test]
fn index_page_embeds_this_viewer_and_keeps_hostile_names_in_their_lines() {
    use games::bomberman::viewer::{
        index_list_line, match_script, parse_match_script, render_index, viewer_json,
        INDEX_LIST_NAME,
    };
    let hostile = [
        "</script><script>alert(1)</script>",
        "<!-- x",
        "__MATCHFARM_VIEWER_TEMPLATE__",
        "\");alert(1);(\"",
        "\u{2028}",
    ];
    let list =
        json!([{"n": 1, "size": 3, "names": hostile, "ranks": [1, 2, 3]}, {"n": 2, "failed": "x"}]);
    // The list file: one call per match, each argument the entry exactly, nothing else in it.
    for entry in list.as_array().unwrap() {
        let line = index_list_line(entry);
        let arg = line
            .strip_prefix("matchfarmMatch(")
            .and_then(|l| l.strip_suffix(");\n"))
            .expect("one call per line");
        let back: Value = serde_json::from_str(arg).unwrap();
        assert_eq!(&back, entry, "the entry survives exactly");
        assert!(!arg.contains('<') && !arg.contains('\u{2028}'), "{arg}");
        assert_eq!(line.matches('\n').count(), 1, "one line");
    }
    // A match's data file gives back its bytes.
    let gz = [0x1f, 0x8b, b'"', b'\\', b'\n', 0, 0xff];
    assert_eq!(
        parse_match_script(&match_script(1, &gz)),
        Some((1, gz.to_vec()))
    );
    // The page is the same for every folder: it carries no match, only the viewer.
    let page = render_index();
    assert_eq!(page, render_index());
    assert!(page.contains(INDEX_LIST_NAME));
    // The viewer the index opens a match in is this viewer: the template with the data put in
    // is byte for byte the one-match page.
    let template: String = serde_json::from_str(block(&page, "viewer-template")).unwrap();
    let data = sample();
    assert_eq!(
        template.replacen("__MATCHFARM_REPLAY_DATA__", &viewer_json(&data), 1),
        render_html(&data)
    );
    // Nothing from the network: scripts only inline or from files beside it (file:), loaded by
    // the page's own script (no <script src> in the markup).
    let lower = page.to_ascii_lowercase();
    for bad in [
        "http:",
        "https:",
        "@import",
        "url(",
        "<link",
        "<img",
        "<script src",
    ] {
        assert!(!lower.contains(bad), "index contains {bad:?}");
    }
    assert!(lower.contains("default-src 'none'"));
    assert!(lower.contains("script-src 'unsafe-inline' file:;"));
}
