//! Private writable copies of the players' folders, one per player process and game.
//!
//! The official runner runs players in place, so a bot may save state or checkpoints into its
//! own folder. Farm plays many games at once (and on many hosts), so writing into the shared
//! folder would let one game see another's writes: instead every player process works in a copy
//! of its folders made for this game on the worker's scratch space
//! (`<scratch_root>/proboj-<32 hex>/<player>/<i>/<folder name>`, a flock-guarded folder swept
//! when its worker died), and the copy is removed when the game ends. The original folder is
//! never changed. Paths in the command that lie in a copied folder (the program, absolute
//! script paths, scripts named relative to the game folder such as `../players/kl2/player.py`)
//! are rewritten to the copy, so `__file__`, `argv[0]` and everything found from them lead to
//! the copy; the working directory stays the game folder.
//!
//! Bounds: a player's folders above [`FOLDER_LIMIT`] are refused (the organiser's set-up, never
//! the player's fault); while the game runs, a copy may grow by the player's scratch quota: with
//! the full sandbox as root the copies of each player process sit on a tmpfs of exactly that
//! size, so a write past it fails (ENOSPC) and the disk is never at risk; in every mode the
//! copy is also measured after each of the player's turns and a player past its quota is
//! killed (see [`Budget`]). A failure to make a copy is the host's.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use std::sync::Mutex;

use sandbox::folder::LockedDir;
use sandbox::sized_tmpfs::SizedTmpfs;
use thiserror::Error;

use super::config::{game_relative_folders, normalize, Command, Config, Game};

/// Bytes a player's folders may hold (each game gets a copy of them per player process).
pub const FOLDER_LIMIT: u64 = 256 << 20;
/// Files and folders a player's folders may hold.
pub const ENTRY_LIMIT: u64 = 50_000;
/// Prefix of a game's copies folder in the scratch root.
pub const PREFIX: &str = "proboj-";

/// Why a player's folder cannot be copied.
#[derive(Debug, Error)]
pub enum CopyError {
    /// The organiser's set-up: the folder is too large to copy for every game.
    #[error(
        "player {player}: its folder {} holds {what}, more than farm copies for each game (at \
         most {} MiB and {ENTRY_LIMIT} files; every player works in a private copy of its folder \
         in each game): move what the player does not need (other bots, data sets, old game \
         folders) out of it. This is the organiser's set-up, not the player's fault",
        folder.display(), limit >> 20
    )]
    TooLarge {
        player: String,
        folder: PathBuf,
        what: String,
        limit: u64,
    },
    /// The host's problem (disk full, permissions): never the player's.
    #[error("cannot copy {} for player {player} to {}: {source} (a problem of this host, not of the player)", from.display(), to.display())]
    Host {
        player: String,
        from: PathBuf,
        to: PathBuf,
        source: std::io::Error,
    },
}

/// A player process's copy: the command to run, the folders it may write, its budget.
#[derive(Debug, Clone)]
pub struct PlayerCopy {
    /// The player's command with its paths rewritten to the copy.
    pub command: Command,
    /// The copied folders (writable for the player).
    pub write: Vec<PathBuf>,
    pub budget: Budget,
}

/// How much a player's copy may hold while the game runs.
#[derive(Debug, Clone)]
pub struct Budget {
    pub dirs: Vec<PathBuf>,
    /// Bytes (the copy's size at the start plus the player's scratch quota).
    pub limit: u64,
}

impl Budget {
    /// The copy's size when it holds more than its limit (or more entries than allowed).
    pub fn exceeded(&self) -> Option<u64> {
        match measure(&self.dirs, &[], self.limit, ENTRY_LIMIT) {
            Ok(_) => None,
            Err(Over { bytes, .. }) => Some(bytes),
        }
    }
}

/// The folders a player's command lives in for the game in `game_dir`: the program's, its
/// script arguments' (relative to the start folder or to the game folder), nested ones merged.
pub fn own_folders(cmd: &Command, game_dir: &Path) -> Vec<PathBuf> {
    let mut all = cmd.folders.clone();
    all.extend(game_relative_folders(cmd, game_dir));
    all.sort();
    let mut kept: Vec<PathBuf> = Vec::new();
    for f in all {
        if !kept.iter().any(|k| f.starts_with(k)) {
            kept.push(f);
        }
    }
    kept
}

/// What is never copied: the game root when it lies inside a player's folder (earlier and
/// concurrent games live there), and this game's folder.
fn skipped(config: &Config, game_dir: &Path) -> Vec<PathBuf> {
    let real = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    vec![real(config.game_root.clone()), real(normalize(game_dir))]
}

