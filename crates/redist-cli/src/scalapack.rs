//! Living next to ScaLAPACK (feature `scalapack`, linking Debian's
//! `libscalapack-mpich`): BLACS contexts on ndcyclic's grids, array
//! descriptors of 2-D layouts and layouts of descriptors, `p?gemr2d`
//! (ScaLAPACK's own redistribution) and PBLAS's `pdtran` and `pdgeadd` on
//! ndcyclic arrays, to compare with — and ndcyclic's own redistribution
//! with `pdtran`'s and `pdgeadd`'s semantics ([`transposition`]).
//!
//! A 2-D layout is a ScaLAPACK matrix when both dimensions are
//! block-cyclic over a `P × Q` grid and the local part is column-major:
//! its descriptor is `[1, context, M, N, MB, NB, RSRC, CSRC, LLD]` with the
//! block sizes and first processes of the two dimensions and
//! `LLD = max(1, local rows)` (DESCINIT's semantics; ranks outside the
//! context get `context = -1`). `block` is `cyclic(ceil(n/p))` and `*` one
//! block of the whole extent on a grid dimension of 1. The BLACS grid maps
//! process row `i`, column `j` to the rank the layout puts at coordinates
//! `(i, j)`, so both libraries agree on who holds what.
//!
//! ```no_run
//! # fn main() -> Result<(), redist::RedistError> {
//! use dist_array::{DistArray, Layout, Order};
//! use procgrid::ProcGrid;
//! use redist_cli::scalapack::{self, BlacsContext};
//! use mpi::topology::Communicator;
//!
//! let universe = procgrid::init().unwrap();
//! let world = universe.world();
//! let p = world.size() as usize;
//! let grid = ProcGrid::new(&world, &[p, 1])?;
//! let layout = Layout::parse(&[100, 80], &format!("cyclic(8),cyclic(8)@{p}x1"))?
//!     .with_storage(Order::ColumnMajor);
//! let context = BlacsContext::for_layout(&grid, &layout)?;
//! let desc = scalapack::descriptor(&layout, &context)?; // pass to any p?routine
//! let a = DistArray::<f64>::from_fn(&grid, layout, |g| g[0] as f64)?;
//! # Ok(()) }
//! ```

use dist_array::{Dist, DistArray, Layout, LayoutSpec, Order};
use mpi::collective::CommunicatorCollectives;
use mpi::raw::AsRaw;
use mpi::topology::Communicator;
use procgrid::ProcGrid;
use redist::{Options, RedistError, Redistribution, Scalar, Window};
use std::os::raw::{c_char, c_double, c_int};

/// A ScaLAPACK array descriptor (`DLEN_ = 9` integers).
pub type Descriptor = [c_int; 9];

#[link(name = "scalapack-mpich")]
unsafe extern "C" {
    fn Csys2blacs_handle(comm: mpi_extras::communicator::RawComm) -> c_int;
    fn Cblacs_gridmap(
        context: *mut c_int,
        usermap: *mut c_int,
        ldumap: c_int,
        nprow: c_int,
        npcol: c_int,
    );
    fn Cblacs_gridinit(context: *mut c_int, order: *const c_char, nprow: c_int, npcol: c_int);
    fn Cblacs_gridinfo(
        context: c_int,
        nprow: *mut c_int,
        npcol: *mut c_int,
        myrow: *mut c_int,
        mycol: *mut c_int,
    );
    fn Cblacs_gridexit(context: c_int);
    fn pdtran_(
        m: *const c_int,
        n: *const c_int,
        alpha: *const c_double,
        a: *const c_double,
        ia: *const c_int,
        ja: *const c_int,
        desca: *const c_int,
        beta: *const c_double,
        c: *mut c_double,
        ic: *const c_int,
        jc: *const c_int,
        descc: *const c_int,
    );
    fn pdgeadd_(
        trans: *const c_char,
        m: *const c_int,
        n: *const c_int,
        alpha: *const c_double,
        a: *const c_double,
        ia: *const c_int,
        ja: *const c_int,
        desca: *const c_int,
        beta: *const c_double,
        c: *mut c_double,
        ic: *const c_int,
        jc: *const c_int,
        descc: *const c_int,
    );
    fn Cpdgemr2d(
        m: c_int,
        n: c_int,
        a: *const c_double,
        ia: c_int,
        ja: c_int,
        desca: *const c_int,
        b: *mut c_double,
        ib: c_int,
        jb: c_int,
        descb: *const c_int,
        context: c_int,
    );
}

