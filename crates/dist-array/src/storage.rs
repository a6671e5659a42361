//! Where a rank's local part lives: ordinary heap memory, or memory that
//! other processes on the same node can map.
//!
//! Large local parts are kept in an anonymous shared-memory file (Linux
//! `memfd_create`) mapped into this process. Nothing changes for the owner:
//! it reads and writes a slice as before. But a process of the same user on
//! the same machine can map the same pages read-only (through
//! `/proc/<pid>/fd/<fd>`), which is what lets a redistribution copy an
//! element once, straight from the sender's storage into the receiver's,
//! instead of packing, sending and unpacking it. The file has no name, so
//! nothing outlives the process; the pages are freed when the owner and
//! every reader have unmapped them.
//!
//! Where shared memory cannot be had (another system, a limit on open files)
//! the part lives on the heap, and redistributions fall back to messages.

use std::sync::atomic::{AtomicU64, Ordering};

/// Local parts of at least this many bytes are put in shared memory; smaller
/// ones gain nothing from it and would each cost an open file.
pub const SHARED_MIN_BYTES: usize = 1 << 20;

/// How another process on this node can map an array's local storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedStorage {
    /// The owning process.
    pub pid: u32,
    /// The file descriptor of the shared-memory file in that process.
    pub fd: i32,
    /// Distinguishes the storages one process creates (never reused, unlike
    /// file descriptors), so that a mapping can be cached by it.
    pub id: u64,
    /// Size in bytes.
    pub bytes: usize,
}

impl SharedStorage {
    /// Maps the storage read-only into this process, through
    /// `/proc/<pid>/fd/<fd>` (allowed between processes of one user unless a
    /// security policy forbids it). The mapping stays valid, and keeps the
    /// memory alive, until dropped, even after the owner frees the storage.
    pub fn map_read_only(&self) -> std::io::Result<ReadMapping> {
        if self.bytes == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "empty storage",
            ));
        }
        let path = std::ffi::CString::new(format!("/proc/{}/fd/{}", self.pid, self.fd))
            .expect("no NUL in a path");
        // SAFETY: plain system calls; the descriptor is closed right after
        // mapping (the mapping keeps the memory).
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let ptr = libc::mmap(
                std::ptr::null_mut(),
                self.bytes,
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
            Ok(ReadMapping {
                ptr: ptr.cast_const().cast(),
                bytes: self.bytes,
            })
        }
    }
}

/// A read-only mapping of (possibly another process's) shared storage,
/// unmapped on drop.
#[derive(Debug)]
pub struct ReadMapping {
    ptr: *const u8,
    bytes: usize,
}

// SAFETY: read-only memory; when the owner writes it is for the users of the
// mapping to order (a redistribution does so with messages).
unsafe impl Send for ReadMapping {}
// SAFETY: as above.
unsafe impl Sync for ReadMapping {}

impl ReadMapping {
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The storage as elements of `T`.
    ///
    /// # Safety
    /// The owner wrote the storage as `T`s (plain data) and does not write
    /// it while the slice is in use.
    pub unsafe fn slice<T>(&self) -> &[T] {
        // SAFETY: the mapping holds `bytes` readable bytes, page-aligned; the
        // caller vouches for the contents.
        unsafe {
            std::slice::from_raw_parts(self.ptr.cast(), self.bytes / std::mem::size_of::<T>())
        }
    }
}

impl Drop for ReadMapping {
    fn drop(&mut self) {
        // SAFETY: ptr and bytes come from a successful mmap.
        unsafe {
            libc::munmap(self.ptr.cast_mut().cast(), self.bytes);
        }
    }
}

/// Numbers the shared storages of this process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A local part's memory.
pub(crate) enum Storage<T> {
    Heap(Vec<T>),
    Shared(SharedBuffer<T>),
}

impl<T: bytemuck::Pod> Storage<T> {
    /// `len` zeros, in shared memory when `share` and the part is large
    /// enough, on the heap otherwise.
    pub fn zeros(len: usize, share: bool) -> Storage<T> {
        if share && len * std::mem::size_of::<T>() >= SHARED_MIN_BYTES {
            if let Some(b) = SharedBuffer::zeros(len) {
                return Storage::Shared(b);
            }
        }
        Storage::Heap(vec![T::zeroed(); len])
    }

    /// A copy of `data` in shared memory (on the heap if the system refuses).
    pub fn shared_copy(data: &[T]) -> Storage<T> {
        let mut s = match SharedBuffer::zeros(data.len()) {
            Some(b) => Storage::Shared(b),
            None => Storage::Heap(vec![T::zeroed(); data.len()]),
        };
        s.as_mut_slice().copy_from_slice(data);
        s
    }

    pub fn as_slice(&self) -> &[T] {
        match self {
            Storage::Heap(v) => v,
            Storage::Shared(b) => b.as_slice(),
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Storage::Heap(v) => v,
            Storage::Shared(b) => b.as_mut_slice(),
        }
    }

