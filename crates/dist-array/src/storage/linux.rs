//! The system side of shared storage on Linux: `memfd` files, sealed,
//! mapped by their owner and, through `/proc/<pid>/fd`, by its node's
//! other processes.

use super::SharedStorage;
use std::io;
use std::sync::OnceLock;

/// A new shared-memory file of `bytes` bytes, mapped read-write here.
pub struct File {
    pub ptr: *mut u8,
    pub fd: i32,
    pub dev: u64,
    pub ino: u64,
}

/// Seals that keep a file's size fixed, so a reader never faults.
const SIZE_SEALS: libc::c_int = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW;

/// A zero-filled file of `bytes` bytes, mapped read-write, then sealed
/// against resizing and — unless the node's ranks may write it
/// ([`node_writes`](super::node_writes)) — against every writer but this
/// mapping (where the kernel has `F_SEAL_FUTURE_WRITE`), or `None` if the
/// system refuses any of it.
pub fn create(bytes: usize) -> Option<File> {
    let size = libc::off_t::try_from(bytes).ok()?;
    // SAFETY: plain system calls on a descriptor this function owns;
    // every failure path closes what was opened.
    unsafe {
        let fd = libc::memfd_create(
            c"ndcyclic-local".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        );
        if fd < 0 {
            return None;
        }
        let fail = |ptr: *mut libc::c_void| {
            if !ptr.is_null() && ptr != libc::MAP_FAILED {
                libc::munmap(ptr, bytes);
            }
            libc::close(fd);
            None
        };
        if libc::ftruncate(fd, size) != 0 {
            return fail(std::ptr::null_mut());
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
            return fail(ptr);
        }
        super::huge_pages::advise(ptr.cast_const().cast(), bytes);
        let write_seal = if future_write_seals() && super::node_writes() == super::NodeWrites::Never
        {
            libc::F_SEAL_FUTURE_WRITE
        } else {
            0
        };
        if libc::fcntl(
            fd,
            libc::F_ADD_SEALS,
            SIZE_SEALS | write_seal | libc::F_SEAL_SEAL,
        ) != 0
        {
            return fail(ptr);
        }
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        if libc::fstat(fd, st.as_mut_ptr()) != 0 {
            return fail(ptr);
        }
        let st = st.assume_init();
        Some(File {
            ptr: ptr.cast(),
            fd,
            dev: st.st_dev,
            ino: st.st_ino,
        })
    }
}

/// Whether this kernel seals files against future writers
/// (`F_SEAL_FUTURE_WRITE`, Linux 5.1): tried once on a scratch file.
pub fn future_write_seals() -> bool {
    static SUPPORTED: OnceLock<bool> = OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        // SAFETY: a scratch descriptor, closed at once.
        unsafe {
            let fd = libc::memfd_create(
                c"ndcyclic-probe".as_ptr(),
                libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
            );
            if fd < 0 {
                return false;
            }
            let ok = libc::fcntl(fd, libc::F_ADD_SEALS, libc::F_SEAL_FUTURE_WRITE) == 0;
            libc::close(fd);
            ok
        }
    })
}

/// This process's soft limit on open files (1024 where it cannot be
/// read; a large one where it is unlimited).
pub fn open_files_limit() -> u64 {
    let mut limit = std::mem::MaybeUninit::<libc::rlimit>::uninit();
    // SAFETY: getrlimit writes the struct it is given.
    match unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, limit.as_mut_ptr()) } {
        // SAFETY: written by the successful call.
        0 => unsafe { limit.assume_init() }.rlim_cur.min(1 << 20),
        _ => 1024,
    }
}

/// Whether `s`'s owner still has its descriptor open on that file.
pub fn still_open(s: &SharedStorage) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{}/fd/{}", s.pid, s.fd))
        .is_ok_and(|m| m.dev() == s.dev && m.ino() == s.ino)
}

