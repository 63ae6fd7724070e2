//! The ladder math of GUIDE.md: tiers from RP with Chinese and English names, RP deltas in the
//! same and across major tiers with their clamps, RP never below 0, and the two-game challenge.

use games::qianwang::ladder::{
    apply_rp, combine, rp_delta, settle, tier_of, Major, Minor, PlayerResult, Tier, RP_PER_MINOR,
};
use games::qianwang::{EndReason, Outcome, Side};
use proptest::prelude::*;

use PlayerResult::{Draw, Loss, Win};

#[test]
fn tiers_from_rp() {
    let cases = [
        (0, "青铜III", "Bronze III"),
        (99, "青铜III", "Bronze III"),
        (100, "青铜II", "Bronze II"),
        (250, "青铜I", "Bronze I"),
        (299, "青铜I", "Bronze I"),
        (300, "白银III", "Silver III"),
        (600, "黄金III", "Gold III"),
        (899, "黄金I", "Gold I"),
        (900, "钻石III", "Diamond III"),
        (1199, "钻石I", "Diamond I"),
        (1200, "王者III", "King III"),
        (1300, "王者II", "King II"),
        (1400, "王者I", "King I"),
        (1499, "王者I", "King I"),
        (5000, "王者I", "King I"),
        (u32::MAX, "王者I", "King I"),
    ];
    for (rp, zh, en) in cases {
        let t = tier_of(rp);
        assert_eq!(t.name_zh(), zh, "rp {rp}");
        assert_eq!(t.name_en(), en, "rp {rp}");
    }
    assert_eq!(
        tier_of(450),
        Tier {
            major: Major::Silver,
            minor: Minor::II
        }
    );
    assert_eq!(tier_of(450).floor_rp(), 400);
    assert_eq!(tier_of(5000).floor_rp(), 1400, "beyond 王者I stays 王者I");
    assert_eq!(RP_PER_MINOR, 100);
}

#[test]
fn major_names_and_indices() {
    let zh: Vec<_> = Major::ALL.iter().map(|m| m.name_zh()).collect();
    let en: Vec<_> = Major::ALL.iter().map(|m| m.name_en()).collect();
    assert_eq!(zh, ["青铜", "白银", "黄金", "钻石", "王者"]);
    assert_eq!(en, ["Bronze", "Silver", "Gold", "Diamond", "King"]);
    for (i, m) in Major::ALL.iter().enumerate() {
        assert_eq!(m.index() as usize, i);
        assert_eq!(Major::from_index(i as u8), Some(*m));
    }
    assert_eq!(Major::from_index(5), None);
    assert_eq!(serde_json::to_string(&Major::King).unwrap(), "\"king\"");
    assert_eq!(serde_json::to_string(&Minor::III).unwrap(), "\"III\"");
}

#[test]
fn same_major_tier_deltas() {
    for m in Major::ALL {
        assert_eq!(rp_delta(m, m, Win), 25);
        assert_eq!(rp_delta(m, m, Draw), 10);
        assert_eq!(rp_delta(m, m, Loss), -15);
    }
}

#[test]
fn cross_tier_deltas_and_clamps() {
    use Major::*;
    // d = opponent major − my major; win 25+8d, draw 10+4d, loss −15+8d, then clamps.
    let table = [
        // (mine, opponent, win, draw, loss)
        (Bronze, Silver, 33, 14, -7),  // d = +1
        (Silver, Bronze, 17, 6, -23),  // d = −1
        (Bronze, Gold, 41, 18, -3),    // d = +2: loss −15+16 = +1 → clamped to −3
        (Bronze, Diamond, 49, 20, -3), // d = +3: draw 22 → 20
        (Bronze, King, 50, 20, -3),    // d = +4: win 57 → 50
        (Gold, Bronze, 9, 2, -31),     // d = −2
        (Diamond, Bronze, 3, 0, -39),  // d = −3: win 1 → 3, draw −2 → 0
        (King, Bronze, 3, 0, -47),     // d = −4
        (Gold, King, 41, 18, -3),      // d = +2 higher up
    ];
    for (mine, opp, w, d, l) in table {
        assert_eq!(rp_delta(mine, opp, Win), w, "{mine:?} beats {opp:?}");
        assert_eq!(rp_delta(mine, opp, Draw), d, "{mine:?} draws {opp:?}");
        assert_eq!(rp_delta(mine, opp, Loss), l, "{mine:?} loses to {opp:?}");
    }
}