/// More than a limit.
#[derive(Debug)]
struct Over {
    bytes: u64,
    entries: u64,
}

/// What a folder tree holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Usage {
    /// Apparent sizes of its files.
    bytes: u64,
    /// Its files' sizes rounded up to whole pages (what a tmpfs copy of them takes).
    paged: u64,
    /// Files, folders and links.
    entries: u64,
}

/// Page size a tmpfs allocates in.
const PAGE: u64 = 4096;

/// What `dirs` hold (except `skip`, unless a skipped path is a dir itself); stops early once
/// past a limit of bytes or entries.
fn measure(dirs: &[PathBuf], skip: &[PathBuf], limit: u64, entries: u64) -> Result<Usage, Over> {
    let mut u = Usage::default();
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if skip.contains(&p) {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            u.entries += 1;
            if meta.is_dir() {
                stack.push(p);
            } else if meta.is_file() {
                u.bytes += meta.len();
                u.paged += meta.len().div_ceil(PAGE) * PAGE;
            }
            if u.bytes > limit || u.entries > entries {
                return Err(Over {
                    bytes: u.bytes,
                    entries: u.entries,
                });
            }
        }
    }
    Ok(u)
}

fn too_large(player: &str, folder: &Path, over: Over, limit: u64) -> CopyError {
    CopyError::TooLarge {
        player: player.to_owned(),
        folder: folder.to_path_buf(),
        what: format!(
            "more than {} MiB in {}+ files and folders (stopped counting there)",
            over.bytes >> 20,
            over.entries
        ),
        limit,
    }
}

/// Refuse, before any game runs, a player whose folders are too large to copy for each game.
pub fn check_player_folders(config: &Config, games: &[Game], limit: u64) -> Result<(), CopyError> {
    let mut seen: Vec<(String, Vec<PathBuf>)> = Vec::new();
    for g in games {
        let game_dir = config.game_root.join(&g.gamefolder);
        for name in &g.players {
            let Some(p) = config.player(name) else {
                continue;
            };
            let own = own_folders(&p.command.for_game(&game_dir), &game_dir);
            if seen.iter().any(|(n, o)| n == name && *o == own) {
                continue;
            }
            let skip = skipped(config, &game_dir);
            if let Err(over) = measure(&own, &skip, limit, ENTRY_LIMIT) {
                let folder = own.first().cloned().unwrap_or_default();
                return Err(too_large(name, &folder, over, limit));
            }
            seen.push((name.clone(), own));
        }
    }
    Ok(())
}

/// The copies of one game, removed (with everything the players wrote) when dropped.
#[derive(Debug)]
pub struct GameCopies {
    dir: Option<LockedDir>,
    /// Player copies are made writable for every uid (the sandbox's pool uids are leased only
    /// when a player starts; landlock keeps every other process out of them). Also the mark of
    /// the full sandbox as root: each player's copies then sit on a tmpfs of their own size
    /// plus the player's quota, so the kernel bounds what it writes (ENOSPC past it).
    pool_uids: bool,
    /// Those tmpfs mounts, detached before the copies are removed.
    mounts: Mutex<Vec<SizedTmpfs>>,
}

/// Room a copy's tmpfs gets beyond its files and quota (folders, links, rounding).
const TMPFS_SLACK: u64 = 1 << 20;
/// Files and folders a player may add to its copy's tmpfs.
const TMPFS_NEW_ENTRIES: u64 = 10_000;

