//! mpi4py communicators: the package's own duplicate of each, and the
//! process grids built over it.
//!
//! The first call on an mpi4py communicator duplicates it (collective) and
//! keeps the duplicate, with the grids built over it, as an MPI attribute
//! of the caller's communicator: every later call on the same communicator
//! finds them there, on every rank alike, and freeing the communicator
//! frees them (once no array or plan uses them any more). MPI itself is
//! never initialised nor finalised here: mpi4py does both.

use crate::errors::{Failure, Kind};
use crate::held::{watch_finalize, Held};
use mpi::raw::FromRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_extras::communicator::{from_fortran, Attribute, FortranComm, RawComm};
use procgrid::ProcGrid;
use pyo3::prelude::*;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, OnceLock};

/// The package's duplicate of a caller's communicator, and the grids built
/// over it, one per list of extents.
pub struct Context {
    base: ProcGrid,
    grids: Mutex<Vec<(Vec<usize>, ProcGrid)>>,
}

/// A shared handle on a [`Context`].
pub type Shared = Arc<Held<Context>>;

impl Context {
    /// The communicator every call on this context agrees over.
    pub fn comm(&self) -> &SimpleCommunicator {
        self.base.communicator()
    }

    /// Ranks of the communicator.
    pub fn size(&self) -> usize {
        usize::try_from(self.comm().size()).unwrap_or(0)
    }

    /// This process's rank in the communicator.
    pub fn rank(&self) -> usize {
        usize::try_from(self.comm().rank()).unwrap_or(0)
    }

    /// The grid of `extents` over this communicator (a subset of its ranks
    /// when the grid is smaller), built on first use: collective then, so
    /// every rank must ask for the same extents (callers agree first).
    ///
    /// # Errors
    ///
    /// A `ValueError` when the grid needs more ranks than the communicator has.
    pub fn grid(&self, extents: &[usize]) -> Result<ProcGrid, Failure> {
        let mut grids = self.grids.lock().map_err(|_| {
            Failure::new(
                Kind::Runtime,
                "ndcyclic: a grid cache was poisoned by a panic",
            )
        })?;
        if let Some((_, g)) = grids.iter().find(|(e, _)| e == extents) {
            return Ok(g.clone());
        }
        let g = ProcGrid::builder(extents)
            .subset(true)
            .build_sharing(&self.base)?;
        grids.push((extents.to_vec(), g.clone()));
        Ok(g)
    }
}

/// The attribute key under which a communicator keeps its context.
fn key() -> &'static Attribute<Shared> {
    static KEY: OnceLock<Attribute<Shared>> = OnceLock::new();
    KEY.get_or_init(Attribute::new)
}

/// The raw handle of an mpi4py intra-communicator.
///
/// # Errors
///
/// `TypeError` when `comm` is not an `mpi4py.MPI.Intracomm`, `ValueError`
/// for `MPI.COMM_NULL`, `RuntimeError` when MPI is not running.
fn raw_handle(comm: &Bound<'_, PyAny>) -> Result<RawComm, Failure> {
    let py = comm.py();
    let mpi4py = py
        .import("mpi4py.MPI")
        .map_err(|e| Failure::new(Kind::Runtime, format!("cannot import mpi4py.MPI: {e}")))?;
    let intracomm = mpi4py
        .getattr("Intracomm")
        .map_err(|e| Failure::new(Kind::Runtime, e.to_string()))?;
    if !comm.is_instance(&intracomm).unwrap_or(false) {
        let name = comm
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        return Err(Failure::type_error(format!(
            "expected an mpi4py.MPI.Intracomm (such as MPI.COMM_WORLD, a split or a \
             Cartesian communicator), got {name}"
        )));
    }
    if mpi::environment::is_finalized() || !mpi::environment::is_initialized() {
        return Err(Failure::new(
            Kind::Runtime,
            "MPI is not running (finalized, or never initialised by mpi4py; if mpi4py \
             says it is, mpi4py and ndcyclic load different MPI libraries: \
             ndcyclic.check_mpi() says which)",
        ));
    }
    let fhandle: FortranComm = comm
        .call_method0("py2f")
        .and_then(|h| h.extract())
        .map_err(|e| Failure::type_error(format!("cannot read the communicator's handle: {e}")))?;
    // SAFETY: converting a Fortran handle mpi4py gave for a live communicator.
    unsafe { from_fortran(fhandle) }
        .ok_or_else(|| Failure::value("the communicator is MPI.COMM_NULL"))
}

/// The context of an mpi4py communicator: found in its attribute, or made
/// (collective: a duplicate of it) on first use.
///
/// # Errors
///
/// As `raw_handle`.
pub fn context(comm: &Bound<'_, PyAny>) -> Result<Shared, Failure> {
    let raw = raw_handle(comm)?;
    watch_finalize();
    // SAFETY: a live communicator (mpi4py's, checked not to be null).
    if let Some(shared) = unsafe { key().get(raw) } {
        return Ok(shared);
    }
    // SAFETY: the caller's live communicator, only borrowed (never freed
    // here: ManuallyDrop) while the grid duplicates it.
    let borrowed = ManuallyDrop::new(unsafe { SimpleCommunicator::from_raw(raw) });
    let size = usize::try_from(borrowed.size()).unwrap_or(0);
    let base = ProcGrid::new(&*borrowed, &[size])?;
    let shared: Shared = Arc::new(Held::new(Context {
        base,
        grids: Mutex::new(Vec::new()),
    }));
    // SAFETY: as above.
    unsafe { key().set(raw, Arc::clone(&shared)) };
    Ok(shared)
}
