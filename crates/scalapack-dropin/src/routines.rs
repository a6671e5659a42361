//! The routines, generic over the element type: `p?gemr2d` and the
//! updates of `p?tran`, `p?tranu`, `p?tranc` and `p?geadd`. Each exchanges
//! and checks the arguments ([`crate::args`]), takes the redistribution
//! from the plan cache or builds it, copies the local parts in, executes,
//! and copies the target's local part back.

use crate::args::{matrix_words, Matrix, MatrixArg, Positions, MATRIX_WORDS};
use crate::blacs::{blacs, Blacs};
use crate::cache::{with_plan, Key};
use crate::context::{context, grid_over, Context, GridCache};
use crate::error::DropinError;
use crate::local::Strided;
use dist_array::{Dist, DistArray, Element, Layout, LayoutSpec, Order};
use mpi::collective::CommunicatorCollectives;
use mpi::topology::Communicator;
use procgrid::ProcGrid;
use redist::{Options, Redistribution, Scalar, Update, Window};
use std::os::raw::c_int;

/// A matrix argument with the caller's local storage.
#[derive(Debug, Clone, Copy)]
pub struct Operand<T> {
    /// The local part's first element.
    pub ptr: *mut T,
    /// Descriptor and sub-matrix origin.
    pub arg: MatrixArg,
    /// Positions in the argument list.
    pub at: Positions,
}

impl<T> Operand<T> {
    /// This argument with the `rows` × `cols` sub-matrix the call takes.
    fn sub_matrix(&self, rows: usize, cols: usize) -> SubMatrixArg<'_> {
        SubMatrixArg {
            arg: &self.arg,
            at: self.at,
            rows,
            cols,
        }
    }
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done by ndcyclic (or nothing to do).
    Done,
    /// A case this library hands to ScaLAPACK's own routine: a grid whose
    /// processes are not the first of the context's.
    HandOver,
}

/// A size argument (`M` or `N`) as passed, and where it stands in the
/// routine's argument list, for ScaLAPACK's `INFO` codes.
#[derive(Debug, Clone, Copy)]
pub struct SizeArg {
    /// The value passed.
    pub value: c_int,
    /// Its position in the argument list (1-based).
    pub position: i32,
}

/// What an update computes: `C := β·C + α·op(A)`.
#[derive(Debug, Clone, Copy)]
pub struct Formula<T> {
    /// `op`, applied to `A`.
    pub op: Op,
    /// `α`, scaling `op(A)`.
    pub alpha: T,
    /// `β`, scaling `C`'s old values.
    pub beta: T,
}

/// How a call uses a matrix's local part.
#[derive(Debug, Clone, Copy)]
struct Access {
    /// Whether the call reads it.
    read: bool,
    /// Whether the call writes it.
    write: bool,
}

/// A matrix argument and the sub-matrix a call takes of it, as the
/// exchange of a call's arguments needs them.
#[derive(Debug, Clone, Copy)]
struct SubMatrixArg<'a> {
    /// The arguments as this rank passes them.
    arg: &'a MatrixArg,
    /// Where they stand in the routine's argument list.
    at: Positions,
    /// Rows of the sub-matrix.
    rows: usize,
    /// Columns of the sub-matrix.
    cols: usize,
}

/// `op` of an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `A` itself.
    Plain,
    /// `Aᵀ`.
    Transpose,
    /// `Aᴴ` (`Aᵀ` for real elements).
    ConjugateTranspose,
}

/// A built call: the redistribution and its two sides.
struct Plan<T: Element> {
    r: Redistribution<T>,
    src: Side<T>,
    dst: Side<T>,
    /// Whether the target's sub-matrix is all of it.
    whole_target: bool,
}

/// One matrix of a plan: its grid and layout, and (made on first need)
/// an array to copy its local part into when the caller's leading
/// dimension exceeds the local rows.
struct Side<T: Element> {
    grid: ProcGrid,
    layout: Layout,
    packed: Option<DistArray<T>>,
}

impl<T: Element> Side<T> {
    /// The side of matrix `m` over `base`, a one-dimensional grid over
    /// the processes of the call whose first ranks are `m`'s.
    /// Grids come from `grids` where given (the context's, for bases that
    /// are the context's own).
    fn new(base: &ProcGrid, m: &Matrix, grids: Option<&GridCache>) -> Result<Side<T>, DropinError> {
        let grid = match grids {
            Some(kept) => kept.grid(base, m.grid)?,
            None => grid_over(base, m.grid)?,
        };
        let dists = vec![
            Dist::cyclic(m.blocks.0).starting_at(m.first.0),
            Dist::cyclic(m.blocks.1).starting_at(m.first.1),
        ];
        let spec = LayoutSpec::new(dists, vec![m.grid.0, m.grid.1])?;
        let layout = Layout::new(&[m.shape.0, m.shape.1], &spec)?
            .with_rank_map(m.ranks.clone())?
            .with_storage(Order::ColumnMajor);
        Ok(Side {
            grid,
            layout,
            packed: None,
        })
    }

