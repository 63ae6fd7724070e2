//! Property tests of the 钳王 engine over random games: piece counts never increase, at most two
//! captures per move (all on the moved piece's lines), captures agree with an independent
//! string-pattern reading of the rule, determinism, termination, and record round trip / verify.

use games::qianwang::{
    apply, captures_at, judge, legal_moves, verify, Board, EndReason, Forfeit, Game, MatchRecord,
    Move, Outcome, Player, PlyMismatch, RuntimeKind, Side, VerifyError, VERSION,
};
use proptest::prelude::*;

/// Plays a game from `start`, picking `legal[choice % len]` each ply; passes when stuck. Stops at
/// the end or after `choices` run out; `fault_at` forfeits the side to move at that ply.
fn playout(start: Game, choices: &[u16], fault_at: Option<usize>) -> Game {
    let mut g = start;
    for (i, c) in choices.iter().enumerate() {
        if g.is_over() {
            break;
        }
        if Some(i) == fault_at {
            g.forfeit(Forfeit::Runtime(RuntimeKind::Timeout), "test fault")
                .expect("game running");
            break;
        }
        let legal = g.legal_moves();
        let m = if legal.is_empty() {
            None
        } else {
            Some(legal[*c as usize % legal.len()])
        };
        g.play_with_points(m, (*c % 101) as u32 * m.is_some() as u32)
            .expect("a legal move or a forced pass is accepted");
    }
    g
}

fn record_of(g: &Game, seed: u64) -> Option<MatchRecord> {
    Some(MatchRecord {
        version: VERSION.to_string(),
        seed,
        black: Player {
            name: "b".into(),
            code_sha256: "0".repeat(64),
        },
        red: Player {
            name: "r".into(),
            code_sha256: "1".repeat(64),
        },
        plies: g.history().to_vec(),
        outcome: g.outcome()?,
    })
}

/// Independent reading of the capture rule: write the line as a string from the mover's view
/// (`M` mover, `O` opponent, `.` empty), take the maximal run around the moved index, and capture
/// iff the run is exactly "MMO" or "OMM".
fn reference_line(line: [Option<Side>; 4], mover: Side, at: usize) -> Option<usize> {
    let s: Vec<char> = line
        .iter()
        .map(|c| match c {
            None => '.',
            Some(s) if *s == mover => 'M',
            Some(_) => 'O',
        })
        .collect();
    let start = s[..at].iter().rposition(|c| *c == '.').map_or(0, |p| p + 1);
    let end = s[at..].iter().position(|c| *c == '.').map_or(4, |p| at + p);
    let run: String = s[start..end].iter().collect();
    match run.as_str() {
        "MMO" => Some(end - 1),
        "OMM" => Some(start),
        _ => None,
    }
}

fn reference_captures(b: &Board, mover: Side, at: [u8; 2]) -> Vec<[u8; 2]> {
    let [x, y] = at;
    let row = [b.get(0, y), b.get(1, y), b.get(2, y), b.get(3, y)];
    let col = [b.get(x, 0), b.get(x, 1), b.get(x, 2), b.get(x, 3)];
    let mut out = Vec::new();
    if let Some(i) = reference_line(row, mover, x as usize) {
        out.push([i as u8, y]);
    }
    if let Some(i) = reference_line(col, mover, y as usize) {
        out.push([x, i as u8]);
    }
    out
}

fn arb_board() -> impl Strategy<Value = Board> {
    prop::collection::vec(
        prop_oneof![Just(None), Just(Some(Side::Black)), Just(Some(Side::Red))],
        16,
    )
    .prop_map(|v| {
        let mut b = Board::empty();
        for (i, c) in v.into_iter().enumerate() {
            b.set((i / 4) as u8, (i % 4) as u8, c);
        }
        b
    })
}

