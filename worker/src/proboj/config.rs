//! The proboj runner's input files: `config.json` (server, players with command + language,
//! processes_per_player, timeouts per language, log switches, game_root) and `games.json`
//! (gamefolder, players, args), checked up front so that bad input is named before any game runs.
//! Commands are split like a shell would; relative paths resolve against the start directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

/// Why the input files cannot be used.
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid: {source}")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{0}")]
    Invalid(String),
}

/// One player of `config.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayerConfig {
    pub command: String,
    pub language: String,
}

fn one() -> usize {
    1
}

/// `config.json` as written by users of the official runner.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub struct RawConfig {
    pub server: String,
    pub players: serde_json::Map<String, serde_json::Value>,
    #[serde(default = "one")]
    pub processes_per_player: usize,
    #[serde(default)]
    pub timeout: BTreeMap<String, f64>,
    #[serde(default)]
    pub disable_logs: bool,
    #[serde(default)]
    pub disable_gzip: bool,
    pub game_root: String,
}

/// A command split and resolved: absolute program, arguments, folders it may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub program: PathBuf,
    /// The arguments, those naming a file relative to the start folder made absolute (see
    /// [`Command::for_game`] for the game folder's precedence).
    pub args: Vec<String>,
    /// The program's own folder and the folders of script arguments (not under /usr).
    pub folders: Vec<PathBuf>,
    /// The arguments as the config wrote them.
    pub written: Vec<String>,
}

impl Command {
    /// The command as it starts in the game folder `game_dir`. The official runner passes
    /// arguments as written and runs the process there, so an argument naming a file relative
    /// to the game folder (`../players/kl2/player.py`) is kept as written even when the same
    /// words name a file relative to the start folder too; only an argument that names no file
    /// from the game folder keeps farm's start-folder resolution (absolute). Resolved lexically,
    /// as [`game_relative_folders`].
    pub fn for_game(&self, game_dir: &Path) -> Command {
        let mut folders: Vec<PathBuf> = super::process::own_folder(&self.program)
            .into_iter()
            .collect();
        let mut args = Vec::with_capacity(self.args.len());
        for (arg, written) in self.args.iter().zip(&self.written) {
            let game_relative = arg != written && names_file_in(game_dir, written);
            // An argument resolve_command kept as written (an absolute path) still has the
            // folder it found for it; a game-relative one has its folders from the game's.
            let own = super::process::own_folder(Path::new(arg))
                .filter(|f| arg != written || self.folders.contains(f));
            if let Some(f) = own.filter(|_| !game_relative) {
                if !folders.contains(&f) {
                    folders.push(f);
                }
            }
            args.push(if game_relative { written } else { arg }.clone());
        }
        Command {
            program: self.program.clone(),
            args,
            folders,
            written: self.written.clone(),
        }
    }
}

/// Whether `arg` (a relative path, not an option) names a file from the folder `dir`.
fn names_file_in(dir: &Path, arg: &str) -> bool {
    !arg.starts_with('-') && Path::new(arg).is_relative() && normalize(&dir.join(arg)).is_file()
}

/// A player after checking.
#[derive(Debug, Clone)]
pub struct Player {
    pub name: String,
    pub command: Command,
    /// Why its program cannot be found (not built, another machine's path): as under the
    /// official runner, which resolves a player only when a game starts it, this is no error;
    /// the player's games are played without it (it cannot start, its log says why).
    pub missing: Option<String>,
    pub language: String,
    pub timeout: Duration,
}

/// The checked configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub server: Command,
    /// In config order (the first one is the rating anchor).
    pub players: Vec<Player>,
    pub processes_per_player: usize,
    pub disable_logs: bool,
    pub disable_gzip: bool,
    /// Absolute.
    pub game_root: PathBuf,
}

/// One game of `games.json`.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub struct Game {
    pub gamefolder: String,
    pub players: Vec<String>,
    #[serde(default)]
    pub args: String,
}

