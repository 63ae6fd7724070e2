//! A worker's artifacts: programs named by sha256 are fetched from Redis, re-hashed (bytes that
//! do not match their name are refused, never cached) and kept in a local disk cache, so each
//! host downloads a program once. The Bomberman referee package travels the same way: the job
//! names its manifest by digest, the manifest's files are fetched and re-hashed, and its VERSION
//! must be the referee this worker runs (checked once per digest). The coordinator's upload side
//! is [`broker::Store::put_artifact`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use broker::Store;
use shared::msg::{Job, JobFailure, ProgramRef};

use super::Chain;
use crate::job::LocalArtifacts;

/// Fetch-and-verify cache of programs on this host.
pub struct RedisArtifacts {
    store: Store,
    dir: PathBuf,
    /// Referee-package digests already fetched and checked on this host.
    packages: Mutex<HashSet<String>>,
}

impl RedisArtifacts {
    pub fn new(store: Store, dir: PathBuf) -> std::io::Result<RedisArtifacts> {
        std::fs::create_dir_all(&dir)?;
        Ok(RedisArtifacts {
            store,
            dir,
            packages: Mutex::new(HashSet::new()),
        })
    }

    /// The folder programs are cached in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// For a job whose game has a referee package (bomberman's): fetch it by the job's manifest
    /// digest, re-hash every file, and check that the package is for the referee this worker
    /// runs. A package missing from Redis is an artifact failure (the coordinator uploads it
    /// again); one for another referee is refused.
    pub async fn referee_package(&self, job: &Job) -> Result<(), JobFailure> {
        let Some(digest) = job.game.payload().referee_package() else {
            return Ok(());
        };
        if self.packages.lock().is_ok_and(|p| p.contains(digest)) {
            return Ok(());
        }
        let text_path = self
            .fetch_one(&ProgramRef {
                sha256: digest.to_string(),
                file_name: "referee MANIFEST".into(),
            })
            .await?;
        let text = std::fs::read_to_string(&text_path).map_err(|e| {
            JobFailure::Infrastructure(format!("reading {}: {e}", text_path.display()))
        })?;
        let manifest = shared::manifest::parse_canonical(&text).map_err(|e| {
            JobFailure::Artifact(format!("the referee manifest {digest} is malformed: {e}"))
        })?;
        let mut version = None;
        for (name, sha) in manifest.iter() {
            let path = self
                .fetch_one(&ProgramRef {
                    sha256: sha.to_string(),
                    file_name: format!("referee file {name}"),
                })
                .await?;
            if name == "VERSION" {
                version = std::fs::read_to_string(&path)
                    .ok()
                    .map(|v| v.trim().to_string());
            }
        }
        let mine = games::version_of(&job.game);
        match version {
            Some(v) if v == mine => {}
            Some(v) => {
                return Err(JobFailure::Unsupported(format!(
                    "match {}: the referee package with MANIFEST digest {digest} is for referee {v:?}; this worker runs {mine:?}",
                    job.number
                )))
            }
            None => {
                return Err(JobFailure::Unsupported(format!(
                    "match {}: the referee package with MANIFEST digest {digest} has no VERSION file",
                    job.number
                )))
            }
        }
        if let Ok(mut p) = self.packages.lock() {
            p.insert(digest.to_string());
        }
        Ok(())
    }

    /// Local files for every seat of the job, verified.
    pub async fn fetch(&self, job: &Job) -> Result<LocalArtifacts, JobFailure> {
        let mut local = LocalArtifacts::new();
        let mut programs: Vec<ProgramRef> = job.seats.iter().map(|s| s.program.clone()).collect();
        programs.extend(job.game.payload().files());
        for program in &programs {
            let path = self.fetch_one(program).await?;
            local.insert(program.sha256.clone(), path);
        }
        Ok(local)
    }

    async fn fetch_one(&self, program: &ProgramRef) -> Result<PathBuf, JobFailure> {
        let sha = &program.sha256;
        if sha.len() != 64
            || !sha
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        {
            return Err(JobFailure::Artifact(format!(
                "{}: {sha:?} is not a sha256 in lowercase hex",
                program.file_name
            )));
        }
        let name = if program.is_source() {
            format!("{sha}.cpp")
        } else {
            sha.clone()
        };
        let path = self.dir.join(name);
        if let Ok(bytes) = std::fs::read(&path) {
            if shared::manifest::sha256_hex(&bytes) == *sha {
                return Ok(path);
            }
        }
        let bytes = self
            .store
            .get_artifact(sha)
            .await
            .map_err(|e| {
                JobFailure::Infrastructure(format!(
                    "fetching {} from Redis: {}",
                    program.file_name,
                    Chain(&e)
                ))
            })?
            .ok_or_else(|| {
                JobFailure::Artifact(format!(
                    "{} (sha256 {sha}) is missing from Redis",
                    program.file_name
                ))
            })?;
        let got = shared::manifest::sha256_hex(&bytes);
        if got != *sha {
            return Err(JobFailure::Artifact(format!(
                "{}: the bytes stored under sha256 {sha} hash to {got}; refused",
                program.file_name
            )));
        }
        write_atomically(&path, &bytes, !program.is_source())
            .map_err(|e| JobFailure::Infrastructure(format!("caching {}: {e}", path.display())))?;
        Ok(path)
    }
}

fn write_atomically(path: &Path, bytes: &[u8], executable: bool) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    // The cache folder is this worker's own: one removed under it is made again.
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    if executable {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o755))?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