fn arb_side() -> impl Strategy<Value = Side> {
    prop_oneof![Just(Side::Black), Just(Side::Red)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn counts_never_increase_and_captures_are_bounded(choices in prop::collection::vec(any::<u16>(), 0..300)) {
        let g = playout(Game::new(), &choices, None);
        let mut replay = Game::new();
        for ply in g.history() {
            let before = *replay.board();
            let (mine, theirs) = (before.count(ply.side), before.count(ply.side.other()));
            replay.play_with_points(ply.mv, ply.points_used).unwrap();
            let after = *replay.board();
            prop_assert!(ply.captured.len() <= 2);
            prop_assert_eq!(after.count(ply.side), mine, "the mover never loses a piece");
            prop_assert_eq!(after.count(ply.side.other()) + ply.captured.len() as u32, theirs);
            if let Some(m) = ply.mv {
                for c in &ply.captured {
                    prop_assert!(c[0] == m.to[0] || c[1] == m.to[1], "capture {:?} off the lines of {}", c, m);
                    prop_assert_eq!(before.get(c[0], c[1]), Some(ply.side.other()));
                }
            } else {
                prop_assert!(ply.captured.is_empty());
                prop_assert_eq!(before, after);
            }
        }
        let b = replay.board();
        prop_assert_eq!(6 - b.count(Side::Red), replay.captured_by(Side::Black));
        prop_assert_eq!(6 - b.count(Side::Black), replay.captured_by(Side::Red));
    }

    #[test]
    fn captures_match_the_reference_reading(b in arb_board(), side in arb_side()) {
        for m in legal_moves(&b, side) {
            let mut stepped = b;
            stepped.set(m.from[0], m.from[1], None);
            stepped.set(m.to[0], m.to[1], Some(side));
            let expect = reference_captures(&stepped, side, m.to);
            prop_assert_eq!(captures_at(&stepped, side, m.to), expect.clone());
            let a = apply(&b, side, &m).unwrap();
            prop_assert_eq!(a.captured, expect);
        }
    }

    #[test]
    fn legal_moves_are_exactly_the_accepted_moves(b in arb_board(), side in arb_side()) {
        let legal = legal_moves(&b, side);
        let mut accepted = Vec::new();
        for fx in 0..5u8 { for fy in 0..5u8 { for tx in 0..5u8 { for ty in 0..5u8 {
            let m = Move { from: [fx, fy], to: [tx, ty] };
            if apply(&b, side, &m).is_ok() { accepted.push(m); }
        }}}}
        let mut sorted = legal.clone();
        sorted.sort_by_key(|m| (m.from, m.to));
        accepted.sort_by_key(|m| (m.from, m.to));
        prop_assert_eq!(sorted, accepted);
        prop_assert_eq!(legal_moves(&b, side), legal, "deterministic order");
    }

    #[test]
    fn games_are_deterministic_and_terminate(choices in prop::collection::vec(any::<u16>(), 600)) {
        let a = playout(Game::new(), &choices, None);
        let b = playout(Game::new(), &choices, None);
        prop_assert_eq!(&a, &b);
        // Captures are finite and 20 quiet moves end the game: it must be over within 600 plies.
        let o = a.outcome();
        prop_assert!(o.is_some(), "still running after {} plies", a.history().len());
        let o = o.unwrap();
        prop_assert_eq!(o.turn as usize, a.history().len());
        match o.reason {
            EndReason::Eliminated | EndReason::Material => {
                let v = judge(a.board(), a.no_capture_moves()).expect("judge agrees it is over");
                prop_assert_eq!((v.winner, v.reason), (o.winner, o.reason));
            }
            EndReason::Stalemate => prop_assert_eq!(a.passes_in_a_row(), 2),
            other => prop_assert!(false, "unexpected reason {}", other),
        }
    }

    #[test]
    fn record_round_trips_and_verifies(choices in prop::collection::vec(any::<u16>(), 1..600), seed in any::<u64>(), fault in prop::option::of(0usize..40)) {
        let g = playout(Game::new(), &choices, fault);
        if let Some(rec) = record_of(&g, seed) {
            let json = rec.to_json();
            let back = MatchRecord::from_json(&json).unwrap();
            prop_assert_eq!(&back, &rec);
            prop_assert_eq!(MatchRecord::from_json(&rec.to_json_pretty()).unwrap(), rec.clone());
            prop_assert_eq!(verify(&back), Ok(()));
        }
    }

    #[test]
    fn verify_names_the_first_tampered_ply(choices in prop::collection::vec(any::<u16>(), 600), pick in any::<prop::sample::Index>(), how in 0u8..4) {
        let g = playout(Game::new(), &choices, None);
        let mut rec = record_of(&g, 7).expect("ended");
        let k = pick.index(rec.plies.len());
        let ply = &mut rec.plies[k];
        match how {
            0 => ply.side = ply.side.other(),
            1 => {
                if ply.captured.is_empty() { ply.captured.push([3, 3]); } else { ply.captured.pop(); }
            }
            2 => ply.mv = Some(Move { from: [9, 9], to: [9, 8] }),
            _ => ply.points_used = 101,
        }
        let err = verify(&rec).unwrap_err();
        prop_assert_eq!(err.ply_index(), Some(k), "{}", err);
        let what_ok = matches!(
            (&err, how),
            (VerifyError::Ply { what: PlyMismatch::WrongSide { .. }, .. }, 0)
                | (VerifyError::Ply { what: PlyMismatch::Captured { .. }, .. }, 1)
                | (VerifyError::Ply { what: PlyMismatch::Illegal(_), .. }, 2)
                | (VerifyError::Ply { what: PlyMismatch::TooManyPoints { .. }, .. }, 3)
        );
        prop_assert!(what_ok, "tamper {} gave {}", how, err);
    }

    #[test]
    fn verify_rejects_a_changed_outcome(choices in prop::collection::vec(any::<u16>(), 600), how in 0u8..3) {
        let g = playout(Game::new(), &choices, None);
        let mut rec = record_of(&g, 7).expect("ended");
        let o: &mut Outcome = &mut rec.outcome;
        match how {
            0 => o.winner = match o.winner { None => Some(Side::Black), Some(w) => Some(w.other()) },
            1 => o.turn += 1,
            _ => o.reason = if o.reason == EndReason::Material { EndReason::Eliminated } else { EndReason::Material },
        }
        let err = verify(&rec).unwrap_err();
        prop_assert!(matches!(err, VerifyError::Outcome { .. }), "{}", err);
        prop_assert_eq!(err.ply_index(), None);
    }
}