    /// This rank's local part in the caller's storage at `ptr` with
    /// leading dimension `lld`.
    fn strided(&self, ptr: *mut T, lld: c_int) -> Strided<T> {
        let shape = self
            .grid
            .rank()
            .and_then(|rank| self.layout.local_shape(rank).ok())
            .unwrap_or_default();
        let rows = shape.first().copied().unwrap_or(0);
        Strided {
            ptr,
            rows,
            cols: shape.get(1).copied().unwrap_or(0),
            lld: usize::try_from(lld).unwrap_or(0).max(rows),
        }
    }

    /// Runs `f` on the caller's local part as an array: in place when its
    /// leading dimension is the local rows, else through the packed copy
    /// (filled first when `access.read`, copied back after when
    /// `access.write`).
    ///
    /// # Safety
    ///
    /// `ptr` and `lld` describe the caller's local part of this matrix
    /// (checked: `lld` covers the local rows), not otherwise accessed
    /// while `f` runs; not written unless `access.write`.
    unsafe fn with_local<R>(
        &mut self,
        ptr: *mut T,
        lld: c_int,
        access: Access,
        f: impl FnOnce(&mut DistArray<T>) -> Result<R, DropinError>,
    ) -> Result<R, DropinError> {
        let part = self.strided(ptr, lld);
        if part.lld == part.rows || part.rows * part.cols == 0 {
            let len = part.rows * part.cols;
            // SAFETY: the caller's part, `len` elements in one run.
            let mut view =
                unsafe { DistArray::from_raw_parts(&self.grid, self.layout.clone(), ptr, len)? };
            return f(&mut view);
        }
        let packed = match &mut self.packed {
            Some(p) => p,
            none => none.insert(DistArray::zeros(&self.grid, self.layout.clone())?),
        };
        if access.read {
            // SAFETY: the caller's contract.
            unsafe { part.read_into(packed.local_slice_mut()) };
        }
        let result = f(packed)?;
        if access.write {
            // SAFETY: the caller's contract.
            unsafe { part.write_from(packed.local_slice()) };
        }
        Ok(result)
    }
}

/// Exchanges the arguments of `a` and `b` over the context's processes
/// and checks them: every rank gets the same two matrices or the same
/// error.
fn exchange(
    blacs: &Blacs,
    ctx: &Context,
    routine: &'static str,
    a: SubMatrixArg<'_>,
    b: SubMatrixArg<'_>,
) -> Result<(Matrix, Matrix, Vec<c_int>), DropinError> {
    let mut mine = Vec::with_capacity(2 * MATRIX_WORDS);
    mine.extend(matrix_words(blacs, a.arg));
    mine.extend(matrix_words(blacs, b.arg));
    let comm = ctx.base.communicator();
    let mut all = vec![0; mine.len() * ctx.base.size()];
    comm.all_gather_into(&mine[..], &mut all[..]);
    let width = mine.len();
    let ma = Matrix::agree(&all, width, 0, routine, a.at, a.rows, a.cols)?;
    let mb = Matrix::agree(&all, width, MATRIX_WORDS, routine, b.at, b.rows, b.cols)?;
    Ok((ma, mb, all))
}

/// Reports `e` as ScaLAPACK would (an argument error through `pxerbla`, on
/// the context's first rank) and passes it on.
fn reported(blacs: &Blacs, ctx: &Context, ictxt: c_int, e: DropinError) -> DropinError {
    if let DropinError::Argument {
        routine,
        position,
        what,
    } = &e
    {
        if ctx.base.rank() == Some(0) {
            blacs.report(ictxt, routine, *position, what);
        }
    }
    e
}

impl<T: Element> Plan<T> {
    /// The plan moving the `rows` × `cols` sub-matrix of `a` (its
    /// transpose, `cols` × `rows` in `a`, when `transpose`) onto `b`'s,
    /// over the processes of `base` (with the context's cached `grids`,
    /// if any).
    fn build(
        base: &ProcGrid,
        grids: Option<&GridCache>,
        a: &Matrix,
        b: &Matrix,
        (rows, cols): (usize, usize),
        transpose: bool,
        options: Options,
    ) -> Result<Plan<T>, DropinError> {
        let (src, dst) = (Side::new(base, a, grids)?, Side::new(base, b, grids)?);
        let (from, to) = ([a.origin.0, a.origin.1], [b.origin.0, b.origin.1]);
        let (ga, la, gb, lb) = (&src.grid, &src.layout, &dst.grid, &dst.layout);
        let r = if transpose {
            let window = Window::new(&from, &to, &[cols, rows])?;
            Redistribution::with_permutation(ga, la, gb, lb, &[1, 0], Some(&window), options)?
        } else {
            let window = Window::new(&from, &to, &[rows, cols])?;
            Redistribution::with_window(ga, la, gb, lb, &window, options)?
        };
        let whole_target = b.origin == (0, 0) && b.shape == (rows, cols);
        Ok(Plan {
            r,
            src,
            dst,
            whole_target,
        })
    }