impl GameCopies {
    /// A fresh copies folder in `scratch_root` (abandoned ones of dead workers are swept).
    pub fn create(scratch_root: &Path, pool_uids: bool) -> std::io::Result<GameCopies> {
        std::fs::create_dir_all(scratch_root)?;
        sandbox::folder::sweep(scratch_root, PREFIX);
        let dir = LockedDir::create(scratch_root, PREFIX)?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711))?;
        Ok(GameCopies {
            dir: Some(dir),
            pool_uids,
            mounts: Mutex::new(Vec::new()),
        })
    }

    /// Copy the folders of player process `name` (command `cmd`, game folder `game_dir`) and
    /// rewrite its command to the copy. `quota` is how much the copy may grow during the game.
    pub fn copy_for(
        &self,
        name: &str,
        cmd: &Command,
        config: &Config,
        game_dir: &Path,
        (limit, quota): (u64, u64),
    ) -> Result<PlayerCopy, CopyError> {
        let root = self
            .dir
            .as_ref()
            .map(|d| d.path())
            .unwrap_or(Path::new("/"));
        let own = own_folders(cmd, game_dir);
        let skip = skipped(config, game_dir);
        let usage = measure(&own, &skip, limit, ENTRY_LIMIT).map_err(|over| {
            too_large(
                name,
                own.first().map_or(Path::new(""), |p| p.as_path()),
                over,
                limit,
            )
        })?;
        if self.pool_uids {
            self.mount_for(name, root, usage, quota)?;
        }
        let mut pairs = Vec::new();
        for (i, from) in own.iter().enumerate() {
            let base = from.file_name().map_or("folder".into(), |n| n.to_owned());
            let holder = root.join(name).join(i.to_string());
            let to = holder.join(base);
            let host = |source| CopyError::Host {
                player: name.to_owned(),
                from: from.clone(),
                to: to.clone(),
                source,
            };
            make_holder(&holder).map_err(host)?;
            copy_tree(from, &to, &skip, self.pool_uids).map_err(host)?;
            pairs.push((from.clone(), to));
        }
        let command = rewrite(cmd, game_dir, &pairs);
        let write: Vec<PathBuf> = pairs.into_iter().map(|(_, to)| to).collect();
        Ok(PlayerCopy {
            command,
            budget: Budget {
                dirs: write.clone(),
                limit: usage.bytes.saturating_add(quota),
            },
            write,
        })
    }

    /// A tmpfs for player process `name`'s copies: room for what is copied, its quota and a
    /// little slack, no more.
    fn mount_for(
        &self,
        name: &str,
        root: &Path,
        usage: Usage,
        quota: u64,
    ) -> Result<(), CopyError> {
        let at = root.join(name);
        let host = |source| CopyError::Host {
            player: name.to_owned(),
            from: PathBuf::from("tmpfs"),
            to: at.clone(),
            source,
        };
        std::fs::create_dir(&at).map_err(host)?;
        let bytes = usage
            .paged
            .saturating_add(quota)
            .saturating_add(TMPFS_SLACK);
        let inodes = usage.entries.saturating_add(TMPFS_NEW_ENTRIES);
        let mount = SizedTmpfs::mount(&at, bytes, inodes, 0o711).map_err(host)?;
        self.mounts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(mount);
        Ok(())
    }

    /// Remove every copy; what could not be removed is returned.
    pub fn remove(mut self) -> Option<String> {
        self.remove_now()
    }

    fn remove_now(&mut self) -> Option<String> {
        let dir = self.dir.take()?;
        self.mounts
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        open_up(dir.path());
        dir.remove()
    }
}

impl Drop for GameCopies {
    fn drop(&mut self) {
        if let Some(left) = self.remove_now() {
            tracing::warn!("proboj player copies: {left}");
        }
    }
}

fn make_holder(holder: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(holder)?;
    let mut d = Some(holder);
    // `<copies>/<player>/<i>`: traversable only.
    for _ in 0..2 {
        if let Some(x) = d {
            std::fs::set_permissions(x, std::fs::Permissions::from_mode(0o711))?;
            d = x.parent();
        }
    }
    Ok(())
}

/// Copy `from` to `to` (a new folder): files, folders and symlinks (as links); other kinds and
/// `skip` are left out. With `pool_uids`, only what other uids may read of the original is
/// copied (a player under a pool uid could read no more in place), made writable for all.
fn copy_tree(from: &Path, to: &Path, skip: &[PathBuf], pool_uids: bool) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    let mut stack = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((src, dst)) = stack.pop() {
        for e in std::fs::read_dir(&src)? {
            let e = e?;
            let (s, d) = (e.path(), dst.join(e.file_name()));
            if skip.contains(&s) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&s)?;
            let mode = meta.mode();
            let ft = meta.file_type();
            if ft.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(&s)?, &d)?;
            } else if ft.is_dir() {
                if pool_uids && mode & 0o005 != 0o005 {
                    continue;
                }
                std::fs::create_dir(&d)?;
                stack.push((s, d));
            } else if ft.is_file() {
                if pool_uids && mode & 0o004 == 0 {
                    continue;
                }
                std::fs::copy(&s, &d)?;
                std::fs::set_permissions(&d, file_mode(mode, pool_uids))?;
            }
        }
        let dir_mode = if pool_uids { 0o777 } else { 0o700 };
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(dir_mode))?;
    }
    Ok(())
}