/// A number as a C `int`, or an error naming it.
fn int(what: &'static str, n: usize) -> Result<c_int, RedistError> {
    c_int::try_from(n).map_err(|_| RedistError::InvalidArgument {
        what,
        value: n.to_string(),
        expected: format!("at most {} (ScaLAPACK counts in C int)", c_int::MAX),
    })
}

/// A BLACS context: a process grid of ScaLAPACK's over the ranks of an
/// ndcyclic grid's communicator, released when dropped.
#[derive(Debug)]
pub struct BlacsContext {
    handle: c_int,
    rows: usize,
    cols: usize,
}

impl BlacsContext {
    /// The context of the 2-D grid `layout` is distributed over:
    /// `P × Q` processes, process `(i, j)` the rank `layout` puts at
    /// coordinates `(i, j)`. Collective over `grid`'s communicator.
    ///
    /// # Errors
    ///
    /// [`RedistError::InvalidArgument`] when the layout is not 2-D or its
    /// grid is not `grid`'s.
    pub fn for_layout(grid: &ProcGrid, layout: &Layout) -> Result<BlacsContext, RedistError> {
        if layout.ndim() != 2 || grid.extents() != layout.grid_extents() {
            return Err(RedistError::InvalidArgument {
                what: "layout",
                value: layout.to_string(),
                expected: format!("a 2-D layout on the grid {grid}"),
            });
        }
        let (rows, cols) = (layout.grid_extents()[0], layout.grid_extents()[1]);
        let mut map = Vec::with_capacity(rows * cols);
        for j in 0..cols {
            for i in 0..rows {
                map.push(int("rank", layout.rank_of_coords(&[i, j])?)?);
            }
        }
        let (nprow, npcol) = (int("grid rows", rows)?, int("grid columns", cols)?);
        let comm = grid.communicator();
        // SAFETY: the communicator is valid for the call; BLACS copies it
        // into its own table of system handles.
        let system = unsafe { Csys2blacs_handle(comm.as_raw()) };
        let mut handle = system;
        // SAFETY: `map` holds nprow × npcol ranks, column by column with
        // leading dimension nprow, as Cblacs_gridmap reads them; the call is
        // collective over the system handle's communicator, which every rank
        // of `grid`'s communicator enters here.
        unsafe { Cblacs_gridmap(&mut handle, map.as_mut_ptr(), nprow, nprow, npcol) };
        Ok(BlacsContext { handle, rows, cols })
    }

    /// A `1 × P` context over every rank of `grid`'s communicator: the
    /// context `p?gemr2d` needs, which contains both arrays' processes.
    /// Collective over `grid`'s communicator.
    ///
    /// # Errors
    ///
    /// [`RedistError::InvalidArgument`] when the communicator has more
    /// ranks than a C `int` counts.
    pub fn spanning(grid: &ProcGrid) -> Result<BlacsContext, RedistError> {
        let comm = grid.communicator();
        let ranks = usize::try_from(comm.size()).unwrap_or(0);
        let npcol = int("ranks", ranks)?;
        // SAFETY: as in `for_layout`.
        let system = unsafe { Csys2blacs_handle(comm.as_raw()) };
        let mut handle = system;
        // SAFETY: "R" is a NUL-terminated order string; collective over the
        // system handle's communicator.
        unsafe { Cblacs_gridinit(&mut handle, c"R".as_ptr(), 1, npcol) };
        Ok(BlacsContext {
            handle,
            rows: 1,
            cols: ranks,
        })
    }

