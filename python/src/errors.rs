//! Errors as Python exceptions, the same on every rank.
//!
//! A [`Failure`] is an exception's class and message. Every collective call
//! of the package ends its checks with [`agree`]: one small all-reduce of
//! every rank's verdict and of a fingerprint of the arguments that must
//! match; when some rank failed, the lowest one's failure is broadcast, so
//! every rank raises the same exception with the same message — also when
//! the ranks were handed different arguments — and none is left waiting in
//! a collective call.

use dist_array::{DistError, PlanError};
use dist_io::IoError;
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::GridError;
use pyo3::exceptions::{
    PyFileNotFoundError, PyMemoryError, PyOSError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::PyErr;
use redist::RedistError;

/// The Python exception class a failure raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ValueError`: a shape, a layout, a spec, an argument that does not fit.
    Value,
    /// `TypeError`: an element type (dtype), or an object of the wrong kind.
    Type,
    /// `FileNotFoundError`.
    FileNotFound,
    /// `OSError`: reading or writing a file failed.
    Os,
    /// `MemoryError`.
    Memory,
    /// `RuntimeError`: MPI failed, or an internal error.
    Runtime,
}

impl Kind {
    const ALL: [Kind; 6] = [
        Kind::Value,
        Kind::Type,
        Kind::FileNotFound,
        Kind::Os,
        Kind::Memory,
        Kind::Runtime,
    ];

    fn code(self) -> u8 {
        u8::try_from(Kind::ALL.iter().position(|&k| k == self).unwrap_or(0)).unwrap_or(0)
    }

    fn from_code(code: u8) -> Kind {
        Kind::ALL
            .get(usize::from(code))
            .copied()
            .unwrap_or(Kind::Runtime)
    }
}

/// An exception to raise: its class, its message, and whether this rank is
/// where it arose (`false` for "another rank failed" errors, which only
/// repeat another rank's).
#[derive(Debug, Clone)]
pub struct Failure {
    /// The exception class.
    pub kind: Kind,
    /// The message.
    pub message: String,
    /// Whether the failure arose on this rank.
    pub primary: bool,
}

impl Failure {
    /// A failure of `kind` with `message`, arisen here.
    pub fn new(kind: Kind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
            primary: true,
        }
    }

    /// A `ValueError`.
    pub fn value(message: impl Into<String>) -> Failure {
        Failure::new(Kind::Value, message)
    }

    /// A `TypeError`.
    pub fn type_error(message: impl Into<String>) -> Failure {
        Failure::new(Kind::Type, message)
    }

    fn repeated(kind: Kind, message: String) -> Failure {
        Failure {
            kind,
            message,
            primary: false,
        }
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        let m = f.message;
        match f.kind {
            Kind::Value => PyValueError::new_err(m),
            Kind::Type => PyTypeError::new_err(m),
            Kind::FileNotFound => PyFileNotFoundError::new_err(m),
            Kind::Os => PyOSError::new_err(m),
            Kind::Memory => PyMemoryError::new_err(m),
            Kind::Runtime => PyRuntimeError::new_err(m),
        }
    }
}

impl From<GridError> for Failure {
    fn from(e: GridError) -> Failure {
        Failure::value(e.to_string())
    }
}

impl From<PlanError> for Failure {
    fn from(e: PlanError) -> Failure {
        match e {
            PlanError::Internal(_) => Failure::new(Kind::Runtime, e.to_string()),
            _ => Failure::value(e.to_string()),
        }
    }
}

impl From<DistError> for Failure {
    fn from(e: DistError) -> Failure {
        match e {
            DistError::OutOfMemory { .. } => Failure::new(Kind::Memory, e.to_string()),
            DistError::Layout(p) => p.into(),
            _ => Failure::value(e.to_string()),
        }
    }
}

impl From<RedistError> for Failure {
    fn from(e: RedistError) -> Failure {
        match e {
            RedistError::Dist(d) => d.into(),
            RedistError::Plan(p) => p.into(),
            RedistError::Mpi { .. } | RedistError::Internal(_) => {
                Failure::new(Kind::Runtime, e.to_string())
            }
            RedistError::OtherRank { .. } | RedistError::Disagreement { .. } => {
                Failure::repeated(Kind::Value, e.to_string())
            }
            _ => Failure::value(e.to_string()),
        }
    }
}

impl From<IoError> for Failure {
    fn from(e: IoError) -> Failure {
        let message = e.to_string();
        match e {
            IoError::Redist(r) => r.into(),
            IoError::Dist(d) => d.into(),
            IoError::Grid(g) => g.into(),
            IoError::Open { reason, .. } if reason.contains("No such file") => {
                Failure::new(Kind::FileNotFound, message)
            }
            IoError::Open { .. } | IoError::Write { .. } | IoError::Read { .. } => {
                Failure::new(Kind::Os, message)
            }
            IoError::OtherRank { .. } | IoError::Disagreement { .. } => {
                Failure::repeated(Kind::Value, message)
            }
            IoError::NotBuilt { path, format, .. } => Failure::value(not_built(&path, &format)),
            _ => Failure::value(message),
        }
    }
}

