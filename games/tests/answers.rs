//! The strict answer-line parser `t M b` and its error messages.

use games::bomberman::*;

fn ok(line: &str, turn: u32) -> Action {
    parse_answer(line.as_bytes(), turn).unwrap()
}

fn err(line: &[u8], turn: u32) -> String {
    parse_answer(line, turn).unwrap_err().to_string()
}

#[test]
fn valid_answers() {
    assert_eq!(
        ok("0 U 0", 0),
        Action {
            mv: Move::Up,
            bomb: false
        }
    );
    assert_eq!(
        ok("17 D 1", 17),
        Action {
            mv: Move::Down,
            bomb: true
        }
    );
    assert_eq!(
        ok("299 L 0", 299),
        Action {
            mv: Move::Left,
            bomb: false
        }
    );
    assert_eq!(
        ok("5 R 1", 5),
        Action {
            mv: Move::Right,
            bomb: true
        }
    );
    assert_eq!(ok("5 S 0", 5), Action::STAY);
}

#[test]
fn wrong_turn_numbers() {
    assert_eq!(err(b"5 U 0", 6), "answered turn 5 on turn 6");
    assert_eq!(err(b"99999999999999999999 U 0", 6).as_str(), "turn number \"99999999999999999999\" is not a plain decimal number (digits only, no sign, no leading zeros)");
    assert!(err(b"05 U 0", 5).contains("\"05\" is not a plain decimal"));
    assert!(err(b"+5 U 0", 5).contains("\"+5\" is not a plain decimal"));
    assert!(err(b"-1 U 0", 5).contains("\"-1\""));
    assert!(err(b"x U 0", 5).contains("\"x\""));
}

#[test]
fn bad_moves_and_flags() {
    assert_eq!(
        err(b"3 u 0", 3),
        "move \"u\" is not one of U D L R S (uppercase, one letter)"
    );
    assert_eq!(
        err(b"3 UP 0", 3),
        "move \"UP\" is not one of U D L R S (uppercase, one letter)"
    );
    assert_eq!(
        err(b"3 X 0", 3),
        "move \"X\" is not one of U D L R S (uppercase, one letter)"
    );
    assert_eq!(err(b"3 U 2", 3), "bomb flag \"2\" is not 0 or 1");
    assert_eq!(err(b"3 U true", 3), "bomb flag \"true\" is not 0 or 1");
}

#[test]
fn missing_and_extra_fields() {
    assert_eq!(
        err(b"3 U", 3),
        "answer is missing the bomb flag (got \"3 U\", expected `t M b`)"
    );
    assert_eq!(
        err(b"3", 3),
        "answer is missing the move letter (got \"3\", expected `t M b`)"
    );
    assert_eq!(err(b"", 3), "empty answer line (expected `3 M b`)");
    assert_eq!(
        err(b"3 U 0 4 U 0", 3),
        "answer has 6 fields, more than the 3 of `t M b` (extra: \"4\")"
    );
}

#[test]
fn spacing_must_be_exact() {
    assert_eq!(
        err(b"3  U 0", 3),
        "answer has a leading or trailing space or two spaces in a row at byte 2 (expected `t M b` with single spaces)"
    );
    assert!(err(b" 3 U 0", 3).contains("at byte 0"));
    assert!(err(b"3 U 0 ", 3).contains("at byte 5"));
    assert_eq!(
        err(b"3\tU 0", 3),
        "answer contains the control character '\\t' at byte 1; fields are separated by single spaces"
    );
    assert!(
        err(b"3 U 0\r", 3).contains("'\\r' at byte 5"),
        "a lone CR left in the line"
    );
}

#[test]
fn length_and_encoding() {
    let long = format!("3 U 0{}", " ".repeat(252));
    assert_eq!(
        err(long.as_bytes(), 3),
        "answer line is 257 bytes long, more than the 256 allowed"
    );
    assert_eq!(
        err(b"3 U \xff", 3),
        "answer line is not valid UTF-8 (bad byte at offset 4)"
    );
}

#[test]
fn compact_form_round_trips() {
    for mv in Move::ALL {
        for bomb in [false, true] {
            let a = Action { mv, bomb };
            assert_eq!(Action::from_compact(&a.compact()), Some(a));
        }
    }
    assert_eq!(Action::from_compact("U2"), None);
    assert_eq!(Action::from_compact("u1"), None);
    assert_eq!(Action::from_compact("U10"), None);
}
