//! JSON inside an HTML `<script>` element, as the viewer pages embed their data and the list
//! and match files of a folder's viewer index call their callbacks with it: nothing in the
//! data can end the element or confuse the parser.

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
