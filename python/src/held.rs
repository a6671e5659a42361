//! Values that hold MPI objects, dropped only while MPI still runs.
//!
//! mpi4py finalizes MPI when the interpreter exits (an `atexit` hook), and
//! Python frees module globals and other leftovers after that: an array or a
//! plan dropped then would free its communicators after `MPI_Finalize`,
//! which MPI forbids. [`Held`] leaks its value instead once MPI has
//! finalized or is finalizing; the process is ending, so nothing is lost.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set when `MPI_Finalize` starts (see [`watch_finalize`]).
static FINALIZING: AtomicBool = AtomicBool::new(false);

/// Whether MPI calls may no longer be made.
pub fn mpi_gone() -> bool {
    if FINALIZING.load(Ordering::Relaxed) {
        return true;
    }
    let mut flag: std::os::raw::c_int = 0;
    // SAFETY: MPI_Finalized may be called at any time, before and after
    // MPI_Init and MPI_Finalize; a valid out-pointer.
    unsafe { mpi::ffi::MPI_Finalized(&mut flag) };
    flag != 0
}

/// A value dropped normally while MPI runs, leaked after.
pub struct Held<T>(ManuallyDrop<T>);

impl<T> Held<T> {
    /// Holds `value`.
    pub fn new(value: T) -> Held<T> {
        Held(ManuallyDrop::new(value))
    }
}

impl<T> Deref for Held<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Held<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> Drop for Held<T> {
    fn drop(&mut self) {
        if !mpi_gone() {
            // SAFETY: dropped once, here; the field is never used again.
            unsafe { ManuallyDrop::drop(&mut self.0) };
        }
    }
}

/// Makes [`mpi_gone`] true from the first moment of `MPI_Finalize`: MPI
/// deletes the attributes of `MPI_COMM_SELF` first thing there, calling
/// their delete functions. Set once per process; MPI must be initialized.
pub fn watch_finalize() {
    static SET: std::sync::Once = std::sync::Once::new();
    SET.call_once(|| {
        unsafe extern "C" fn on_finalize(
            _comm: mpi::ffi::MPI_Comm,
            _keyval: std::os::raw::c_int,
            _value: *mut std::ffi::c_void,
            _extra: *mut std::ffi::c_void,
        ) -> std::os::raw::c_int {
            FINALIZING.store(true, Ordering::Relaxed);
            0
        }
        let mut keyval: std::os::raw::c_int = 0;
        // SAFETY: a null copy function (MPI_COMM_NULL_COPY_FN), a delete
        // function of MPI's signature, a valid out-pointer; the attribute's
        // value is never read.
        unsafe {
            mpi::ffi::MPI_Comm_create_keyval(
                None,
                Some(on_finalize),
                &mut keyval,
                std::ptr::null_mut(),
            );
            mpi::ffi::MPI_Comm_set_attr(mpi::ffi::RSMPI_COMM_SELF, keyval, std::ptr::null_mut());
        }
    });
}
