//! 钳王 rules, clause by clause: the guide's coordinate system and initial layout, every worked
//! capture example of GUIDE.md, the reading of "exactly three in a row", passes and each ending.

use games::qianwang::{
    apply, judge, legal_moves, Board, EndReason, Forfeit, Game, IllegalMove, Move, RuntimeKind,
    Side, Verdict,
};

/// A board from a picture, top row (y = 3) first: `B` black, `R` red, `.` empty.
fn pic(rows: [&str; 4]) -> Board {
    let mut b = Board::empty();
    for (i, row) in rows.iter().enumerate() {
        let y = 3 - i as u8;
        for (x, c) in row.chars().enumerate() {
            let cell = match c {
                'B' => Some(Side::Black),
                'R' => Some(Side::Red),
                '.' => None,
                other => panic!("bad picture char {other:?}"),
            };
            b.set(x as u8, y, cell);
        }
    }
    b
}

fn mv(from: [u8; 2], to: [u8; 2]) -> Move {
    Move { from, to }
}

#[test]
fn initial_layout_is_the_guides() {
    let b = Board::initial();
    for p in [[0, 3], [1, 3], [2, 3], [3, 3], [0, 2], [3, 2]] {
        assert_eq!(b.get(p[0], p[1]), Some(Side::Black), "black at {p:?}");
    }
    for p in [[0, 0], [1, 0], [2, 0], [3, 0], [0, 1], [3, 1]] {
        assert_eq!(b.get(p[0], p[1]), Some(Side::Red), "red at {p:?}");
    }
    for p in [[1, 1], [2, 1], [1, 2], [2, 2]] {
        assert_eq!(b.get(p[0], p[1]), None, "centre {p:?} empty");
    }
    assert_eq!(b.count(Side::Black), 6);
    assert_eq!(b.count(Side::Red), 6);
    assert_eq!(b, pic(["BBBB", "B..B", "R..R", "RRRR"]));
    let g = Game::new();
    assert_eq!(g.to_move(), Side::Black, "black moves first");
    assert_eq!(g.turn_number(), 1);
    assert!(g.outcome().is_none());
}

#[test]
fn board_is_column_major_x_then_y() {
    // (2,1) red: x = 2 is the column, y = 1 the row (second from the bottom).
    let b = pic(["....", "....", "..R.", "...."]);
    assert_eq!(b.get(2, 1), Some(Side::Red));
    assert_eq!(b.get(1, 2), None);
    assert_eq!(b.cells()[2][1], Some(Side::Red));
    assert_eq!(b.cells()[1][2], None);
    let json = serde_json::to_value(b).unwrap();
    assert_eq!(
        json[2][1], "red",
        "JSON board is indexed [x][y] like the JS game.board"
    );
    assert!(json[1][2].is_null());
    let back: Board = serde_json::from_value(json).unwrap();
    assert_eq!(back, b);
}

#[test]
fn move_json_shape() {
    let m = mv([0, 2], [0, 1]);
    assert_eq!(
        serde_json::to_string(&m).unwrap(),
        r#"{"from":[0,2],"to":[0,1]}"#
    );
}

#[test]
fn legal_moves_from_the_start_in_fixed_order() {
    let moves = legal_moves(&Board::initial(), Side::Black);
    // Black pieces that touch the empty centre: (0,2)->(1,2), (1,3)->(1,2), (2,3)->(2,2), (3,2)->(2,2).
    assert_eq!(
        moves,
        vec![
            mv([0, 2], [1, 2]),
            mv([1, 3], [1, 2]),
            mv([2, 3], [2, 2]),
            mv([3, 2], [2, 2]),
        ]
    );
    let red = legal_moves(&Board::initial(), Side::Red);
    assert_eq!(red.len(), 4);
    assert!(red.contains(&mv([0, 1], [1, 1])));
    assert!(red.contains(&mv([2, 0], [2, 1])));
}

