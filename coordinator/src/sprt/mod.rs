//! The SPRT behind `farm sprt` (its flags are `cmd::sprt`'s): is the new bot better than the
//! base? A sequential probability ratio test on game pairs, as chess engines are tested (fishtest, OpenBench, fastchess): pair k is two
//! 2-player matches on one map, seats [new, base] then [base, new], the maps drawn
//! reproducibly from --seed (the reference `make_schedule` of two entrants, one size, max-pairs
//! seeds: exactly that layout). It runs through the same prepare (identity, compile-first,
//! manifest check, output lock, resume checks) and the same dispatch loop as `farm run`,
//! embedded or on the cluster, with an SPRT stop rule ([`rule::SprtRule`]); a pair still in
//! flight at the stop is cancelled and said so. The outcome goes to sprt.json and stdout.

pub mod metrics;
pub mod rule;
