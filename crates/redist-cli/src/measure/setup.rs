//! Everything a run sets up before its arrays exist: the check that the
//! job has ranks enough, the two layouts, the grids over the job's ranks,
//! the redistribution built with the options of the command line (and what
//! building it cost) — [`job`] sets them up in that order, into a [`Job`] —
//! and the memory check.
//!
//! Every check up to the memory check is pure (the same arguments give the
//! same verdict on every rank) or agreed by a collective, so every rank
//! returns the same error.

use super::args::{Baseline, RunArgs};
use super::batch::Side;
use super::timing::MEMCPY_MAX_ELEMENTS;
use super::window::window_for;
use crate::collective::max_over;
use crate::error::CliError;
use crate::memory;
use crate::shape::layout_for;
use dist_array::{Element, Layout};
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::ProcGrid;
use redist::{Options, Redistribution, Window};
use std::time::Instant;

/// What a run has set up before its arrays exist.
pub(crate) struct Job<T: Element> {
    /// The job's ranks.
    pub ranks: usize,
    /// The source layout.
    pub from: Layout,
    /// The window the run moves; the whole array when `None`.
    pub window: Option<Window>,
    /// The source's grid.
    pub grid_a: ProcGrid,
    /// The target's grid (whose layout is `r`'s).
    pub grid_b: ProcGrid,
    /// The redistribution.
    pub r: Redistribution<T>,
    /// What building `r` cost.
    pub cost: BuildCost,
}

/// Sets up the run of `args` on `world`, in order: the rank count, the
/// layouts, the window, the grids, the redistribution. Collective.
pub(crate) fn job<T: Element>(
    args: &RunArgs,
    world: &SimpleCommunicator,
) -> Result<Job<T>, CliError> {
    let ranks = check_rank_count(args, world)?;
    let (from, to) = layouts::<T>(args)?;
    let window = window_for(args, from.shape(), to.shape())?;
    let (grid_a, grid_b) = grids(&from, &to, world)?;
    let source = Side {
        grid: &grid_a,
        layout: &from,
    };
    let target = Side {
        grid: &grid_b,
        layout: &to,
    };
    let (r, cost) = build_redistribution::<T>(args, source, target, window.as_ref())?;
    Ok(Job {
        ranks,
        from,
        window,
        grid_a,
        grid_b,
        r,
        cost,
    })
}

/// The ranks of `world`, once sure the layouts' grids fit in them. Checked
/// before the layouts are built: a layout keeps a rank map.
fn check_rank_count(args: &RunArgs, world: &SimpleCommunicator) -> Result<usize, CliError> {
    let ranks = usize::try_from(world.size()).unwrap_or(0);
    if args.from.ranks().max(args.to.ranks()) > ranks {
        return Err(CliError::TooFewRanks {
            grids: format!("{} and {}", args.from, args.to),
            ranks,
        });
    }
    Ok(ranks)
}

/// The source and target layouts of the command line; with the `pdgemr2d`
/// baseline, once sure it can run, both stored column-major.
fn layouts<T: Element>(args: &RunArgs) -> Result<(Layout, Layout), CliError> {
    let mut from = layout_for(&args.shape, &args.from)?;
    let mut to = match args.permutation() {
        Some(p) => layout_for(
            &crate::shape::Shape(permuted_shape(&args.shape, &p)?),
            &args.to,
        )?,
        None => layout_for(args.to_shape.as_ref().unwrap_or(&args.shape), &args.to)?,
    };
    let scalapack = [Baseline::Pdgemr2d, Baseline::Pdtran, Baseline::Pdgeadd];
    if args.batch.is_some() && scalapack.iter().any(|b| args.baseline.contains(b)) {
        return Err(CliError::Unsupported {
            what: "--batch with a ScaLAPACK baseline",
            expected: "one array (the baselines move one)".to_string(),
        });
    }
    if args.batch.is_some() && args.baseline.contains(&Baseline::Pattern) {
        return Err(CliError::Unsupported {
            what: "--batch with --baseline pattern",
            expected: "one array (the pattern copies one)".to_string(),
        });
    }
    if !args.batch_types.is_empty() && args.updates() {
        return Err(CliError::Unsupported {
            what: "--batch-types with --alpha, --beta or --conjugate",
            expected: "a mixed batch that overwrites its targets".to_string(),
        });
    }
    let pblas = [Baseline::Pdtran, Baseline::Pdgeadd];
    for (b, routine) in pblas
        .into_iter()
        .zip([crate::pblas::Routine::Tran, crate::pblas::Routine::Geadd])
    {
        if args.baseline.contains(&b) {
            crate::pblas::check_available::<T>(routine, &from, args.permutation().as_deref())?;
            from = from.with_storage(dist_array::Order::ColumnMajor);
            to = to.with_storage(dist_array::Order::ColumnMajor);
        }
    }
    if args.baseline.contains(&Baseline::Pdgemr2d) {
        if args.permutation().is_some() {
            return Err(CliError::Unsupported {
                what: "--baseline pdgemr2d",
                expected: "arrays of the same axes (pdgemr2d does not transpose)".to_string(),
            });
        }
        crate::pdgemr2d::check_available::<T>(&from)?;
        // ScaLAPACK's local parts are column-major; so are both arrays here.
        from = from.with_storage(dist_array::Order::ColumnMajor);
        to = to.with_storage(dist_array::Order::ColumnMajor);
    }
    Ok((from, to))
}