#[test]
fn illegal_moves_are_refused_with_a_reason() {
    let b = Board::initial();
    let e = apply(&b, Side::Black, &mv([0, 0], [1, 1])).unwrap_err();
    assert!(matches!(e, IllegalMove::NotOwnPiece { .. }), "{e}");
    let e = apply(&b, Side::Black, &mv([1, 1], [1, 2])).unwrap_err();
    assert!(matches!(e, IllegalMove::NotOwnPiece { .. }), "{e}");
    let e = apply(&b, Side::Black, &mv([0, 2], [2, 2])).unwrap_err();
    assert!(
        matches!(e, IllegalMove::NotAdjacent { .. }),
        "two steps: {e}"
    );
    let e = apply(&b, Side::Black, &mv([0, 2], [1, 1])).unwrap_err();
    assert!(
        matches!(e, IllegalMove::NotAdjacent { .. }),
        "diagonal: {e}"
    );
    let e = apply(&b, Side::Black, &mv([0, 2], [0, 1])).unwrap_err();
    assert!(matches!(e, IllegalMove::Occupied { .. }), "{e}");
    let e = apply(&b, Side::Black, &mv([3, 3], [4, 3])).unwrap_err();
    assert!(
        matches!(e, IllegalMove::OffBoard { point: [4, 3], .. }),
        "{e}"
    );
    assert!(e.to_string().contains("off the 4x4 board"), "{e}");
    let e = apply(&b, Side::Black, &mv([1, 2], [1, 2])).unwrap_err();
    assert!(matches!(e, IllegalMove::NotOwnPiece { .. }), "{e}");
}

/// GUIDE 基本吃子: row y=1 reads B B R . after black's move; the red (2,1) is captured.
#[test]
fn guide_basic_capture() {
    // Black steps (1,2) -> (1,1) to complete (0,1) B, (1,1) B, (2,1) R, (3,1) empty.
    let before = pic(["....", ".B..", "B.R.", "...."]);
    let a = apply(&before, Side::Black, &mv([1, 2], [1, 1])).unwrap();
    assert_eq!(a.captured, vec![[2, 1]]);
    assert_eq!(a.board, pic(["....", "....", "BB..", "...."]));
    // The same line formed by the other own piece arriving: (0,2) -> (0,1).
    let before = pic(["....", "B...", ".BR.", "...."]);
    let a = apply(&before, Side::Black, &mv([0, 2], [0, 1])).unwrap();
    assert_eq!(a.captured, vec![[2, 1]]);
}

/// GUIDE 送上门不吃: red (1,1) (2,1) already two in a row; black walks (0,2) -> (0,1) next to them.
#[test]
fn guide_walking_into_a_sandwich_is_safe() {
    let before = pic(["....", "B...", ".RR.", "...."]);
    let a = apply(&before, Side::Black, &mv([0, 2], [0, 1])).unwrap();
    assert!(
        a.captured.is_empty(),
        "nothing is captured: {:?}",
        a.captured
    );
    assert_eq!(
        a.board.get(0, 1),
        Some(Side::Black),
        "the black piece stays"
    );
    assert_eq!(a.board.count(Side::Red), 2);
    assert_eq!(a.board.count(Side::Black), 1);
    // Red can capture it on its own turn by re-forming the line: step (1,1) away and back is two
    // plies, so use a fresh arrival: red (2,1) -> (2,2) then back (2,2) -> (2,1) captures (0,1).
    let r1 = apply(&a.board, Side::Red, &mv([2, 1], [2, 2])).unwrap();
    assert!(r1.captured.is_empty());
    let r2 = apply(&r1.board, Side::Red, &mv([2, 2], [2, 1])).unwrap();
    assert_eq!(
        r2.captured,
        vec![[0, 1]],
        "only the mover captures, on its own move"
    );
}