/// Maps `s` read-only after checking what it is.
///
/// # Errors
///
/// - the system's error when `/proc/<pid>/fd/<fd>` cannot be opened, examined
///   (`fstat`) or mapped;
/// - [`InvalidData`](io::ErrorKind::InvalidData) when it is not a regular file, not
///   the file `s` names (device, inode), shorter than `s.bytes`, or not sealed
///   against resizing.
pub fn map_read_only(s: &SharedStorage) -> io::Result<*const u8> {
    map(s, false).map(<*mut u8>::cast_const)
}

/// Maps `s` readable and writable after checking what it is.
///
/// # Errors
///
/// As [`map_read_only`], and the system's error when the owner sealed the
/// file against other writers.
pub fn map_read_write(s: &SharedStorage) -> io::Result<*mut u8> {
    map(s, true)
}

/// Maps `s`, writable if `write`, after checking what it is.
fn map(s: &SharedStorage, write: bool) -> io::Result<*mut u8> {
    let (flags, prot) = if write {
        (libc::O_RDWR, libc::PROT_READ | libc::PROT_WRITE)
    } else {
        (libc::O_RDONLY, libc::PROT_READ)
    };
    let path = std::ffi::CString::new(format!("/proc/{}/fd/{}", s.pid, s.fd))
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    // SAFETY: plain system calls; the descriptor is closed on every path
    // (the mapping keeps the memory).
    unsafe {
        let fd = libc::open(path.as_ptr(), flags | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let checked = check(fd, s, &invalid);
        let result = checked.and_then(|()| {
            let ptr = libc::mmap(std::ptr::null_mut(), s.bytes, prot, libc::MAP_SHARED, fd, 0);
            if ptr == libc::MAP_FAILED {
                Err(io::Error::last_os_error())
            } else {
                // The owner's pages may be huge: map them so.
                super::huge_pages::advise(ptr.cast_const().cast(), s.bytes);
                Ok(ptr.cast::<u8>())
            }
        });
        libc::close(fd);
        result
    }
}

/// That `fd` is the file `s` describes, long enough, and sealed against
/// resizing (so that no access can fault). Whether other writers are
/// sealed out is the owner's choice ([`node_writes`](super::node_writes)).
///
/// # Safety
/// `fd` is an open descriptor.
unsafe fn check(
    fd: libc::c_int,
    s: &SharedStorage,
    invalid: &dyn Fn(String) -> io::Error,
) -> io::Result<()> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: an open descriptor and an out-pointer to one stat.
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat succeeded and filled it.
    let st = unsafe { st.assume_init() };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(invalid(format!(
            "/proc/{}/fd/{} is not a regular file",
            s.pid, s.fd
        )));
    }
    if (st.st_dev, st.st_ino) != (s.dev, s.ino) {
        return Err(invalid(format!(
            "/proc/{}/fd/{} is another file than the storage described",
            s.pid, s.fd
        )));
    }
    if usize::try_from(st.st_size).map_or(true, |size| size < s.bytes) {
        return Err(invalid(format!(
            "the storage holds {} bytes, {} described",
            st.st_size, s.bytes
        )));
    }
    // SAFETY: an open descriptor.
    let seals = unsafe { libc::fcntl(fd, libc::F_GET_SEALS) };
    let needed = SIZE_SEALS;
    if seals < 0 || seals & needed != needed {
        return Err(invalid(format!(
            "the storage is not sealed (seals {seals:#x}, {needed:#x} needed)"
        )));
    }
    Ok(())
}

/// Unmaps a mapping of `bytes` bytes.
pub fn unmap(ptr: *mut u8, bytes: usize) {
    // SAFETY: `ptr` and `bytes` come from a successful mmap, unmapped once.
    unsafe {
        libc::munmap(ptr.cast(), bytes);
    }
}

/// Unmaps the owner's mapping and closes the file.
pub fn release(ptr: *mut u8, bytes: usize, fd: i32) {
    unmap(ptr, bytes);
    // SAFETY: the descriptor was created by `create` and is closed once.
    unsafe {
        libc::close(fd);
    }
}
