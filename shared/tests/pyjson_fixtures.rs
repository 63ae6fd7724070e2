//! Python-identical JSON text (fixtures from tools/reference/gen_pyjson.py).

use serde_json::Value;
use shared::pyjson::{float_repr, to_string_pretty};

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/pyjson.json")).unwrap()
}

#[test]
fn float_repr_matches_python() {
    let fx = fixture();
    let bits = fx["bits"].as_array().unwrap();
    let reprs = fx["reprs"].as_array().unwrap();
    assert!(bits.len() > 400);
    for (b, r) in bits.iter().zip(reprs) {
        let x = f64::from_bits(b.as_u64().unwrap());
        assert_eq!(float_repr(x), r.as_str().unwrap(), "bits {b}");
    }
}

#[test]
fn documents_match_python_json_dumps() {
    let fx = fixture();
    let doc: Value = serde_json::from_str(fx["doc"].as_str().unwrap()).unwrap();
    assert_eq!(to_string_pretty(&doc, false), fx["text"].as_str().unwrap());
    assert_eq!(
        to_string_pretty(&doc, true),
        fx["text_ascii"].as_str().unwrap()
    );
}
