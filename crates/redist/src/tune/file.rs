//! Wisdom files under MPI: rank 0 reads and writes them, every rank learns
//! the same outcome (one broadcast), so that every rank runs the same
//! choice and reports the same warning. Reading never fails; writing
//! merges with what the file holds (several jobs add to one file) under a
//! lock, and replaces the file only whole (a temporary file renamed).

use super::wisdom::{Entry, Kept, Key, Lookup, Wisdom};
use crate::error::RedistError;
use mpi::collective::Root;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The environment variable that names a wisdom file when the options do
/// not.
pub const WISDOM_VARIABLE: &str = "NDCYCLIC_WISDOM";

/// The wisdom file of `asked` (the options'; an empty path: none at all),
/// else the one [`WISDOM_VARIABLE`] names, if set and not empty.
pub(crate) fn path(asked: Option<&Path>) -> Option<PathBuf> {
    match asked {
        Some(p) => (!p.as_os_str().is_empty()).then(|| p.to_path_buf()),
        None => std::env::var_os(WISDOM_VARIABLE)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
    }
}

/// What a wisdom file gave a job: the measured choice, or a warning.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Recalled {
    /// The choice measured for this case on this machine.
    Found(Kept),
    /// Nothing usable: why (the same sentence on every rank).
    Warning(String),
    /// No file at the path (yet): the warning, for a reader that expected
    /// one.
    Absent(String),
}

/// Rank 0's look into the file: the outcome as a line of text.
fn look(path: &Path, key: &Key) -> String {
    let shown = path.display();
    let text = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return format!("absent wisdom file {shown}: cannot read it ({e}); untuned")
        }
        Err(e) => return format!("warning wisdom file {shown}: cannot read it ({e}); untuned"),
    };
    let text = String::from_utf8_lossy(&text);
    match Wisdom::parse(&text) {
        Err(why) => format!("warning wisdom file {shown}: not a wisdom file ({why}); untuned"),
        Ok(w) => match w.lookup(key) {
            Lookup::Found(m) => format!("found {m}"),
            Lookup::Missing(why) => format!("warning wisdom file {shown}: {why}; untuned"),
        },
    }
}

/// Broadcasts rank 0's `text` (length, then bytes) to every rank of
/// `comm`. Collective.
fn broadcast(comm: &SimpleCommunicator, text: String) -> String {
    let root = comm.process_at_rank(0);
    let mut bytes = text.into_bytes();
    let mut len = bytes.len() as u64;
    root.broadcast_into(&mut len);
    bytes.resize(usize::try_from(len).unwrap_or(0), 0);
    root.broadcast_into(&mut bytes[..]);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The choice the wisdom file at `path` holds for `key` (rank 0's key
/// counts), or the warning every rank gives. Collective: one broadcast.
pub(crate) fn recall(comm: &SimpleCommunicator, path: &Path, key: &Key) -> Recalled {
    let mine = if comm.rank() == 0 {
        look(path, key)
    } else {
        String::new()
    };
    let line = broadcast(comm, mine);
    match line.split_once(' ') {
        Some(("found", m)) => match m.parse::<Kept>() {
            Ok(m) => Recalled::Found(m),
            Err(e) => Recalled::Warning(format!("wisdom file {}: {e}; untuned", path.display())),
        },
        Some(("warning", why)) => Recalled::Warning(why.to_string()),
        Some(("absent", why)) => Recalled::Absent(why.to_string()),
        _ => Recalled::Warning(format!(
            "wisdom file {}: no answer from rank 0; untuned",
            path.display()
        )),
    }
}

/// Rank 0's write: `entry` merged into what the file holds, under the
/// file's lock (`PATH.lock`), written to a temporary file beside it and
/// renamed over it. A file that exists but is not wisdom is left alone.
fn write_merged(path: &Path, entry: Entry) -> Result<(), String> {
    let lock_path = {
        let mut p = path.as_os_str().to_owned();
        p.push(".lock");
        PathBuf::from(p)
    };
    let lock = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("cannot open its lock {}: {e}", lock_path.display()))?;
    let _held = Locked::new(&lock)?;
    let mut wisdom = match fs::read(path) {
        Ok(bytes) => Wisdom::parse(&String::from_utf8_lossy(&bytes))
            .map_err(|why| format!("exists and is not a wisdom file ({why}); not overwritten"))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Wisdom::default(),
        Err(e) => return Err(format!("cannot read it ({e})")),
    };
    wisdom.merge(entry);
    let temporary = {
        let mut p = path.as_os_str().to_owned();
        p.push(format!(".tmp-{}", std::process::id()));
        PathBuf::from(p)
    };
    let written = fs::File::create(&temporary)
        .and_then(|mut f| {
            f.write_all(wisdom.render().as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| fs::rename(&temporary, path));
    written.map_err(|e| {
        let _ = fs::remove_file(&temporary);
        format!("cannot write it ({e})")
    })
}

/// An exclusive `flock` on a file, released when dropped.
struct Locked<'a>(&'a fs::File);

impl<'a> Locked<'a> {
    fn new(file: &'a fs::File) -> Result<Locked<'a>, String> {
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor this process holds open (`file`
        // outlives the lock, which `drop` releases).
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if r == 0 {
            Ok(Locked(file))
        } else {
            Err(format!(
                "cannot lock it ({})",
                std::io::Error::last_os_error()
            ))
        }
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: as in `new`; unlocking a lock this process holds.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Adds `entry` to the wisdom file at `path` (rank 0 writes). Collective:
/// one broadcast, so every rank returns the same outcome.
///
/// # Errors
///
/// [`RedistError::Wisdom`] on every rank when rank 0 could not write the
/// file, or found something else than wisdom there.
pub(crate) fn remember(
    comm: &SimpleCommunicator,
    path: &Path,
    entry: Entry,
) -> Result<(), RedistError> {
    let mine = if comm.rank() == 0 {
        match write_merged(path, entry) {
            Ok(()) => "ok".to_string(),
            Err(why) => format!("error {why}"),
        }
    } else {
        String::new()
    };
    match broadcast(comm, mine).split_once(' ') {
        None => Ok(()),
        Some((_, why)) => Err(RedistError::Wisdom {
            path: path.display().to_string(),
            reason: why.to_string(),
        }),
    }
}