    /// The BLACS context handle, for ScaLAPACK calls (`-1` on ranks
    /// outside the grid).
    pub fn raw(&self) -> c_int {
        self.handle
    }

    /// `(P, Q)`: process rows and columns.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// This rank's process row and column, `None` outside the grid.
    pub fn coords(&self) -> Option<(usize, usize)> {
        let (mut r, mut c, mut i, mut j) = (0, 0, -1, -1);
        if self.handle < 0 {
            return None;
        }
        // SAFETY: four valid out-pointers; the context is alive.
        unsafe { Cblacs_gridinfo(self.handle, &mut r, &mut c, &mut i, &mut j) };
        Some((usize::try_from(i).ok()?, usize::try_from(j).ok()?))
    }
}

impl Drop for BlacsContext {
    fn drop(&mut self) {
        // The system handle stays: BLACS hands out one per communicator and
        // shares it between contexts, so freeing it here would free another
        // context's too. Ranks outside the grid hold no context (-1).
        if self.handle >= 0 {
            // SAFETY: the context was created by this value and is released once.
            unsafe { Cblacs_gridexit(self.handle) };
        }
    }
}

/// The block size and first process of one dimension as ScaLAPACK sees
/// them.
fn blocking(layout: &Layout, d: usize) -> (usize, usize) {
    let axis = layout.axis(d);
    (axis.block().max(1), axis.first())
}

/// The descriptor of `layout` in `context` (DESCINIT's semantics): `[1,
/// context, M, N, MB, NB, RSRC, CSRC, LLD]`, `LLD = max(1, local rows)`;
/// on ranks outside the context the context entry is `-1`.
///
/// # Errors
///
/// [`RedistError::InvalidArgument`] when the layout is not 2-D, its local
/// storage is not column-major, its grid is not the context's, or an extent
/// exceeds a C `int`.
pub fn descriptor(layout: &Layout, context: &BlacsContext) -> Result<Descriptor, RedistError> {
    if layout.ndim() != 2
        || layout.storage() != Order::ColumnMajor
        || layout.grid_extents() != [context.rows, context.cols]
    {
        return Err(RedistError::InvalidArgument {
            what: "layout",
            value: layout.to_string(),
            expected: format!(
                "a 2-D column-major layout on a {}x{} grid (ScaLAPACK's matrices)",
                context.rows, context.cols
            ),
        });
    }
    let (mb, rsrc) = blocking(layout, 0);
    let (nb, csrc) = blocking(layout, 1);
    let local_rows = match context.coords() {
        Some((i, _)) => layout.axis(0).local_extent(i),
        None => 0,
    };
    Ok([
        1,
        context.raw(),
        int("rows", layout.shape()[0])?,
        int("columns", layout.shape()[1])?,
        int("row block", mb)?,
        int("column block", nb)?,
        int("first process row", rsrc)?,
        int("first process column", csrc)?,
        int("local rows", local_rows.max(1))?,
    ])
}

