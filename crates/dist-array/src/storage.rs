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
//!
//! - `threshold.rs`: which parts are large enough ([`shared_min_bytes`]);
//! - `linux.rs`: the system calls behind shared storage (`memfd`, seals,
//!   mappings through `/proc/<pid>/fd`); `elsewhere.rs`: their stand-ins
//!   where nothing is shared;
//! - `writers.rs`: whether the node's other ranks may write this
//!   process's storage ([`node_writes`]);
//! - `pool.rs`: freed files kept for the next part of the same size;
//! - `huge_pages.rs`: parts of 2 MiB or more ask for transparent huge
//!   pages, heap and shared alike, readers' mappings too
//!   ([`HUGE_PAGE_MIN_BYTES`]).

mod huge_pages;
mod pool;
mod threshold;
mod writers;

use crate::error::DistError;
use std::sync::atomic::{AtomicU64, Ordering};

pub use huge_pages::HUGE_PAGE_MIN_BYTES;
pub use pool::{POOL_MAX_BYTES, POOL_MAX_FILE_BYTES};
pub use threshold::{shared_min_bytes, SHARED_MIN_BYTES, SHARED_MIN_BYTES_VAR};
pub use writers::{node_writes, NodeWrites, NODE_WRITES_VAR};

/// The share of this process's limit on open files (`RLIMIT_NOFILE`, soft)
/// that shared storage may hold at once, one file each: past it new parts
/// stay on the heap, so that arrays never take the descriptors the rest
/// of the program needs.
pub const SHARED_FILES_SHARE: f64 = 0.25;

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
    /// Device and inode of the shared-memory file: a reader checks that the
    /// descriptor it opens is this file and no other.
    pub dev: u64,
    /// See [`dev`](Self::dev).
    pub ino: u64,
}

impl SharedStorage {
    /// Maps the storage read-only into this process, through
    /// `/proc/<pid>/fd/<fd>` (allowed between processes of one user unless a
    /// security policy forbids it). The mapping stays valid, and keeps the
    /// memory alive, until dropped, even after the owner frees the storage.
    ///
    /// Before mapping, the file is checked: a regular file, the device and
    /// inode this description names, at least `bytes` long, and sealed
    /// against shrinking and growing (so reading it can never fault) and,
    /// where the kernel can, against any writer but its owner.
    ///
    /// # Errors
    ///
    /// The system's error when the file cannot be opened or mapped
    /// (permissions, descriptor limits, address space), and
    /// [`InvalidData`](std::io::ErrorKind::InvalidData) when the file is not
    /// the one described or not sealed; `Unsupported` off Linux.
    pub fn map_read_only(&self) -> std::io::Result<ReadMapping> {
        if self.bytes == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "empty storage",
            ));
        }
        let ptr = sys::map_read_only(self)?;
        Ok(ReadMapping {
            ptr,
            bytes: self.bytes,
        })
    }

    /// Maps the storage readable and writable into this process, through
    /// `/proc/<pid>/fd/<fd>`, after the checks of
    /// [`map_read_only`](Self::map_read_only) (sealed against resizing is
    /// enough). Refused where the owner sealed the file against other
    /// writers ([`NODE_WRITES_VAR`] `=never` there). Writing it is for the
    /// owner and the writer to order: a redistribution writes only the
    /// elements the owner's target lends it, between the owner's note and
    /// the writer's answer.
    ///
    /// # Errors
    ///
    /// As [`map_read_only`](Self::map_read_only), and the system's error
    /// (`PermissionDenied`) when the file is sealed against writers.
    pub fn map_read_write(&self) -> std::io::Result<WriteMapping> {
        if self.bytes == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "empty storage",
            ));
        }
        let ptr = sys::map_read_write(self)?;
        Ok(WriteMapping {
            ptr,
            bytes: self.bytes,
        })
    }

    /// Whether the owning process still holds the storage: its descriptor
    /// is open and names this file (device and inode). Once the owner has
    /// freed it, a mapping alone keeps the memory alive. A freed file the
    /// owner keeps for its next part of the same size (from
    /// [`SHARED_MIN_BYTES`] to [`POOL_MAX_FILE_BYTES`]) stays open, and
    /// counts as held. Always `false` off Linux.
    ///
    /// ```
    /// use dist_array::storage::SharedBytes;
    ///
    /// if let Some(b) = SharedBytes::zeros(64) {
    ///     let info = b.info();
    ///     assert!(info.still_open());
    ///     drop(b);
    ///     assert!(!info.still_open());
    /// }
    /// ```
    pub fn still_open(&self) -> bool {
        sys::still_open(self)
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

    /// The first byte of the mapping, page-aligned; [`bytes`](Self::bytes)
    /// bytes can be read while `self` lives.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
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
        sys::unmap(self.ptr.cast_mut(), self.bytes);
    }
}

