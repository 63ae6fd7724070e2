//! The pentanomial GSPRT against reference numbers, and by simulation: error rates at
//! Elo = elo0 and Elo = elo1 stay within α and β.
//!
//! The fixture numbers below were produced here by a throwaway Python re-implementation of
//! fishtest's `LLRcalc.LLR_logistic` (regularize, `MLE_expected` with scipy's `brentq` on the
//! secular equation) and `stat_util.get_elo` (scipy `norm.ppf` / `norm.cdf`), Python 3.11,
//! scipy 1.17.1; only the numbers are kept. The first three count vectors are the pentanomials
//! in fishtest's own `stat_util.py` examples.

use shared::pyrandom::Random;
use shared::sprt::{
    self, bounds, elo_estimate, expected_score, llr, logistic_elo, pentanomial_probabilities,
    GameScore, Pentanomial, Sprt, SprtError, Verdict,
};

struct Case {
    counts: [u64; 5],
    elo0: f64,
    elo1: f64,
    llr: f64,
    elo: f64,
    ci95: [f64; 2],
    plus_minus: f64,
    los: f64,
}

const CASES: &[Case] = &[
    Case {
        counts: [10789, 19328, 33806, 19402, 10543],
        elo0: -3.0,
        elo1: 1.0,
        llr: 2.1310678117940807,
        elo: -0.7735773359165423,
        ci95: [-2.051167691664677, 0.5039920997913666],
        plus_minus: 1.2775798957280218,
        los: 0.1176588580327751,
    },
    Case {
        counts: [1187, 7410, 13475, 7378, 1164],
        elo0: -3.0,
        elo1: 1.0,
        llr: 2.86152718059463,
        elo: -0.4426077992236841,
        ci95: [-2.172477799080058, 1.2872402561554264],
        plus_minus: 1.7298590276177421,
        los: 0.3080138791226903,
    },
    Case {
        counts: [39, 2226, 31451, 2412, 40],
        elo0: 0.2,
        elo1: 0.9,
        llr: 2.1625425800483593,
        elo: 0.902981048809024,
        ci95: [0.24045284636979794, 1.5655158183331086],
        plus_minus: 0.6625314859816553,
        los: 0.9962220973354207,
    },
    Case {
        counts: [0, 0, 0, 0, 0],
        elo0: 0.0,
        elo1: 5.0,
        llr: -1.0354483502281707e-06,
        elo: -0.0,
        ci95: [-1199.826195290393, 1199.8261952903777],
        plus_minus: 1199.8261952903854,
        los: 0.5,
    },
    Case {
        counts: [0, 0, 0, 0, 10],
        elo0: 0.0,
        elo1: 5.0,
        llr: 0.1429044325441563,
        elo: 1199.8261952903777,
        ci95: [822.0312212379202, 1199.8261952903777],
        plus_minus: 188.8974870262287,
        los: 1.0,
    },
    Case {
        counts: [3, 0, 5, 0, 12],
        elo0: 0.0,
        elo1: 10.0,
        llr: 0.33532788983626244,
        elo: 168.38252303841247,
        ci95: [43.90145250227083, 358.12854429805225],
        plus_minus: 157.1135458978907,
        los: 0.9967327252909691,
    },
    Case {
        counts: [12, 30, 41, 33, 20],
        elo0: 0.0,
        elo1: 10.0,
        llr: 0.6226800198728715,
        elo: 24.308987124035745,
        ci95: [-10.09170350511663, 59.19383123172782],
        plus_minus: 34.64276736842223,
        los: 0.916888962858593,
    },
    Case {
        counts: [5, 20, 40, 25, 10],
        elo0: 0.0,
        elo1: 50.0,
        llr: 0.1911316906248614,
        elo: 26.10669260503662,
        ci95: [-8.457048440804229, 61.19580216710877],
        plus_minus: 34.8264253039565,
        los: 0.9305354671563949,
    },
    Case {
        counts: [40, 20, 30, 9, 1],
        elo0: -10.0,
        elo1: 0.0,
        llr: -2.676322820686121,
        elo: -166.22994558795614,
        ci95: [-214.6171437592736, -123.20625603035782],
        plus_minus: 45.70544386445789,
        los: 3.612221308357983e-17,
    },
    Case {
        counts: [1, 0, 0, 0, 0],
        elo0: 0.0,
        elo1: 2.0,
        llr: -0.0057845607184968985,
        elo: -1041.084377983023,
        ci95: [-1199.826195290393, -408.6423267843647],
        plus_minus: 395.5919342530141,
        los: 3.4963722958110603e-31,
    },
];