/// The ndcyclic layout of the matrix `desc` describes, on `grid` (whose
/// extents must be the context's grid): `cyclic(MB),cyclic(NB)` starting at
/// `(RSRC, CSRC)`, column-major, with the context's rank at each process
/// coordinate. Collective over `grid`'s communicator (the ranks tell each
/// other their BLACS coordinates).
///
/// # Errors
///
/// [`RedistError::InvalidArgument`] when the descriptor is not a dense
/// block-cyclic one (`DTYPE ≠ 1`, sizes out of range, first processes
/// outside the grid), its grid is not `grid`'s, or a rank of the
/// communicator is outside the context;
/// [`RedistError::Dist`] when the layout cannot be built.
pub fn layout_from_descriptor(desc: &Descriptor, grid: &ProcGrid) -> Result<Layout, RedistError> {
    let comm = grid.communicator();
    let (mut p, mut q, mut i, mut j) = (0, 0, -1, -1);
    if desc[1] >= 0 {
        // SAFETY: four valid out-pointers; a context handle BLACS gave.
        unsafe { Cblacs_gridinfo(desc[1], &mut p, &mut q, &mut i, &mut j) };
    }
    // Every rank says where it sits (-1: outside).
    let mine = [p, q, i, j];
    let ranks = usize::try_from(comm.size()).unwrap_or(0);
    let mut all = vec![0 as c_int; 4 * ranks];
    comm.all_gather_into(&mine[..], &mut all[..]);
    let bad = |expected: String| RedistError::InvalidArgument {
        what: "descriptor",
        value: format!("{desc:?}"),
        expected,
    };
    let (rows, cols) = (
        usize::try_from(p).unwrap_or(0),
        usize::try_from(q).unwrap_or(0),
    );
    if desc[0] != 1 || desc[2] < 0 || desc[3] < 0 || desc[4] < 1 || desc[5] < 1 {
        return Err(bad(
            "DTYPE 1 (dense block-cyclic), M, N ≥ 0, MB, NB ≥ 1".into()
        ));
    }
    if [rows, cols] != grid.extents() || rows * cols != ranks {
        return Err(bad(format!(
            "a context over every rank of the grid {grid} (its is {rows}x{cols})"
        )));
    }
    let mut map = vec![usize::MAX; ranks];
    for (rank, w) in all.chunks(4).enumerate() {
        let (i, j) = (usize::try_from(w[2]), usize::try_from(w[3]));
        match (i, j) {
            (Ok(i), Ok(j)) if i < rows && j < cols && map[i * cols + j] == usize::MAX => {
                map[i * cols + j] = rank;
            }
            _ => return Err(bad(format!("rank {rank} inside the context's grid"))),
        }
    }
    let first = |k: usize, n: usize| {
        usize::try_from(desc[k])
            .ok()
            .filter(|&f| f < n)
            .ok_or_else(|| {
                bad(format!(
                    "first process {} below {n}",
                    ["row", "column"][k - 6]
                ))
            })
    };
    let dists = vec![
        Dist::cyclic(desc[4] as usize).starting_at(first(6, rows)?),
        Dist::cyclic(desc[5] as usize).starting_at(first(7, cols)?),
    ];
    let spec = LayoutSpec::new(dists, vec![rows, cols])?;
    let layout = Layout::new(&[desc[2] as usize, desc[3] as usize], &spec)?
        .with_rank_map(map)?
        .with_storage(Order::ColumnMajor);
    Ok(layout)
}

/// The local parts of `a` and `c` as ScaLAPACK takes them: pointers to
/// their first elements, or into `none` for a rank holding nothing (a
/// pointer BLACS never reads).
fn local_parts(
    a: &DistArray<f64>,
    c: &mut DistArray<f64>,
    none: &mut [f64; 1],
) -> (*const c_double, *mut c_double) {
    let src = a.local_slice();
    let src_ptr = if src.is_empty() {
        none.as_ptr()
    } else {
        src.as_ptr()
    };
    let dst = c.local_slice_mut();
    let dst_ptr = if dst.is_empty() {
        none.as_mut_ptr()
    } else {
        dst.as_mut_ptr()
    };
    (src_ptr, dst_ptr)
}

/// `window`, once sure it is 2-D.
///
/// # Errors
///
/// [`RedistError::InvalidArgument`] when it is not.
fn two_d(window: &Window) -> Result<&Window, RedistError> {
    if window.ndim() != 2 {
        return Err(RedistError::InvalidArgument {
            what: "window",
            value: window.to_string(),
            expected: "a 2-D window".into(),
        });
    }
    Ok(window)
}

