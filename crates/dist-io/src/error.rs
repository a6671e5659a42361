//! The error type of the crate, and its form on the wire: a rank that
//! fails sends its error to the others, so that every rank returns the
//! same one.

use dist_array::{DistError, PlanError};
use procgrid::GridError;
use redist::RedistError;
use std::path::Path;
use thiserror::Error;

/// Everything that can go wrong saving or loading an array.
///
/// Saving and loading are collective, and every rank returns the same
/// error: the lowest rank that failed sends its error to the others
/// ([`IoError::to_wire`]). Errors of the redistribution engine are agreed
/// by the engine itself (the others then hold
/// [`RedistError::OtherRank`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IoError {
    /// The file could not be opened or its header not read (missing, no
    /// permission, a directory, ...).
    #[error("{path}: cannot open: {reason}")]
    Open {
        /// The file.
        path: String,
        /// What the system or MPI said.
        reason: String,
    },

    /// The file's first bytes are not a header this library reads: not a
    /// `.npy` or HDF5 file, a corrupt header, an unsupported version or
    /// element type, big-endian or object data.
    #[error("{path}: {reason}")]
    Header {
        /// The file.
        path: String,
        /// What is wrong and what was expected.
        reason: String,
    },

    /// The file is in a format this build leaves out (HDF5 without the
    /// `hdf5` feature).
    #[error("{path}: {format} files need ndcyclic built with the `{feature}` feature ({needs})")]
    NotBuilt {
        /// The file.
        path: String,
        /// The format's name (`HDF5`).
        format: String,
        /// The cargo feature that brings it (`hdf5`).
        feature: String,
        /// What the feature needs to build.
        needs: String,
    },

    /// The file is shorter than its header says.
    #[error(
        "{path}: truncated: its header promises {expected} bytes of data from byte {offset}, \
         but the file holds {actual} bytes (expected at least {})",
        offset.saturating_add(*expected)
    )]
    Truncated {
        /// The file.
        path: String,
        /// Bytes of data the header describes.
        expected: u64,
        /// Where the data starts.
        offset: u64,
        /// The file's size.
        actual: u64,
    },

    /// The file's array does not fit what was asked: another element type,
    /// shape or number of dimensions.
    #[error("{path}: the file holds {found}, but {expected} was asked for")]
    Mismatch {
        /// The file.
        path: String,
        /// What the file holds (`an array of f32`, `shape [4, 5]`, ...).
        found: String,
        /// What the caller asked for.
        expected: String,
    },

    /// A window that does not lie inside the file's array.
    #[error(
        "{path}: the window of shape {shape:?} at {origin:?} does not fit in the file's \
         array of shape {array:?}; expected origin + shape <= the array's shape in every dimension"
    )]
    Window {
        /// The file.
        path: String,
        /// The window's first index.
        origin: Vec<usize>,
        /// The window's shape.
        shape: Vec<usize>,
        /// The shape of the file's array.
        array: Vec<usize>,
    },

    /// Writing failed (a full disk, a quota, a file system error); a save
    /// leaves the previous file as it was.
    #[error("{path}: writing failed: {reason}")]
    Write {
        /// The file.
        path: String,
        /// What the system or MPI said.
        reason: String,
    },

    /// Reading failed after the file was opened.
    #[error("{path}: reading failed: {reason}")]
    Read {
        /// The file.
        path: String,
        /// What the system or MPI said.
        reason: String,
    },

    /// An argument was not understood.
    #[error("invalid {what} {value:?}: expected {expected}")]
    InvalidArgument {
        /// Which argument.
        what: String,
        /// The value given.
        value: String,
        /// What was expected.
        expected: String,
    },

    /// Ranks were handed arguments that differ where they must match.
    #[error("{what}: ranks passed different arguments; every rank must pass the same")]
    Disagreement {
        /// The operation.
        what: String,
    },

    /// Another rank failed with an error that has no form on the wire;
    /// that rank returns it in full.
    #[error("{what}: rank {rank} failed: {message}")]
    OtherRank {
        /// The operation.
        what: String,
        /// The lowest rank that failed.
        rank: usize,
        /// Its error, as text.
        message: String,
    },

    /// An error of the redistribution engine.
    #[error(transparent)]
    Redist(#[from] RedistError),

    /// An error of a layout or distributed array.
    #[error(transparent)]
    Dist(#[from] DistError),

    /// An error of a process grid.
    #[error(transparent)]
    Grid(#[from] GridError),
}

impl From<PlanError> for IoError {
    /// A layout's error, as the array error it is
    /// ([`DistError::Layout`]).
    fn from(e: PlanError) -> IoError {
        IoError::Dist(e.into())
    }
}

/// A reader of the wire form, field by field.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    fn number(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*head))
    }

    fn size(&mut self) -> Option<usize> {
        usize::try_from(self.number()?).ok()
    }

    fn text(&mut self) -> Option<String> {
        let n = self.size()?;
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(String::from_utf8_lossy(head).into_owned())
    }

    fn sizes(&mut self) -> Option<Vec<usize>> {
        let n = self.size()?;
        (n <= self.0.len() / 8)
            .then(|| (0..n).map(|_| self.size()).collect())
            .flatten()
    }
}