/// GUIDE 双线同吃: red (1,0) -> (1,1) captures (2,1) on the row and (1,3) on the column.
#[test]
fn guide_double_capture() {
    let before = pic([".B..", ".R..", "R.B.", ".R.."]);
    let a = apply(&before, Side::Red, &mv([1, 0], [1, 1])).unwrap();
    assert_eq!(a.captured, vec![[2, 1], [1, 3]], "row first, then column");
    assert_eq!(a.board, pic(["....", ".R..", "RR..", "...."]));
    assert_eq!(a.board.count(Side::Black), 0);
}

#[test]
fn opponent_in_the_middle_does_not_capture() {
    // Black (0,2) -> (0,1): row y=1 reads B R B . — not "two own in a row".
    let before = pic(["....", "B...", ".RB.", "...."]);
    let a = apply(&before, Side::Black, &mv([0, 2], [0, 1])).unwrap();
    assert!(a.captured.is_empty());
}

#[test]
fn a_run_of_four_does_not_capture() {
    // Row y=1 becomes B B R B (full line): not exactly three.
    let before = pic(["....", ".B..", "B.RB", "...."]);
    let a = apply(&before, Side::Black, &mv([1, 2], [1, 1])).unwrap();
    assert!(a.captured.is_empty(), "{:?}", a.captured);
    // Row y=1 becomes B B R R: four in a row, nothing.
    let before = pic(["....", ".B..", "B.RR", "...."]);
    let a = apply(&before, Side::Black, &mv([1, 2], [1, 1])).unwrap();
    assert!(a.captured.is_empty());
}

#[test]
fn mirrored_and_vertical_runs_capture() {
    // . R B B on row y=0 after black (2,1) -> (2,0): red (1,0) captured.
    let before = pic(["....", "....", "..B.", ".R.B"]);
    let a = apply(&before, Side::Black, &mv([2, 1], [2, 0])).unwrap();
    assert_eq!(a.captured, vec![[1, 0]]);
    // Column x=3 top to bottom: R at (3,3), B (3,2), B arrives at (3,1), (3,0) empty.
    let before = pic(["...R", "...B", "..B.", "...."]);
    let a = apply(&before, Side::Black, &mv([2, 1], [3, 1])).unwrap();
    assert_eq!(a.captured, vec![[3, 3]]);
}

#[test]
fn only_the_moved_pieces_row_and_column_are_checked() {
    // Row y=1 already reads B B R . (formed earlier). Black moves (3,2) -> (3,3): its row y=3 and
    // column x=3 hold no pattern, so nothing is captured although row y=1 has one.
    let before = pic(["....", "...B", "BBR.", "...."]);
    let a = apply(&before, Side::Black, &mv([3, 2], [3, 3])).unwrap();
    assert!(
        a.captured.is_empty(),
        "row y=1 is not the moved piece's line"
    );
    // Moving along the pattern's own line but making it four long: B B R B → nothing.
    let before = pic(["....", "....", "BBR.", "...B"]);
    let a = apply(&before, Side::Black, &mv([3, 0], [3, 1])).unwrap();
    assert!(a.captured.is_empty());
    // Red moving next to an existing black pair does not make black capture.
    let before = pic(["....", "....", "BB..", "..R."]);
    let a = apply(&before, Side::Red, &mv([2, 0], [2, 1])).unwrap();
    assert!(a.captured.is_empty());
    assert_eq!(a.board.get(2, 1), Some(Side::Red));
}

#[test]
fn captures_do_not_chain() {
    // Black (1,1) -> (0,1): column x=0 reads (bottom up) . B B R → captures (0,3). Row y=3 was
    // R B B R; after the removal it reads . B B R, a pattern that would capture (3,3) if it were
    // checked again — it is not: no chains.
    let before = pic(["RBBR", "B...", ".B..", "...."]);
    let a = apply(&before, Side::Black, &mv([1, 1], [0, 1])).unwrap();
    assert_eq!(a.captured, vec![[0, 3]]);
    assert_eq!(
        a.board.get(3, 3),
        Some(Side::Red),
        "no second-stage capture"
    );
    assert_eq!(a.board, pic([".BBR", "B...", "B...", "...."]));
}

