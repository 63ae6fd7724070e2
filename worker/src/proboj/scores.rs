//! SCORES as the official proboj runner (Go, `runner/`, v23.1004) takes them: each payload line
//! is read like Go's `fmt.Sscanf(line, "%s %d")` (a name, then an optionally signed run of
//! decimal digits; whatever follows is ignored, so `kl2 383.333` stores 383 and `a -12.7`
//! stores -12; an empty line, a missing number or one past 64 bits refuses the whole message),
//! and `score.json` is the Go `json.Marshal` of the resulting map (keys sorted, the last line
//! of a name wins, `<`, `>`, `&` escaped). Beside the stored integer farm keeps the exact
//! value the server wrote (`383.333`) for the summary and the ratings.

use std::collections::BTreeMap;

/// One parsed SCORES line.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreLine {
    pub name: String,
    /// What the official runner stores in score.json.
    pub stored: i64,
    /// The number as written when it is a finite decimal number (`383.333`, `1e5`), else
    /// `stored`.
    pub exact: f64,
}

/// A SCORES payload line the official runner refuses (it answers ERROR).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScoreLineError {
    #[error("bad score line {0:?}: empty")]
    Empty(String),
    #[error("bad score line {0:?}: want `<name> <integer>`")]
    NoNumber(String),
    #[error("bad score line {0:?}: the number does not fit in 64 bits")]
    Overflow(String),
}

/// Parse one line as Go's `Sscanf("%s %d")` does.
pub fn parse_line(line: &str) -> Result<ScoreLine, ScoreLineError> {
    let rest = line.trim_start();
    let name_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let (name, rest) = rest.split_at(name_end);
    if name.is_empty() {
        return Err(ScoreLineError::Empty(line.to_owned()));
    }
    let rest = rest.trim_start();
    let token = &rest[..rest.find(char::is_whitespace).unwrap_or(rest.len())];
    let unsigned = token.strip_prefix(['+', '-']).unwrap_or(token);
    let digits = unsigned.len()
        - unsigned
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    if digits == 0 {
        return Err(ScoreLineError::NoNumber(line.to_owned()));
    }
    let int_text = &token[..token.len() - unsigned.len() + digits];
    let stored: i64 = int_text
        .parse()
        .map_err(|_| ScoreLineError::Overflow(line.to_owned()))?;
    let exact = token
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && is_decimal(token))
        .unwrap_or(stored as f64);
    Ok(ScoreLine {
        name: name.to_owned(),
        stored,
        exact,
    })
}

/// A plain decimal number, optionally with a fraction and an exponent (no `inf`, no `nan`).
fn is_decimal(token: &str) -> bool {
    token
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E'))
}

/// Parse a SCORES payload: every line must parse (an empty payload is one empty line, refused
/// as the official runner refuses it). Returns the lines in the server's order.
pub fn parse(lines: &[Vec<u8>]) -> Result<Vec<ScoreLine>, ScoreLineError> {
    if lines.is_empty() {
        return Err(ScoreLineError::Empty(String::new()));
    }
    lines
        .iter()
        .map(|l| parse_line(&String::from_utf8_lossy(l)))
        .collect()
}

/// The exact scores, one per name (the last line of a name wins), in first-seen order.
pub fn exact(lines: &[ScoreLine]) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for l in lines {
        match out.iter_mut().find(|(n, _)| *n == l.name) {
            Some(slot) => slot.1 = l.exact,
            None => out.push((l.name.clone(), l.exact)),
        }
    }
    out
}

/// `score.json` byte for byte as the official runner writes it (Go `json.Marshal` of a
/// `map[string]int`).
pub fn score_json(lines: &[ScoreLine]) -> String {
    let map: BTreeMap<&str, i64> = lines.iter().map(|l| (l.name.as_str(), l.stored)).collect();
    let body: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{}:{v}", go_json_string(k)))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// A JSON string as Go's encoding/json writes it (HTML-safe escapes included).
fn go_json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A score for people: an integer as such, a fraction with at most 3 decimals.
pub fn display(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case was run through Go's `fmt.Sscanf(line, "%s %d")` + `json.Marshal` (go 1.19).
    #[test]
    fn lines_parse_as_go_sscanf_does() {
        let ok = |l: &str, stored: i64, exact: f64| {
            let p = parse_line(l).unwrap_or_else(|e| panic!("{l:?}: {e}"));
            assert_eq!((p.stored, p.exact), (stored, exact), "{l:?}");
        };
        ok("kl2 383.333", 383, 383.333);
        ok("a -12.7", -12, -12.7);
        ok("a 1e5", 1, 100000.0);
        ok("a +5", 5, 5.0);
        ok("a 0x10", 0, 0.0);
        ok("a 1_000", 1, 1.0);
        ok("a 007", 7, 7.0);
        ok("a 5abc", 5, 5.0);
        ok(" a 5", 5, 5.0);
        ok("a\t5", 5, 5.0);
        ok("a 3 4", 3, 3.0);
        ok("a -0.9", 0, -0.9);
        ok("a 9223372036854775807", i64::MAX, i64::MAX as f64);
        ok("a 5inf", 5, 5.0);
        for bad in ["a .5", "a", "", "a -", "a 99999999999999999999"] {
            assert!(parse_line(bad).is_err(), "{bad:?} must be refused");
        }
        assert!(parse(&[]).is_err());
    }

    #[test]
    fn score_json_is_go_json() {
        let lines = parse(&[
            b"b 1".to_vec(),
            b"a<&> -2".to_vec(),
            "é 3".as_bytes().to_vec(),
            b"b 2.5".to_vec(),
        ])
        .unwrap();
        assert_eq!(
            score_json(&lines),
            r#"{"a\u003c\u0026\u003e":-2,"b":2,"é":3}"#
        );
        assert_eq!(
            exact(&lines),
            vec![
                ("b".to_string(), 2.5),
                ("a<&>".to_string(), -2.0),
                ("é".to_string(), 3.0)
            ]
        );
    }

    #[test]
    fn display_keeps_integers_and_three_decimals() {
        assert_eq!(display(383.0), "383");
        assert_eq!(display(383.333), "383.333");
        assert_eq!(display(1149.9989999999998), "1149.999");
        assert_eq!(display(-0.5), "-0.5");
    }
}
