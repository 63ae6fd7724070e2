//! The one wire form of farm messages: a format version byte, the bincode 2 (serde) body, and an
//! HMAC-SHA256 tag under the farm key over both. bincode is pinned to 2.0.x and unmaintained
//! (RUSTSEC-2025-0141), so it is used here and nowhere else; swapping it means a new version byte.
//! Decoding bounds what a claimed length may allocate (see `decode_body`), so no bytes, signed
//! or not, can abort the process (shared/tests/fuzz_codec.rs).

use hmac::{Hmac, Mac};
use serde::{de::DeserializeOwned, Serialize};
use sha2::Sha256;

/// The current wire format: bincode 2 standard config + HMAC-SHA256 trailer, with the messages
/// of this build (4: a job names its game, `GameJob`; 5: jobs travel as a `Posting` with their
/// publication id, and a worker's refusal is a signed `Refusal`; 6: a report carries the worker's
/// speed; 7: a bomberman job may state its clock for a reference speed; 8: `GameJob::Lowest`;
/// 9: size, seed and package digest move from the job into the games that use them).
pub const WIRE_VERSION: u8 = 9;
const TAG_LEN: usize = 32;

type HmacSha256 = Hmac<Sha256>;

/// Why a message was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CodecError {
    #[error("message too short ({0} bytes) to be a farm message")]
    Short(usize),
    #[error("message has wire version {found}; this build speaks {WIRE_VERSION}")]
    Version { found: u8 },
    #[error(
        "message signature does not verify (forged, corrupted or signed with another farm key)"
    )]
    BadSignature,
    #[error("message body does not decode: {0}")]
    Body(String),
    #[error("message could not be encoded: {0}")]
    Encode(String),
}

/// The shared farm key (HMAC key). Never handed to a bot process.
#[derive(Clone)]
pub struct FarmKey(Vec<u8>);

impl FarmKey {
    pub fn new(bytes: impl Into<Vec<u8>>) -> FarmKey {
        FarmKey(bytes.into())
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC accepts keys of any length.
        HmacSha256::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!("hmac takes any key"))
    }
}

impl std::fmt::Debug for FarmKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FarmKey(<redacted>)")
    }
}

/// Encode and sign a message.
pub fn encode<T: Serialize>(msg: &T, key: &FarmKey) -> Result<Vec<u8>, CodecError> {
    let mut out = vec![WIRE_VERSION];
    let body = bincode::serde::encode_to_vec(msg, bincode::config::standard())
        .map_err(|e| CodecError::Encode(e.to_string()))?;
    out.extend_from_slice(&body);
    let mut mac = key.mac();
    mac.update(&out);
    out.extend_from_slice(&mac.finalize().into_bytes());
    Ok(out)
}

/// Check the version and signature, then decode.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], key: &FarmKey) -> Result<T, CodecError> {
    if bytes.len() < 1 + TAG_LEN {
        return Err(CodecError::Short(bytes.len()));
    }
    if bytes[0] != WIRE_VERSION {
        return Err(CodecError::Version { found: bytes[0] });
    }
    let (signed, tag) = bytes.split_at(bytes.len() - TAG_LEN);
    let mut mac = key.mac();
    mac.update(signed);
    mac.verify_slice(tag)
        .map_err(|_| CodecError::BadSignature)?;
    let (msg, used) = decode_body::<T>(&signed[1..])?;
    if used != signed.len() - 1 {
        return Err(CodecError::Body(format!(
            "{} trailing bytes after the message",
            signed.len() - 1 - used
        )));
    }
    Ok(msg)
}

/// bincode allocates a string or list of the length a message claims before reading it, so a
/// few bytes claiming 2^60 would abort the process. The limit of the smallest tier that holds
/// the body bounds what any claim may allocate to 16 times the body (at least 1 MiB).
fn decode_body<T: DeserializeOwned>(body: &[u8]) -> Result<(T, usize), CodecError> {
    const MIB: usize = 1 << 20;
    match body.len() {
        n if n <= MIB => decode_within::<T, MIB>(body),
        n if n <= 16 * MIB => decode_within::<T, { 16 * MIB }>(body),
        n if n <= 256 * MIB => decode_within::<T, { 256 * MIB }>(body),
        n => Err(CodecError::Body(format!(
            "{n} bytes is larger than any farm message"
        ))),
    }
}

fn decode_within<T: DeserializeOwned, const LIMIT: usize>(
    body: &[u8],
) -> Result<(T, usize), CodecError> {
    let config = bincode::config::standard().with_limit::<LIMIT>();
    bincode::serde::decode_from_slice::<T, _>(body, config)
        .map_err(|e| CodecError::Body(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::{Job, ProgramRef, SeatSpec};

    fn job() -> Job {
        Job {
            tournament: "t1".into(),
            number: 7,
            referee_version: "v".into(),
            seats: vec![SeatSpec {
                name: "A".into(),
                program: ProgramRef {
                    sha256: "ab".into(),
                    file_name: "a.cpp".into(),
                },
            }],
            game: crate::msg::GameJob::Bomberman(crate::msg::BombermanJob {
                seed: 42,
                manifest_digest: "d".into(),
                clock: None,
            }),
        }
    }

    #[test]
    fn a_bomberman_clock_travels_in_the_job() {
        let key = FarmKey::new(b"secret".to_vec());
        let mut j = job();
        j.game = crate::msg::GameJob::Bomberman(crate::msg::BombermanJob {
            seed: 42,
            manifest_digest: "d".into(),
            clock: Some(crate::msg::BombermanClock {
                turn_ms: 1000,
                time_bank_ms: 7000,
                reference_speed: Some(240),
            }),
        });
        let bytes = encode(&j, &key).unwrap();
        assert_eq!(bytes[0], WIRE_VERSION);
        assert_eq!(decode::<Job>(&bytes, &key).unwrap(), j);
        // A message of the previous wire version is refused with a clear error.
        let mut old = bytes.clone();
        old[0] = 4;
        assert_eq!(
            decode::<Job>(&old, &key),
            Err(CodecError::Version { found: 4 })
        );
    }

    #[test]
    fn a_signed_message_read_as_another_type_is_an_error_not_an_abort() {
        let key = FarmKey::new(b"secret".to_vec());
        let posting = crate::msg::Posting {
            publication: u64::MAX - 5,
            job: job(),
        };
        let bytes = encode(&posting, &key).unwrap();
        assert!(matches!(
            decode::<crate::msg::Refusal>(&bytes, &key),
            Err(CodecError::Body(_))
        ));
        assert_eq!(
            decode::<crate::msg::Posting>(&bytes, &key).unwrap(),
            posting
        );
    }

    #[test]
    fn round_trips_and_rejects_tampering() {
        let key = FarmKey::new(b"secret".to_vec());
        let bytes = encode(&job(), &key).unwrap();
        assert_eq!(decode::<Job>(&bytes, &key).unwrap(), job());
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 1;
            assert!(decode::<Job>(&b, &key).is_err(), "flip at {i} accepted");
        }
        assert_eq!(
            decode::<Job>(&bytes, &FarmKey::new(b"other".to_vec())),
            Err(CodecError::BadSignature)
        );
        assert!(matches!(
            decode::<Job>(b"garbage", &key),
            Err(CodecError::Short(_))
        ));
    }
}
