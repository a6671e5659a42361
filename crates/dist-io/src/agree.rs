//! Agreement: every rank returns the same verdict after each step of a
//! save or a load, whatever failed where.
//!
//! A file operation can fail on one rank alone — its part of a write hit a
//! full disk, its arguments differed — while the others would go on into
//! the next collective call and wait there forever. So each step ends with
//! one small all-reduce of every rank's verdict and of a fingerprint of
//! what must match; when a rank failed, the lowest such rank sends its
//! error to the others (two broadcasts), and every rank returns it.

use crate::error::IoError;
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};

/// A 64-bit FNV-1a hash of what every rank must pass alike.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fingerprint(u64);

impl Fingerprint {
    pub fn new() -> Fingerprint {
        Fingerprint(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(mut self, b: &[u8]) -> Fingerprint {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self
    }

    /// Feeds a number (as 8 bytes).
    pub fn number(self, n: u64) -> Fingerprint {
        self.bytes(&n.to_le_bytes())
    }

    /// Feeds a text, with its length.
    pub fn text(self, s: &str) -> Fingerprint {
        self.number(s.len() as u64).bytes(s.as_bytes())
    }

    /// Feeds a list of numbers, with its length.
    pub fn numbers(self, ns: &[usize]) -> Fingerprint {
        ns.iter()
            .fold(self.number(ns.len() as u64), |f, &n| f.number(n as u64))
    }

    pub fn value(self) -> u64 {
        self.0
    }
}

/// Agrees over `comm` on `local`, this rank's verdict, and on
/// `fingerprint` (0 where nothing is compared). Collective.
///
/// `Ok` on every rank only when every rank succeeded with the same
/// fingerprint; otherwise the same error on every rank: the lowest failed
/// rank's (which it keeps as it was), or [`IoError::Disagreement`].
pub(crate) fn agree<V>(
    comm: &SimpleCommunicator,
    local: Result<V, IoError>,
    fingerprint: u64,
    what: &str,
) -> Result<V, IoError> {
    let size = u64::try_from(comm.size()).unwrap_or(u64::MAX);
    let me = u64::try_from(comm.rank()).unwrap_or(0);
    let failed = local.is_err();
    let mine = [
        u64::from(failed),
        if failed { size - me } else { 0 },
        fingerprint,
        !fingerprint,
    ];
    let mut all = [0u64; 4];
    procgrid::waits::all_reduce_into(comm, &mine[..], &mut all[..], SystemOperation::max());
    if all[0] == 0 {
        if all[2] != !all[3] {
            // The operation's first word alone: the rest (a path) may be
            // what differs, and the error must read the same everywhere.
            let operation = what.split(' ').next().unwrap_or(what);
            return Err(IoError::Disagreement {
                what: operation.to_string(),
            });
        }
        return local;
    }
    let root = size - all[1];
    let root_rank = i32::try_from(root).unwrap_or(0);
    let root_index = usize::try_from(root).unwrap_or(0);
    let mut wire = match &local {
        Err(e) if root == me => e.to_wire(root_index, what),
        _ => Vec::new(),
    };
    let mut len = [wire.len() as u64];
    procgrid::waits::broadcast_into(comm, root_rank, &mut len[..]);
    wire.resize(usize::try_from(len[0]).unwrap_or(0), 0);
    procgrid::waits::broadcast_into(comm, root_rank, &mut wire[..]);
    match local {
        Err(e) if root == me => Err(e),
        _ => Err(IoError::from_wire(&wire, root_index, what)),
    }
}

/// Broadcasts `bytes` from rank `root` of `comm` (its length first).
/// Collective: the others' `bytes` are replaced.
pub(crate) fn broadcast_bytes(comm: &SimpleCommunicator, root: usize, bytes: &mut Vec<u8>) {
    let root = i32::try_from(root).unwrap_or(0);
    let mut len = [bytes.len() as u64];
    procgrid::waits::broadcast_into(comm, root, &mut len[..]);
    bytes.resize(usize::try_from(len[0]).unwrap_or(0), 0);
    procgrid::waits::broadcast_into(comm, root, &mut bytes[..]);
}
