//! The self-contained HTML replay viewer: one file with inline CSS and JavaScript and the viewer
//! data (see `replay::viewer_data`) embedded as a JSON script block. No network, works from file://.

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

/// Serializes `data` as JSON that cannot end or confuse the `<script>` element holding it.
fn script_safe_json(data: &serde_json::Value) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_has_exactly_one_placeholder() {
        assert_eq!(TEMPLATE.matches(DATA_PLACEHOLDER).count(), 1);
        assert!(TEMPLATE.contains(&format!("id=\"{DATA_ELEMENT_ID}\"")));
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