/// The copy's mode: the original's, readable and writable by the player (executables stay
/// executable, by everyone with pool uids).
fn file_mode(orig: u32, pool_uids: bool) -> std::fs::Permissions {
    let exec = orig & 0o111 != 0;
    let mode = match (pool_uids, exec) {
        (true, true) => 0o777,
        (true, false) => 0o666,
        (false, _) => (orig & 0o777) | 0o600,
    };
    std::fs::Permissions::from_mode(mode)
}

/// Make every folder under `dir` writable for its owner again (a player may have made one
/// read-only), so that it can be removed.
fn open_up(dir: &Path) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(meta) = std::fs::symlink_metadata(&d) {
            let mode = meta.mode() & 0o7777;
            let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode | 0o700));
        }
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(e.path());
                }
            }
        }
    }
}

/// `path` moved into the copy of the folder holding it, if any.
fn mapped(path: &Path, pairs: &[(PathBuf, PathBuf)]) -> Option<PathBuf> {
    pairs.iter().find_map(|(from, to)| {
        path.strip_prefix(from).ok().map(|rel| {
            if rel.as_os_str().is_empty() {
                to.clone()
            } else {
                to.join(rel)
            }
        })
    })
}

/// The command with the program and every argument naming a file in a copied folder (absolute,
/// or relative to the game folder) pointing into the copy. Other arguments are left alone.
pub fn rewrite(cmd: &Command, game_dir: &Path, pairs: &[(PathBuf, PathBuf)]) -> Command {
    let program = mapped(&cmd.program, pairs).unwrap_or_else(|| cmd.program.clone());
    let args = cmd
        .args
        .iter()
        .map(|a| {
            let p = Path::new(a);
            let abs = if p.is_absolute() {
                p.to_path_buf()
            } else if a.starts_with('-') {
                return a.clone();
            } else {
                let file = normalize(&game_dir.join(p));
                if !file.is_file() {
                    return a.clone();
                }
                std::fs::canonicalize(&file).unwrap_or(file)
            };
            mapped(&abs, pairs).map_or_else(|| a.clone(), |m| m.to_string_lossy().into_owned())
        })
        .collect();
    Command {
        program,
        args,
        folders: cmd.folders.clone(),
        written: cmd.written.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(program: &str, args: &[&str], folders: &[&str]) -> Command {
        Command {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            folders: folders.iter().map(PathBuf::from).collect(),
            written: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    #[test]
    fn paths_in_a_copied_folder_point_into_the_copy() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join("players/kl2")).unwrap();
        std::fs::create_dir_all(root.join("game")).unwrap();
        std::fs::write(root.join("players/kl2/player.py"), "").unwrap();
        let c = cmd(
            "/usr/bin/python3",
            &["../players/kl2/player.py", "-v", "x.txt"],
            &[],
        );
        let game = root.join("game");
        assert_eq!(own_folders(&c, &game), vec![root.join("players/kl2")]);
        let pairs = vec![(root.join("players/kl2"), PathBuf::from("/copy/kl2"))];
        let r = rewrite(&c, &game, &pairs);
        assert_eq!(r.program, PathBuf::from("/usr/bin/python3"));
        assert_eq!(r.args, vec!["/copy/kl2/player.py", "-v", "x.txt"]);
        let abs = root.join("players/kl2/player.py");
        let c = cmd(abs.to_str().unwrap(), &[abs.to_str().unwrap()], &[]);
        let r = rewrite(&c, &game, &pairs);
        assert_eq!(r.program, PathBuf::from("/copy/kl2/player.py"));
        assert_eq!(r.args, vec!["/copy/kl2/player.py"]);
    }

    #[test]
    fn nested_folders_are_copied_once_and_size_is_bounded() {
        let c = cmd("/a/b/p", &[], &["/a/b", "/a", "/c"]);
        assert_eq!(
            own_folders(&c, Path::new("/nowhere")),
            vec![PathBuf::from("/a"), PathBuf::from("/c")]
        );
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("big"), vec![0u8; 2000]).unwrap();
        let dirs = [t.path().to_path_buf()];
        assert_eq!(
            measure(&dirs, &[], 5000, 10).unwrap(),
            Usage {
                bytes: 2000,
                paged: 4096,
                entries: 1
            }
        );
        assert!(measure(&dirs, &[], 1000, 10).is_err());
        let skip = [t.path().join("big")];
        assert_eq!(measure(&dirs, &skip, 1000, 10).unwrap().bytes, 0);
    }
}