    pub fn shared(&self) -> Option<SharedStorage> {
        match self {
            Storage::Heap(_) => None,
            Storage::Shared(b) => Some(b.info()),
        }
    }

    /// The elements as a vector (moved out of heap storage, copied out of
    /// shared storage).
    pub fn into_vec(self) -> Vec<T> {
        match self {
            Storage::Heap(v) => v,
            Storage::Shared(b) => b.as_slice().to_vec(),
        }
    }
}

impl<T: bytemuck::Pod> Clone for Storage<T> {
    fn clone(&self) -> Self {
        match self {
            Storage::Heap(v) => Storage::Heap(v.clone()),
            Storage::Shared(b) => Storage::shared_copy(b.as_slice()),
        }
    }
}

/// `len` elements in a shared-memory file mapped read-write; unmapped and
/// closed on drop.
pub(crate) struct SharedBuffer<T> {
    ptr: *mut T,
    len: usize,
    fd: libc::c_int,
    id: u64,
}

// SAFETY: the buffer is owned memory like a Vec's; other processes only ever
// read it while the owner has lent it out (see the redistribution protocol).
unsafe impl<T: Send> Send for SharedBuffer<T> {}
// SAFETY: as above; shared references only read.
unsafe impl<T: Sync> Sync for SharedBuffer<T> {}

impl<T: bytemuck::Pod> SharedBuffer<T> {
    /// `len` zeros in a new shared-memory file, or `None` if the system
    /// refuses one.
    fn zeros(len: usize) -> Option<SharedBuffer<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        if bytes == 0 {
            return None;
        }
        // SAFETY: plain system calls on our own file descriptor.
        unsafe {
            let fd = libc::memfd_create(c"ndcyclic-local".as_ptr(), libc::MFD_CLOEXEC);
            if fd < 0 {
                return None;
            }
            if libc::ftruncate(fd, bytes as libc::off_t) != 0 {
                libc::close(fd);
                return None;
            }
            let ptr = libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            );
            if ptr == libc::MAP_FAILED {
                libc::close(fd);
                return None;
            }
            Some(SharedBuffer {
                ptr: ptr.cast(),
                len,
                fd,
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            })
        }
    }

    fn as_slice(&self) -> &[T] {
        // SAFETY: `len` zero-initialised (then written) Pod elements, mapped
        // for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, and `&mut self` makes the access exclusive here.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    fn info(&self) -> SharedStorage {
        SharedStorage {
            pid: std::process::id(),
            fd: self.fd,
            id: self.id,
            bytes: self.len * std::mem::size_of::<T>(),
        }
    }
}

impl<T> Drop for SharedBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: the mapping and descriptor were created by `zeros`.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len * std::mem::size_of::<T>());
            libc::close(self.fd);
        }
    }
}

/// One value in shared storage: lets other ranks check, before relying on
/// it, that they can map this process's shared storage (see [`probe`]).
pub struct Probe(SharedBuffer<u64>);

impl Probe {
    /// How to map the probe.
    pub fn info(&self) -> SharedStorage {
        self.0.info()
    }
}

/// A shared storage holding `value`, or `None` if the system refuses one.
pub fn probe(value: u64) -> Option<Probe> {
    let mut b = SharedBuffer::zeros(1)?;
    b.as_mut_slice()[0] = value;
    Some(Probe(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_parts_are_shared_and_small_ones_on_the_heap() {
        let big = SHARED_MIN_BYTES / 8;
        let s: Storage<f64> = Storage::zeros(big, true);
        let info = s.shared().expect("a large part in shared memory");
        assert_eq!(info.bytes, big * 8);
        assert_eq!(info.pid, std::process::id());
        assert!(s.as_slice().iter().all(|&x| x == 0.0));
        assert!(Storage::<f64>::zeros(big - 1, true).shared().is_none());
        assert!(Storage::<f64>::zeros(big, false).shared().is_none());
    }

    #[test]
    fn ids_are_never_reused() {
        let a = probe(1).unwrap().info();
        let b = probe(2).unwrap().info();
        assert_ne!(a.id, b.id);
    }

    #[test]
    fn copies_and_clones_hold_their_own_values() {
        let data: Vec<u32> = (0..1000).collect();
        let mut s = Storage::shared_copy(&data);
        assert!(s.shared().is_some());
        assert_eq!(s.as_slice(), &data[..]);
        let c = s.clone();
        assert!(c.shared().is_some());
        assert_ne!(c.shared().unwrap().id, s.shared().unwrap().id);
        s.as_mut_slice()[5] = 77;
        assert_eq!(c.as_slice()[5], 5);
        assert_eq!(s.into_vec()[5], 77);
    }

    #[test]
    fn another_mapping_sees_the_owners_writes() {
        // What a reader on the node does: map the storage read-only.
        let mut s = Storage::shared_copy(&[0u64; 512]);
        let info = s.shared().unwrap();
        s.as_mut_slice()[3] = 42;
        let m = info.map_read_only().unwrap();
        // SAFETY: u64s, not written while read.
        assert_eq!(unsafe { m.slice::<u64>() }[3], 42);
    }
}