#[test]
fn rp_never_below_zero() {
    assert_eq!(apply_rp(10, -15), 0);
    assert_eq!(apply_rp(0, -47), 0);
    assert_eq!(apply_rp(15, -15), 0);
    assert_eq!(apply_rp(100, -23), 77);
    assert_eq!(apply_rp(0, 25), 25);
    assert_eq!(apply_rp(u32::MAX, 50), u32::MAX);
}

#[test]
fn a_player_climbs_and_falls() {
    // A new player beats a 白银 player (d = +1) four times, reaching 132 RP = 青铜II.
    let mut rp = 0;
    for _ in 0..4 {
        rp = apply_rp(rp, rp_delta(tier_of(rp).major, Major::Silver, Win));
    }
    assert_eq!(rp, 132);
    assert_eq!(tier_of(rp).name_zh(), "青铜II");
    // Then loses to a 王者 player: −15+32 → clamped to −3.
    rp = apply_rp(rp, rp_delta(tier_of(rp).major, Major::King, Loss));
    assert_eq!(rp, 129);
}

#[test]
fn settling_a_challenge_updates_both_players() {
    // 青铜III (50 RP) beats 王者I (1450 RP): +50 for the underdog, 王者 losing to 青铜 d = −4 → −47.
    let s = settle(50, 1450, Win);
    assert_eq!((s.a_delta, s.b_delta, s.a_rp, s.b_rp), (50, -47, 100, 1403));
    // A draw between 黄金 (700) and 白银 (350): 黄金 d = −1 → +6, 白银 d = +1 → +14.
    let s = settle(700, 350, Draw);
    assert_eq!((s.a_delta, s.b_delta, s.a_rp, s.b_rp), (6, 14, 706, 364));
    // Losing at 5 RP in the same tier: −15 floors at 0.
    let s = settle(5, 40, Loss);
    assert_eq!((s.a_delta, s.b_delta, s.a_rp, s.b_rp), (-15, 25, 0, 65));
}

#[test]
fn two_games_make_a_challenge() {
    let table = [
        (Win, Win, Win),
        (Win, Draw, Win),
        (Draw, Win, Win),
        (Win, Loss, Draw),
        (Loss, Win, Draw),
        (Draw, Draw, Draw),
        (Draw, Loss, Loss),
        (Loss, Draw, Loss),
        (Loss, Loss, Loss),
    ];
    for (a, b, c) in table {
        assert_eq!(combine(a, b), c, "{a:?} + {b:?}");
        assert_eq!(
            combine(a.flip(), b.flip()),
            c.flip(),
            "the opponent's view agrees"
        );
    }
}

#[test]
fn game_result_of_an_outcome() {
    let o = |winner| Outcome {
        winner,
        reason: EndReason::Material,
        runtime: None,
        detail: String::new(),
        turn: 20,
    };
    assert_eq!(PlayerResult::of(&o(Some(Side::Red)), Side::Red), Win);
    assert_eq!(PlayerResult::of(&o(Some(Side::Red)), Side::Black), Loss);
    assert_eq!(PlayerResult::of(&o(None), Side::Black), Draw);
}

fn arb_major() -> impl Strategy<Value = Major> {
    (0u8..5).prop_map(|i| Major::from_index(i).expect("0..5"))
}

proptest! {
    #[test]
    fn deltas_respect_clamps_and_direction(mine in arb_major(), a in arb_major(), b in arb_major()) {
        for (r, lo, hi) in [(Win, 3, 50), (Draw, 0, 20), (Loss, -50, -3)] {
            let x = rp_delta(mine, a, r);
            prop_assert!((lo..=hi).contains(&x), "{:?} {:?} {:?} = {}", mine, a, r, x);
            // A stronger opponent never gives less (win/draw) nor costs more (loss).
            if a <= b {
                prop_assert!(rp_delta(mine, a, r) <= rp_delta(mine, b, r));
            }
        }
        prop_assert!(rp_delta(mine, a, Win) > rp_delta(mine, a, Draw));
        prop_assert!(rp_delta(mine, a, Draw) > rp_delta(mine, a, Loss));
    }

    #[test]
    fn tier_is_monotonic_and_floor_is_below(rp in 0u32..3000, extra in 0u32..500) {
        let t = tier_of(rp);
        prop_assert!(t.floor_rp() <= rp);
        prop_assert!(rp - t.floor_rp() < 100 || t.name_en() == "King I");
        prop_assert!(tier_of(rp + extra) >= t);
    }
}
