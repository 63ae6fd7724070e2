//! Checks the MT19937 port against draws recorded from CPython 3.11 (tools/reference/gen_pyrandom.py).

use serde_json::Value;
use shared::pyrandom::Random;

fn fixture() -> Vec<Value> {
    serde_json::from_str(include_str!("fixtures/pyrandom.json")).unwrap()
}

fn seeded(seed: &str) -> Random {
    match seed.parse::<i128>() {
        Ok(s) => {
            let mut a = Random::new(s);
            let mut b = Random::from_decimal(seed).unwrap();
            for _ in 0..3 {
                assert_eq!(a.next_u32(), b.next_u32());
            }
            Random::new(s)
        }
        Err(_) => Random::from_decimal(seed).unwrap(),
    }
}

#[test]
fn draws_match_cpython() {
    let cases = fixture();
    assert!(cases.len() >= 20);
    for case in &cases {
        let seed = case["seed"].as_str().unwrap();
        let mut r = seeded(seed);
        for v in case["u32"].as_array().unwrap() {
            assert_eq!(
                u64::from(r.next_u32()),
                v.as_u64().unwrap(),
                "u32, seed {seed}"
            );
        }
        for v in case["random_bits"].as_array().unwrap() {
            assert_eq!(
                r.random().to_bits(),
                v.as_u64().unwrap(),
                "random(), seed {seed}"
            );
        }
        for kv in case["getrandbits"].as_array().unwrap() {
            let k = kv[0].as_u64().unwrap() as u32;
            let want: u64 = kv[1].as_str().unwrap().parse().unwrap();
            assert_eq!(r.getrandbits(k), want, "getrandbits({k}), seed {seed}");
        }
        for nv in case["randbelow"].as_array().unwrap() {
            let n = nv[0].as_u64().unwrap();
            assert_eq!(
                r.randbelow(n),
                nv[1].as_u64().unwrap(),
                "randbelow({n}), seed {seed}"
            );
        }
    }
}

#[test]
fn samples_match_cpython() {
    let mut checked = 0;
    for case in &fixture() {
        let seed = case["seed"].as_str().unwrap();
        for s in case["samples"].as_array().unwrap() {
            let n: u64 = s["n"].as_str().unwrap().parse().unwrap();
            let k = s["k"].as_u64().unwrap();
            let want: Vec<u64> = s["result"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().parse().unwrap())
                .collect();
            let got = seeded(seed).sample(n, k).unwrap();
            assert_eq!(got, want, "sample(range({n}), {k}), seed {seed}");
            checked += 1;
        }
    }
    assert!(checked > 400);
}