#[test]
fn judge_endings() {
    assert_eq!(judge(&Board::initial(), 0), None);
    assert_eq!(judge(&Board::initial(), 19), None);
    assert_eq!(
        judge(&Board::initial(), 20),
        Some(Verdict {
            winner: None,
            reason: EndReason::Material
        })
    );
    let ahead = pic(["BB..", "B...", "....", "RR.."]);
    assert_eq!(
        judge(&ahead, 20),
        Some(Verdict {
            winner: Some(Side::Black),
            reason: EndReason::Material
        }),
        "ahead by one piece wins"
    );
    let red_left_one = pic(["BB..", "....", "....", "R..."]);
    assert_eq!(
        judge(&red_left_one, 0),
        Some(Verdict {
            winner: Some(Side::Black),
            reason: EndReason::Eliminated
        })
    );
    let black_none = pic(["....", "....", "....", "RR.."]);
    assert_eq!(
        judge(&black_none, 25).map(|v| (v.winner, v.reason)),
        Some((Some(Side::Red), EndReason::Eliminated)),
        "elimination wins over material"
    );
    let two_each = pic(["BB..", "....", "....", "RR.."]);
    assert_eq!(judge(&two_each, 3), None, "two pieces is not eliminated");
}

#[test]
fn game_ends_by_elimination_after_the_capture() {
    let start = pic(["....", ".B..", "B.R.", "...R"]);
    let mut g = Game::from_position(start, Side::Black);
    let out = g.play(Some(mv([1, 2], [1, 1]))).unwrap();
    assert_eq!(out.ply.captured, vec![[2, 1]]);
    let o = out.outcome.expect("red is down to one piece");
    assert_eq!(o.winner, Some(Side::Black));
    assert_eq!(o.reason, EndReason::Eliminated);
    assert_eq!(o.turn, 1);
    assert_eq!(g.captured_by(Side::Black), 1);
    assert_eq!(g.play(Some(mv([3, 0], [2, 0]))), Err(IllegalMove::GameOver));
}

#[test]
fn twenty_moves_without_capture_decide_by_material() {
    // Black 3, red 2, far apart: shuffle back and forth without any capture.
    let start = pic(["B..B", "B...", "....", "R..R"]);
    let mut g = Game::from_position(start, Side::Black);
    let black = [mv([3, 3], [2, 3]), mv([2, 3], [3, 3])];
    let red = [mv([3, 0], [2, 0]), mv([2, 0], [3, 0])];
    for i in 0..20usize {
        assert!(g.outcome().is_none(), "still running before move {}", i + 1);
        let m = if i % 2 == 0 {
            black[(i / 2) % 2]
        } else {
            red[(i / 2) % 2]
        };
        let out = g.play(Some(m)).unwrap();
        assert!(out.ply.captured.is_empty());
        assert_eq!(g.no_capture_moves(), i as u32 + 1);
    }
    let o = g.outcome().expect("ends after the 20th move");
    assert_eq!(
        (o.winner, o.reason, o.turn),
        (Some(Side::Black), EndReason::Material, 20)
    );
}

#[test]
fn equal_material_after_twenty_moves_is_a_draw_and_a_capture_resets() {
    // A capture resets the counter.
    let start = pic(["....", ".B..", "B.R.", "R.RR"]);
    let mut g2 = Game::from_position(start, Side::Black);
    g2.play(Some(mv([1, 2], [1, 1]))).unwrap();
    assert_eq!(g2.no_capture_moves(), 0);
    // From the initial position: quiet shuffling for 20 moves, 6 v 6 → draw.
    let mut g = Game::new();
    let black = [mv([0, 2], [1, 2]), mv([1, 2], [0, 2])];
    let red = [mv([3, 1], [2, 1]), mv([2, 1], [3, 1])];
    for i in 0..20usize {
        let m = if i % 2 == 0 {
            black[(i / 2) % 2]
        } else {
            red[(i / 2) % 2]
        };
        let out = g.play(Some(m)).unwrap();
        assert!(out.ply.captured.is_empty(), "move {} {m}", i + 1);
    }
    let o = g.outcome().expect("ended");
    assert_eq!((o.winner, o.reason), (None, EndReason::Material));
}

