//! The bytes of each game's job on the wire, pinned: registering a game (one line in
//! `shared::msg`'s `games!`) must never change another game's bytes, or a worker of the same
//! WIRE_VERSION would read a job as the wrong game. The digests were taken from the wire before
//! the games moved to the registry; a game appended at the end leaves them as they are.

use sha2::{Digest, Sha256};
use shared::codec::{decode, encode, FarmKey};
use shared::msg::Job;
use support::jobs;

mod support;

/// sha256 of each job of `support::jobs` encoded under the key `wire bytes key`.
const PINNED: [(&str, &str); 6] = [
    (
        "bomberman",
        "9dc81ff0ac8dc42cb48485eff749824bda3e8cdd015d39a842a373d361ee58dc",
    ),
    (
        "bomberman",
        "8ef52e89945e2fe40c2dd60703428bf23577a92ba9310a9efa761125cbe4b3e4",
    ),
    (
        "qianwang",
        "ef92a269abda1dd2be0498f1f7a613e24f04332db712d468da2a3753c0197fc5",
    ),
    (
        "proboj",
        "e8e9dd5842e2e109daa9e731d77e6ff307d02f59d343846b19989e0801183b2d",
    ),
    (
        "nim",
        "482a4dd5c9b82a57eb1ad58564cc3bfc77a93fa8b197b9b15602132f71295f9a",
    ),
    (
        "lowest",
        "cad2f711d427aabeb6fb67044fcd5a7ee0ffa709f8009a8bb9c884c496937e96",
    ),
];

#[test]
fn every_games_job_keeps_its_bytes_on_the_wire() {
    let key = FarmKey::new(b"wire bytes key".to_vec());
    let jobs = jobs();
    assert_eq!(jobs.len(), PINNED.len());
    let mut changed = Vec::new();
    for (job, (game, pinned)) in jobs.iter().zip(PINNED) {
        assert_eq!(job.game.name(), game);
        let bytes = encode(job, &key).expect("a job encodes");
        let digest = hex::encode(Sha256::digest(&bytes));
        println!("{game}: {digest}");
        if digest != pinned {
            changed.push(format!("{game}: {digest} (pinned {pinned})"));
        }
        let back: Job = decode(&bytes, &key).expect("a job decodes");
        assert_eq!(&back, job);
    }
    assert!(
        changed.is_empty(),
        "a game's job has new bytes on the wire:\n{}",
        changed.join("\n")
    );
}