/// A readable and writable mapping of another process's shared storage
/// ([`SharedStorage::map_read_write`]), unmapped on drop.
#[derive(Debug)]
pub struct WriteMapping {
    ptr: *mut u8,
    bytes: usize,
}

// SAFETY: plain memory; who writes which bytes when is for the owner and
// the writers to order (a redistribution does so with messages).
unsafe impl Send for WriteMapping {}
// SAFETY: as above.
unsafe impl Sync for WriteMapping {}

impl WriteMapping {
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The first byte of the mapping, page-aligned; [`bytes`](Self::bytes)
    /// bytes can be read and written while `self` lives.
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for WriteMapping {
    fn drop(&mut self) {
        sys::unmap(self.ptr, self.bytes);
    }
}

/// Numbers the shared storages of this process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Shared-memory files this process holds open.
static OPEN_FILES: AtomicU64 = AtomicU64::new(0);

/// Counts one more file in `open` if that stays within `budget`.
fn take_file(open: &AtomicU64, budget: u64) -> bool {
    open.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
        (n < budget).then_some(n + 1)
    })
    .is_ok()
}

/// How many shared-memory files this process may hold at once
/// ([`SHARED_FILES_SHARE`] of its limit on open files, read once).
fn file_budget() -> u64 {
    static BUDGET: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "a share of a descriptor count"
    )]
    *BUDGET.get_or_init(|| (sys::open_files_limit() as f64 * SHARED_FILES_SHARE) as u64)
}

/// A local part's memory.
pub(crate) enum Storage<T> {
    Heap(Vec<T>),
    Shared(SharedBuffer<T>),
    /// Memory the caller owns ([`DistArray::from_raw_parts`](crate::DistArray::from_raw_parts)).
    Borrowed(Borrowed<T>),
}

/// Elements in memory the caller owns and keeps valid, and does not
/// otherwise touch, while the array lives.
pub(crate) struct Borrowed<T> {
    pub ptr: *mut T,
    pub len: usize,
}

// SAFETY: the memory is the array's alone while it lives (the contract of
// `DistArray::from_raw_parts`), as a Vec's would be; `T` is `Pod`.
unsafe impl<T: Send> Send for Borrowed<T> {}
// SAFETY: as above; shared access only reads.
unsafe impl<T: Sync> Sync for Borrowed<T> {}

impl<T: bytemuck::Pod> Storage<T> {
    /// `len` zeros, in shared memory when `share` and the part is large
    /// enough, on the heap otherwise.
    ///
    /// # Errors
    ///
    /// [`DistError::OutOfMemory`] when the system cannot give that much
    /// memory (instead of aborting the process).
    pub fn zeros(len: usize, share: bool) -> Result<Storage<T>, DistError> {
        let bytes = len.checked_mul(std::mem::size_of::<T>());
        if share && bytes.is_some_and(|b| b >= shared_min_bytes()) {
            if let Some(b) = SharedBuffer::zeros(len) {
                return Ok(Storage::Shared(b));
            }
        }
        let mut v: Vec<T> = Vec::new();
        if bytes.is_none() || v.try_reserve_exact(len).is_err() {
            return Err(DistError::OutOfMemory {
                bytes: len as u128 * std::mem::size_of::<T>() as u128,
            });
        }
        // Before the zeros touch the pages.
        huge_pages::advise(v.as_ptr().cast(), bytes.unwrap_or(0));
        v.resize(len, T::zeroed());
        Ok(Storage::Heap(v))
    }