/// The 1-based ScaLAPACK indices of the 0-based `origin`.
fn one_based(what: [&'static str; 2], origin: &[usize]) -> Result<(c_int, c_int), RedistError> {
    Ok((
        int(what[0], origin[0].saturating_add(1))?,
        int(what[1], origin[1].saturating_add(1))?,
    ))
}

/// ScaLAPACK's `pdgemr2d`: copies the window `window` of `a` (described by
/// `desc_a`) into `b` (`desc_b`), with `context` a context containing every
/// process of both ([`BlacsContext::spanning`]). Origins are 0-based here
/// (1-based in ScaLAPACK). Collective over the context's ranks.
///
/// # Errors
///
/// [`RedistError::InvalidArgument`] when the window is not 2-D or a number
/// exceeds a C `int`. ScaLAPACK checks the rest itself (and stops the job
/// on an inconsistent descriptor).
pub fn pdgemr2d(
    window: &Window,
    a: &DistArray<f64>,
    desc_a: &Descriptor,
    b: &mut DistArray<f64>,
    desc_b: &Descriptor,
    context: &BlacsContext,
) -> Result<(), RedistError> {
    let (ia, ib, shape) = (
        window.source_origin(),
        window.target_origin(),
        two_d(window)?.shape(),
    );
    let (m, n) = (
        int("window rows", shape[0])?,
        int("window columns", shape[1])?,
    );
    let (ia0, ja0) = one_based(["ia", "ja"], ia)?;
    let (ib0, jb0) = one_based(["ib", "jb"], ib)?;
    let mut none = [0.0f64; 1];
    let (src_ptr, dst_ptr) = local_parts(a, b, &mut none);
    // SAFETY: the local slices are the column-major local parts the two
    // descriptors describe (LLD = local rows), alive and not aliased for the
    // call; the descriptors are 9 integers each.
    unsafe {
        Cpdgemr2d(
            m,
            n,
            src_ptr,
            ia0,
            ja0,
            desc_a.as_ptr(),
            dst_ptr,
            ib0,
            jb0,
            desc_b.as_ptr(),
            context.raw(),
        );
    }
    Ok(())
}

/// Which PBLAS routine [`pblas_add`] calls, and with it what `op` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PblasRoutine {
    /// `pdtran`: `op(sub(A)) = sub(A)ᵀ`.
    Tran,
    /// `pdgeadd`, with `TRANS = 'T'` (`op(sub(A)) = sub(A)ᵀ`) when
    /// `transpose`, else `'N'` (`op(sub(A)) = sub(A)`).
    Geadd {
        /// Whether `op` transposes.
        transpose: bool,
    },
}

impl PblasRoutine {
    /// Whether `op` transposes `sub(A)`.
    pub fn transposes(self) -> bool {
        match self {
            PblasRoutine::Tran => true,
            PblasRoutine::Geadd { transpose } => transpose,
        }
    }
}

/// The operands of PBLAS's `sub(C) := β·sub(C) + α·op(sub(A))`: the two
/// scalars and the two matrices, each an ndcyclic array with its
/// descriptor. Both descriptors must be in the same BLACS context
/// (PBLAS's rule).
pub struct AddOperands<'a> {
    /// α, the factor of `op(sub(A))`.
    pub alpha: f64,
    /// The matrix A, read.
    pub a: &'a DistArray<f64>,
    /// A's descriptor.
    pub desc_a: &'a Descriptor,
    /// β, the factor of `sub(C)`'s old values.
    pub beta: f64,
    /// The matrix C, updated in place.
    pub c: &'a mut DistArray<f64>,
    /// C's descriptor.
    pub desc_c: &'a Descriptor,
}

