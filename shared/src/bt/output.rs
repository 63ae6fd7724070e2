//! The fitted ratings in the shape of the reference's `bt.json` (same members, same order),
//! plus the 95% intervals and the name of the method that produced them.

use super::{ci, Pair, Players};
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

/// How sizes are weighted (text recorded in the output, as the reference does).
pub const SIZE_WEIGHT: &str = "equal_total";
/// The rating scale.
pub const SCALE: &str = "400 * log10(strength / baseline_strength)";
/// The finite-estimate convention.
pub const SMOOTHING: &str = "one virtual draw per observed pair after weighting";
/// How `ci95` is computed.
pub const CI_METHOD: &str = "wald: rating ± 1.96 standard errors from the inverse observed information (Hessian) of the size-weighted pairwise log-likelihood, virtual draws included, with log-strengths as parameters and the anchor fixed at 0";

/// A fit: ratings (anchor = 0) in roster order, games counted per size (in the order sizes
/// first appear among the valid games), iterations used, and a 95% interval per player.
#[derive(Debug, Clone, PartialEq)]
pub struct BtFit {
    pub anchor: String,
    pub ratings: Vec<(String, f64)>,
    pub valid_games_by_size: Vec<(usize, u64)>,
    pub iterations: u32,
    pub ci95: Vec<(String, [f64; 2])>,
    /// Strengths the fit ended with (geometric mean 1), in roster order; a warm start for the
    /// next fit.
    pub strengths: Vec<f64>,
}

impl BtFit {
    /// The rating of `name`.
    pub fn rating(&self, name: &str) -> Option<f64> {
        self.ratings.iter().find(|(n, _)| n == name).map(|r| r.1)
    }

    /// The 95% interval of `name`.
    pub fn interval(&self, name: &str) -> Option<[f64; 2]> {
        self.ci95.iter().find(|(n, _)| n == name).map(|r| r.1)
    }

    /// Ratings sorted best first; ties keep roster order (a stable sort, as the reference's).
    pub fn ranked(&self) -> Vec<(&str, f64)> {
        let mut v: Vec<(&str, f64)> = self.ratings.iter().map(|(n, r)| (n.as_str(), *r)).collect();
        v.sort_by(|x, y| y.1.partial_cmp(&x.1).unwrap_or(std::cmp::Ordering::Equal));
        v
    }
}

/// The `bt.json` document: the fit, or `{"unavailable": reason}` as the reference writes when
/// fitting is refused. Write it with [`crate::pyjson::to_string_pretty`] for the reference's text.
pub fn bt_json(result: &Result<BtFit, super::BtError>) -> serde_json::Value {
    match result {
        Ok(fit) => serde_json::to_value(fit).unwrap_or(serde_json::Value::Null),
        Err(e) => serde_json::json!({ "unavailable": e.to_string() }),
    }
}

struct Pairs<'a, K, V>(&'a [(K, V)]);

impl<K: std::fmt::Display, V: Serialize> Serialize for Pairs<'_, K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(&k.to_string(), v)?;
        }
        m.end()
    }
}

impl Serialize for BtFit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("BtFit", 9)?;
        st.serialize_field("anchor", &self.anchor)?;
        st.serialize_field("ratings", &Pairs(&self.ratings))?;
        st.serialize_field("valid_games_by_size", &Pairs(&self.valid_games_by_size))?;
        st.serialize_field("iterations", &self.iterations)?;
        st.serialize_field("size_weight", SIZE_WEIGHT)?;
        st.serialize_field("scale", SCALE)?;
        st.serialize_field("smoothing", SMOOTHING)?;
        st.serialize_field("ci95", &Pairs(&self.ci95))?;
        st.serialize_field("ci_method", CI_METHOD)?;
        st.end()
    }
}

/// Ratings on the reference's scale, tiny values snapped to 0 and the anchor exactly 0.
pub(crate) fn build(
    players: &Players,
    games: &[Pair],
    strength: &[f64],
    anchor: usize,
    counts: Vec<(usize, u64)>,
    iterations: u32,
) -> BtFit {
    let scale = 400.0 / std::f64::consts::LN_10;
    let origin = strength[anchor].ln();
    let ratings: Vec<(String, f64)> = players
        .names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let v = scale * (strength[i].ln() - origin);
            let v = if v.abs() < 1e-10 || i == anchor {
                0.0
            } else {
                v
            };
            (name.clone(), v)
        })
        .collect();
    let se = ci::standard_errors(players.names.len(), games, strength, anchor);
    let ci95 = ratings
        .iter()
        .zip(&se)
        .map(|((name, r), se)| {
            let half = ci::Z95 * scale * se;
            (name.clone(), [r - half, r + half])
        })
        .collect();
    BtFit {
        anchor: players.names[anchor].clone(),
        ratings,
        valid_games_by_size: counts,
        iterations,
        ci95,
        strengths: strength.to_vec(),
    }
}
