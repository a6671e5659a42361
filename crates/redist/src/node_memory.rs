//! Reading another rank's local storage directly, between ranks of one node.
//!
//! A message between two ranks of one node normally costs four passes over
//! its elements: the sender packs, MPI copies into shared memory and out
//! again, the receiver unpacks. When the sender's array keeps its local part
//! in shared memory ([`dist_array::storage`]), the receiver maps that memory
//! read-only and copies the message's runs straight from the sender's source
//! storage into its own target storage: one pass, the same as the bare
//! exchange of a contiguous buffer.
//!
//! Per execution, the sender sends a note — whether its source is shared and
//! how to map it — and, if it is, waits for the receiver's "done" before
//! returning, so its array is not written while being read. The receiver
//! keeps the last few mappings, keyed by the sender's rank and storage id
//! (never reused), so repeated executions on the same arrays map nothing.

use dist_array::SharedStorage;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::ffi::CString;

/// Mappings of other ranks' storage kept per redistribution.
const CACHED_MAPPINGS: usize = 4;

/// The node of every rank of `comm`, as the smallest rank on that node.
/// Collective over `comm`.
pub(crate) fn nodes(comm: &SimpleCommunicator) -> Vec<usize> {
    let node = comm.split_shared(comm.rank());
    let mut leader = 0i32;
    node.all_reduce_into(&comm.rank(), &mut leader, SystemOperation::min());
    let mut all = vec![0i32; comm.size() as usize];
    comm.all_gather_into(&leader, &mut all[..]);
    all.into_iter().map(|r| r as usize).collect()
}

/// A read-only mapping of another process's shared storage.
#[derive(Debug)]
pub(crate) struct PeerStorage {
    ptr: *const u8,
    bytes: usize,
}

// SAFETY: read-only memory; when it is read is ordered by the note/done
// protocol in the module docs.
unsafe impl Send for PeerStorage {}
// SAFETY: as above.
unsafe impl Sync for PeerStorage {}

impl PeerStorage {
    /// Maps `s` read-only through `/proc/<pid>/fd/<fd>`.
    pub fn map(s: &SharedStorage) -> std::io::Result<PeerStorage> {
        let path = CString::new(format!("/proc/{}/fd/{}", s.pid, s.fd)).expect("no NUL in a path");
        if s.bytes == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "empty storage",
            ));
        }
        // SAFETY: plain system calls; the descriptor is closed right after
        // mapping (the mapping keeps the memory).
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let ptr = libc::mmap(
                std::ptr::null_mut(),
                s.bytes,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd,
                0,
            );
            let err = std::io::Error::last_os_error();
            libc::close(fd);
            if ptr == libc::MAP_FAILED {
                return Err(err);
            }
            Ok(PeerStorage {
                ptr: ptr.cast_const().cast(),
                bytes: s.bytes,
            })
        }
    }

    /// The storage as elements of `T`.
    ///
    /// # Safety
    /// The owner wrote the storage as `T`s and does not write it while the
    /// slice is in use.
    pub unsafe fn slice<T>(&self) -> &[T] {
        std::slice::from_raw_parts(self.ptr.cast(), self.bytes / std::mem::size_of::<T>())
    }
}

impl Drop for PeerStorage {
    fn drop(&mut self) {
        // SAFETY: ptr and bytes come from a successful mmap.
        unsafe {
            libc::munmap(self.ptr.cast_mut().cast(), self.bytes);
        }
    }
}

/// The last few mappings of other ranks' storage, by (rank, storage id).
#[derive(Debug, Default)]
pub(crate) struct PeerCache {
    entries: Vec<(usize, u64, PeerStorage)>,
}

impl PeerCache {
    /// The mapping of `s`, owned by `rank`, mapped now if not cached.
    pub fn get(&mut self, rank: usize, s: &SharedStorage) -> std::io::Result<&PeerStorage> {
        let at = match self
            .entries
            .iter()
            .position(|e| e.0 == rank && e.1 == s.id && e.2.bytes == s.bytes)
        {
            Some(at) => at,
            None => {
                if self.entries.len() == CACHED_MAPPINGS {
                    self.entries.remove(0);
                }
                self.entries.push((rank, s.id, PeerStorage::map(s)?));
                self.entries.len() - 1
            }
        };
        Ok(&self.entries[at].2)
    }
}

/// Whether every rank can map the shared storage of each rank in its
/// `read_from` list; the same verdict on every rank. Collective over `comm`:
/// each rank shares a small probe storage, reads its peers' probes, and one
/// all-reduce agrees.
pub(crate) fn can_map_peers(comm: &SimpleCommunicator, read_from: &[usize]) -> bool {
    const MAGIC: u64 = 0x6e64_6379_636c_6963;
    // A probe in shared storage, holding MAGIC ^ rank.
    let probe = dist_array::storage::probe(MAGIC ^ comm.rank() as u64);
    let mine = probe.as_ref().map(|p| p.info());
    let entry = match mine {
        Some(s) => [1, u64::from(s.pid), s.fd as u64, s.id, s.bytes as u64],
        None => [0; 5],
    };
    let mut all = vec![0u64; 5 * comm.size() as usize];
    comm.all_gather_into(&entry[..], &mut all[..]);
    let mut ok = true;
    for &r in read_from {
        let e = &all[5 * r..5 * r + 5];
        if e[0] == 0 {
            ok = false;
            continue;
        }
        let s = SharedStorage {
            pid: e[1] as u32,
            fd: e[2] as i32,
            id: e[3],
            bytes: e[4] as usize,
        };
        // SAFETY: the probe holds u64s and is not written after creation.
        ok &= PeerStorage::map(&s)
            .is_ok_and(|m| unsafe { m.slice::<u64>() }.first() == Some(&(MAGIC ^ r as u64)));
    }
    let mut every = 0i32;
    comm.all_reduce_into(&i32::from(ok), &mut every, SystemOperation::min());
    // The probe lives until every rank has read its peers'.
    drop(probe);
    every == 1
}