    /// `len` zeros in shared memory whatever the size (on the heap if the
    /// system refuses).
    pub fn shared_zeros(len: usize) -> Result<Storage<T>, DistError> {
        match SharedBuffer::zeros(len) {
            Some(b) => Ok(Storage::Shared(b)),
            None => Storage::zeros(len, false),
        }
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
            // SAFETY: valid for `len` elements while the array lives
            // (`from_raw_parts`'s contract).
            Storage::Borrowed(b) => unsafe { std::slice::from_raw_parts(b.ptr, b.len) },
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Storage::Heap(v) => v,
            Storage::Shared(b) => b.as_mut_slice(),
            // SAFETY: as above, and borrowed mutably through `self`.
            Storage::Borrowed(b) => unsafe { std::slice::from_raw_parts_mut(b.ptr, b.len) },
        }
    }

    pub fn shared(&self) -> Option<SharedStorage> {
        match self {
            Storage::Heap(_) | Storage::Borrowed(_) => None,
            Storage::Shared(b) => Some(b.info()),
        }
    }

    /// The elements as a vector (moved out of heap storage, copied out of
    /// shared storage).
    pub fn into_vec(self) -> Vec<T> {
        match self {
            Storage::Heap(v) => v,
            Storage::Shared(_) | Storage::Borrowed(_) => self.as_slice().to_vec(),
        }
    }
}

impl<T: bytemuck::Pod> Clone for Storage<T> {
    fn clone(&self) -> Self {
        match self {
            Storage::Heap(v) => Storage::Heap(v.clone()),
            Storage::Shared(b) => Storage::shared_copy(b.as_slice()),
            // A clone owns its elements.
            Storage::Borrowed(_) => Storage::Heap(self.as_slice().to_vec()),
        }
    }
}

/// `len` elements in a shared-memory file mapped read-write; unmapped and
/// closed on drop.
pub(crate) struct SharedBuffer<T> {
    ptr: *mut T,
    len: usize,
    fd: i32,
    dev: u64,
    ino: u64,
    id: u64,
}

// SAFETY: the buffer is owned memory like a Vec's; other processes only ever
// read it while the owner has lent it out (see the redistribution protocol).
unsafe impl<T: Send> Send for SharedBuffer<T> {}
// SAFETY: as above; shared references only read.
unsafe impl<T: Sync> Sync for SharedBuffer<T> {}

impl<T: bytemuck::Pod> SharedBuffer<T> {
    /// `len` zeros in a sealed shared-memory file — one the pool kept, of
    /// the same size, or a new one — or `None` if the system refuses one.
    fn zeros(len: usize) -> Option<SharedBuffer<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        if bytes == 0 {
            return None;
        }
        let (ptr, fd, dev, ino) = match pool::take(bytes) {
            Some(file) => {
                // SAFETY: the pool's file is mapped read-write, `bytes`
                // long, and nothing else uses it.
                unsafe { std::ptr::write_bytes(file.ptr, 0, bytes) };
                (file.ptr, file.fd, file.dev, file.ino)
            }
            None => {
                if !take_file(&OPEN_FILES, file_budget()) {
                    // The files the pool keeps count too: give them back
                    // first.
                    pool::drain().into_iter().for_each(give_back);
                    if !take_file(&OPEN_FILES, file_budget()) {
                        return None;
                    }
                }
                let Some(file) = sys::create(bytes) else {
                    OPEN_FILES.fetch_sub(1, Ordering::Relaxed);
                    return None;
                };
                (file.ptr, file.fd, file.dev, file.ino)
            }
        };
        Some(SharedBuffer {
            ptr: ptr.cast(),
            len,
            fd,
            dev,
            ino,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        })
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
            dev: self.dev,
            ino: self.ino,
        }
    }
}

impl<T> Drop for SharedBuffer<T> {
    fn drop(&mut self) {
        let file = pool::Freed {
            ptr: self.ptr.cast(),
            bytes: self.len * std::mem::size_of::<T>(),
            fd: self.fd,
            dev: self.dev,
            ino: self.ino,
        };
        match pool::keep(file) {
            Ok(evicted) => evicted.into_iter().for_each(give_back),
            Err(file) => give_back(file),
        }
    }
}