/// The target's shape under `permutation`: source dimension `d`'s extent
/// at `permutation[d]`. Pure.
fn permuted_shape(shape: &[usize], permutation: &[usize]) -> Result<Vec<usize>, CliError> {
    let k = shape.len();
    let mut out = vec![usize::MAX; k];
    let valid = permutation.len() == k
        && permutation
            .iter()
            .all(|&a| a < k && std::mem::replace(&mut out[a], 0) == usize::MAX);
    if !valid {
        return Err(CliError::BadWindow {
            what: "--permute",
            value: format!("{permutation:?}"),
            expected: format!("a permutation of 0..{k}, one entry per dimension of --shape"),
        });
    }
    for (d, &a) in permutation.iter().enumerate() {
        out[a] = shape[d];
    }
    Ok(out)
}

/// The source grid for `from` over the first ranks of `world`, and the
/// target grid for `to` over the same communicator, so data can move
/// between them. Collective over `world`.
fn grids(
    from: &Layout,
    to: &Layout,
    world: &SimpleCommunicator,
) -> Result<(ProcGrid, ProcGrid), CliError> {
    let grid_a = grid_for(from, world, None)?;
    let grid_b = grid_for(to, world, Some(&grid_a))?;
    Ok((grid_a, grid_b))
}

/// A grid for `layout` over the first ranks of `world` (sharing `base` when given).
pub(crate) fn grid_for(
    layout: &Layout,
    world: &SimpleCommunicator,
    base: Option<&ProcGrid>,
) -> Result<ProcGrid, CliError> {
    let builder = ProcGrid::builder(layout.grid_extents()).subset(true);
    Ok(match base {
        Some(b) => builder.build_sharing(b)?,
        None => builder.build(world)?,
    })
}

/// The library's options as the command line sets them.
pub(crate) fn options_for(args: &RunArgs) -> Options {
    Options {
        remap: args.remap,
        strategy: args.strategy,
        datatype_min_run: args.datatype_min_run,
        direct_min_run: args.direct_min_run,
        node_direct: !args.no_node_direct,
        streaming: args.streaming,
        updates: args.updates(),
        wisdom: args.wisdom.clone(),
        ..Options::default()
    }
}

/// What building the redistribution cost.
pub(crate) struct BuildCost {
    /// This rank's time to build it, in milliseconds.
    pub plan_ms: f64,
    /// The slowest rank's time to build it (building is collective).
    pub build_ms: f64,
    /// The largest copy program over the ranks, in bytes.
    pub program_bytes: u64,
    /// The most any rank keeps for the redistribution, in bytes: its part
    /// of the plan and its copy programs.
    pub plan_bytes: u64,
    /// Elements moved between ranks, over all ranks.
    pub moved: usize,
    /// What crosses from node to node.
    pub between_nodes: BetweenNodes,
}

/// Where a job's ranks are and what crosses between its nodes (a node as
/// [`procgrid::Node`] finds it: ranks that share a kernel and namespaces).
pub(crate) struct BetweenNodes {
    /// Nodes the job's ranks are on.
    pub nodes: usize,
    /// Messages from a rank on one node to a rank on another, over all ranks.
    pub messages: usize,
    /// Elements those messages carry.
    pub elements: usize,
}