/// PBLAS's `pdtran` and `pdgeadd`: `sub(C) := β·sub(C) + α·op(sub(A))`,
/// `sub(C)` the `M × N` window of C at `(IC, JC)`, `sub(A)` the window of
/// A at `(IA, JA)`, `N × M` when `op` transposes (`pdtran`, or `pdgeadd`
/// with `TRANS = 'T'`), `M × N` otherwise (`pdgeadd` with `'N'`). `window`
/// gives the origins (0-based) and `sub(A)`'s shape. Collective over the
/// context's ranks.
///
/// # Errors
///
/// [`RedistError::InvalidArgument`] when the window is not 2-D or a number
/// exceeds a C `int`. PBLAS checks the rest itself (and stops the job on an
/// inconsistent descriptor).
pub fn pblas_add(
    routine: PblasRoutine,
    window: &Window,
    operands: AddOperands<'_>,
) -> Result<(), RedistError> {
    let AddOperands {
        alpha,
        a,
        desc_a,
        beta,
        c,
        desc_c,
    } = operands;
    let at = AddWindow::new(window, routine.transposes())?;
    let mut none = [0.0f64; 1];
    let (src, dst) = local_parts(a, c, &mut none);
    let call = AddCall {
        at,
        alpha,
        src,
        desc_a: desc_a.as_ptr(),
        beta,
        dst,
        desc_c: desc_c.as_ptr(),
    };
    // SAFETY: the local parts are the column-major local parts the two
    // descriptors describe, alive and not aliased for the call (`a` and `c`
    // are borrowed until it returns); the descriptors are 9 integers each.
    unsafe { call.run(routine) };
    Ok(())
}

/// The integers of a PBLAS call's window: `sub(C)`'s shape `M × N` and the
/// 1-based origins `(IA, JA)` of `sub(A)` and `(IC, JC)` of `sub(C)`.
struct AddWindow {
    m: c_int,
    n: c_int,
    ia: c_int,
    ja: c_int,
    ic: c_int,
    jc: c_int,
}

impl AddWindow {
    /// The integers of `window` (origins 0-based, `sub(A)`'s shape), `sub(C)`
    /// being `sub(A)` transposed when `transpose`.
    ///
    /// # Errors
    ///
    /// [`RedistError::InvalidArgument`] when the window is not 2-D or a
    /// number exceeds a C `int`.
    fn new(window: &Window, transpose: bool) -> Result<AddWindow, RedistError> {
        let shape = two_d(window)?.shape();
        // sub(C) is M × N: sub(A)'s shape, transposed or not.
        let (m, n) = if transpose {
            (
                int("window columns", shape[1])?,
                int("window rows", shape[0])?,
            )
        } else {
            (
                int("window rows", shape[0])?,
                int("window columns", shape[1])?,
            )
        };
        let (ia, ja) = one_based(["ia", "ja"], window.source_origin())?;
        let (ic, jc) = one_based(["ic", "jc"], window.target_origin())?;
        Ok(AddWindow {
            m,
            n,
            ia,
            ja,
            ic,
            jc,
        })
    }
}

/// One call of `pdtran_` or `pdgeadd_`, its arguments as PBLAS takes them.
struct AddCall {
    /// The window's integers.
    at: AddWindow,
    /// α.
    alpha: f64,
    /// A's local part.
    src: *const c_double,
    /// A's descriptor (9 integers).
    desc_a: *const c_int,
    /// β.
    beta: f64,
    /// C's local part.
    dst: *mut c_double,
    /// C's descriptor (9 integers).
    desc_c: *const c_int,
}

impl AddCall {
    /// Calls `routine`'s PBLAS function: `pdtran_`, or `pdgeadd_` with
    /// `TRANS` = `'T'` or `'N'`. Collective over the context's ranks.
    ///
    /// # Safety
    ///
    /// `src` and `dst` point to the column-major local parts `desc_a` and
    /// `desc_c` describe, alive and not aliased for the call; `desc_a` and
    /// `desc_c` point to 9 integers each.
    unsafe fn run(&self, routine: PblasRoutine) {
        let w = &self.at;
        let trans: &std::ffi::CStr = if routine.transposes() { c"T" } else { c"N" };
        // SAFETY: the caller's contract for the matrices and descriptors;
        // every scalar is passed by a pointer to a live value; `trans` is
        // one character, as PBLAS reads it.
        unsafe {
            if routine == PblasRoutine::Tran {
                pdtran_(
                    &w.m,
                    &w.n,
                    &self.alpha,
                    self.src,
                    &w.ia,
                    &w.ja,
                    self.desc_a,
                    &self.beta,
                    self.dst,
                    &w.ic,
                    &w.jc,
                    self.desc_c,
                );
            } else {
                pdgeadd_(
                    trans.as_ptr(),
                    &w.m,
                    &w.n,
                    &self.alpha,
                    self.src,
                    &w.ia,
                    &w.ja,
                    self.desc_a,
                    &self.beta,
                    self.dst,
                    &w.ic,
                    &w.jc,
                    self.desc_c,
                );
            }
        }
    }
}

