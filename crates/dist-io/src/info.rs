//! What a file holds, read from its header alone: the format (from the
//! first bytes), the element type, the shape, the order.

use crate::agree::{agree, broadcast_bytes};
use crate::element::ElementType;
use crate::error::IoError;
use crate::npy;
use crate::options::{Format, IoOptions};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::Order;
use std::io::Read;
use std::path::Path;

/// The first bytes of every HDF5 file (at byte 0 when it has no user
/// block).
pub const HDF5_SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// What a file's header says of its array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// The format (for HDF5, with the dataset read).
    pub format: Format,
    /// The element type.
    pub element: ElementType,
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The order of the array's elements in the file: row-major is C
    /// order, column-major Fortran order.
    pub order: Order,
    /// Where the data starts (`.npy`: the header's length; HDF5: `None`,
    /// the library places it).
    pub data_offset: Option<u64>,
    /// The format's version (`.npy`: 1.0, 2.0 or 3.0).
    pub version: Option<(u8, u8)>,
    /// The file's size in bytes.
    pub file_bytes: u64,
    /// The layout the array was saved from, where the file records it (an
    /// HDF5 attribute `layout`, as a spec string).
    pub layout: Option<String>,
}

impl FileInfo {
    /// Bytes of the array's data.
    pub fn data_bytes(&self) -> Option<u64> {
        (self.shape.iter()).try_fold(self.element.size() as u64, |a, &n| a.checked_mul(n as u64))
    }

    /// The element count.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Display for FileInfo {
    /// `npy 1.0, f64, shape 4096x4096, C order, data from byte 128`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shape: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        let order = match self.order {
            Order::RowMajor => "C",
            Order::ColumnMajor => "Fortran",
        };
        write!(f, "{}", self.format.name())?;
        if let Some((major, minor)) = self.version {
            write!(f, " {major}.{minor}")?;
        }
        if let Format::Hdf5 { dataset } = &self.format {
            write!(f, " dataset {dataset}")?;
        }
        write!(
            f,
            ", {}, shape {}, {order} order",
            self.element,
            shape.join("x")
        )?;
        if let Some(at) = self.data_offset {
            write!(f, ", data from byte {at}")?;
        }
        if let Some(layout) = &self.layout {
            write!(f, ", saved from {layout}")?;
        }
        Ok(())
    }
}

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
    match probe(path, options.format.as_ref())? {
        Probe::Npy { header, size } => npy_info(path, &header, size),
        Probe::Hdf5 { dataset } => crate::hdf5::info(path, &dataset),
    }
}

/// What the first bytes of a file showed.
pub(crate) enum Probe {
    /// A `.npy` file: its header's bytes and the file's size.
    Npy { header: Vec<u8>, size: u64 },
    /// An HDF5 file, and the dataset to read.
    Hdf5 { dataset: String },
}

/// The text of a path in messages.
pub(crate) fn name(path: &Path) -> String {
    path.display().to_string()
}

/// Reads the first bytes of `path` and, for a `.npy` file, its whole
/// header. Not collective.
pub(crate) fn probe(path: &Path, format: Option<&Format>) -> Result<Probe, IoError> {
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
    let format = match format {
        Some(f) => f.clone(),
        None if head.starts_with(npy::MAGIC) => Format::Npy,
        None if head.starts_with(HDF5_SIGNATURE) => Format::Hdf5 {
            dataset: crate::options::DEFAULT_DATASET.to_string(),
        },
        None => {
            return Err(IoError::Header {
                path: name(path),
                reason: format!(
                    "neither a .npy file (first bytes \\x93NUMPY) nor an HDF5 file; it starts \
                     with {:?}",
                    String::from_utf8_lossy(&head[..head.len().min(8)])
                ),
            })
        }
    };
    match format {
        Format::Hdf5 { dataset } => Ok(Probe::Hdf5 { dataset }),
        Format::Npy => {
            // A header longer than 4 KiB: read what its length field asks.
            if let Err(npy::Problem::NeedBytes(n)) = npy::decode(&head) {
                if n > head.len() && n <= (1 << 30) {
                    let more = n - head.len();
                    (&mut file)
                        .take(more as u64)
                        .read_to_end(&mut head)
                        .map_err(open)?;
                }
            }
            Ok(Probe::Npy {
                header: head,
                size: meta.len(),
            })
        }
    }
}

/// The info of a `.npy` file from its first bytes and size (the same
/// verdict on every rank that holds the same bytes).
pub(crate) fn npy_info(path: &Path, head: &[u8], size: u64) -> Result<FileInfo, IoError> {
    let header = npy::decode(head).map_err(|p| IoError::Header {
        path: name(path),
        reason: match p {
            npy::Problem::Invalid(why) => why,
            npy::Problem::NeedBytes(n) => format!(
                "the file ends inside its .npy header ({} bytes, the header needs {n})",
                head.len()
            ),
        },
    })?;
    let info = FileInfo {
        format: Format::Npy,
        element: header.element,
        shape: header.shape.clone(),
        order: header.order,
        data_offset: Some(header.data_offset as u64),
        version: Some(header.version),
        file_bytes: size,
        layout: None,
    };
    let expected = npy::data_bytes(&header).ok_or_else(|| IoError::Header {
        path: name(path),
        reason: format!("shape {:?} holds more bytes than a file can", header.shape),
    })?;
    let offset = header.data_offset as u64;
    if offset.checked_add(expected).is_none_or(|end| end > size) {
        return Err(IoError::Truncated {
            path: name(path),
            expected,
            offset,
            actual: size,
        });
    }
    Ok(info)
}

/// [`info`] on rank 0 of `comm`, told to every rank: for a `.npy` file
/// rank 0 reads the header and sends its bytes, every rank decodes them;
/// an HDF5 file is opened by every rank (collectively). Collective.
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
    // 0: .npy, then header and size; 1: HDF5, then the dataset's name.
    let mut wire = match &probed {
        Some(Probe::Npy { header, size }) => {
            let mut w = vec![0u8];
            w.extend_from_slice(&size.to_le_bytes());
            w.extend_from_slice(header);
            w
        }
        Some(Probe::Hdf5 { dataset }) => {
            let mut w = vec![1u8];
            w.extend_from_slice(dataset.as_bytes());
            w
        }
        None => Vec::new(),
    };
    broadcast_bytes(comm, 0, &mut wire);
    match wire.split_first() {
        Some((0, rest)) if rest.len() >= 8 => {
            let (size, header) = rest.split_at(8);
            let size = u64::from_le_bytes(size.try_into().unwrap_or([0; 8]));
            npy_info(path, header, size)
        }
        Some((1, dataset)) => {
            let dataset = String::from_utf8_lossy(dataset).into_owned();
            crate::hdf5::info_collective(comm, path, &dataset, what)
        }
        _ => Err(IoError::OtherRank {
            what: what.to_string(),
            rank: 0,
            message: "the file's header did not arrive whole".to_string(),
        }),
    }
}
