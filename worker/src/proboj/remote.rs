//! proboj games as farm jobs. The coordinator packs every file the server and the players need
//! (their folders, which lie under the directory the runner was started in) as hashed
//! artifacts; a worker lays the package out in a fresh folder, runs the game exactly as the
//! local runner would, and sends the game folder back as a bundle that the coordinator writes
//! into its own `game_root`.

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::AtomicBool;

use base64::Engine as _;
use shared::msg::{PackageFile, ProbojJob};
use thiserror::Error;

use super::config::{check_config, Config, ConfigError, Game, RawConfig};
use super::game::run_game;
use super::table::{Ending, GameOutcome, RunOptions};

/// The bundle a worker sends back and the runner protocol's version live with the game
/// boundary (`games::proboj`), where the coordinator checks a bundle against its job.
pub use games::proboj::{BundleFile, GameBundle, VERSION};

/// Files and bytes a package may hold at most (a typo in a command must not ship a disk).
pub const MAX_FILES: usize = 20_000;
pub const MAX_BYTES: u64 = 512 << 20;

/// Folders never packed: version control and interpreter caches.
const SKIP_DIRS: [&str; 3] = [".git", "__pycache__", "node_modules"];

/// Why a package cannot be built or laid out, or a bundle cannot be read.
#[derive(Debug, Error)]
pub enum RemoteError {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
    /// The host could not run the game (sandbox set-up, exec of a farm-laid-out file): an
    /// infrastructure failure, never a result.
    #[error("host problem: {0}")]
    Host(String),
    /// A package file could not be had from where `lay_out` was told to take it.
    #[error("package file {path}: {source}")]
    Fetch {
        path: String,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RemoteError + '_ {
    move |source| RemoteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A package built on the coordinator: the job parts and where each file's bytes are.
#[derive(Debug, Clone)]
pub struct Package {
    pub config_json: String,
    pub files: Vec<PackageFile>,
    /// Absolute path of each file (same order as `files`).
    pub sources: Vec<PathBuf>,
    /// The package MANIFEST's digest (what jobs carry as `manifest_digest`).
    pub digest: String,
}

/// Where game folders go on a worker when `game_root` is not under the start directory.
pub const FOREIGN_GAME_ROOT: &str = "__game_root";

/// Pack what `config` (read from `raw`, resolved against `start_dir`) needs: every file under
/// the server's and the players' folders, and under each folder of `data` (e.g. maps a server
/// reads as `../maps/x.ppm`). Commands are rewritten to paths relative to `start_dir`, and
/// `game_root` too (when it lies outside, game folders go to [`FOREIGN_GAME_ROOT`] on workers).
pub fn build_package(
    raw: &RawConfig,
    config: &Config,
    games: &[Game],
    start_dir: &Path,
    data: &[PathBuf],
) -> Result<Package, RemoteError> {
    let start = std::fs::canonicalize(start_dir).map_err(io(start_dir))?;
    let game_root = config.game_root.clone();
    let game_root = std::fs::canonicalize(&game_root).unwrap_or(game_root);
    let rel_root = game_root
        .strip_prefix(&start)
        .unwrap_or(Path::new(FOREIGN_GAME_ROOT))
        .to_path_buf();
    let mut folders: Vec<PathBuf> = Vec::new();
    for d in data {
        let abs = start.join(d);
        let f = std::fs::canonicalize(&abs)
            .map_err(|e| RemoteError::Invalid(format!("data folder {}: {e}", abs.display())))?;
        if !f.is_dir() || !f.starts_with(&start) {
            return Err(RemoteError::Invalid(format!(
                "data folder {} must be a folder under {} (the directory the runner was started in)",
                f.display(),
                start.display()
            )));
        }
        folders.push(f);
    }
    let game_dirs: Vec<PathBuf> = games
        .iter()
        .map(|g| super::config::normalize(&game_root.join(&g.gamefolder)))
        .collect();
    for cmd in std::iter::once(&config.server).chain(config.players.iter().map(|p| &p.command)) {
        let mut own: Vec<PathBuf> = Vec::new();
        for d in &game_dirs {
            let c = cmd.for_game(d);
            let game_relative = super::config::game_relative_folders(&c, d);
            for f in c.folders.into_iter().chain(game_relative) {
                if !own.contains(&f) {
                    own.push(f);
                }
            }
        }
        for f in &own {
            let f = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
            if !f.starts_with(&start) {
                return Err(RemoteError::Invalid(format!(
                    "{} (a folder of the command of {}) is outside {}; in --broker mode workers \
                     get only files under the directory the runner was started in",
                    f.display(),
                    program_label(config, cmd),
                    start.display()
                )));
            }
            folders.push(f);
        }
    }
    folders.sort();
    let mut kept: Vec<PathBuf> = Vec::new();
    for f in folders {
        if !kept.iter().any(|g| f.starts_with(g)) {
            kept.push(f);
        }
    }
    let folders = kept;
    // Never pack game folders. A game_root below the packed folders is skipped whole (earlier
    // games live there); one that is a packed folder itself or above one (the stock layout:
    // `"game_root": "."`, the server in the start folder) only loses this run's game folders.
    let mut skip = game_dirs.clone();
    if !folders.iter().any(|f| f.starts_with(&game_root)) {
        skip.push(game_root.clone());
    }
    let mut found: Vec<PathBuf> = Vec::new();
    let mut bytes = 0u64;
    for f in &folders {
        walk(f, &skip, &mut found, &mut bytes)?;
    }
    found.sort();
    found.dedup();
    let mut files = Vec::with_capacity(found.len());
    for abs in &found {
        let rel = abs
            .strip_prefix(&start)
            .map_err(|_| RemoteError::Invalid(format!("{} escapes the package", abs.display())))?;
        let rel = rel
            .to_str()
            .ok_or_else(|| RemoteError::Invalid(format!("{} is not UTF-8", abs.display())))?;
        let data = std::fs::read(abs).map_err(io(abs))?;
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(abs)
            .map_err(io(abs))?
            .permissions()
            .mode();
        files.push(PackageFile {
            path: rel.to_string(),
            sha256: shared::manifest::sha256_hex(&data),
            executable: mode & 0o111 != 0,
        });
    }
    let mut raw = raw.clone();
    raw.server = relative_command(&raw.server, &start)?;
    for (name, value) in raw.players.iter_mut() {
        let command = value
            .get("command")
            .and_then(|c| c.as_str())
            .ok_or_else(|| RemoteError::Invalid(format!("player {name:?} has no command")))?;
        let rewritten = relative_command(command, &start)?;
        if let Some(obj) = value.as_object_mut() {
            obj.insert("command".into(), serde_json::Value::String(rewritten));
        }
    }
    raw.game_root = if rel_root.as_os_str().is_empty() {
        ".".into()
    } else {
        rel_root.to_string_lossy().into_owned()
    };
    let config_json =
        serde_json::to_string(&raw).map_err(|e| RemoteError::Invalid(format!("config: {e}")))?;
    let digest = package_digest(&files)?;
    Ok(Package {
        config_json,
        files,
        sources: found,
        digest,
    })
}

/// The package of games played in place (`farm proboj` on this machine): the config as read,
/// no files (the programs stay where the config names them), and the digest of that empty set.
pub fn in_place_package(raw: &RawConfig) -> Result<Package, RemoteError> {
    let config_json =
        serde_json::to_string(raw).map_err(|e| RemoteError::Invalid(format!("config: {e}")))?;
    Ok(Package {
        config_json,
        files: Vec::new(),
        sources: Vec::new(),
        digest: package_digest(&[])?,
    })
}

fn program_label(config: &Config, cmd: &super::config::Command) -> String {
    if std::ptr::eq(cmd, &config.server) {
        return "the server".into();
    }
    config
        .players
        .iter()
        .find(|p| std::ptr::eq(&p.command, cmd))
        .map(|p| format!("player {:?}", p.name))
        .unwrap_or_else(|| "a player".into())
}

/// The digest of a package's file list (a MANIFEST of path -> sha256).
pub fn package_digest(files: &[PackageFile]) -> Result<String, RemoteError> {
    let manifest =
        shared::manifest::from_digests(files.iter().map(|f| (f.path.as_str(), f.sha256.as_str())))
            .map_err(|e| RemoteError::Invalid(format!("package: {e}")))?;
    Ok(shared::manifest::digest(&manifest))
}

fn walk(
    dir: &Path,
    skip: &[PathBuf],
    out: &mut Vec<PathBuf>,
    bytes: &mut u64,
) -> Result<(), RemoteError> {
    if skip.iter().any(|s| s == dir) {
        return Ok(());
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .collect::<Result<_, _>>()
        .map_err(io(dir))?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let ft = e.file_type().map_err(io(&path))?;
        if ft.is_dir() {
            if SKIP_DIRS.iter().any(|s| e.file_name() == *s) {
                continue;
            }
            walk(&path, skip, out, bytes)?;
        } else if ft.is_file() || (ft.is_symlink() && path.is_file()) {
            *bytes += std::fs::metadata(&path).map_err(io(&path))?.len();
            out.push(path);
            if out.len() > MAX_FILES || *bytes > MAX_BYTES {
                return Err(RemoteError::Invalid(format!(
                    "the package would hold more than {MAX_FILES} files or {} MiB (at {}); \
                     keep the server's and the players' folders small",
                    MAX_BYTES >> 20,
                    dir.display()
                )));
            }
        }
    }
    Ok(())
}

/// `command` with every absolute path under `start` made relative to it.
fn relative_command(command: &str, start: &Path) -> Result<String, RemoteError> {
    let words = shlex::split(command)
        .ok_or_else(|| RemoteError::Invalid(format!("cannot split {command:?}")))?;
    let words: Vec<String> = words
        .into_iter()
        .map(|w| {
            let p = Path::new(&w);
            match (p.is_absolute(), p.strip_prefix(start)) {
                (true, Ok(rel)) => format!("./{}", rel.to_string_lossy()),
                _ => w,
            }
        })
        .collect();
    shlex::try_join(words.iter().map(String::as_str))
        .map_err(|e| RemoteError::Invalid(format!("cannot quote {command:?}: {e}")))
}

fn ending_text(e: &Ending) -> String {
    match e {
        Ending::End => "end".into(),
        Ending::ServerExited => "server-exited".into(),
        Ending::Interrupted => "interrupted".into(),
        Ending::Failed(why) => format!("failed: {why}"),
    }
}

fn ending_of(s: &str) -> Ending {
    match s {
        "end" => Ending::End,
        "server-exited" => Ending::ServerExited,
        "interrupted" => Ending::Interrupted,
        other => Ending::Failed(other.strip_prefix("failed: ").unwrap_or(other).to_string()),
    }
}

/// Lay the package out under `dir` (a fresh folder): each file from `local(file)`, checked
/// paths, read-only copies (executables stay executable).
pub fn lay_out<E: std::error::Error + Send + Sync + 'static>(
    job: &ProbojJob,
    dir: &Path,
    local: &dyn Fn(&PackageFile) -> Result<PathBuf, E>,
) -> Result<(), RemoteError> {
    use std::os::unix::fs::PermissionsExt;
    for f in &job.files {
        shared::manifest::check_path(&f.path)
            .map_err(|e| RemoteError::Invalid(format!("package: {e}")))?;
        let from = local(f).map_err(|e| RemoteError::Fetch {
            path: f.path.clone(),
            source: Box::new(e),
        })?;
        let to = dir.join(&f.path);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::copy(&from, &to).map_err(io(&to))?;
        let mode = if f.executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode)).map_err(io(&to))?;
    }
    // Every folder of the package must be traversable by the sandbox's uids.
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).map_err(io(&d))?;
        for e in std::fs::read_dir(&d).map_err(io(&d))? {
            let e = e.map_err(io(&d))?;
            if e.file_type().map_err(io(&d))?.is_dir() {
                stack.push(e.path());
            }
        }
    }
    Ok(())
}