/// A writer of the wire form.
#[derive(Default)]
struct Wire(Vec<u8>);

impl Wire {
    fn number(mut self, n: u64) -> Wire {
        self.0.extend_from_slice(&n.to_le_bytes());
        self
    }

    fn text(self, s: &str) -> Wire {
        let mut w = self.number(s.len() as u64);
        w.0.extend_from_slice(s.as_bytes());
        w
    }

    fn sizes(self, v: &[usize]) -> Wire {
        v.iter()
            .fold(self.number(v.len() as u64), |w, &n| w.number(n as u64))
    }
}

impl IoError {
    /// The error as bytes another rank turns back into the same error
    /// ([`from_wire`](Self::from_wire)). Errors of the engine, layouts and
    /// grids travel as their text, and arrive as [`IoError::OtherRank`].
    pub fn to_wire(&self, rank: usize, what: &str) -> Vec<u8> {
        let w = Wire::default();
        let w = match self {
            IoError::Open { path, reason } => w.number(1).text(path).text(reason),
            IoError::Header { path, reason } => w.number(2).text(path).text(reason),
            IoError::Truncated {
                path,
                expected,
                offset,
                actual,
            } => (w.number(3).text(path))
                .number(*expected)
                .number(*offset)
                .number(*actual),
            IoError::Mismatch {
                path,
                found,
                expected,
            } => w.number(4).text(path).text(found).text(expected),
            IoError::Window {
                path,
                origin,
                shape,
                array,
            } => (w.number(5).text(path))
                .sizes(origin)
                .sizes(shape)
                .sizes(array),
            IoError::Write { path, reason } => w.number(6).text(path).text(reason),
            IoError::Read { path, reason } => w.number(7).text(path).text(reason),
            IoError::InvalidArgument {
                what,
                value,
                expected,
            } => w.number(8).text(what).text(value).text(expected),
            IoError::Disagreement { what } => w.number(9).text(what),
            IoError::OtherRank {
                what,
                rank,
                message,
            } => w.number(10).text(what).number(*rank as u64).text(message),
            IoError::NotBuilt {
                path,
                format,
                feature,
                needs,
            } => (w.number(11).text(path).text(format))
                .text(feature)
                .text(needs),
            other => (w.number(10).text(what))
                .number(rank as u64)
                .text(&other.to_string()),
        };
        w.0
    }

