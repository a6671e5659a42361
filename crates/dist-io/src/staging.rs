//! Staging memory kept from one save or load to the next.
//!
//! An aggregator's staging array holds up to half the staging budget (32
//! of the default 64 MiB), and memory that new costs a page fault per page on first
//! touch: measured here, a fresh 64 MiB buffer in shared memory took 48 ms
//! to fill against 8 ms for one filled before, as long as writing the
//! 64 MiB to a file. So the last two staging buffers a process used are kept
//! (the rounds' common size and the last round's), and a transfer whose
//! staging has one of their lengths takes it back. What they held does
//! not matter: every element of a staging buffer is written (by the
//! redistribution, or by reading the file) before anything reads it.

use crate::error::IoError;
use dist_array::{DistArray, Element, Layout, LocalStorage};
use procgrid::ProcGrid;
use std::any::Any;
use std::sync::Mutex;

/// Staging buffers kept at most.
const KEPT: usize = 2;

/// The kept buffers, the most recently kept last.
static BUFFERS: Mutex<Vec<Box<dyn Any + Send>>> = Mutex::new(Vec::new());

/// An array of `layout` on `grid` for staging: in a kept buffer of this
/// rank's local length when there is one (holding old values), else new.
pub(crate) fn array<T: Element>(grid: &ProcGrid, layout: Layout) -> Result<DistArray<T>, IoError> {
    let len = match grid_rank(grid) {
        Some(r) if r < layout.ranks() => layout.local_len(r)?,
        _ => 0,
    };
    let kept = {
        let mut buffers = BUFFERS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = buffers.iter().position(|p| {
            p.downcast_ref::<LocalStorage<T>>()
                .is_some_and(|s| s.len() == len)
        });
        at.map(|i| buffers.remove(i))
    };
    match kept.and_then(|b| b.downcast::<LocalStorage<T>>().ok()) {
        Some(storage) if len > 0 => Ok(DistArray::from_storage(grid, layout, *storage)?),
        _ => Ok(DistArray::zeros(grid, layout)?),
    }
}

/// Keeps `array`'s local part as a staging buffer for a later
/// [`array`], giving back the oldest buffer kept beyond [`KEPT`].
pub(crate) fn keep<T: Element>(array: DistArray<T>) {
    let storage = array.into_storage();
    if storage.is_empty() {
        return;
    }
    let mut buffers = BUFFERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    buffers.push(Box::new(storage));
    while buffers.len() > KEPT {
        buffers.remove(0);
    }
}

fn grid_rank(grid: &ProcGrid) -> Option<usize> {
    use mpi::topology::Communicator;
    usize::try_from(grid.communicator().rank()).ok()
}
