//! The [`Redistribution`] object: what a rank holds of a redistribution
//! once built, how it is built (the constructors; the steps are in
//! `build.rs`), and what it tells of itself. Executing it is in
//! `execute.rs`.

use super::any_exchange::AnyExchange;
use super::build;
use super::decide::Settled;
use super::exchange::Exchange;
use super::figures::Figures;
use super::messages::RankMessages;
use super::route;
use crate::error::RedistError;
use crate::options::{Options, Strategy};
use dist_array::{DistArray, Element, Layout};
use mpi::collective::SystemOperation;
use procgrid::ProcGrid;
use redist_plan::error::PlanError;
use redist_plan::options::Remap;
use redist_plan::padding::Padding;
use redist_plan::part::RankPart;
use redist_plan::plan::{RankPlan, Window};
use redist_plan::schedule::RankSchedule;
use std::fmt;

/// A redistribution from one layout to another, planned once and executed
/// many times.
///
/// Building it and executing it are collective over the grids'
/// communicator.
///
/// ```
/// use dist_array::{DistArray, Layout};
/// use procgrid::ProcGrid;
/// use redist::{Options, Redistribution, Strategy};
/// use mpi::topology::Communicator;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let rows = ProcGrid::new(&world, &[p, 1]).unwrap();
/// let cols = ProcGrid::builder(&[1, p]).build_sharing(&rows).unwrap();
/// let from = Layout::parse(&[6, 5], &format!("block,*@{p}x1")).unwrap();
/// let to = Layout::parse(&[6, 5], &format!("*,block@1x{p}")).unwrap();
/// let mut r = Redistribution::<f64>::new(&rows, &from, &cols, &to, Options::default()).unwrap();
/// let a = DistArray::from_fn(&rows, from, |g| (g[0] * 10 + g[1]) as f64).unwrap();
/// let b = r.execute(&a).unwrap();
/// assert_eq!(b.gather(0).unwrap(), a.gather(0).unwrap());
/// ```
pub struct Redistribution<T: Element> {
    /// The target layout, with the rank map chosen.
    pub(super) target: Layout,
    /// Where the axes are permuted: per source dimension, the target's.
    pub(super) target_axes: Option<Vec<usize>>,
    /// Whether executions may update the target ([`Options::updates`]).
    pub(super) updates: bool,
    /// The ghost layers around the arrays' local parts it was planned for
    /// ([`Options::padding`]; the target's in its own axis order).
    pub(super) padding: Padding,
    /// This rank's plan: its messages, rows and columns (with a
    /// permutation, the target seen in the source's axis order).
    pub(super) plan: RankPlan,
    /// Its steps, for `scheduled`.
    pub(super) schedule: Option<RankSchedule>,
    /// What every rank learnt of the others when the ranks agreed.
    pub(super) figures: Figures,
    pub(super) source_grid: ProcGrid,
    pub(super) target_grid: ProcGrid,
    /// The exchange that runs, as the ranks settled it.
    pub(super) settled: Settled,
    /// This rank's copy programs and buffer slots.
    pub(super) messages: RankMessages,
    /// The exchange, with its buffers and state.
    pub(super) exchange: AnyExchange<T>,
    /// Executions begun, counted up to the second: small messages' lines
    /// are listed then (`execute.rs`).
    pub(super) executions: u8,
    /// What building warned of (a wisdom file not used), alike on every rank.
    pub(super) warnings: Vec<String>,
    /// The measured choice it runs, where one decided.
    pub(super) measured: Option<crate::tune::Measured>,
}

