//! Python's `random.Random` (CPython 3.11) ported bit for bit: the MT19937 generator, CPython's
//! seeding from an int, `random()`, `getrandbits`, `_randbelow` and `sample`. Schedules must be
//! expanded exactly as the reference tournament script does, so every draw has to match.

use thiserror::Error;

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// Errors from seed parsing and sampling.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PyRandomError {
    /// `sample` was asked for more items than the population holds.
    #[error(
        "sample of {k} items requested from a population of {n}: sample larger than population"
    )]
    SampleTooLarge { k: u64, n: u64 },
    /// A seed given as text is not a decimal integer.
    #[error("seed {0:?} is not a decimal integer")]
    BadSeed(String),
}

/// A Mersenne Twister generator that reproduces CPython's `random.Random`.
#[derive(Clone)]
pub struct Random {
    mt: Box<[u32; N]>,
    index: usize,
}

impl std::fmt::Debug for Random {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Random")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl Random {
    fn init_genrand(seed: u32) -> Self {
        let mut mt = Box::new([0u32; N]);
        mt[0] = seed;
        for i in 1..N {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        Random { mt, index: N }
    }

    /// Seeds from the absolute value of a Python int given as little-endian 32-bit words,
    /// exactly like CPython's `init_by_array` path (an empty or zero key is the key `[0]`).
    pub fn from_key_words(words: &[u32]) -> Self {
        let mut used = words.len();
        while used > 0 && words[used - 1] == 0 {
            used -= 1;
        }
        let key: &[u32] = if used == 0 { &[0] } else { &words[..used] };
        let mut r = Self::init_genrand(19_650_218);
        let mt = &mut r.mt;
        let mut i = 1usize;
        let mut j = 0usize;
        let mut k = N.max(key.len());
        while k > 0 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
            k -= 1;
        }
        k = N - 1;
        while k > 0 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            k -= 1;
        }
        mt[0] = 0x8000_0000;
        r
    }

    /// `random.Random(seed)` for an int seed (negative seeds use their absolute value, as
    /// CPython does).
    pub fn new(seed: i128) -> Self {
        let mut mag = seed.unsigned_abs();
        let mut words = Vec::with_capacity(4);
        while mag > 0 {
            words.push(mag as u32);
            mag >>= 32;
        }
        Self::from_key_words(&words)
    }

    /// `random.Random(int(text))` for a decimal integer of any size (optional sign).
    pub fn from_decimal(text: &str) -> Result<Self, PyRandomError> {
        Ok(Self::from_key_words(&decimal_magnitude_words(text)?))
    }

    fn generate(&mut self) {
        let mt = &mut self.mt;
        let mag01 = |y: u32| if y & 1 == 1 { MATRIX_A } else { 0 };
        for kk in 0..N - M {
            let y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
            mt[kk] = mt[kk + M] ^ (y >> 1) ^ mag01(y);
        }
        for kk in N - M..N - 1 {
            let y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
            mt[kk] = mt[kk + M - N] ^ (y >> 1) ^ mag01(y);
        }
        let y = (mt[N - 1] & UPPER_MASK) | (mt[0] & LOWER_MASK);
        mt[N - 1] = mt[M - 1] ^ (y >> 1) ^ mag01(y);
        self.index = 0;
    }

    /// The next tempered 32-bit output (`genrand_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.generate();
        }
        let mut y = self.mt[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// `random()`: a float in [0, 1) with 53 random bits.
    pub fn random(&mut self) -> f64 {
        let a = (self.next_u32() >> 5) as f64;
        let b = (self.next_u32() >> 6) as f64;
        (a * 67_108_864.0 + b) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `getrandbits(k)` for `k <= 64` (words are consumed least significant first, as CPython).
    pub fn getrandbits(&mut self, k: u32) -> u64 {
        assert!(k <= 64, "getrandbits supports at most 64 bits here");
        if k == 0 {
            return 0;
        }
        if k <= 32 {
            return u64::from(self.next_u32() >> (32 - k));
        }
        let low = u64::from(self.next_u32());
        let high = u64::from(self.next_u32() >> (64 - k));
        low | (high << 32)
    }

    /// `_randbelow(n)` via getrandbits rejection; `n` must be positive.
    pub fn randbelow(&mut self, n: u64) -> u64 {
        assert!(n > 0, "randbelow needs a positive bound");
        let k = 64 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }

    /// `sample(range(population_len), k)`: the chosen indices in selection order, following
    /// CPython 3.11's choice between the pool and the set algorithm.
    pub fn sample(&mut self, population_len: u64, k: u64) -> Result<Vec<u64>, PyRandomError> {
        let n = population_len;
        if k > n {
            return Err(PyRandomError::SampleTooLarge { k, n });
        }
        let setsize = sample_setsize(k);
        let mut result = Vec::with_capacity(k as usize);
        if u128::from(n) <= setsize {
            let mut pool: Vec<u64> = (0..n).collect();
            for i in 0..k {
                let j = self.randbelow(n - i) as usize;
                result.push(pool[j]);
                pool[j] = pool[(n - i - 1) as usize];
            }
        } else {
            let mut selected = std::collections::HashSet::with_capacity(k as usize);
            for _ in 0..k {
                let mut j = self.randbelow(n);
                while selected.contains(&j) {
                    j = self.randbelow(n);
                }
                selected.insert(j);
                result.push(j);
            }
        }
        Ok(result)
    }
}

/// CPython's `setsize`: 21, plus `4 ** ceil(log(3k, 4))` when `k > 5` (saturating).
fn sample_setsize(k: u64) -> u128 {
    let mut setsize: u128 = 21;
    if k > 5 {
        let x = (k as f64) * 3.0;
        let exp = (x.ln() / 4f64.ln()).ceil();
        setsize += if exp >= 63.0 {
            u128::MAX / 2
        } else {
            1u128 << (2 * exp as u32)
        };
    }
    setsize
}

/// The absolute value of a decimal integer as little-endian 32-bit words.
fn decimal_magnitude_words(text: &str) -> Result<Vec<u32>, PyRandomError> {
    let t = text.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || t.contains("__") {
        return Err(PyRandomError::BadSeed(text.to_string()));
    }
    let mut words: Vec<u32> = Vec::new();
    for b in digits.bytes() {
        let mut carry = u64::from(b - b'0');
        for w in words.iter_mut() {
            let v = u64::from(*w) * 10 + carry;
            *w = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            words.push(carry as u32);
        }
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_and_int_seeds_agree() {
        for s in [
            0i128,
            1,
            -1,
            42,
            4_294_967_295,
            4_294_967_296,
            i64::MAX as i128,
            -(1 << 70),
        ] {
            let mut a = Random::new(s);
            let mut b = Random::from_decimal(&s.to_string()).unwrap();
            assert_eq!(a.next_u32(), b.next_u32(), "seed {s}");
        }
        assert!(Random::from_decimal("12x").is_err());
        assert!(Random::from_decimal("").is_err());
    }

    #[test]
    fn sample_refuses_oversized_request() {
        let mut r = Random::new(1);
        assert_eq!(
            r.sample(3, 4),
            Err(PyRandomError::SampleTooLarge { k: 4, n: 3 })
        );
        assert_eq!(r.sample(3, 3).unwrap().len(), 3);
    }
}