#[test]
fn pass_only_without_legal_moves() {
    let mut g = Game::new();
    let e = g.play(None).unwrap_err();
    assert!(
        matches!(
            e,
            IllegalMove::PassWithLegalMoves {
                side: Side::Black,
                legal: 4
            }
        ),
        "{e}"
    );
    // Both red pieces boxed in: (0,0) by (1,0) and (0,1); (3,0) by (2,0) and (3,1).
    let start = pic(["....", "....", "B..B", "RBBR"]);
    assert!(
        legal_moves(&start, Side::Red).is_empty(),
        "{}",
        start.to_ascii()
    );
    let mut g = Game::from_position(start, Side::Red);
    assert!(g.legal_moves().is_empty());
    let out = g.play(None).unwrap();
    assert_eq!(out.ply.mv, None);
    assert!(out.outcome.is_none(), "one pass does not end the game");
    assert_eq!(g.to_move(), Side::Black);
    assert_eq!(g.turn_number(), 2, "a pass is a ply");
    assert_eq!(g.passes_in_a_row(), 1);
    assert_eq!(
        g.no_capture_moves(),
        0,
        "a pass is not a move for the counter"
    );
    let e = g.play(None).unwrap_err();
    assert!(matches!(
        e,
        IllegalMove::PassWithLegalMoves {
            side: Side::Black,
            ..
        }
    ));
    let out = g.play(Some(mv([0, 1], [0, 2]))).unwrap();
    assert!(out.ply.captured.is_empty());
    assert_eq!(g.no_capture_moves(), 1);
    assert_eq!(g.passes_in_a_row(), 0, "a move resets the pass streak");
}

#[test]
fn both_sides_passing_is_a_stalemate_decided_by_material() {
    // A full board (only possible hand-made): neither side can move.
    let full = pic(["BBBB", "RRRR", "BBBB", "RRRB"]);
    let mut g = Game::from_position(full, Side::Black);
    assert!(g.play(None).unwrap().outcome.is_none());
    let o = g
        .play(None)
        .unwrap()
        .outcome
        .expect("second pass in a row ends it");
    assert_eq!(
        (o.winner, o.reason, o.turn),
        (Some(Side::Black), EndReason::Stalemate, 2)
    );
    let even = pic(["BBBB", "RRRR", "BBBB", "RRRR"]);
    let mut g = Game::from_position(even, Side::Red);
    g.play(None).unwrap();
    let o = g.play(None).unwrap().outcome.unwrap();
    assert_eq!((o.winner, o.reason), (None, EndReason::Stalemate));
}

#[test]
fn forfeit_loses_for_the_side_to_move() {
    let mut g = Game::new();
    g.play(Some(mv([0, 2], [1, 2]))).unwrap();
    let o = g
        .forfeit(
            Forfeit::Runtime(RuntimeKind::PointsExhausted),
            "apply with 0 points left",
        )
        .unwrap();
    assert_eq!(o.winner, Some(Side::Black));
    assert_eq!(o.reason, EndReason::Runtime);
    assert_eq!(o.runtime, Some(RuntimeKind::PointsExhausted));
    assert_eq!(o.turn, 2);
    let json = serde_json::to_value(&o).unwrap();
    assert_eq!(json["reason"], "runtime");
    assert_eq!(json["runtime"], "points_exhausted");
    assert!(
        g.forfeit(Forfeit::Illegal, "x").is_err(),
        "cannot forfeit an ended game"
    );
}
