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
    mpi_extras::process::finalized()
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
        mpi_extras::process::at_finalize(|| FINALIZING.store(true, Ordering::Relaxed));
    });
}