impl<T: Element> Redistribution<T> {
    /// Plans the redistribution of arrays laid out as `source` on
    /// `source_grid` into `target` on `target_grid`. The two grids must be
    /// built over the same communicator (the same grid, or one built with
    /// [`GridBuilder::build_sharing`](procgrid::GridBuilder::build_sharing)).
    /// Collective over that communicator: every rank of it calls `new`,
    /// with the same layouts, grids, options and element type.
    ///
    /// The ranks agree before anything else communicates: one all-reduce of
    /// each rank's verdict and of a fingerprint of its arguments, so bad
    /// arguments on any rank give an error on every rank.
    ///
    /// # Errors
    ///
    /// - [`RedistError::InvalidArgument`]: grids over different
    ///   communicators, `max_message_elements` outside `1..=2^31-1`, or the
    ///   `alltoallv` strategy where a rank exchanges more than 2^31-1
    ///   elements;
    /// - [`DistError::GridMismatch`](dist_array::DistError::GridMismatch)
    ///   (in [`RedistError::Dist`]): a layout's grid extents are not its
    ///   grid's;
    /// - [`PlanError::ShapeMismatch`], [`PlanError::ExtentMismatch`]: the
    ///   layouts have different shapes;
    /// - [`PlanError::Remap`]: `Remap::ClosedForm` where no closed form
    ///   applies;
    /// - [`RedistError::Limit`]: a rank's part of the plan too large to hold
    ///   (see [`RankPlan::new`]);
    /// - [`RedistError::Disagreement`]: ranks passed different arguments;
    /// - [`RedistError::OtherRank`]: this rank's arguments were fine, another
    ///   rank's were not.
    pub fn new(
        source_grid: &ProcGrid,
        source: &Layout,
        target_grid: &ProcGrid,
        target: &Layout,
        options: Options,
    ) -> Result<Redistribution<T>, RedistError> {
        // Arrays of different shapes are a ShapeMismatch, not a window that
        // does not fit.
        let shapes = if source.shape() == target.shape() {
            Ok(())
        } else {
            Err(PlanError::ShapeMismatch {
                source_shape: source.shape().to_vec(),
                target_shape: target.shape().to_vec(),
            }
            .into())
        };
        let window = Window::whole(source.shape());
        let request = build::Request {
            source_grid,
            source,
            target_grid,
            target,
            window: &window,
            options: &options,
            permutation: None,
        };
        Self::build(&request, shapes)
    }