/// One matrix of a transposition as ndcyclic sees it: its layout, the grid
/// it is distributed over, and where the sub-matrix the operation works on
/// starts (0-based; PBLAS's `(IA, JA)` and `(IC, JC)` are 1-based).
#[derive(Debug, Clone, Copy)]
pub struct SubMatrix<'a> {
    /// The grid the matrix is distributed over.
    pub grid: &'a ProcGrid,
    /// The matrix's layout (2-D).
    pub layout: &'a Layout,
    /// The sub-matrix's first row and column.
    pub origin: [usize; 2],
}

/// ndcyclic's redistribution with `pdtran`'s semantics (and `pdgeadd`'s
/// with `TRANS = 'T'`), on any two 2-D layouts and grids (over one
/// communicator): `sub(C) := β·sub(C) + α·sub(A)ᵀ` with `sub(C)` the
/// `M × N` window (`shape`) of arrays laid out as `c` at `c.origin` and
/// `sub(A)` the `N × M` window of arrays laid out as `a` at `a.origin`.
/// Built once ([`Options::updates`](redist::Options::updates) set), it is
/// executed with [`Redistribution::execute_update_into`](redist::Redistribution::execute_update_into)
/// and an [`Update`](redist::Update) holding α and β (its `conjugate` makes
/// it `p?tranc`). Collective over the grids' communicator.
///
/// ```no_run
/// # fn main() -> Result<(), redist::RedistError> {
/// use dist_array::{DistArray, Layout};
/// use procgrid::ProcGrid;
/// use redist::{Options, Update};
/// use redist_cli::scalapack::{self, SubMatrix};
/// use mpi::topology::Communicator;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let grid = ProcGrid::new(&world, &[1, p])?;
/// let a = Layout::parse(&[300, 200], &format!("cyclic(16),cyclic(16)@1x{p}"))?;
/// let c = Layout::parse(&[200, 300], &format!("cyclic(8),cyclic(32)@1x{p}"))?;
/// // C(0:200, 0:300) := 3·C + 2·A(0:300, 0:200)ᵀ
/// let mut r = scalapack::transposition::<f64>(
///     SubMatrix { grid: &grid, layout: &a, origin: [0, 0] },
///     SubMatrix { grid: &grid, layout: &c, origin: [0, 0] },
///     [200, 300],
///     Options::default(),
/// )?;
/// let src = DistArray::from_fn(&grid, a, |g| g[0] as f64)?;
/// let mut dst = DistArray::from_fn(&grid, c, |_| 1.0)?;
/// r.execute_update_into(&src, &mut dst, Update::new(2.0, 3.0))?;
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// As [`Redistribution::with_permutation`](redist::Redistribution::with_permutation).
pub fn transposition<T: Scalar>(
    a: SubMatrix<'_>,
    c: SubMatrix<'_>,
    shape: [usize; 2],
    options: Options,
) -> Result<Redistribution<T>, RedistError> {
    let [m, n] = shape;
    let window = Window::new(&a.origin, &c.origin, &[n, m])?;
    let options = Options {
        updates: true,
        ..options
    };
    Redistribution::with_permutation(
        a.grid,
        a.layout,
        c.grid,
        c.layout,
        &[1, 0],
        Some(&window),
        options,
    )
}