    /// Runs `exec` on the caller's local parts of `a` and `b` (the target
    /// read first unless all of it is written without reading it,
    /// `overwrites`).
    fn run(
        &mut self,
        a: &Operand<T>,
        b: &Operand<T>,
        overwrites: bool,
        exec: impl FnOnce(
            &mut Redistribution<T>,
            &DistArray<T>,
            &mut DistArray<T>,
        ) -> Result<(), redist::RedistError>,
    ) -> Result<Outcome, DropinError> {
        let Plan {
            r,
            src,
            dst,
            whole_target,
        } = self;
        let read_target = !(*whole_target && overwrites);
        // SAFETY: the caller's local parts, as its descriptors say
        // (checked: LLD covers the local rows); A is only read.
        unsafe {
            let read_only = Access {
                read: true,
                write: false,
            };
            let written = Access {
                read: read_target,
                write: true,
            };
            src.with_local(a.ptr, a.arg.desc[8], read_only, |from| {
                dst.with_local(b.ptr, b.arg.desc[8], written, |to| Ok(exec(r, from, to)?))
            })?;
        }
        Ok(Outcome::Done)
    }
}

/// A numbering of the `size` processes (new number of each, by old
/// number) that puts both grids' processes first: the smaller grid's, then
/// the rest of the larger's, then the others, each in their old order.
/// None when neither grid holds the other's processes.
fn nested_order(a: &Matrix, b: &Matrix, size: usize) -> Option<Vec<usize>> {
    let (small, large) = if a.ranks.len() <= b.ranks.len() {
        (a, b)
    } else {
        (b, a)
    };
    if !small.ranks.iter().all(|r| large.ranks.contains(r)) {
        return None;
    }
    let mut first = small.ranks.clone();
    first.sort_unstable();
    let mut rest: Vec<usize> = large
        .ranks
        .iter()
        .copied()
        .filter(|r| !first.contains(r))
        .collect();
    rest.sort_unstable();
    let others: Vec<usize> = (0..size)
        .filter(|r| !first.contains(r) && !rest.contains(r))
        .collect();
    let mut order = vec![usize::MAX; size];
    for (new, old) in first.into_iter().chain(rest).chain(others).enumerate() {
        order[old] = new;
    }
    Some(order)
}

/// A one-dimensional grid over `base`'s processes numbered as `order`
/// says. Collective over them.
fn renumbered_base(base: &ProcGrid, order: &[usize]) -> Result<ProcGrid, DropinError> {
    let comm = base.communicator();
    let me = usize::try_from(comm.rank()).unwrap_or(0);
    let key = c_int::try_from(order[me]).unwrap_or(c_int::MAX);
    let split = comm
        .split_by_color_with_key(mpi::topology::Color::with_value(0), key)
        .ok_or_else(|| DropinError::Unsupported("renumbering the processes failed".into()))?;
    Ok(ProcGrid::new(&split, &[order.len()])?)
}

/// Size argument `size` as `usize`, or the error ScaLAPACK gives.
fn count(routine: &'static str, size: SizeArg) -> Result<usize, DropinError> {
    let SizeArg { value, position } = size;
    usize::try_from(value).map_err(|_| DropinError::Argument {
        routine,
        position,
        what: format!("{value} must be ≥ 0"),
    })
}

