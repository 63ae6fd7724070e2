//! The coordinator's cluster commands, over the `broker` crate's vocabulary: the farm key (one
//! clap group for every command that talks to the cluster) and `proboj` (games.json on the
//! cluster). A tournament on the cluster is the run engine's (`run::cluster`); the workers'
//! side, the `farm worker` loop, is `worker::serve`.

pub mod proboj;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use shared::codec::FarmKey;

/// The farm key (every job and report is signed with it): a file, or the key itself in the
/// environment. One clap group for every command that talks to the cluster.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct KeyArgs {
    /// File holding the farm key (HMAC); used before FARM_KEY when both are given.
    #[arg(long, env = "FARM_KEY_FILE", value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    /// The farm key itself. Prefer the environment variable or --key-file: a command-line
    /// value is visible to other users in `ps`.
    #[arg(
        long = "farm-key",
        env = "FARM_KEY",
        value_name = "KEY",
        hide_env_values = true
    )]
    pub key: Option<String>,
}

impl KeyArgs {
    /// Read the key: the file's contents without trailing whitespace, else the given key.
    pub fn load(&self) -> Result<FarmKey> {
        let bytes = match (&self.key_file, &self.key) {
            (Some(p), _) => {
                let mut b = std::fs::read(p)
                    .with_context(|| format!("reading the farm key file {}", p.display()))?;
                while b.last().is_some_and(|c| c.is_ascii_whitespace()) {
                    b.pop();
                }
                b
            }
            (None, Some(k)) => k.clone().into_bytes(),
            (None, None) => {
                bail!("cluster mode needs the farm key: give --key-file FILE or set FARM_KEY")
            }
        };
        if bytes.is_empty() {
            bail!("the farm key is empty (--key-file or FARM_KEY)");
        }
        Ok(FarmKey::new(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        key: KeyArgs,
    }

    /// The keys of `argv` agree when a message one signs, the other accepts.
    fn same_key(a: &FarmKey, b: &FarmKey) -> bool {
        let bytes = shared::codec::encode(&"probe", a).unwrap();
        shared::codec::decode::<String>(&bytes, b).is_ok()
    }

    #[test]
    fn the_farm_key_comes_from_a_file_first_then_the_flag_or_farm_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("farm.key");
        std::fs::write(&file, "sekrit\n").unwrap();
        let flag = Cli::try_parse_from(["t", "--farm-key", "sekrit"])
            .unwrap()
            .key;
        let from_file = Cli::try_parse_from(["t", "--key-file", file.to_str().unwrap()])
            .unwrap()
            .key;
        let both = Cli::try_parse_from([
            "t",
            "--farm-key",
            "other",
            "--key-file",
            file.to_str().unwrap(),
        ])
        .unwrap()
        .key;
        let (a, b, c) = (
            flag.load().unwrap(),
            from_file.load().unwrap(),
            both.load().unwrap(),
        );
        assert!(
            same_key(&a, &b),
            "trailing newline of the file is not part of the key"
        );
        assert!(same_key(&b, &c), "the file wins over the flag/env");
        let other = FarmKey::new("other");
        assert!(!same_key(&a, &other));
        let none = KeyArgs::default().load().unwrap_err().to_string();
        assert!(
            none.contains("--key-file") && none.contains("FARM_KEY"),
            "{none}"
        );
        let empty = Cli::try_parse_from(["t", "--farm-key", ""]).unwrap().key;
        assert!(empty.load().unwrap_err().to_string().contains("empty"));
        let missing = Cli::try_parse_from(["t", "--key-file", "/nonexistent/farm.key"])
            .unwrap()
            .key;
        let err = format!("{:#}", missing.load().unwrap_err());
        assert!(err.contains("/nonexistent/farm.key"), "{err}");
    }
}
