//! What a seat game's record says of itself for the one accept (`accept::seated`): decoded from
//! a report's text, re-verified by its rules, its seed and its seats. A module of its own so that
//! the games implement it beside their rules without importing `accept`, which imports them.

/// Why a record was refused: its decoding's or its rules' own error.
pub type Refusal = Box<dyn std::error::Error + Send + Sync>;

/// A game record held to its job like every seat game's: decoded, re-verified by its rules,
/// its seed and its seats (names and program hashes, in seat order) the job's. A game with
/// such a record implements this beside its rules, and its accept arm is one line
/// (`accept::seated`).
pub trait SeatedRecord: Sized {
    /// The record from a report's text.
    fn decode(text: &str) -> Result<Self, Refusal>;
    /// Re-play it by the game's rules.
    fn verify(&self) -> Result<(), Refusal>;
    /// The seed it was played from.
    fn seed(&self) -> u64;
    /// Each seat's name and program sha256, in seat order.
    fn seats(&self) -> Vec<(&str, &str)>;
}
