//! BLACS contexts as ndcyclic grids: the communicator of a context's
//! processes, duplicated once into a one-dimensional grid over all of them
//! (the base the two layouts of a call are built on), kept per context,
//! with the verdict on derived datatypes measured when it is made.
//! A context handle BLACS hands out again for other processes is noticed
//! (the communicators no longer compare congruent) and rebuilt.

use crate::blacs::Blacs;
use crate::cache::Held;
use crate::error::DropinError;
use mpi::raw::{AsRaw, FromRaw};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_extras::communicator::RawComm;
use procgrid::ProcGrid;
use std::cell::RefCell;
use std::mem::ManuallyDrop;
use std::os::raw::c_int;
use std::rc::Rc;

/// A BLACS context's processes as a grid.
pub struct Context {
    /// The one-dimensional grid over every process of the context, in the
    /// order of the context's communicator.
    pub base: ProcGrid,
    /// The `P × Q` grids over the base's first processes that calls on the
    /// context used, kept so that later plans of the same shapes build
    /// none (building one is collective, ~5 µs on 2 ranks here).
    pub grids: GridCache,
}

/// Grids over a base's first processes, by shape: the most recent
/// `GRIDS_KEPT` (8). Every process of the base asks for the same shapes in
/// the same order (the calls' arguments are agreed), so all find or build
/// alike.
#[derive(Default)]
pub struct GridCache(RefCell<Vec<((usize, usize), ProcGrid)>>);

/// Grid shapes a context keeps.
const GRIDS_KEPT: usize = 8;

impl GridCache {
    /// The `dims` grid over `base`'s first processes: kept, or built
    /// (collective over `base`) and kept.
    ///
    /// # Errors
    ///
    /// [`DropinError::Grid`] when the grid cannot be built.
    pub fn grid(&self, base: &ProcGrid, dims: (usize, usize)) -> Result<ProcGrid, DropinError> {
        let kept = self
            .0
            .borrow()
            .iter()
            .find(|(d, _)| *d == dims)
            .map(|(_, g)| g.clone());
        if let Some(grid) = kept {
            return Ok(grid);
        }
        let grid = grid_over(base, dims)?;
        let mut all = self.0.borrow_mut();
        if all.len() == GRIDS_KEPT {
            all.remove(0);
        }
        all.push((dims, grid.clone()));
        Ok(grid)
    }
}

/// The `dims` grid over `base`'s first processes (the others get no
/// place in it). Collective over `base`.
///
/// # Errors
///
/// [`DropinError::Grid`] when the grid cannot be built.
pub fn grid_over(base: &ProcGrid, dims: (usize, usize)) -> Result<ProcGrid, DropinError> {
    Ok(ProcGrid::builder(&[dims.0, dims.1])
        .subset(true)
        .build_sharing(base)?)
}

thread_local! {
    static CONTEXTS: RefCell<Vec<(c_int, Rc<Held<Context>>)>> = const { RefCell::new(Vec::new()) };
}

/// Whether two communicators hold the same processes in the same order.
fn congruent(a: RawComm, b: RawComm) -> bool {
    // SAFETY: a context's grid and BLACS's communicator of a live context.
    unsafe { mpi_extras::communicator::congruent(a, b) }
}

/// The grid of context `ictxt`, built on first use. Collective over the
/// context's processes when it is built.
///
/// # Errors
///
/// [`DropinError::Grid`] when the grid cannot be built.
pub fn context(blacs: &Blacs, ictxt: c_int) -> Result<Rc<Held<Context>>, DropinError> {
    let comm = blacs.communicator(ictxt);
    let known = CONTEXTS.with(|all| {
        let all = all.borrow();
        all.iter()
            .find(|(c, ctx)| *c == ictxt && congruent(ctx.base.communicator().as_raw(), comm))
            .map(|(_, ctx)| Rc::clone(ctx))
    });
    if let Some(ctx) = known {
        return Ok(ctx);
    }
    release_at_finalize();
    // SAFETY: BLACS's live communicator, only borrowed (never freed here:
    // ManuallyDrop) while the grid duplicates it.
    let borrowed = ManuallyDrop::new(unsafe { SimpleCommunicator::from_raw(comm) });
    let size = usize::try_from(borrowed.size()).unwrap_or(0);
    let base = ProcGrid::new(&*borrowed, &[size])?;
    // Whether derived datatypes pay on the context is measured now, once
    // (a probe of a few exchanges, about 1.5 ms on 2 ranks here), rather
    // than inside the first call large enough to ask (every grid of the
    // context's calls shares the verdict).
    redist::exec::datatypes_pay(&base);
    let ctx = Rc::new(Held::new(Context {
        base,
        grids: GridCache::default(),
    }));
    CONTEXTS.with(|all| {
        let mut all = all.borrow_mut();
        all.retain(|(c, _)| *c != ictxt);
        all.push((ictxt, Rc::clone(&ctx)));
    });
    Ok(ctx)
}

/// Releases every plan and grid (MPI calls in their drops) when MPI is
/// finalized, while MPI still works: MPI deletes the attributes of
/// `MPI_COMM_SELF` first thing in `MPI_Finalize`, calling their delete
/// functions. Set once per process.
fn release_at_finalize() {
    static SET: std::sync::Once = std::sync::Once::new();
    SET.call_once(|| {
        mpi_extras::process::at_finalize(|| {
            crate::cache::release(-1);
            release(-1);
        });
    });
}

/// Forgets context `ictxt` (every context for -1).
pub fn release(ictxt: c_int) {
    CONTEXTS.with(|all| {
        all.borrow_mut().retain(|(c, _)| ictxt != -1 && *c != ictxt);
    });
}