/// `B(ib:ib+m-1, jb:jb+n-1) := A(ia:ia+m-1, ja:ja+n-1)` (`p?gemr2d`),
/// collective over the processes of `ictxt`, which holds every process
/// of both grids.
///
/// # Errors
///
/// [`DropinError::Argument`] for a bad argument (reported through
/// `pxerbla` first), and the errors of building or executing the
/// redistribution.
pub fn gemr2d<T: Element>(
    routine: &'static str,
    m: c_int,
    n: c_int,
    a: Operand<T>,
    b: Operand<T>,
    ictxt: c_int,
) -> Result<Outcome, DropinError> {
    let blacs = blacs()?;
    if m == 0 || n == 0 || blacs.gridinfo(ictxt).me.0 < 0 {
        return Ok(Outcome::Done);
    }
    let ctx = context(blacs, ictxt)?;
    let checked = (|| {
        let size = |value, position| count(routine, SizeArg { value, position });
        let (mu, nu) = (size(m, 1)?, size(n, 2)?);
        let (sub_a, sub_b) = (a.sub_matrix(mu, nu), b.sub_matrix(mu, nu));
        let (ma, mb, all) = exchange(blacs, &ctx, routine, sub_a, sub_b)?;
        Ok((mu, nu, ma, mb, all))
    })();
    let (mu, nu, ma, mb, all) = checked.map_err(|e| reported(blacs, &ctx, ictxt, e))?;
    // Grids on other processes than the first: the processes renumbered
    // so that both are, where one grid's processes hold the other's.
    let order = if ma.on_first_ranks() && mb.on_first_ranks() {
        None
    } else {
        match nested_order(&ma, &mb, ctx.base.size()) {
            Some(order) => Some(order),
            None => return Ok(Outcome::HandOver),
        }
    };
    let key = Key {
        routine,
        contexts: vec![ictxt, a.arg.desc[1], b.arg.desc[1]],
        arguments: all,
    };
    // The caller's storage is private memory: ranks of a node cannot read
    // each other's, so no node-direct set-up and no notes.
    let options = Options {
        node_direct: false,
        ..Options::default()
    };
    let build = || match &order {
        None => Plan::build(
            &ctx.base,
            Some(&ctx.grids),
            &ma,
            &mb,
            (mu, nu),
            false,
            options,
        ),
        Some(order) => {
            let base = renumbered_base(&ctx.base, order)?;
            let (ma, mb) = (ma.renumbered(order), mb.renumbered(order));
            Plan::build(&base, None, &ma, &mb, (mu, nu), false, options)
        }
    };
    with_plan(key, build, |plan: &mut Plan<T>| {
        plan.run(&a, &b, true, |r, from, to| {
            r.execute_into_unchecked(from, to)
        })
    })
}

/// `C(ic:ic+m-1, jc:jc+n-1) := β·C + α·op(A)` with `A`'s sub-matrix `n` × `m`
/// for a transposing `op`, `m` × `n` otherwise (`p?tran`, `p?tranu`,
/// `p?tranc`, `p?geadd`). Collective over the processes of the matrices'
/// context (one for both, as PBLAS requires).
///
/// # Errors
///
/// As [`gemr2d`]; [`DropinError::Argument`] also when `A` and `C` are in
/// different contexts.
pub fn update<T: Scalar>(
    routine: &'static str,
    handover: bool,
    m: SizeArg,
    n: SizeArg,
    formula: Formula<T>,
    a: Operand<T>,
    c: Operand<T>,
) -> Result<Outcome, DropinError> {
    let Formula { op, alpha, beta } = formula;
    let blacs = blacs()?;
    let ictxt = c.arg.desc[1];
    if ictxt < 0 || blacs.gridinfo(ictxt).me.0 < 0 {
        // PBLAS calls this an error of DESCC's context (reported, and the
        // job aborted, outside its testers): its routine decides.
        return Ok(if handover {
            Outcome::HandOver
        } else {
            Outcome::Done
        });
    }
    let ctx = context(blacs, ictxt)?;
    let checked = (|| {
        let (mu, nu) = (count(routine, m)?, count(routine, n)?);
        if a.arg.desc[1] != ictxt {
            return Err(DropinError::Argument {
                routine,
                position: 100 * a.at.desc + 2,
                what: "A and C must be in the same context".into(),
            });
        }
        let (ra, ca) = if op == Op::Plain { (mu, nu) } else { (nu, mu) };
        let (sub_a, sub_c) = (a.sub_matrix(ra, ca), c.sub_matrix(mu, nu));
        let (ma, mc, all) = exchange(blacs, &ctx, routine, sub_a, sub_c)?;
        Ok((mu, nu, ma, mc, all))
    })();
    let (mu, nu, ma, mc, all) = match checked {
        Ok(agreed) => agreed,
        // Every rank has the same verdict: all hand the call to PBLAS,
        // which reports it with its own codes.
        Err(DropinError::Argument { .. }) if handover => return Ok(Outcome::HandOver),
        Err(e) => return Err(reported(blacs, &ctx, ictxt, e)),
    };
    if mu == 0 || nu == 0 {
        return Ok(Outcome::Done);
    }
    let key = Key {
        routine,
        contexts: vec![ictxt],
        arguments: all,
    };
    let options = Options {
        updates: true,
        node_direct: false,
        ..Options::default()
    };
    let transpose = op != Op::Plain;
    let build = || {
        let grids = Some(&ctx.grids);
        Plan::build(&ctx.base, grids, &ma, &mc, (mu, nu), transpose, options)
    };
    let update = Update {
        alpha,
        beta,
        conjugate: op == Op::ConjugateTranspose,
    };
    with_plan(key, build, |plan: &mut Plan<T>| {
        plan.run(&a, &c, beta == T::zero(), |r, from, to| {
            r.execute_update_into(from, to, update)
        })
    })
}
