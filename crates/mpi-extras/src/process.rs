//! The life of the MPI process: its rank in the world, whether MPI has
//! ended, work to do at the first moment of `MPI_Finalize`, and ending the
//! job when a rank panics ([`abort_world`], [`AbortOnUnwind`]).

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use std::os::raw::{c_int, c_void};

/// Whether MPI is initialised and not yet finalised: whether MPI calls may
/// be made.
pub fn running() -> bool {
    mpi::environment::is_initialized() && !mpi::environment::is_finalized()
}

/// Whether MPI has been finalized (`MPI_Finalized`, which may be called at
/// any time, also before `MPI_Init` and after `MPI_Finalize`, and also when
/// MPI was started by another library than rsmpi, as mpi4py does).
pub fn finalized() -> bool {
    let mut flag: c_int = 0;
    // SAFETY: a valid out-pointer; MPI_Finalized may be called at any time.
    unsafe { ffi::MPI_Finalized(&mut flag) };
    flag != 0
}

/// This process's rank in `MPI_COMM_WORLD`, or `None` when MPI is not
/// running.
pub fn world_rank() -> Option<i32> {
    if !running() {
        return None;
    }
    let mut rank = -1;
    // SAFETY: MPI is running; MPI_Comm_rank writes one int.
    unsafe { ffi::MPI_Comm_rank(ffi::RSMPI_COMM_WORLD, &mut rank) };
    Some(rank)
}

/// Ends the whole job with `code` (`MPI_Abort` on `MPI_COMM_WORLD`) when
/// MPI is running; does nothing otherwise.
pub fn abort_world(code: i32) {
    if running() {
        // SAFETY: MPI is running; aborting is always allowed then.
        unsafe { ffi::MPI_Abort(ffi::RSMPI_COMM_WORLD, code) };
    }
}

/// Runs `f` at the first moment of `MPI_Finalize`, while MPI still works:
/// MPI deletes the attributes of `MPI_COMM_SELF` first thing there, calling
/// their delete functions, and `f` is the delete function of an attribute
/// set here. Each call registers `f` once more; MPI must be running (else
/// nothing is registered and `false` comes back).
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// static RAN: AtomicBool = AtomicBool::new(false);
///
/// let universe = mpi::initialize().unwrap();
/// assert!(mpi_extras::process::at_finalize(|| RAN.store(true, Ordering::Relaxed)));
/// assert!(!RAN.load(Ordering::Relaxed));
/// drop(universe); // MPI_Finalize
/// assert!(RAN.load(Ordering::Relaxed));
/// assert!(mpi_extras::process::finalized());
/// assert!(!mpi_extras::process::at_finalize(|| ()));
/// ```
pub fn at_finalize(f: fn()) -> bool {
    if !running() {
        return false;
    }
    unsafe extern "C" fn on_delete(
        _comm: ffi::MPI_Comm,
        _keyval: c_int,
        _value: *mut c_void,
        extra: *mut c_void,
    ) -> c_int {
        // SAFETY: `extra` is the `fn()` registered below, cast to a pointer.
        let f: fn() = unsafe { std::mem::transmute::<*mut c_void, fn()>(extra) };
        f();
        0
    }
    let mut keyval: c_int = 0;
    // SAFETY: a copy function that copies nothing, a delete function of
    // MPI's signature handed `f` as its extra state (a function pointer,
    // valid for the whole program), a valid out-pointer; the attribute's
    // value is never read.
    unsafe {
        let copy = Some(crate::communicator::not_copied as _);
        ffi::MPI_Comm_create_keyval(copy, Some(on_delete), &mut keyval, f as *mut c_void);
        ffi::MPI_Comm_set_attr(ffi::RSMPI_COMM_SELF, keyval, std::ptr::null_mut());
    }
    true
}

/// Aborts the job if dropped while the thread unwinds from a panic: an
/// exchange that panics on one rank would otherwise leave the others
/// blocked in MPI (or, with requests pending, MPI writing into freed
/// memory), whether or not the program installed an abort-on-panic hook.
pub struct AbortOnUnwind {
    comm: ffi::MPI_Comm,
    what: &'static str,
}

impl AbortOnUnwind {
    /// A guard over `comm` for the current call; `what` names it in the
    /// message printed before the abort.
    pub fn new(comm: &SimpleCommunicator, what: &'static str) -> AbortOnUnwind {
        AbortOnUnwind {
            comm: comm.as_raw(),
            what,
        }
    }
}

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}; aborting the job", self.what);
            // SAFETY: aborting is always allowed while MPI runs.
            unsafe {
                ffi::MPI_Abort(self.comm, 101);
            }
        }
    }
}