fn close(ours: f64, reference: f64, rel: f64) -> bool {
    (ours - reference).abs() <= rel * reference.abs().max(1e-300)
        || (ours - reference).abs() < 1e-12
}

#[test]
fn llr_matches_reference() {
    for c in CASES {
        let ours = llr(&Pentanomial::new(c.counts), c.elo0, c.elo1);
        // brentq stops at xtol 2e-12; our root is closer to exact, hence 1e-7 relative (and
        // 1e-9 absolute for the near-zero empty case).
        assert!(
            (ours - c.llr).abs() <= 1e-7 * c.llr.abs() + 1e-9,
            "{:?} [{}, {}]: ours {ours}, reference {}",
            c.counts,
            c.elo0,
            c.elo1,
            c.llr
        );
    }
}

#[test]
fn elo_estimate_matches_reference() {
    for c in CASES {
        let e = elo_estimate(&Pentanomial::new(c.counts));
        assert!(
            close(e.elo, c.elo, 1e-9),
            "{:?}: elo {} vs {}",
            c.counts,
            e.elo,
            c.elo
        );
        for k in 0..2 {
            assert!(
                close(e.ci95[k], c.ci95[k], 1e-9),
                "{:?}: ci {:?} vs {:?}",
                c.counts,
                e.ci95,
                c.ci95
            );
        }
        assert!(close(e.plus_minus, c.plus_minus, 1e-9), "{:?}", c.counts);
        assert!(
            close(e.los, c.los, 1e-9),
            "{:?}: los {} vs {}",
            c.counts,
            e.los,
            c.los
        );
        assert_eq!(e.pairs, c.counts.iter().sum::<u64>());
        assert!(e.ci95[0] <= e.elo && e.elo <= e.ci95[1]);
    }
}

#[test]
fn bounds_are_walds() {
    let (lo, hi) = bounds(0.05, 0.05);
    assert!((lo - (0.05f64 / 0.95).ln()).abs() < 1e-15);
    assert!((hi - (0.95f64 / 0.05).ln()).abs() < 1e-15);
    assert!((hi - 2.944_438_979_166_440_5).abs() < 1e-12);
    let (lo, hi) = bounds(0.05, 0.1);
    assert!((lo - (0.1f64 / 0.95).ln()).abs() < 1e-15 && (hi - (0.9f64 / 0.05).ln()).abs() < 1e-15);
}

#[test]
fn llr_is_antisymmetric_and_mirrors() {
    let c = Pentanomial::new([12, 30, 41, 33, 20]);
    let mirrored = Pentanomial::new([20, 33, 41, 30, 12]);
    let a = llr(&c, 0.0, 10.0);
    // Swapping the hypotheses negates the LLR.
    assert!((a + llr(&c, 10.0, 0.0)).abs() < 1e-9);
    // The opponent's view: buckets reversed, Elo negated.
    assert!((a - llr(&mirrored, 0.0, -10.0)).abs() < 1e-9);
    assert!(llr(&c, 3.0, 3.0).abs() < 1e-12);
}

#[test]
fn pairs_are_counted_by_points() {
    let mut p = Pentanomial::default();
    p.add(GameScore::Loss, GameScore::Loss);
    p.add(GameScore::Win, GameScore::Loss);
    p.add(GameScore::Loss, GameScore::Win);
    p.add(GameScore::Draw, GameScore::Draw);
    p.add(GameScore::Draw, GameScore::Win);
    p.add_half_points(4).unwrap();
    assert_eq!(p.counts, [1, 0, 3, 1, 1]);
    assert_eq!(p.games(), 12);
    assert_eq!(p.add_half_points(5), Err(SprtError::BadPairScore(5)));
    let mut q = Pentanomial::new([1, 1, 1, 1, 1]);
    q += p;
    assert_eq!(q.counts, [2, 1, 4, 2, 2]);
}

#[test]
fn parameters_are_checked() {
    assert!(Sprt::new(0.0, 5.0, 0.05, 0.05).is_ok());
    assert!(matches!(
        Sprt::new(5.0, 0.0, 0.05, 0.05),
        Err(SprtError::BadHypotheses { .. })
    ));
    assert!(matches!(
        Sprt::new(0.0, f64::NAN, 0.05, 0.05),
        Err(SprtError::BadHypotheses { .. })
    ));
    assert!(matches!(
        Sprt::new(0.0, 5.0, 0.0, 0.05),
        Err(SprtError::BadErrorRates { .. })
    ));
    assert!(matches!(
        Sprt::new(0.0, 5.0, 0.6, 0.5),
        Err(SprtError::BadErrorRates { .. })
    ));
    assert!(pentanomial_probabilities(0.0, 1.2).is_err());
    assert!(pentanomial_probabilities(800.0, 0.5).is_err());
    let p = pentanomial_probabilities(30.0, 0.3).unwrap();
    assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    let mean = p
        .iter()
        .enumerate()
        .map(|(i, q)| q * i as f64 / 4.0)
        .sum::<f64>();
    assert!((mean - expected_score(30.0)).abs() < 1e-12);
    assert!((logistic_elo(expected_score(123.0)) - 123.0).abs() < 1e-9);
}