/// Unmaps and closes a freed file the pool does not keep.
fn give_back(file: pool::Freed) {
    sys::release(file.ptr, file.bytes, file.fd);
    OPEN_FILES.fetch_sub(1, Ordering::Relaxed);
}

/// Bytes in shared memory that this process writes and the other
/// processes of its node may map read-only ([`SharedBytes::info`], then
/// [`SharedStorage::map_read_only`]): staging room for exchanges that pass
/// data through the node's memory instead of messages. The memory is
/// page-aligned, zero-filled, sealed like an array's shared storage, and
/// freed when this process and every reader have unmapped it.
///
/// ```
/// use dist_array::storage::SharedBytes;
///
/// if let Some(mut b) = SharedBytes::zeros(4096) {
///     // SAFETY: nobody else holds a view of these bytes.
///     let bytes = unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr(), b.len()) };
///     bytes[7] = 42;
///     let m = b.info().map_read_only().unwrap();
///     // SAFETY: plain bytes, not written while the slice is read.
///     assert_eq!(unsafe { m.slice::<u8>() }[7], 42);
/// }
/// ```
pub struct SharedBytes(SharedBuffer<u8>);

impl SharedBytes {
    /// `bytes` zero bytes (at least one) in a new shared-memory file, or
    /// `None` if the system refuses one.
    pub fn zeros(bytes: usize) -> Option<SharedBytes> {
        SharedBuffer::zeros(bytes).map(SharedBytes)
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether it holds no bytes (never: [`zeros`](Self::zeros) refuses
    /// that).
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// The first byte, page-aligned; [`len`](Self::len) bytes are valid
    /// for reads and writes while `self` lives. Writing them while a reader
    /// reads is for the two sides to order (an exchange does it with flags
    /// in the memory itself).
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.0.ptr
    }

    /// How another process of the node can map these bytes.
    pub fn info(&self) -> SharedStorage {
        self.0.info()
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

/// The system side of shared storage: Linux `memfd`, sealed; elsewhere
/// nothing is shared (local parts stay on the heap, redistributions use
/// messages).
#[cfg(target_os = "linux")]
#[path = "storage/linux.rs"]
mod sys;
#[cfg(not(target_os = "linux"))]
#[path = "storage/elsewhere.rs"]
mod sys;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_parts_are_reused_zeroed() {
        // A size no other test uses (tests run side by side).
        let len = SHARED_MIN_BYTES + 7 * 4096;
        let mut first = SharedBuffer::<u8>::zeros(len).expect("shared memory");
        first.as_mut_slice().fill(0xab);
        let (ptr, fd, id) = (first.ptr, first.fd, first.id);
        drop(first);
        let second = SharedBuffer::<u8>::zeros(len).expect("shared memory");
        assert_eq!((second.ptr, second.fd), (ptr, fd), "the freed file again");
        assert_ne!(second.id, id, "a new storage to readers");
        assert!(second.as_slice().iter().all(|&b| b == 0), "zeroed");
        // Too large to keep: given back.
        let huge = SharedBuffer::<u8>::zeros(POOL_MAX_FILE_BYTES + 4096).expect("shared memory");
        let bytes = huge.len;
        drop(huge);
        assert!(pool::take(bytes).is_none());
    }

    #[test]
    fn files_are_counted_within_their_budget() {
        let open = AtomicU64::new(0);
        assert!((0..3).all(|_| take_file(&open, 3)));
        assert!(!take_file(&open, 3), "a fourth file past a budget of 3");
        assert_eq!(open.load(Ordering::Relaxed), 3);
        open.fetch_sub(1, Ordering::Relaxed);
        assert!(take_file(&open, 3));
        // The process's own budget leaves room for arrays.
        assert!(file_budget() >= 64, "budget {}", file_budget());
    }

    #[test]
    fn large_parts_are_shared_and_small_ones_on_the_heap() {
        if shared_min_bytes() != SHARED_MIN_BYTES {
            eprintln!("skipped: {SHARED_MIN_BYTES_VAR} sets another threshold");
            return;
        }
        let big = SHARED_MIN_BYTES / 8;
        let s: Storage<f64> = Storage::zeros(big, true).unwrap();
        let info = s.shared().expect("a large part in shared memory");
        assert_eq!(info.bytes, big * 8);
        assert_eq!(info.pid, std::process::id());
        assert!(s.as_slice().iter().all(|&x| x == 0.0));
        assert!(Storage::<f64>::zeros(big - 1, true)
            .unwrap()
            .shared()
            .is_none());
        assert!(Storage::<f64>::zeros(big, false)
            .unwrap()
            .shared()
            .is_none());
        assert!(matches!(
            Storage::<f64>::zeros(usize::MAX / 4, true),
            Err(DistError::OutOfMemory { .. })
        ));
        assert!(matches!(
            Storage::<u8>::zeros(1 << 60, false),
            Err(DistError::OutOfMemory { .. })
        ));
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

    /// What another process of the same user could try through
    /// `/proc/<pid>/fd`: shrink (always refused, so no access can fault)
    /// and, where the owner seals writers out (`NDCYCLIC_NODE_WRITES=never`),
    /// write or map writable. A reader that checks what it maps still reads
    /// the owner's data.
    #[test]
    #[cfg(target_os = "linux")]
    fn sealed_storage_cannot_be_turned_against_a_reader() {
        let mut s = Storage::shared_copy(&[7u64; 1024]);
        let info = s.shared().unwrap();
        s.as_mut_slice()[1] = 9; // the owner still writes
        let path = std::ffi::CString::new(format!("/proc/self/fd/{}", info.fd)).unwrap();
        // SAFETY: plain system calls on a descriptor of this test, closed below.
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_RDWR);
            assert!(fd >= 0, "reopening read-write is allowed");
            assert!(libc::ftruncate(fd, 8) != 0, "shrinking must fail");
            let bytes = [0u8; 8];
            if sys::future_write_seals() && node_writes() == NodeWrites::Never {
                assert!(
                    libc::write(fd, bytes.as_ptr().cast(), 8) < 0,
                    "writing must fail"
                );
                let p = libc::mmap(
                    std::ptr::null_mut(),
                    8192,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                );
                assert_eq!(p, libc::MAP_FAILED, "a writable mapping must fail");
            }
            libc::close(fd);
        }
        let m = info.map_read_only().unwrap();
        // SAFETY: u64s, not written while read.
        assert_eq!(&unsafe { m.slice::<u64>() }[..3], &[7, 9, 7]);
    }

    /// A writer of the node maps the owner's storage writable (unless the
    /// owner seals writers out) and the owner sees what it wrote.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_writer_of_the_node_writes_what_the_owner_reads() {
        let s = Storage::shared_copy(&[5u32; 2048]);
        let info = s.shared().unwrap();
        match info.map_read_write() {
            Ok(w) => {
                assert_ne!(node_writes(), NodeWrites::Never);
                assert_eq!(w.bytes(), 2048 * 4);
                // SAFETY: inside the mapping; the owner does not touch the
                // storage meanwhile.
                unsafe { w.as_mut_ptr().cast::<u32>().add(100).write(77) };
                assert_eq!(s.as_slice()[100], 77);
                assert_eq!(s.as_slice()[99], 5);
            }
            Err(e) => assert_eq!(node_writes(), NodeWrites::Never, "refused: {e}"),
        }
        let too_long = SharedStorage {
            bytes: info.bytes * 2,
            ..info
        };
        assert!(too_long.map_read_write().is_err());
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_reader_refuses_another_file_or_a_wrong_size() {
        let s = Storage::shared_copy(&[1u32; 4096]);
        let info = s.shared().unwrap();
        let kept = Storage::shared_copy(&[2u32; 4096]);
        let other = kept.shared().unwrap();
        let wrong_file = SharedStorage {
            fd: other.fd,
            ..info
        };
        assert_eq!(
            wrong_file.map_read_only().unwrap_err().kind(),
            std::io::ErrorKind::InvalidData
        );
        let too_long = SharedStorage {
            bytes: info.bytes * 2,
            ..info
        };
        assert_eq!(
            too_long.map_read_only().unwrap_err().kind(),
            std::io::ErrorKind::InvalidData
        );
        assert!(info.map_read_only().is_ok());
    }
}