    /// Plans the redistribution of the array `source` into the array
    /// `target` — or of any arrays laid out, placed and padded as they
    /// are: their layouts and grids, as [`new`](Self::new) takes them, and
    /// their ghost layers ([`DistArray::ghost_widths`], the same on every
    /// rank), which set `options.padding` (whatever it held). Executions
    /// read `source`'s interior and write `target`'s, and leave every ghost
    /// cell as it was; nothing moves yet. The target array exists, so its
    /// layout is kept: `options.remap` must be [`Remap::None`](crate::Remap::None).
    /// Collective, as [`new`](Self::new).
    ///
    /// ```
    /// use dist_array::{DistArray, Layout};
    /// use procgrid::ProcGrid;
    /// use redist::{Options, Redistribution};
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let p = world.size() as usize;
    /// let rows = ProcGrid::new(&world, &[p, 1]).unwrap();
    /// let cols = ProcGrid::builder(&[1, p]).build_sharing(&rows).unwrap();
    /// let from = Layout::parse(&[6, 5], &format!("block,*@{p}x1")).unwrap();
    /// let to = Layout::parse(&[6, 5], &format!("*,block@1x{p}")).unwrap();
    /// // A stencil's field, one ghost layer around its rows' blocks ...
    /// let u = DistArray::from_fn(&rows, from, |g| (10 * g[0] + g[1]) as f64)
    ///     .and_then(|u| u.with_ghosts(&[1, 1]))
    ///     .unwrap();
    /// // ... into column blocks with two ghost layers along the columns, all -1.
    /// let mut v = DistArray::zeros_with_ghosts(&cols, to, &[0, 2]).unwrap();
    /// v.padded_mut().fill(-1.0);
    /// let mut r = Redistribution::between(&u, &v, Options::default()).unwrap();
    /// r.execute_into(&u, &mut v).unwrap();
    /// assert_eq!(v.gather(0).unwrap(), u.gather(0).unwrap()); // the interiors
    /// let ghosts = v.padded().iter().filter(|&&x| x == -1.0).count();
    /// assert_eq!(ghosts, v.padded().len() - v.local().len()); // left alone
    /// ```
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), and [`RedistError::InvalidArgument`] (on
    /// every rank alike) when `options.remap` is not `Remap::None`;
    /// [`PlanError::ShapeMismatch`] when the arrays' shapes differ.
    pub fn between(
        source: &DistArray<T>,
        target: &DistArray<T>,
        options: Options,
    ) -> Result<Redistribution<T>, RedistError> {
        let options = Options {
            padding: Padding::new(source.ghost_widths(), target.ghost_widths()),
            ..options
        };
        let (from, to) = (source.layout(), target.layout());
        let mut verdict = Ok(());
        if options.remap != Remap::None {
            verdict = Err(RedistError::InvalidArgument {
                what: "remap",
                value: options.remap.to_string(),
                expected: "none: Redistribution::between keeps the target array's layout"
                    .to_string(),
            });
        } else if from.shape() != to.shape() {
            verdict = Err(PlanError::ShapeMismatch {
                source_shape: from.shape().to_vec(),
                target_shape: to.shape().to_vec(),
            }
            .into());
        }
        let window = Window::whole(from.shape());
        let request = build::Request {
            source_grid: source.grid(),
            source: from,
            target_grid: target.grid(),
            target: to,
            window: &window,
            options: &options,
            permutation: None,
        };
        Self::build(&request, verdict)
    }

    /// Plans the redistribution of arrays laid out as `source` into arrays
    /// with their axes permuted, laid out as `target`: source dimension `d`
    /// becomes target dimension `permutation[d]`, so `B[i_π(0), …,
    /// i_π(k-1)] = A[i_0, …, i_(k-1)]` with π = `permutation` and the
    /// target's shape the source's permuted that way. The 2-D transpose is
    /// `[1, 0]`. Any layouts and grids work, as for [`new`](Self::new); the
    /// copies that write the target transpose as they go, tile by tile, so
    /// no pass is added. With `window`, its shape and source origin are in
    /// the source's dimensions, its target origin in the target's (the
    /// window's dimension `d` lands on target dimension `permutation[d]`).
    /// Collective, as [`new`](Self::new).
    ///
    /// ```
    /// use dist_array::{DistArray, Layout};
    /// use procgrid::ProcGrid;
    /// use redist::{Options, Redistribution};
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let p = world.size() as usize;
    /// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
    /// let a = Layout::parse(&[6, 4], &format!("cyclic(2),*@{p}x1")).unwrap();
    /// let at = Layout::parse(&[4, 6], &format!("block,*@{p}x1")).unwrap();
    /// let mut r = Redistribution::<f64>::with_permutation(&grid, &a, &grid, &at, &[1, 0], None, Options::default())
    ///     .unwrap();
    /// let src = DistArray::from_fn(&grid, a, |g| (10 * g[0] + g[1]) as f64).unwrap();
    /// let t = r.execute(&src).unwrap();
    /// if let Some(all) = t.gather(0).unwrap() {
    ///     assert_eq!(all[[3, 5]], 53.0); // A[5, 3]
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`with_window`](Self::with_window), and
    /// [`RedistError::InvalidArgument`] when `permutation` is not a
    /// permutation of the source's dimensions, [`PlanError::ShapeMismatch`]
    /// when, without a window, the target's shape is not the source's
    /// permuted.
    pub fn with_permutation(
        source_grid: &ProcGrid,
        source: &Layout,
        target_grid: &ProcGrid,
        target: &Layout,
        permutation: &[usize],
        window: Option<&Window>,
        options: Options,
    ) -> Result<Redistribution<T>, RedistError> {
        let whole = Window::whole(source.shape());
        let mut shapes = Ok(());
        if window.is_none() {
            let permuted: Option<Vec<usize>> = (target.ndim() == permutation.len())
                .then(|| {
                    (permutation.iter())
                        .map(|&a| target.shape().get(a).copied())
                        .collect()
                })
                .flatten();
            if permuted.as_deref() != Some(source.shape()) && target.ndim() == source.ndim() {
                let mut expected = vec![0; source.ndim()];
                for (d, &a) in permutation.iter().enumerate() {
                    if let (Some(e), Some(&n)) = (expected.get_mut(a), source.shape().get(d)) {
                        *e = n;
                    }
                }
                shapes = Err(PlanError::ShapeMismatch {
                    source_shape: expected,
                    target_shape: target.shape().to_vec(),
                }
                .into());
            }
        }
        let request = build::Request {
            source_grid,
            source,
            target_grid,
            target,
            window: window.unwrap_or(&whole),
            options: &options,
            permutation: Some(permutation),
        };
        Self::build(&request, shapes)
    }

    /// Plans the redistribution of a window: the `window.shape()` elements
    /// from `window.source_origin()` of arrays laid out as `source` onto
    /// those from `window.target_origin()` of arrays laid out as `target`,
    /// as ScaLAPACK's `p?gemr2d` copies an `M × N` sub-matrix at `(IA, JA)`
    /// of `A` into `(IB, JB)` of `B` — here with 0-based origins, in any
    /// number of dimensions, windows starting anywhere (inside blocks too).
    /// The two arrays may have different shapes; executing leaves every
    /// target element outside the window as it was. Collective, as
    /// [`new`](Self::new).
    ///
    /// With [`Remap::None`](crate::Remap::None) (the default) the target
    /// layout is `target` itself, so an existing target array can receive
    /// the window; a remapped target layout needs an array built from
    /// [`target_layout`](Self::target_layout).
    ///
    /// ```
    /// use dist_array::{DistArray, Layout};
    /// use procgrid::ProcGrid;
    /// use redist::{Options, Redistribution, Window};
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let p = world.size() as usize;
    /// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
    /// let a = Layout::parse(&[9, 7], &format!("cyclic(2),*@{p}x1")).unwrap();
    /// let b = Layout::parse(&[6, 8], &format!("block,*@{p}x1")).unwrap();
    /// // The 4x5 elements from (3, 1) of A onto (1, 2) of B.
    /// let window = Window::new(&[3, 1], &[1, 2], &[4, 5]).unwrap();
    /// let mut r = Redistribution::<f64>::with_window(&grid, &a, &grid, &b, &window, Options::default())
    ///     .unwrap();
    /// let src = DistArray::from_fn(&grid, a, |g| (10 * g[0] + g[1]) as f64).unwrap();
    /// let mut dst = DistArray::from_fn(&grid, b, |_| -1.0).unwrap();
    /// r.execute_into(&src, &mut dst).unwrap();
    /// if let Some(all) = dst.gather(0).unwrap() {
    ///     assert_eq!(all[[1, 2]], 31.0); // A[3, 1]
    ///     assert_eq!(all[[4, 6]], 65.0); // A[6, 5]
    ///     assert_eq!(all[[0, 0]], -1.0); // outside the window: untouched
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), with the window checked as by
    /// [`Plan::with_window`](crate::Plan::with_window): [`RedistError::InvalidArgument`] when the
    /// window does not fit inside either array or its number of dimensions
    /// is not the layouts', [`PlanError::Remap`] for
    /// `Remap::ClosedForm` on a window that is not the whole of both arrays;
    /// the shapes of the two layouts need not agree.
    pub fn with_window(
        source_grid: &ProcGrid,
        source: &Layout,
        target_grid: &ProcGrid,
        target: &Layout,
        window: &Window,
        options: Options,
    ) -> Result<Redistribution<T>, RedistError> {
        let request = build::Request {
            source_grid,
            source,
            target_grid,
            target,
            window,
            options: &options,
            permutation: None,
        };
        Self::build(&request, Ok(()))
    }

    /// This rank's part of the plan: the messages it sends and receives,
    /// what it keeps, and the runs of its rows and columns.
    pub fn rank_plan(&self) -> &RankPlan {
        &self.plan
    }

    /// The window moved: the whole arrays unless built by
    /// [`with_window`](Self::with_window).
    pub fn window(&self) -> &Window {
        self.plan.window()
    }

    /// This rank's schedule, when the strategy steps through one
    /// (`scheduled`).
    pub fn schedule(&self) -> Option<&RankSchedule> {
        self.schedule.as_ref()
    }

    /// The most messages any rank sends or receives: the communication
    /// graph's maximum degree, the fewest steps a schedule can have
    /// (learnt when the ranks agreed; no communication).
    pub fn max_degree(&self) -> usize {
        self.figures.max_degree
    }

    /// What the whole redistribution moves, summed over the ranks:
    /// `(elements kept on their rank, elements moved, messages between
    /// ranks)`. Collective over the grids' communicator (one all-reduce).
    pub fn totals(&self) -> (usize, usize, usize) {
        let word = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let mine = [
            word(self.plan.kept()),
            word(self.plan.elements_sent()),
            word(self.plan.sends().len()),
        ];
        let mut all = [0u64; 3];
        let comm = self.source_grid.communicator();
        procgrid::waits::all_reduce_into(comm, &mine[..], &mut all[..], SystemOperation::sum());
        let size = |x: u64| usize::try_from(x).unwrap_or(usize::MAX);
        (size(all[0]), size(all[1]), size(all[2]))
    }

    /// The ghost layers around the source's and the target's local parts
    /// that the redistribution was planned for ([`Options::padding`]).
    pub fn padding(&self) -> &Padding {
        &self.padding
    }

    /// The target layout, carrying the chosen rank map: arrays built on it
    /// (with the target grid) receive the result.
    pub fn target_layout(&self) -> &Layout {
        &self.target
    }

    /// Where the axes are permuted ([`with_permutation`](Self::with_permutation)):
    /// per source dimension, the target's.
    pub fn permutation(&self) -> Option<&[usize]> {
        self.target_axes.as_deref()
    }

    /// The strategy in use (never `Auto`).
    pub fn strategy(&self) -> Strategy {
        self.settled.strategy
    }

    /// Whether receivers on a sender's node copy straight from the sender's
    /// source storage when it is shared ([`Options::node_direct`], set up
    /// on every rank).
    pub fn reads_shared_sources(&self) -> bool {
        matches!(&self.exchange, AnyExchange::Async(a) if a.node_direct())
    }

    /// How this rank's messages within its node moved in its last single
    /// execution ([`execute_into`](Self::execute_into) and the like; not
    /// batches): how many it wrote into its receivers' targets, how many
    /// it read from its senders' sources, and whether it lent its target
    /// to its writers. `None` where receivers neither read nor are
    /// written to ([`reads_shared_sources`](Self::reads_shared_sources)
    /// is `false`).
    pub fn node_copies(&self) -> Option<super::node_direct::NodeCopies> {
        match &self.exchange {
            AnyExchange::Async(a) if a.node_direct() => Some(a.node_copies()),
            _ => None,
        }
    }

    /// How many of this rank's messages it sends, and how many it
    /// receives, described to MPI by a derived datatype (MPI walks their
    /// runs) rather than packed and unpacked by this rank, with the routes
    /// in use; `None` for the exchanges that do not route messages one by
    /// one (`alltoallv`, `combined`).
    pub fn typed_messages(&self) -> Option<(usize, usize)> {
        match &self.exchange {
            AnyExchange::Async(x) => Some(x.typed()),
            AnyExchange::Scheduled(x) => Some(x.typed()),
            _ => None,
        }
    }

    /// How many of this rank's messages `async` sends as one MPI message
    /// per contiguous run straight from source storage, skipping the pack
    /// ([`Options::direct_min_run`]); `None` for the other exchanges.
    pub fn source_run_messages(&self) -> Option<usize> {
        match &self.exchange {
            AnyExchange::Async(x) => Some(x.sent_from_source()),
            _ => None,
        }
    }

    /// Whether the executions are still trying both ways of routing the
    /// messages — packed, and described by derived datatypes — to keep the
    /// faster (`async` under [`MinRun::Auto`](crate::MinRun::Auto), where
    /// some rank moves 256 KiB or more and the two ways differ: executions 2
    /// to 8 at most; see [`Options::datatype_min_run`]).
    pub fn trying_routes(&self) -> bool {
        matches!(&self.exchange, AnyExchange::Async(a) if a.trying_routes())
    }

    /// What building warned of, the same on every rank: a wisdom file
    /// ([`Options::wisdom`](crate::Options::wisdom)) that could not be
    /// read, is not wisdom, or holds no choice for this case on this
    /// machine (rank 0 also printed each to stderr). Empty: nothing.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The measured choice this redistribution runs
    /// ([`Options::measured`](crate::Options::measured), or a wisdom
    /// file's), the same on every rank; `None` where `auto`'s rules (or the
    /// strategy named) decided.
    pub fn measured(&self) -> Option<crate::tune::Measured> {
        self.measured
    }

    /// Whether its first executions try both ways of routing messages
    /// (packed and typed) to keep the faster — `auto`'s route trial, which
    /// a measured choice makes unnecessary.
    pub fn tries_routes(&self) -> bool {
        self.settled.trial
    }

    /// Whether this rank's copies into its target storage stream
    /// (non-temporal stores for long stretches; [`Options::streaming`]).
    pub fn streams(&self) -> bool {
        self.messages.program.streams()
    }

    /// Bytes this rank holds for the redistribution apart from the data
    /// buffers: its copy programs, message routes and tables. It depends on
    /// the layouts' block sizes and process counts, never on the extent:
    /// O(ranks × runs per basic period).
    pub fn program_bytes(&self) -> usize {
        self.messages.heap_bytes() + self.exchange.heap_bytes()
    }

    /// Elements this rank sends to other ranks per execution.
    pub fn elements_sent(&self) -> usize {
        self.messages.send_total
    }

    /// Elements this rank receives from other ranks per execution.
    pub fn elements_received(&self) -> usize {
        self.messages.recv_total
    }

    /// Elements this rank copies locally per execution.
    pub fn elements_kept(&self) -> usize {
        self.messages.kept()
    }

    /// Builds the redistribution `req` describes, after `verdict`, the
    /// caller's own check of the arguments on this rank. Collective.
    fn build(
        req: &build::Request<'_>,
        verdict: Result<(), RedistError>,
    ) -> Result<Self, RedistError> {
        let b = build::build::<T>(req, verdict)?;
        Ok(Redistribution {
            target: b.target,
            target_axes: req.permutation.map(<[usize]>::to_vec),
            updates: req.options.updates,
            padding: req.options.padding.clone(),
            plan: b.plan,
            schedule: b.schedule,
            figures: b.figures,
            source_grid: req.source_grid.clone(),
            target_grid: req.target_grid.clone(),
            settled: b.settled,
            messages: b.messages,
            exchange: b.exchange,
            executions: 0,
            warnings: b.warnings,
            measured: b.measured,
        })
    }
}

impl<T: Element> fmt::Debug for Redistribution<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redistribution")
            .field("source", &self.plan.source().to_string())
            .field("target", &self.target.to_string())
            .field("strategy", &self.settled.strategy)
            .field("rank", &self.plan.rank())
            .finish()
    }
}

/// Bytes a rank keeps for a redistribution apart from data, as `part`
/// shows on that rank: its plan, its copy programs, and per message its
/// slot in the buffers and its route (MPI's own objects, and the exchange's
/// per-execution state, aside).
pub fn rank_part_bytes(part: &RankPart) -> usize {
    let (sends, recvs) = (part.plan().sends().len(), part.plan().recvs().len());
    let slots = (sends + recvs) * std::mem::size_of::<(usize, usize)>();
    part.plan_and_program_bytes() + slots + route::Routes::bytes_for(sends, recvs)
}