/// Run the job's game in `dir` (where [`lay_out`] put the package) and bundle its folder.
pub fn run_in(
    job: &ProbojJob,
    dir: &Path,
    opts: &RunOptions,
    stop: &AtomicBool,
) -> Result<GameBundle, RemoteError> {
    let outcome = play_in(job, dir, opts, stop)?;
    if let Some(why) = &outcome.host_problem {
        return Err(RemoteError::Host(why.clone()));
    }
    bundle(&outcome)
}

/// Run the job's game with its config's paths resolved against `dir`: a laid-out package, or
/// (`farm proboj` on this machine) the directory the runner was started in. The game folder is
/// left under the config's game_root. A game the host could not run has `host_problem` set (and
/// a failed ending naming it): the caller decides whose problem that is.
pub fn play_in(
    job: &ProbojJob,
    dir: &Path,
    opts: &RunOptions,
    stop: &AtomicBool,
) -> Result<GameOutcome, RemoteError> {
    let raw: RawConfig = serde_json::from_str(&job.config_json)
        .map_err(|e| RemoteError::Invalid(format!("the job's config: {e}")))?;
    let config = check_config(raw, Path::new("config.json (from the job)"), dir)?;
    let game: Game = serde_json::from_str(&job.game_json)
        .map_err(|e| RemoteError::Invalid(format!("the job's game: {e}")))?;
    for p in &game.players {
        if config.player(p).is_none() {
            return Err(RemoteError::Invalid(format!(
                "game {:?}: player {p:?} is not in the config",
                game.gamefolder
            )));
        }
    }
    check_relative(&game.gamefolder)?;
    Ok(run_game(&config, &game, opts, stop, 0))
}