/// What a file in a format this build leaves out (HDF5) says: the
/// package's build switch, not the cargo feature of the Rust crates.
fn not_built(path: &str, format: &str) -> String {
    format!(
        "{path}: {format} files need the ndcyclic package built with HDF5: \
         pip install --config-settings=maturin.build-args=\"--features hdf5\" ./python \
         (parallel HDF5 on the MPI mpi4py uses, such as Debian's libhdf5-mpich-dev, found \
         through HDF5_DIR=/usr/lib/x86_64-linux-gnu/hdf5/mpich), or \
         scripts/setup.sh --with-hdf5 --with-python; ndcyclic.build_info()['hdf5'] says \
         whether a build has it"
    )
}

/// A 64-bit FNV-1a hash of what every rank must pass alike.
#[derive(Debug, Clone, Copy)]
pub struct Fingerprint(u64);

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint(0xcbf2_9ce4_8422_2325)
    }
}

impl Fingerprint {
    /// Feeds a text, with its length.
    pub fn text(mut self, s: &str) -> Fingerprint {
        self = self.number(s.len() as u64);
        for &x in s.as_bytes() {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }

    /// Feeds a number.
    pub fn number(mut self, n: u64) -> Fingerprint {
        for x in n.to_le_bytes() {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }

    /// The hash.
    pub fn value(self) -> u64 {
        self.0
    }
}

/// Agrees over `comm` on this rank's `verdict` and on `fingerprint`, a hash
/// of the arguments that must match (`what` names the call). Collective.
///
/// `Ok` on every rank when every rank succeeded with the same fingerprint;
/// otherwise the same failure on every rank: that of the lowest rank where a
/// failure arose (or, when every failure only repeats another rank's, the
/// lowest failed rank's), or a `ValueError` saying that the ranks passed
/// different arguments.
///
/// # Errors
///
/// The agreed failure, as above.
pub fn agree(
    comm: &SimpleCommunicator,
    verdict: Result<(), Failure>,
    fingerprint: Fingerprint,
    what: &str,
) -> Result<(), Failure> {
    let size = comm.size() as u64;
    let rank = comm.rank() as u64;
    let code = match &verdict {
        Ok(()) => 2 * size,
        Err(f) if f.primary => rank,
        Err(_) => size + rank,
    };
    let fp = fingerprint.value();
    let send = [code, fp, !fp];
    let mut all = [0u64; 3];
    procgrid::waits::all_reduce_into(comm, &send[..], &mut all[..], SystemOperation::min());
    if all[0] == 2 * size {
        return if all[1] == !all[2] {
            Ok(())
        } else {
            Err(Failure::value(format!(
                "{what}: ranks passed different arguments; every rank must pass the same"
            )))
        };
    }
    let root = i32::try_from(all[0] % size).unwrap_or(0); // a rank: below the size
    let mut head = [0u64; 2];
    if let (Err(f), true) = (&verdict, root as u64 == rank) {
        head = [u64::from(f.kind.code()), f.message.len() as u64];
    }
    procgrid::waits::broadcast_into(comm, root, &mut head[..]);
    let mut text = vec![0u8; usize::try_from(head[1]).unwrap_or(0)];
    if let (Err(f), true) = (&verdict, root as u64 == rank) {
        text.copy_from_slice(f.message.as_bytes());
    }
    if !text.is_empty() {
        procgrid::waits::broadcast_into(comm, root, &mut text[..]);
    }
    let kind = Kind::from_code(u8::try_from(head[0]).unwrap_or(u8::MAX));
    let message = String::from_utf8_lossy(&text).into_owned();
    Err(Failure::repeated(kind, message))
}

/// Agrees on `result` as [`agree`] does, keeping this rank's value on success.
///
/// # Errors
///
/// The agreed failure.
pub fn agreed<T>(
    comm: &SimpleCommunicator,
    result: Result<T, Failure>,
    fingerprint: Fingerprint,
    what: &str,
) -> Result<T, Failure> {
    match result {
        Ok(v) => agree(comm, Ok(()), fingerprint, what).map(|()| v),
        Err(f) => Err(agree(comm, Err(f), fingerprint, what)
            .err()
            .unwrap_or_else(|| {
                Failure::new(
                    Kind::Runtime,
                    format!("{what}: internal: agreement lost a failure"),
                )
            })),
    }
}

/// Turns an error the library already agreed on (every rank failed) into the
/// same failure on every rank: the one of the lowest rank where it arose.
/// Collective; call it only on results the library agreed.
pub fn unify<T, E: Into<Failure>>(
    comm: &SimpleCommunicator,
    result: Result<T, E>,
    what: &str,
) -> Result<T, Failure> {
    match result {
        Ok(v) => Ok(v),
        Err(e) => Err(agree(comm, Err(e.into()), Fingerprint::default(), what)
            .err()
            .unwrap_or_else(|| Failure::new(Kind::Runtime, format!("{what}: failed")))),
    }
}
