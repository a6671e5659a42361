//! [`MpiError`], the one error type of the crate, and the two checks every
//! call goes through: a count that must fit MPI's `int` ([`count`]) and a
//! return code that must be `MPI_SUCCESS` ([`check`]).

use mpi::ffi;
use mpi::Count;
use std::os::raw::c_int;
use thiserror::Error;

/// What went wrong in a call into MPI's C interface.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MpiError {
    /// An argument MPI cannot be handed (a box outside its array, a path
    /// that is not UTF-8, ...).
    #[error("invalid {what} {value:?}: expected {expected}")]
    InvalidArgument {
        /// What the argument is.
        what: &'static str,
        /// The value given.
        value: String,
        /// What was expected instead.
        expected: String,
    },
    /// A count, size or offset beyond what MPI's integer types hold.
    #[error("{what} is {value}, above the limit of {limit}")]
    Limit {
        /// What was counted.
        what: &'static str,
        /// Its value.
        value: u128,
        /// The largest value MPI takes.
        limit: u128,
    },
    /// MPI returned an error code (under an error handler that returns
    /// errors, as files have; the library's communicators abort instead).
    #[error("{call} failed with MPI error {code}: {message}")]
    Mpi {
        /// The MPI function.
        call: &'static str,
        /// Its return code.
        code: i32,
        /// MPI's description of the code (`MPI_Error_string`).
        message: String,
    },
    /// A broken invariant of a caller (slots that overlap, a message that
    /// does not exist): a bug, not a user's mistake.
    #[error("internal error (a bug, please report it): {0}")]
    Internal(String),
}

/// An MPI count from an element count, or [`MpiError::Limit`] naming
/// `what`.
///
/// ```
/// assert_eq!(mpi_extras::count(7, "elements"), Ok(7));
/// assert!(mpi_extras::count(usize::MAX, "elements").is_err());
/// ```
///
/// # Errors
///
/// [`MpiError::Limit`] when `n` exceeds `i32::MAX`.
pub fn count(n: usize, what: &'static str) -> Result<Count, MpiError> {
    Count::try_from(n).map_err(|_| MpiError::Limit {
        what,
        value: n as u128,
        limit: Count::MAX as u128,
    })
}

/// `Err` unless `code` is `MPI_SUCCESS`. Only reachable when a
/// communicator's error handler returns errors instead of aborting.
pub(crate) fn check(code: c_int, call: &'static str) -> Result<(), MpiError> {
    // The standard fixes MPI_SUCCESS to 0.
    if code == 0 {
        return Ok(());
    }
    let mut text = vec![0u8; 1024];
    let mut len: c_int = 0;
    // SAFETY: the buffer holds MPI_MAX_ERROR_STRING (at most 1024) bytes.
    unsafe {
        ffi::MPI_Error_string(code, text.as_mut_ptr().cast(), &mut len);
    }
    text.truncate(usize::try_from(len).unwrap_or(0).min(1024));
    Err(MpiError::Mpi {
        call,
        code,
        message: String::from_utf8_lossy(&text).into_owned(),
    })
}
