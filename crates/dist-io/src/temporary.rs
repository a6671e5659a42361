//! The temporary name a new file is written under, beside its final
//! name, and what becomes of it: renamed to the final name when every rank
//! succeeded, removed when any failed.

use crate::agree::{agree, broadcast_bytes};
use crate::error::{name, IoError};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::path::{Path, PathBuf};

/// The temporary name a new file is written under, beside its final name,
/// and what becomes of it at the end.
pub(crate) struct Temporary {
    /// The temporary file.
    pub path: PathBuf,
    target: PathBuf,
}

impl Temporary {
    /// `.<name>.<token>.tmp` beside `target`, the token from rank 0.
    /// Collective over `comm` (one broadcast).
    pub fn new(comm: &SimpleCommunicator, target: &Path) -> Temporary {
        let mut token = if comm.rank() == 0 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let low = u64::try_from(nanos % (1 << 64)).unwrap_or(0);
            let mixed = low ^ (u64::from(std::process::id()) << 32);
            mixed.to_le_bytes().to_vec()
        } else {
            Vec::new()
        };
        broadcast_bytes(comm, 0, &mut token);
        let token: [u8; 8] = token.as_slice().try_into().unwrap_or([0; 8]);
        let file = target
            .file_name()
            .map_or_else(|| "array".into(), |n| n.to_string_lossy().into_owned());
        let name = format!(".{file}.{:016x}.tmp", u64::from_le_bytes(token));
        Temporary {
            path: target.with_file_name(name),
            target: target.to_path_buf(),
        }
    }

    /// After the writing (`written`, agreed on every rank): rank 0 renames
    /// the temporary file to the target (and with `sync` flushes the
    /// directory), or removes it when the writing failed. Collective over
    /// `comm` when the writing succeeded (the rename is agreed).
    pub fn finish(
        self,
        comm: &SimpleCommunicator,
        written: Result<(), IoError>,
        sync: bool,
        what: &str,
    ) -> Result<(), IoError> {
        let root = comm.rank() == 0;
        if let Err(e) = written {
            if root {
                let _ = std::fs::remove_file(&self.path);
            }
            return Err(e);
        }
        let renamed = if root {
            std::fs::rename(&self.path, &self.target)
                .and_then(|()| {
                    if sync {
                        sync_directory(&self.target)
                    } else {
                        Ok(())
                    }
                })
                .map_err(|e| IoError::Write {
                    path: name(&self.target),
                    reason: format!("renaming {} to it: {e}", name(&self.path)),
                })
        } else {
            Ok(())
        };
        if renamed.is_err() && root {
            let _ = std::fs::remove_file(&self.path);
        }
        agree(comm, renamed, 0, what)
    }
}

/// Flushes the directory holding `path`, so a rename survives a crash.
fn sync_directory(path: &Path) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)?.sync_all()
}