#[test]
fn verdicts_follow_the_bounds() {
    let t = Sprt::new(0.0, 10.0, 0.05, 0.05).unwrap();
    assert_eq!(t.status(&Pentanomial::default()).verdict, Verdict::Continue);
    let strong = t.status(&Pentanomial::new([0, 10, 100, 300, 400]));
    assert_eq!(strong.verdict, Verdict::AcceptH1, "{strong:?}");
    let weak = t.status(&Pentanomial::new([400, 300, 100, 10, 0]));
    assert_eq!(weak.verdict, Verdict::AcceptH0, "{weak:?}");
    assert_eq!(sprt::verdict(0.0, (-1.0, 1.0)), Verdict::Continue);
    assert_eq!(sprt::verdict(1.0, (-1.0, 1.0)), Verdict::Continue);
    assert_eq!(sprt::verdict(-1.5, (-1.0, 1.0)), Verdict::AcceptH0);
}

/// Runs one SPRT on pairs drawn from `probs`; the verdict and the pairs it took.
fn run(test: &Sprt, probs: &[f64; 5], rng: &mut Random, cap: u64) -> (Verdict, u64) {
    let mut cumulative = [0.0; 5];
    let mut acc = 0.0;
    for (c, p) in cumulative.iter_mut().zip(probs) {
        acc += p;
        *c = acc;
    }
    let mut counts = Pentanomial::default();
    while counts.pairs() < cap {
        let u = rng.random();
        let bucket = cumulative.iter().position(|&c| u < c).unwrap_or(4);
        counts.counts[bucket] += 1;
        let v = test.status(&counts).verdict;
        if v != Verdict::Continue {
            return (v, counts.pairs());
        }
    }
    (Verdict::Continue, cap)
}

/// Error rates over `runs` simulated tests at a true Elo.
fn rates(test: &Sprt, elo: f64, draw_ratio: f64, runs: u64, seed: i128) -> (f64, f64, f64) {
    let probs = pentanomial_probabilities(elo, draw_ratio).unwrap();
    let mut rng = Random::new(seed);
    let (mut h1, mut h0, mut pairs) = (0u64, 0u64, 0u64);
    for _ in 0..runs {
        let (v, n) = run(test, &probs, &mut rng, 100_000);
        match v {
            Verdict::AcceptH1 => h1 += 1,
            Verdict::AcceptH0 => h0 += 1,
            Verdict::Continue => panic!("a simulated test did not stop within 100,000 pairs"),
        }
        pairs += n;
    }
    let r = runs as f64;
    (h1 as f64 / r, h0 as f64 / r, pairs as f64 / r)
}

/// Tolerance on a simulated rate: the nominal rate plus three binomial standard errors.
fn ceiling(rate: f64, runs: u64) -> f64 {
    rate + 3.0 * (rate * (1.0 - rate) / runs as f64).sqrt()
}

const RUNS: u64 = 4_000;

#[test]
fn false_positive_rate_at_elo0_is_within_alpha() {
    let test = Sprt::new(0.0, 50.0, 0.05, 0.05).unwrap();
    let (h1, _, mean_pairs) = rates(&test, 0.0, 0.3, RUNS, 14);
    eprintln!(
        "elo = elo0: H1 accepted in {:.4} of {RUNS} runs, {mean_pairs:.1} pairs on average",
        h1
    );
    assert!(h1 <= ceiling(0.05, RUNS), "false positives {h1}");
}

#[test]
fn false_negative_rate_at_elo1_is_within_beta() {
    let test = Sprt::new(0.0, 50.0, 0.05, 0.05).unwrap();
    let (_, h0, mean_pairs) = rates(&test, 50.0, 0.3, RUNS, 15);
    eprintln!(
        "elo = elo1: H0 accepted in {:.4} of {RUNS} runs, {mean_pairs:.1} pairs on average",
        h0
    );
    assert!(h0 <= ceiling(0.05, RUNS), "false negatives {h0}");
}