    /// The error `bytes` carries ([`to_wire`](Self::to_wire)); bytes that
    /// are not one give [`IoError::OtherRank`] saying so.
    pub fn from_wire(bytes: &[u8], rank: usize, what: &str) -> IoError {
        let mut f = Fields(bytes);
        let decoded = (|| {
            Some(match f.number()? {
                1 => IoError::Open {
                    path: f.text()?,
                    reason: f.text()?,
                },
                2 => IoError::Header {
                    path: f.text()?,
                    reason: f.text()?,
                },
                3 => IoError::Truncated {
                    path: f.text()?,
                    expected: f.number()?,
                    offset: f.number()?,
                    actual: f.number()?,
                },
                4 => IoError::Mismatch {
                    path: f.text()?,
                    found: f.text()?,
                    expected: f.text()?,
                },
                5 => IoError::Window {
                    path: f.text()?,
                    origin: f.sizes()?,
                    shape: f.sizes()?,
                    array: f.sizes()?,
                },
                6 => IoError::Write {
                    path: f.text()?,
                    reason: f.text()?,
                },
                7 => IoError::Read {
                    path: f.text()?,
                    reason: f.text()?,
                },
                8 => IoError::InvalidArgument {
                    what: f.text()?,
                    value: f.text()?,
                    expected: f.text()?,
                },
                9 => IoError::Disagreement { what: f.text()? },
                10 => IoError::OtherRank {
                    what: f.text()?,
                    rank: f.size()?,
                    message: f.text()?,
                },
                11 => IoError::NotBuilt {
                    path: f.text()?,
                    format: f.text()?,
                    feature: f.text()?,
                    needs: f.text()?,
                },
                _ => return None,
            })
        })();
        decoded.unwrap_or_else(|| IoError::OtherRank {
            what: what.to_string(),
            rank,
            message: "an error that did not arrive whole".to_string(),
        })
    }

    /// An [`IoError::InvalidArgument`].
    pub(crate) fn invalid(what: &str, value: impl ToString, expected: impl ToString) -> IoError {
        IoError::InvalidArgument {
            what: what.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }
}

/// The text of a path in messages.
pub(crate) fn name(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<IoError> {
        vec![
            IoError::Open {
                path: "/tmp/a.npy".into(),
                reason: "No such file or directory".into(),
            },
            IoError::Header {
                path: "a".into(),
                reason: "not a .npy file".into(),
            },
            IoError::Truncated {
                path: "a".into(),
                expected: 800,
                offset: 128,
                actual: 300,
            },
            IoError::Mismatch {
                path: "a".into(),
                found: "f32".into(),
                expected: "f64".into(),
            },
            IoError::Window {
                path: "a".into(),
                origin: vec![1, 2],
                shape: vec![3, 4],
                array: vec![3, 5],
            },
            IoError::Write {
                path: "é".into(),
                reason: "No space left on device".into(),
            },
            IoError::Read {
                path: "a".into(),
                reason: "x".into(),
            },
            IoError::invalid("staging budget", 0, "at least one element"),
            IoError::Disagreement {
                what: "saving".into(),
            },
            IoError::OtherRank {
                what: "saving".into(),
                rank: 3,
                message: "m".into(),
            },
            IoError::NotBuilt {
                path: "u.h5".into(),
                format: "HDF5".into(),
                feature: "hdf5".into(),
                needs: "parallel HDF5".into(),
            },
        ]
    }

    #[test]
    fn errors_cross_the_wire_whole() {
        for e in samples() {
            assert_eq!(IoError::from_wire(&e.to_wire(0, "saving"), 0, "saving"), e);
        }
    }

    #[test]
    fn engine_errors_cross_as_text_and_damage_is_named() {
        let e = IoError::Redist(RedistError::Internal("x".into()));
        let back = IoError::from_wire(&e.to_wire(2, "loading"), 2, "loading");
        assert_eq!(
            back,
            IoError::OtherRank {
                what: "loading".into(),
                rank: 2,
                message: e.to_string()
            }
        );
        let wire = samples()[4].to_wire(1, "loading");
        for cut in 0..wire.len() {
            let back = IoError::from_wire(&wire[..cut], 1, "loading");
            assert!(
                matches!(back, IoError::OtherRank { rank: 1, .. }),
                "{back:?}"
            );
        }
    }

    #[test]
    fn truncation_says_how_long_the_file_should_be() {
        let e = samples()[2].to_string();
        assert!(e.contains("expected at least 928"), "{e}");
    }
}
