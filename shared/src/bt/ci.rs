//! 95% intervals for BT ratings (Wald): the log-likelihood the fit maximises is
//! Σ_pairs w·ln p + (g−w)·ln(1−p) with p = s_a/(s_a+s_b), size weights and virtual draws included.
//! With θ = ln s and the anchor's θ fixed at 0, its information matrix is
//! Σ g·p(1−p)(e_a−e_b)(e_a−e_b)ᵀ (observed = expected for this model); the inverse gives variances.

use super::Pair;

/// Two-sided 95% normal quantile.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Standard error of each log-strength relative to the anchor (0 for the anchor; NaN if the
/// information matrix is singular).
pub(crate) fn standard_errors(
    n: usize,
    games: &[Pair],
    strength: &[f64],
    anchor: usize,
) -> Vec<f64> {
    // Free parameters: every player but the anchor.
    let idx: Vec<Option<usize>> = {
        let mut k = 0;
        (0..n)
            .map(|i| {
                if i == anchor {
                    None
                } else {
                    k += 1;
                    Some(k - 1)
                }
            })
            .collect()
    };
    let m = n.saturating_sub(1);
    let mut h = vec![0.0f64; m * m];
    for p in games {
        if p.a == p.b {
            continue;
        }
        let (sa, sb) = (strength[p.a], strength[p.b]);
        let q = sa / (sa + sb);
        let info = p.g * q * (1.0 - q);
        let (ia, ib) = (idx[p.a], idx[p.b]);
        if let Some(x) = ia {
            h[x * m + x] += info;
        }
        if let Some(y) = ib {
            h[y * m + y] += info;
        }
        if let (Some(x), Some(y)) = (ia, ib) {
            h[x * m + y] -= info;
            h[y * m + x] -= info;
        }
    }
    let diag = inverse_diagonal(&mut h, m);
    (0..n)
        .map(|i| match idx[i] {
            None => 0.0,
            Some(k) => diag.as_ref().map_or(f64::NAN, |d| d[k].sqrt()),
        })
        .collect()
}

/// Diagonal of the inverse of a symmetric positive-definite matrix (Cholesky); `None` if it is
/// not positive definite.
fn inverse_diagonal(a: &mut [f64], m: usize) -> Option<Vec<f64>> {
    // In-place Cholesky: lower triangle holds L.
    for j in 0..m {
        let mut d = a[j * m + j];
        for k in 0..j {
            d -= a[j * m + k] * a[j * m + k];
        }
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        let d = d.sqrt();
        a[j * m + j] = d;
        for i in j + 1..m {
            let mut s = a[i * m + j];
            for k in 0..j {
                s -= a[i * m + k] * a[j * m + k];
            }
            a[i * m + j] = s / d;
        }
    }
    // diag(A⁻¹)_i = Σ_k (L⁻¹)_{k,i}²; solve L x = e_i column by column.
    let mut out = vec![0.0; m];
    let mut x = vec![0.0; m];
    for (i, slot) in out.iter_mut().enumerate() {
        x.iter_mut().for_each(|v| *v = 0.0);
        for r in i..m {
            let mut s = if r == i { 1.0 } else { 0.0 };
            for k in i..r {
                s -= a[r * m + k] * x[k];
            }
            x[r] = s / a[r * m + r];
        }
        *slot = x[i..].iter().map(|v| v * v).sum();
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_players_variance_is_inverse_information() {
        // One pair, 10 weighted games at p = 0.5: information 10·0.25 = 2.5.
        let games = [Pair {
            a: 0,
            b: 1,
            g: 10.0,
            w: 5.0,
        }];
        let se = standard_errors(2, &games, &[1.0, 1.0], 0);
        assert_eq!(se[0], 0.0);
        assert!((se[1] - (1.0f64 / 2.5).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn three_player_chain_adds_variances() {
        // anchor 0 – 1 – 2: var(θ2) = 1/I01 + 1/I12.
        let games = [
            Pair {
                a: 0,
                b: 1,
                g: 4.0,
                w: 2.0,
            },
            Pair {
                a: 1,
                b: 2,
                g: 8.0,
                w: 4.0,
            },
        ];
        let se = standard_errors(3, &games, &[1.0, 1.0, 1.0], 0);
        assert!((se[1] - 1.0).abs() < 1e-12);
        assert!((se[2] - (1.0f64 + 0.5).sqrt()).abs() < 1e-12);
    }
}