impl BetweenNodes {
    /// The figures of `r` built on `grid_a` (whose communicator numbers
    /// the plan's peers). Collective over that communicator.
    fn of<T: Element>(r: &Redistribution<T>, grid_a: &ProcGrid) -> BetweenNodes {
        let comm = grid_a.communicator();
        let node = grid_a.node();
        let me = usize::try_from(comm.rank()).unwrap_or(usize::MAX);
        // One rank per node counts it: the node's first.
        let first = node.ranks().first() == Some(&me);
        let far = r
            .rank_plan()
            .sends()
            .iter()
            .filter(|l| !node.contains(l.peer));
        let (messages, elements) = far.fold((0u64, 0u64), |(m, e), l| (m + 1, e + l.len as u64));
        let mut sums = [0u64; 3];
        procgrid::waits::all_reduce_into(
            comm,
            &[u64::from(first), messages, elements][..],
            &mut sums[..],
            SystemOperation::sum(),
        );
        let [nodes, messages, elements] = sums;
        let size = |x: u64| usize::try_from(x).unwrap_or(usize::MAX);
        BetweenNodes {
            nodes: size(nodes),
            messages: size(messages),
            elements: size(elements),
        }
    }
}

/// Builds the redistribution from `source` to `target` of `window` (the
/// whole array when `None`), with the options of `args`, and times it.
/// Collective over the job's ranks.
fn build_redistribution<T: Element>(
    args: &RunArgs,
    source: Side<'_>,
    target: Side<'_>,
    window: Option<&Window>,
) -> Result<(Redistribution<T>, BuildCost), CliError> {
    let (grid_a, from) = (source.grid, source.layout);
    let (grid_b, to) = (target.grid, target.layout);
    let options = options_for(args);
    let start = Instant::now();
    let r = match (args.permutation(), window) {
        (Some(p), w) => {
            Redistribution::<T>::with_permutation(grid_a, from, grid_b, to, &p, w, options)?
        }
        (None, None) => Redistribution::<T>::new(grid_a, from, grid_b, to, options)?,
        (None, Some(w)) => Redistribution::<T>::with_window(grid_a, from, grid_b, to, w, options)?,
    };
    let plan_ms = start.elapsed().as_secs_f64() * 1e3;
    let comm = grid_a.communicator();
    // Building is collective: the slowest rank's time, the largest program.
    let build_ms = max_over(comm, plan_ms);
    let program_bytes = max_over(comm, r.program_bytes() as u64);
    let kept = r.program_bytes() + r.rank_plan().heap_bytes();
    let plan_bytes = max_over(comm, kept as u64);
    let (_, moved, _) = r.totals();
    let between_nodes = BetweenNodes::of(&r, grid_a);
    let cost = BuildCost {
        plan_ms,
        build_ms,
        program_bytes,
        plan_bytes,
        moved,
        between_nodes,
    };
    Ok((r, cost))
}

/// Refuses, on every rank alike, a run whose arrays and buffers do not fit
/// in memory, before any of them is allocated: each rank adds up the bytes
/// it needs (its source and target local parts, the `memcpy` copy of its
/// source part, the baseline's buffers) and compares the largest need with
/// the smallest share of memory ([`memory::available_per_rank`]).
pub(super) fn check_memory<T: Element>(
    comm: &SimpleCommunicator,
    from: &Layout,
    to: &Layout,
    bare: Option<&Result<redist::BareAlltoallv<T>, redist::RedistError>>,
) -> Result<(), CliError> {
    // The local parts DistArray allocates: none on ranks outside a grid.
    // (A rank the layout cannot size would need everything: the all-reduce
    // below then refuses on every rank, not on this one alone.)
    let rank = usize::try_from(comm.rank()).unwrap_or(usize::MAX);
    let local = |l: &Layout| {
        if rank < l.ranks() {
            l.local_len(rank).unwrap_or(usize::MAX)
        } else {
            0
        }
    };
    let (source, target) = (local(from), local(to));
    let copy = if source <= MEMCPY_MAX_ELEMENTS {
        source
    } else {
        0
    };
    let baseline = match bare {
        Some(Ok(b)) => [b.send_len(), b.recv_len()],
        _ => [0, 0],
    };
    let need = memory::bytes_for(
        std::mem::size_of::<T>(),
        &[source, target, copy, baseline[0], baseline[1]],
    );
    let available = memory::available_per_rank();
    // One all-reduce agrees on both: the largest need and, as the largest
    // shortfall from u64::MAX, the smallest share.
    let mine = [need, u64::MAX - available];
    let mut all = [0u64; 2];
    procgrid::waits::all_reduce_into(comm, &mine[..], &mut all[..], SystemOperation::max());
    let (needed, available) = (all[0], u64::MAX - all[1]);
    if needed <= available {
        return Ok(());
    }
    let mut what = "the source and target local parts and a copy of the source part".to_string();
    // Agreed: BareAlltoallv::new gives every rank the same verdict.
    if matches!(bare, Some(Ok(_))) {
        what += " (and the baseline's send and receive buffers)";
    }
    Err(CliError::OutOfMemory {
        needed,
        available,
        what,
    })
}
