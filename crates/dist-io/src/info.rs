//! What a file holds, read from its header alone: the format (from the
//! first bytes), the element type, the shape, the order.
//!
//! Rank 0 opens the file, finds its format in the registry
//! (`registry.rs`) by the first bytes (unless the options name one) and
//! reads the header's bytes; the format makes them a [`FileInfo`].

use crate::agree::{agree, broadcast_bytes};
use crate::error::{name, IoError};
use crate::file_format::{FileFormat, RawHeader};
use crate::options::{Format, IoOptions};
use crate::registry;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::io::Read;
use std::path::Path;

pub use crate::file_info::FileInfo;
pub use crate::hdf5::HDF5_SIGNATURE;

/// Reads the header of the file at `path`: its format from the first
/// bytes unless `options.format` names one. Not collective: one process
/// reads a few bytes (an HDF5 file is opened serially).
///
/// ```no_run
/// let info = dist_io::info("state.npy", &dist_io::IoOptions::default()).unwrap();
/// println!("{info}"); // npy 1.0, f64, shape 4096x4096, C order, data from byte 128
/// ```
///
/// # Errors
///
/// [`IoError::Open`] when the file cannot be read, [`IoError::Header`]
/// when its header is not one this library reads (or the format is
/// neither `.npy` nor HDF5), [`IoError::Truncated`] when the file is
/// shorter than its header says.
pub fn info(path: impl AsRef<Path>, options: &IoOptions) -> Result<FileInfo, IoError> {
    let path = path.as_ref();
    let probe = probe(path, options.format.as_ref())?;
    (probe.implementation).info(path, &probe.format, &probe.header)
}

/// What rank 0 found of a file: its format, and its header's bytes.
struct Probe {
    /// The format's implementation.
    implementation: &'static dyn FileFormat,
    /// The format (the options', or the one the first bytes showed).
    format: Format,
    /// The bytes every rank is sent, and the file's size.
    header: RawHeader,
}

/// Reads the first bytes of `path` and, for a format that needs it, its
/// whole header (a `.npy` header longer than 4 KiB). Not collective.
fn probe(path: &Path, format: Option<&Format>) -> Result<Probe, IoError> {
    let open = |e: std::io::Error| IoError::Open {
        path: name(path),
        reason: e.to_string(),
    };
    let mut file = std::fs::File::open(path).map_err(open)?;
    let meta = file.metadata().map_err(open)?;
    if meta.is_dir() {
        return Err(IoError::Open {
            path: name(path),
            reason: "it is a directory".to_string(),
        });
    }
    let mut head = Vec::with_capacity(4096);
    (&mut file)
        .take(4096)
        .read_to_end(&mut head)
        .map_err(open)?;
    let (implementation, format) = match format {
        Some(f) => (registry::of(f)?, f.clone()),
        None => match registry::recognizing(&head) {
            Some(implementation) => (implementation, implementation.format()),
            None => {
                return Err(IoError::Header {
                    path: name(path),
                    reason: format!(
                        "neither {}; it starts with {:?}",
                        registry::descriptions().join(" nor "),
                        String::from_utf8_lossy(&head[..head.len().min(8)])
                    ),
                })
            }
        },
    };
    let bytes = implementation.header(head, &mut file).map_err(open)?;
    Ok(Probe {
        implementation,
        format,
        header: RawHeader {
            bytes,
            file_bytes: meta.len(),
        },
    })
}

/// [`info`] on rank 0 of `comm`, told to every rank: rank 0 reads the
/// header and sends its bytes (for `.npy`, every rank decodes them; an
/// HDF5 file is opened by every rank, collectively). The ranks must have
/// agreed on `options` (every call agrees on them first), so a format
/// rank 0 found by the first bytes is the one every rank takes.
/// Collective.
pub(crate) fn info_everywhere(
    comm: &SimpleCommunicator,
    path: &Path,
    options: &IoOptions,
    what: &str,
) -> Result<FileInfo, IoError> {
    let probed = if comm.rank() == 0 {
        probe(path, options.format.as_ref()).map(Some)
    } else {
        Ok(None)
    };
    let probed = agree(comm, probed, 0, what)?;
    // The format's place in the registry, the file's size, the header.
    let mut wire = match &probed {
        Some(p) => {
            let place = registry::place(p.implementation).map_or(u64::MAX, |i| i as u64);
            let mut w = place.to_le_bytes().to_vec();
            w.extend_from_slice(&p.header.file_bytes.to_le_bytes());
            w.extend_from_slice(&p.header.bytes);
            w
        }
        None => Vec::new(),
    };
    broadcast_bytes(comm, 0, &mut wire);
    let (words, bytes) = wire.split_at(wire.len().min(16));
    let word = |i: usize| -> Option<u64> {
        let w = words.get(8 * i..8 * i + 8)?;
        Some(u64::from_le_bytes(w.try_into().ok()?))
    };
    let implementation = word(0).and_then(|p| registry::at(usize::try_from(p).ok()?));
    let (Some(implementation), Some(file_bytes)) = (implementation, word(1)) else {
        return Err(IoError::OtherRank {
            what: what.to_string(),
            rank: 0,
            message: "the file's header did not arrive whole".to_string(),
        });
    };
    let format = (options.format.clone()).unwrap_or_else(|| implementation.format());
    let header = RawHeader {
        bytes: bytes.to_vec(),
        file_bytes,
    };
    implementation.info_collective(comm, path, &format, &header, what)
}