#[test]
fn unequal_error_rates_hold_too() {
    // α = 0.05, β = 0.1 on a narrower test and another draw ratio.
    let test = Sprt::new(-10.0, 30.0, 0.05, 0.1).unwrap();
    let (h1, _, _) = rates(&test, -10.0, 0.5, RUNS, 16);
    let (_, h0, _) = rates(&test, 30.0, 0.5, RUNS, 17);
    eprintln!("α: {h1:.4}, β: {h0:.4}");
    assert!(h1 <= ceiling(0.05, RUNS), "false positives {h1}");
    assert!(h0 <= ceiling(0.1, RUNS), "false negatives {h0}");
}

/// One test through `shared::settle::SprtRun`, the stop logic `farm sprt` runs: each pair is two
/// independent games (win s − d/2, draw d, loss the rest for the tested bot), scored game by
/// game as the command scores them, with a pair cap.
fn run_as_the_command(
    test: Sprt,
    elo: f64,
    draw_ratio: f64,
    rng: &mut Random,
    max_pairs: u64,
) -> (Option<shared::settle::SprtEnd>, u64) {
    let s = expected_score(elo);
    let win = s - draw_ratio / 2.0;
    let mut game = || {
        let u = rng.random();
        if u < win {
            GameScore::Win
        } else if u < win + draw_ratio {
            GameScore::Draw
        } else {
            GameScore::Loss
        }
    };
    let mut run = shared::settle::SprtRun::new(test, max_pairs);
    loop {
        let (a, b) = (game(), game());
        if let Some(end) = run.add_pair(Some(a), Some(b)) {
            return (Some(end), run.pairs());
        }
    }
}

/// 2,500 simulated `farm sprt` runs at Elo = elo0 and 2,500 at Elo = elo1 (α = β = 0.05, no
/// cap in reach): false positives within α and false negatives within β, each plus three
/// binomial standard errors (+1.3 points), and never a run left undecided.
#[test]
fn the_commands_stop_rule_keeps_alpha_and_beta() {
    use shared::settle::SprtEnd;
    let test = Sprt::new(0.0, 40.0, 0.05, 0.05).unwrap();
    const N: u64 = 2_500;
    let mut rng = Random::new(2026);
    let (mut false_pos, mut false_neg, mut pairs) = (0u64, 0u64, 0u64);
    for _ in 0..N {
        let (end, n) = run_as_the_command(test, 0.0, 0.2, &mut rng, 1_000_000);
        pairs += n;
        match end {
            Some(SprtEnd::Bound(Verdict::AcceptH1)) => false_pos += 1,
            Some(SprtEnd::Bound(Verdict::AcceptH0)) => {}
            other => panic!("undecided run at elo0: {other:?}"),
        }
    }
    for _ in 0..N {
        let (end, n) = run_as_the_command(test, 40.0, 0.2, &mut rng, 1_000_000);
        pairs += n;
        match end {
            Some(SprtEnd::Bound(Verdict::AcceptH0)) => false_neg += 1,
            Some(SprtEnd::Bound(Verdict::AcceptH1)) => {}
            other => panic!("undecided run at elo1: {other:?}"),
        }
    }
    let (fp, fneg) = (false_pos as f64 / N as f64, false_neg as f64 / N as f64);
    eprintln!(
        "farm sprt's rule: false positives {fp:.4}, false negatives {fneg:.4} of {N} runs each; {:.1} pairs on average",
        pairs as f64 / (2 * N) as f64
    );
    assert!(fp <= ceiling(0.05, N), "false positives {fp}");
    assert!(fneg <= ceiling(0.05, N), "false negatives {fneg}");
}

/// The pair cap ends an undecidable test as `MaxPairs`, and an ended run does not move.
#[test]
fn the_pair_cap_ends_the_test() {
    use shared::settle::{SprtEnd, SprtRun};
    let mut run = SprtRun::new(Sprt::new(0.0, 5.0, 0.05, 0.05).unwrap(), 3);
    assert_eq!(
        run.add_pair(Some(GameScore::Win), Some(GameScore::Loss)),
        None
    );
    assert_eq!(
        run.add_pair(None, Some(GameScore::Loss)),
        None,
        "a void pair"
    );
    assert_eq!(
        run.add_pair(Some(GameScore::Draw), Some(GameScore::Draw)),
        Some(SprtEnd::MaxPairs)
    );
    assert_eq!((run.counts.counts, run.void_pairs), ([0, 0, 2, 0, 0], 1));
    let before = run.clone();
    assert_eq!(
        run.add_pair(Some(GameScore::Win), Some(GameScore::Win)),
        Some(SprtEnd::MaxPairs)
    );
    assert_eq!(run, before);
}