fn check_relative(p: &str) -> Result<(), RemoteError> {
    let path = Path::new(p);
    if p.is_empty()
        || path.is_absolute()
        || path
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(RemoteError::Invalid(format!(
            "{p:?} must be a relative path without `..`"
        )));
    }
    Ok(())
}

/// The bundle of a game whose folder is already where the coordinator wants it (played in
/// place): its outcome and no files.
pub fn bundle_in_place(o: &GameOutcome) -> GameBundle {
    GameBundle {
        gamefolder: o.gamefolder.clone(),
        players: o.players.clone(),
        scores: o.scores.clone(),
        ending: ending_text(&o.ending),
        warnings: o.warnings.clone(),
        commands: o.commands,
        files: Vec::new(),
    }
}

/// The bundle of a finished game: its outcome and every file of its folder.
pub fn bundle(o: &GameOutcome) -> Result<GameBundle, RemoteError> {
    let mut files = Vec::new();
    if o.folder.is_dir() {
        let mut found = Vec::new();
        let mut bytes = 0;
        walk(&o.folder, &[], &mut found, &mut bytes)?;
        found.sort();
        for abs in found {
            let rel = abs.strip_prefix(&o.folder).unwrap_or(&abs);
            let data = std::fs::read(&abs).map_err(io(&abs))?;
            files.push(BundleFile {
                path: rel.to_string_lossy().into_owned(),
                data: base64::engine::general_purpose::STANDARD.encode(data),
            });
        }
    }
    Ok(GameBundle {
        files,
        ..bundle_in_place(o)
    })
}

