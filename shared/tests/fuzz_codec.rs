//! Fuzzing the wire codec (issue 22): whatever bytes arrive from the broker, `codec::decode`
//! answers an error and never panics or aborts. Arbitrary bytes, valid frames with bytes
//! flipped, inserted, cut or appended, and mutated bodies re-signed with the farm key (so the
//! bincode decoder itself sees the garbage, as it would from anyone holding the key), for every
//! message type the farm decodes. Bounded (a few seconds), run by the normal test command.

use proptest::prelude::*;
use shared::codec::{decode, encode, CodecError, FarmKey, WIRE_VERSION};
use shared::msg::{Job, JobFailure, JobReport};
use support::jobs;

mod support;

fn key() -> FarmKey {
    FarmKey::new(b"fuzz farm key".to_vec())
}

fn reports() -> Vec<JobReport> {
    vec![
        JobReport {
            tournament: "t".into(),
            number: 3,
            worker: "host/1".into(),
            seconds: 1.5,
            speed: Some(412.5),
            outcome: Ok("{\"replay\": true}".into()),
        },
        JobReport {
            tournament: "t".into(),
            number: 4,
            worker: "host/2".into(),
            seconds: 0.0,
            speed: None,
            outcome: Err(JobFailure::Artifact("gone".into())),
        },
    ]
}

/// Every valid frame the fuzzers start from.
fn frames() -> Vec<Vec<u8>> {
    let k = key();
    let mut out: Vec<Vec<u8>> = jobs().iter().map(|j| encode(j, &k).unwrap()).collect();
    out.extend(reports().iter().map(|r| encode(r, &k).unwrap()));
    out.push(encode(&"a string".to_string(), &k).unwrap());
    out
}

/// Decodes `bytes` as every message type the farm reads; only errors may come out.
fn decode_all(bytes: &[u8]) {
    let k = key();
    let _ = decode::<Job>(bytes, &k);
    let _ = decode::<JobReport>(bytes, &k);
    let _ = decode::<String>(bytes, &k);
}

/// Signs `body` (without version byte) as the codec does, so that only the body is garbage.
fn signed(body: &[u8]) -> Vec<u8> {
    use hmac::{Hmac, Mac};
    let mut out = vec![WIRE_VERSION];
    out.extend_from_slice(body);
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(b"fuzz farm key").unwrap();
    mac.update(&out);
    out.extend_from_slice(&mac.finalize().into_bytes());
    out
}

/// A byte-level edit of a frame.
#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Truncate(usize),
    Append(Vec<u8>),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(i, b)| Edit::Flip(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<usize>().prop_map(Edit::Remove),
        any::<usize>().prop_map(Edit::Truncate),
        prop::collection::vec(any::<u8>(), 1..16).prop_map(Edit::Append),
    ]
}

fn apply(bytes: &mut Vec<u8>, e: &Edit) {
    let n = bytes.len().max(1);
    match e {
        Edit::Flip(i, b) if !bytes.is_empty() => bytes[i % n] ^= b,
        Edit::Insert(i, b) => bytes.insert(i % (bytes.len() + 1), *b),
        Edit::Remove(i) if !bytes.is_empty() => {
            bytes.remove(i % n);
        }
        Edit::Truncate(i) => bytes.truncate(i % n),
        Edit::Append(tail) => bytes.extend_from_slice(tail),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        decode_all(&bytes);
        // The same bytes behind this build's version byte.
        let mut v = vec![WIRE_VERSION];
        v.extend_from_slice(&bytes);
        decode_all(&v);
    }

    #[test]
    fn edited_frames_are_refused(pick in any::<prop::sample::Index>(), edits in prop::collection::vec(edit(), 1..6)) {
        let all = frames();
        let original = pick.get(&all).clone();
        let mut bytes = original.clone();
        for e in &edits {
            apply(&mut bytes, e);
        }
        decode_all(&bytes);
        if bytes != original {
            // Without the key nothing edited gets through.
            prop_assert!(decode::<Job>(&bytes, &key()).is_err());
            prop_assert!(decode::<JobReport>(&bytes, &key()).is_err());
        }
    }

    #[test]
    fn resigned_garbage_bodies_never_panic(pick in any::<prop::sample::Index>(), edits in prop::collection::vec(edit(), 1..8)) {
        let all = frames();
        let frame = pick.get(&all);
        let mut body = frame[1..frame.len() - 32].to_vec();
        for e in &edits {
            apply(&mut body, e);
        }
        decode_all(&signed(&body));
    }

    #[test]
    fn resigned_random_bodies_never_panic(body in prop::collection::vec(any::<u8>(), 0..256)) {
        decode_all(&signed(&body));
    }
}

/// Regression: bodies claiming huge lengths (a string or a list of 2^60 items) are refused
/// without trying to allocate them.
#[test]
fn huge_claimed_lengths_are_refused() {
    for varint in [
        vec![0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f],
        vec![0xfc, 0xff, 0xff, 0xff, 0x7f],
        vec![0xfb, 0xff, 0xff],
    ] {
        let frame = signed(&varint);
        let r = decode::<String>(&frame, &key());
        assert!(matches!(r, Err(CodecError::Body(_))), "{r:?}");
        assert!(decode::<Job>(&frame, &key()).is_err());
        assert!(decode::<JobReport>(&frame, &key()).is_err());
    }
}
