//! A ghost update in flight: the array lent to it, readable, until it is
//! finished.

use super::GhostUpdate;
use crate::error::RedistError;
use dist_array::{DistArray, Element};
use ndarray::ArrayViewD;

/// A ghost update begun ([`GhostUpdate::begin`]) and not yet finished. It
/// holds the array, so the interior can be read through it (to compute the
/// cells whose stencil needs no ghost) and nothing can write the array
/// until [`finish`](Self::finish). Dropping it finishes the update,
/// ignoring errors.
pub struct Flight<'a, T: Element> {
    update: &'a mut GhostUpdate<T>,
    array: &'a mut DistArray<T>,
    finished: bool,
}

impl<'a, T: Element> Flight<'a, T> {
    pub(super) fn new(
        update: &'a mut GhostUpdate<T>,
        array: &'a mut DistArray<T>,
    ) -> Flight<'a, T> {
        Flight {
            update,
            array,
            finished: false,
        }
    }

    /// The array's interior (its local part), to read while ghosts move.
    pub fn local(&self) -> ArrayViewD<'_, T> {
        self.array.local()
    }

    /// The array itself, to read.
    pub fn array(&self) -> &DistArray<T> {
        self.array
    }

    /// Completes the update: every ghost is fresh when it returns.
    ///
    /// # Errors
    ///
    /// As [`GhostUpdate::finish`].
    pub fn finish(mut self) -> Result<(), RedistError> {
        self.finished = true;
        self.update.finish(self.array)
    }
}

impl<T: Element> Drop for Flight<'_, T> {
    fn drop(&mut self) {
        if !self.finished {
            // Other ranks wait for this one's part: complete it anyway.
            let _ = self.update.finish(self.array);
        }
    }
}