impl Config {
    /// The player named `name`.
    pub fn player(&self, name: &str) -> Option<&Player> {
        self.players.iter().find(|p| p.name == name)
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| ConfigError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// Read and check `config.json`; relative paths resolve against `start_dir`.
pub fn load_config(path: &Path, start_dir: &Path) -> Result<Config, ConfigError> {
    check_config(read_raw_config(path)?, path, start_dir)
}

/// `config.json` as written, before any check.
pub fn read_raw_config(path: &Path) -> Result<RawConfig, ConfigError> {
    read_json(path)
}

/// Check a config already parsed from `source` (named in errors).
pub fn check_config(
    raw: RawConfig,
    source: &Path,
    start_dir: &Path,
) -> Result<Config, ConfigError> {
    let where_ = source.display();
    let invalid = |s: String| ConfigError::Invalid(format!("{where_}: {s}"));
    let server =
        resolve_command(&raw.server, start_dir).map_err(|e| invalid(format!("`server`: {e}")))?;
    if raw.processes_per_player == 0 {
        return Err(invalid("`processes_per_player` must be at least 1".into()));
    }
    let mut players = Vec::new();
    for (name, value) in &raw.players {
        check_name(name).map_err(|e| invalid(format!("player {name:?}: {e}")))?;
        let p: PlayerConfig = serde_json::from_value(value.clone())
            .map_err(|e| invalid(format!("player {name:?}: {e}")))?;
        let (command, missing) = match resolve_command(&p.command, start_dir) {
            Ok(c) => (c, None),
            Err(e @ (CommandError::Missing(_) | CommandError::NotInPath(_))) => {
                let c = unresolved_command(&p.command, start_dir)
                    .map_err(|e| invalid(format!("player {name:?} `command`: {e}")))?;
                (c, Some(e.to_string()))
            }
            Err(e) => return Err(invalid(format!("player {name:?} `command`: {e}"))),
        };
        let secs = raw.timeout.get(&p.language).copied().ok_or_else(|| {
            invalid(format!(
                "player {name:?} uses language {:?}, which has no entry in `timeout` (has: {:?})",
                p.language,
                raw.timeout.keys().collect::<Vec<_>>()
            ))
        })?;
        if !(secs.is_finite() && secs > 0.0) {
            return Err(invalid(format!(
                "timeout of language {:?} must be a positive number of seconds, not {secs}",
                p.language
            )));
        }
        players.push(Player {
            name: name.clone(),
            command,
            missing,
            language: p.language,
            timeout: Duration::from_secs_f64(secs),
        });
    }
    if players.is_empty() {
        return Err(invalid("`players` is empty".into()));
    }
    let root = PathBuf::from(&raw.game_root);
    Ok(Config {
        server,
        players,
        processes_per_player: raw.processes_per_player,
        disable_logs: raw.disable_logs,
        disable_gzip: raw.disable_gzip,
        game_root: if root.is_absolute() {
            root
        } else {
            start_dir.join(root)
        },
    })
}

/// Read `games.json` and check it against `config`.
pub fn load_games(path: &Path, config: &Config) -> Result<Vec<Game>, ConfigError> {
    let games: Vec<Game> = read_json(path)?;
    let mut seen = std::collections::HashSet::new();
    for (i, g) in games.iter().enumerate() {
        let at = format!("{}: game {} ({:?})", path.display(), i + 1, g.gamefolder);
        let folder = Path::new(&g.gamefolder);
        if g.gamefolder.is_empty()
            || folder.is_absolute()
            || folder
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(ConfigError::Invalid(format!(
                "{at}: `gamefolder` must be a relative path without `..`"
            )));
        }
        if !seen.insert(g.gamefolder.clone()) {
            return Err(ConfigError::Invalid(format!(
                "{at}: `gamefolder` is used by an earlier game too"
            )));
        }
        if g.players.is_empty() {
            return Err(ConfigError::Invalid(format!("{at}: `players` is empty")));
        }
        for p in &g.players {
            if config.player(p).is_none() {
                return Err(ConfigError::Invalid(format!(
                    "{at}: player {p:?} is not in config (known: {:?})",
                    config.players.iter().map(|p| &p.name).collect::<Vec<_>>()
                )));
            }
        }
        if g.args.contains('\n') && g.args.lines().any(|l| l == ".") {
            return Err(ConfigError::Invalid(format!(
                "{at}: `args` contains a line \".\", which would end the CONFIG message"
            )));
        }
    }
    Ok(games)
}

/// A player name the runner cannot use (it names folders and log files).
#[derive(Debug, Error)]
#[error("a player name must be non-empty, without spaces or `/`, and not start with `__`")]
struct BadName;

fn check_name(name: &str) -> Result<(), BadName> {
    if name.is_empty()
        || name.starts_with("__")
        || name
            .chars()
            .any(|c| c.is_whitespace() || c == '/' || c == '\0')
    {
        return Err(BadName);
    }
    Ok(())
}

/// Why a command line cannot be run.
#[derive(Debug, Error)]
pub enum CommandError {
    #[error("cannot split {0:?}")]
    Split(String),
    #[error("the command is empty")]
    Empty,
    #[error("program {} does not exist", .0.display())]
    Missing(PathBuf),
    #[error("program {0:?} is not in PATH")]
    NotInPath(String),
}

/// Split `command` like a shell and resolve it: a program with a `/` resolves against
/// `start_dir` (as the official runner does), a bare name is searched in PATH (the official
/// runner would look for it in `start_dir`); arguments that name existing files relative to
/// `start_dir` become absolute (so `python3 players/p.py` works from the game folder, where the
/// official runner's process would not find it), and their folders become readable. Each game
/// starts [`Command::for_game`], where the game folder's meaning of an argument comes first.
pub fn resolve_command(command: &str, start_dir: &Path) -> Result<Command, CommandError> {
    let words = shlex::split(command).ok_or_else(|| CommandError::Split(command.to_string()))?;
    let (first, rest) = words.split_first().ok_or(CommandError::Empty)?;
    let program = if first.contains('/') {
        let p = start_dir.join(first);
        if !p.is_file() {
            return Err(CommandError::Missing(p));
        }
        p
    } else {
        which(first).ok_or_else(|| CommandError::NotInPath(first.clone()))?
    };
    let program = std::fs::canonicalize(&program).unwrap_or(program);
    let mut folders: Vec<PathBuf> = super::process::own_folder(&program).into_iter().collect();
    let mut args = Vec::new();
    for a in rest {
        let candidate = start_dir.join(a);
        if !a.starts_with('-') && (a.contains('/') || a.contains('.')) && candidate.is_file() {
            let abs = std::fs::canonicalize(&candidate).unwrap_or(candidate);
            if let Some(f) = super::process::own_folder(&abs) {
                if !folders.contains(&f) {
                    folders.push(f);
                }
            }
            args.push(abs.to_string_lossy().into_owned());
        } else {
            args.push(a.clone());
        }
    }
    Ok(Command {
        program,
        args,
        folders,
        written: rest.to_vec(),
    })
}

/// A command whose program cannot be found, as the official runner would try to start it: the
/// program is the first word joined to `start_dir` (Go's `filepath.Join(wd, ...)`, cleaned),
/// arguments as written; its folder, if it exists (a player not built yet), is its own.
fn unresolved_command(command: &str, start_dir: &Path) -> Result<Command, CommandError> {
    let words = shlex::split(command).ok_or_else(|| CommandError::Split(command.to_string()))?;
    let (first, rest) = words.split_first().ok_or(CommandError::Empty)?;
    let program = normalize(&start_dir.join(first));
    let folders = super::process::own_folder(&program)
        .filter(|f| f.is_dir())
        .into_iter()
        .collect();
    Ok(Command {
        program,
        args: rest.to_vec(),
        folders,
        written: rest.to_vec(),
    })
}

/// The folders of a command's arguments that name files relative to the game folder
/// `game_dir` (`../players/kl2/player.py`: the official runner leaves arguments alone and runs
/// every process in the game folder). Resolved lexically, so that a coordinator can pack them
/// before the game folder exists.
pub fn game_relative_folders(cmd: &Command, game_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for a in &cmd.args {
        if a.starts_with('-') || Path::new(a).is_absolute() {
            continue;
        }
        let file = normalize(&game_dir.join(a));
        if !file.is_file() {
            continue;
        }
        let file = std::fs::canonicalize(&file).unwrap_or(file);
        if let Some(f) = super::process::own_folder(&file) {
            if !out.contains(&f) && !cmd.folders.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

pub use super::process::normalize;

/// A bare program name: the system folders first (sandboxed processes can read and execute
/// only there, and user-level shims such as pyenv's are shell scripts), then PATH.
fn which(name: &str) -> Option<PathBuf> {
    let system = ["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from);
    let path = std::env::var_os("PATH").unwrap_or_default();
    system
        .into_iter()
        .chain(std::env::split_paths(&path))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