/// Write a bundle's files into `game_root/<gamefolder>` as the local runner leaves them (logs
/// folder included) and return the outcome it describes.
pub fn unpack(b: &GameBundle, game_root: &Path) -> Result<GameOutcome, RemoteError> {
    use std::os::unix::fs::PermissionsExt;
    check_relative(&b.gamefolder)?;
    let folder = game_root.join(&b.gamefolder);
    std::fs::create_dir_all(folder.join("logs")).map_err(io(&folder))?;
    for f in &b.files {
        shared::manifest::check_path(&f.path)
            .map_err(|e| RemoteError::Invalid(format!("bundle of {}: {e}", b.gamefolder)))?;
        let data = base64::engine::general_purpose::STANDARD
            .decode(&f.data)
            .map_err(|e| RemoteError::Invalid(format!("bundle file {}: {e}", f.path)))?;
        let to = folder.join(&f.path);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&to, data).map_err(io(&to))?;
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o644)).map_err(io(&to))?;
    }
    Ok(GameOutcome {
        gamefolder: b.gamefolder.clone(),
        folder,
        players: b.players.clone(),
        scores: b.scores.clone(),
        ending: ending_of(&b.ending),
        warnings: b.warnings.clone(),
        commands: b.commands,
        host_problem: None,
    })
}

/// The outcome of a game a worker could not play (the folder holds nothing).
pub fn failed(game: &Game, game_root: &Path, why: String) -> GameOutcome {
    GameOutcome {
        gamefolder: game.gamefolder.clone(),
        folder: game_root.join(&game.gamefolder),
        players: game.players.clone(),
        scores: None,
        ending: Ending::Failed(why),
        warnings: Vec::new(),
        commands: 0,
        host_problem: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stock layout: `./server` in the start folder, `"game_root": "."`, a player named
    /// relative to the game folder; an earlier run's game folder lies in the start folder.
    #[test]
    fn the_stock_layout_packs_the_start_folder_but_no_game_folder() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let write = |p: &str, text: &str| {
            let path = d.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        };
        write("server", "#!/bin/sh\n");
        std::fs::set_permissions(d.join("server"), std::fs::Permissions::from_mode(0o755)).unwrap();
        write("players/p/player.py", "print()\n");
        write("maps/m.txt", "map\n");
        write("hra/observer.gz", "old game\n");
        let raw: RawConfig = serde_json::from_str(
            r#"{"server": "./server", "game_root": ".", "timeout": {"py": 1},
                "players": {"p": {"command": "/usr/bin/python3 ../players/p/player.py",
                                  "language": "py"}}}"#,
        )
        .unwrap();
        let config = check_config(raw.clone(), Path::new("config.json"), d).unwrap();
        let game: Game =
            serde_json::from_str(r#"{"gamefolder": "hra", "players": ["p"]}"#).unwrap();
        let pkg = build_package(&raw, &config, &[game], d, &[]).unwrap();
        let paths: Vec<&str> = pkg.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["maps/m.txt", "players/p/player.py", "server"]);
        assert!(pkg.files.iter().any(|f| f.path == "server" && f.executable));
        let sent: RawConfig = serde_json::from_str(&pkg.config_json).unwrap();
        assert_eq!(sent.game_root, ".");
        assert_eq!(sent.server, "./server");
    }
}
