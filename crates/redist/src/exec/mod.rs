//! Executing a plan under MPI: the [`Redistribution`] object, built once and
//! run many times.
//!
//! Building one turns the plan into this rank's copy programs (the
//! planning crate's `program`, shaped by the facts of this rank's machine,
//! `machine`), gathered with their buffer slots in `messages` (what every
//! strategy shares), decides how each message travels (`route`; whether
//! derived datatypes pay on the communicator is measured once,
//! `calibrate`: [`datatypes_pay`]), and sets
//! up one exchange strategy, each in its own file:
//!
//! - `alltoallv`: pack every outgoing message, one `MPI_Alltoallv`, unpack;
//! - `scheduled`: one `MPI_Sendrecv` per step of the plan's
//!   contention-free schedule, with buffers no larger than the largest
//!   message;
//! - `asynchronous`: post every receive, pack and send each message,
//!   unpack each message as it arrives; between ranks of one node whose
//!   source storage is shared, the receiver copies straight from the
//!   sender's storage (`node_direct`);
//! - `combined`: where ranks span several nodes, the messages between two
//!   nodes travel as one, gathered and scattered through the node's shared
//!   memory by its leader;
//! - `auto`: `combined` for small messages across nodes, else `async`
//!   (never predicted slower than `alltoallv`: see [`Strategy::Auto`]).
//!
//! Batches move several arrays with the same layouts in one exchange:
//! `batch` for arrays of one element type, `mixed` ([`MixedBatch`]) for
//! arrays of several.
//!
//! In every strategy the part that stays on a rank is copied straight from
//! source to target storage, with no buffer and no MPI call. Every call into
//! MPI's C interface goes through `mpi_raw`. [`baseline`] holds the bare
//! all-to-all the engine is measured against.

mod agree;
mod alltoallv;
mod asynchronous;
pub mod baseline;
mod batch;
mod build;
mod calibrate;
mod combined;
mod figures;
pub mod machine;
mod messages;
mod mixed;
mod mpi_raw;
pub use mpi_raw::file as mpi_io;
mod node_direct;
mod route;
mod scheduled;

use crate::{Options, RedistError, Strategy};
pub use calibrate::datatypes_pay;
use dist_array::{DistArray, Element, Layout};
use figures::Figures;
use messages::RankMessages;
pub use mixed::MixedBatch;
use mpi::collective::SystemOperation;
use procgrid::ProcGrid;
use redist_plan::kernel::{Plain, Store};
use redist_plan::schedule::RankSchedule;
use redist_plan::update::{Accumulate, Scalar, Scale, Update};
use redist_plan::{PlanError, RankPart, RankPlan, Window};
use std::fmt;

/// What an execution's errors say was being done.
const EXECUTING: &str = "executing a redistribution";

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
    target: Layout,
    /// Where the axes are permuted: per source dimension, the target's.
    target_axes: Option<Vec<usize>>,
    /// Whether executions may update the target ([`Options::updates`]).
    updates: bool,
    /// This rank's part of the plan: its messages, rows and columns (with a
    /// permutation, the target seen in the source's axis order).
    plan: RankPlan,
    /// Its steps, for `scheduled`.
    schedule: Option<RankSchedule>,
    /// What every rank learnt of the others when the ranks agreed.
    figures: Figures,
    source_grid: ProcGrid,
    target_grid: ProcGrid,
    strategy: Strategy,
    messages: RankMessages,
    exchange: Exchange<T>,
    /// Buffers of batches ([`execute_batch_into`](Self::execute_batch_into)).
    batch: batch::BatchBuffers<T>,
    /// Buffers of mixed batches
    /// ([`execute_mixed_batch`](Self::execute_mixed_batch)).
    mixed: mixed::MixedBuffers,
    /// Executions begun, counted up to the second: small messages' lines
    /// are listed then ([`executing`](Self::executing)).
    executions: u8,
}

/// The strategy in use, with its buffers and state (one per
/// redistribution, so the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
enum Exchange<T> {
    Alltoallv(alltoallv::Alltoallv<T>),
    Scheduled(scheduled::Scheduled<T>),
    Async(asynchronous::Async<T>),
    Combined(combined::Combined<T>),
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
            options,
            permutation: None,
        };
        Self::build(&request, shapes)
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
            options,
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
            options,
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
        self.strategy
    }

    /// Whether receivers on a sender's node copy straight from the sender's
    /// source storage when it is shared ([`Options::node_direct`], set up
    /// on every rank).
    pub fn reads_shared_sources(&self) -> bool {
        matches!(&self.exchange, Exchange::Async(a) if a.node_direct())
    }

    /// How many of this rank's messages it sends, and how many it
    /// receives, described to MPI by a derived datatype (MPI walks their
    /// runs) rather than packed and unpacked by this rank, with the routes
    /// in use; `None` for the exchanges that do not route messages one by
    /// one (`alltoallv`, `combined`).
    pub fn typed_messages(&self) -> Option<(usize, usize)> {
        match &self.exchange {
            Exchange::Async(x) => Some(x.typed()),
            Exchange::Scheduled(x) => Some(x.typed()),
            _ => None,
        }
    }

    /// Whether the executions are still trying both ways of routing the
    /// messages — packed, and described by derived datatypes — to keep the
    /// faster (`async` under [`MinRun::Auto`](crate::MinRun::Auto), where
    /// some rank moves 256 KiB or more and the two ways differ: executions 2
    /// to 8 at most; see [`Options::datatype_min_run`]).
    pub fn trying_routes(&self) -> bool {
        matches!(&self.exchange, Exchange::Async(a) if a.trying_routes())
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
        self.messages.heap_bytes()
            + match &self.exchange {
                Exchange::Alltoallv(x) => x.heap_bytes(),
                Exchange::Scheduled(x) => x.heap_bytes(),
                Exchange::Async(x) => x.heap_bytes(),
                Exchange::Combined(x) => x.heap_bytes(),
            }
            + self.batch.heap_bytes()
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

    /// Redistributes `src` into a new array on the target grid and layout.
    /// Collective.
    ///
    /// # Errors
    ///
    /// As [`execute_into`](Self::execute_into); the new array is allocated
    /// before anything is checked.
    pub fn execute(&mut self, src: &DistArray<T>) -> Result<DistArray<T>, RedistError> {
        let mut dst = DistArray::zeros(&self.target_grid, self.target.clone())?;
        self.execute_into(src, &mut dst)?;
        Ok(dst)
    }

    /// Redistributes `src` into `dst`, which must be laid out as
    /// [`target_layout`](Self::target_layout). Collective. After the first
    /// call it allocates nothing.
    ///
    /// Every rank checks its two arrays and the ranks agree on the verdict
    /// (one all-reduce of two integers, a few microseconds between the
    /// ranks of one node): a rank handed a wrong array returns an error,
    /// and so does every other rank, instead of waiting for it.
    ///
    /// # Errors
    ///
    /// - [`DistError::LayoutMismatch`](dist_array::DistError::LayoutMismatch)
    ///   (wrapped in [`RedistError::Dist`]) when `src` is not laid out as
    ///   the plan's source or `dst` as its target, or either lives on grids
    ///   of another communicator;
    /// - [`RedistError::OtherRank`] when this rank's arrays are fine but
    ///   another rank's are not;
    /// - [`RedistError::Mpi`] when MPI reports an error (only with an error
    ///   handler that returns errors; the library's communicators abort).
    pub fn execute_into(
        &mut self,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
    ) -> Result<(), RedistError> {
        self.execute_with(src, dst, true, Plain)
    }

    /// Like [`execute_into`](Self::execute_into), without the ranks
    /// agreeing on the arrays: for loops that execute the same
    /// redistribution on arrays built from its layouts, where that
    /// all-reduce is worth saving (it costs a collective: on a node with
    /// more ranks than cores, milliseconds). A rank handed a wrong array
    /// still returns an error, but alone: the others then wait for it.
    ///
    /// # Errors
    ///
    /// As [`execute_into`](Self::execute_into), except
    /// [`RedistError::OtherRank`] (which the `combined` strategy, whose
    /// exchange agrees as it goes, still returns).
    pub fn execute_into_unchecked(
        &mut self,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
    ) -> Result<(), RedistError> {
        self.execute_with(src, dst, false, Plain)
    }

    /// An execution storing through `store`, the ranks agreeing on their
    /// arrays first when `agree` is set (or as the exchange goes, where it
    /// agrees itself).
    fn execute_with<S: Store<T>>(
        &mut self,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        agree: bool,
        store: S,
    ) -> Result<(), RedistError> {
        self.executing();
        let verdict = self.check_arrays(src, dst);
        if self.agrees_in_exchange() {
            return self.exchange_agreeing(src, dst, verdict, store);
        }
        if agree {
            agree::agree(self.source_grid.communicator(), verdict, 0, EXECUTING)?;
        } else {
            verdict?;
        }
        self.exchange(src, dst, store)
    }

    /// Counts an execution; at the second, lists the lines of this rank's
    /// small messages once, so that they are copied from the list instead
    /// of walked (a redistribution executed once never pays for the
    /// listing). Local: ranks may list at different executions.
    fn executing(&mut self) {
        if self.executions == 1 {
            self.messages.program.list_small();
        }
        self.executions = self.executions.saturating_add(1);
    }

    /// Whether the exchange agrees on the ranks' verdicts itself, at no
    /// cost of its own (`combined`, where anything moves).
    fn agrees_in_exchange(&self) -> bool {
        self.figures.messages && matches!(self.exchange, Exchange::Combined(_))
    }

    /// The exchange of a strategy that agrees as it goes, with this rank's
    /// `verdict` on its arrays.
    fn exchange_agreeing<S: Store<T>>(
        &mut self,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        verdict: Result<(), RedistError>,
        store: S,
    ) -> Result<(), RedistError> {
        let comm = self.source_grid.communicator();
        let _guard = mpi_raw::AbortOnUnwind::new(comm);
        match &mut self.exchange {
            Exchange::Combined(x) => x.run(
                &self.messages,
                comm,
                verdict.map(|()| (src, dst)),
                (EXECUTING, store),
            ),
            _ => Err(RedistError::Internal(
                "a strategy that does not agree as it goes".to_string(),
            )),
        }
    }

    /// What is wrong with `src` and `dst` on this rank.
    fn check_arrays(&self, src: &DistArray<T>, dst: &DistArray<T>) -> Result<(), RedistError> {
        self.check_sides([(src.layout(), src.grid()), (dst.layout(), dst.grid())])
    }

    /// Whether a source and a target laid out and placed as `sides` are
    /// this redistribution's (of any element type).
    fn check_sides(&self, sides: [(&Layout, &ProcGrid); 2]) -> Result<(), RedistError> {
        let ours = [
            (self.plan.source(), &self.source_grid),
            (&self.target, &self.target_grid),
        ];
        for ((layout, grid), (want, want_grid)) in sides.into_iter().zip(ours) {
            if layout != want || !grid.shares_communicator(want_grid) {
                return Err(dist_array::DistError::LayoutMismatch {
                    left: layout.to_string(),
                    right: want.to_string(),
                }
                .into());
            }
        }
        Ok(())
    }

    /// The exchange itself, on checked arrays, storing through `store`.
    fn exchange<S: Store<T>>(
        &mut self,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        store: S,
    ) -> Result<(), RedistError> {
        if !self.figures.messages {
            // Nothing crosses ranks (every rank learnt it when the ranks
            // agreed): no MPI call at all.
            self.messages
                .copy_local(src.local_slice(), dst.local_slice_mut(), store);
            return Ok(());
        }
        let comm = self.source_grid.communicator();
        let _guard = mpi_raw::AbortOnUnwind::new(comm);
        if crate::faults::injected(crate::faults::Fault::ExchangePanic) {
            panic!("a panic injected into an exchange (Fault::ExchangePanic)");
        }
        match &mut self.exchange {
            Exchange::Alltoallv(x) => x.run(&self.messages, comm, (src, dst), store),
            Exchange::Scheduled(x) => x.run(&self.messages, comm, (src, dst), store),
            Exchange::Async(x) => x.run(&self.messages, comm, (src, dst), store),
            Exchange::Combined(x) => {
                x.run(&self.messages, comm, Ok((src, dst)), (EXECUTING, store))
            }
        }
    }
}

impl<T: Scalar> Redistribution<T> {
    /// Updates `dst` with `src` redistributed: `dst := β·dst + α·op(src)`,
    /// op the complex conjugate where `update.conjugate` is set ([`Update`]),
    /// computed in the copies that write the target — no pass of its own.
    /// With β = 0 the target is not read (NaNs there are overwritten). With
    /// [`with_permutation`](Self::with_permutation) and `[1, 0]` this is
    /// ScaLAPACK's `p?tran` / `p?geadd` (`C := β·C + α·Aᵀ`). The
    /// redistribution must be built with [`Options::updates`], so that
    /// every message reaches the target through this rank's own copies.
    /// Collective, as [`execute_into`](Self::execute_into).
    ///
    /// ```
    /// use dist_array::{DistArray, Layout};
    /// use procgrid::ProcGrid;
    /// use redist::{Options, Redistribution, Update};
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let p = world.size() as usize;
    /// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
    /// let a = Layout::parse(&[4, 6], &format!("cyclic(2),*@{p}x1")).unwrap();
    /// let c = Layout::parse(&[6, 4], &format!("block,*@{p}x1")).unwrap();
    /// let options = Options { updates: true, ..Options::default() };
    /// let mut r = Redistribution::<f64>::with_permutation(&grid, &a, &grid, &c, &[1, 0], None, options)
    ///     .unwrap();
    /// let src = DistArray::from_fn(&grid, a, |g| (10 * g[0] + g[1]) as f64).unwrap();
    /// let mut dst = DistArray::from_fn(&grid, c, |_| 1.0).unwrap();
    /// r.execute_update_into(&src, &mut dst, Update::new(2.0, 3.0)).unwrap(); // C := 3·C + 2·Aᵀ
    /// if let Some(all) = dst.gather(0).unwrap() {
    ///     assert_eq!(all[[5, 3]], 3.0 + 2.0 * 35.0); // A[3, 5]
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`execute_into`](Self::execute_into), and
    /// [`RedistError::InvalidArgument`] (on every rank alike) when the
    /// redistribution was built without [`Options::updates`].
    pub fn execute_update_into(
        &mut self,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        update: Update<T>,
    ) -> Result<(), RedistError> {
        if !self.updates {
            return Err(RedistError::InvalidArgument {
                what: "update",
                value: format!("{update:?}"),
                expected: "a redistribution built with Options::updates (messages received \
                           into buffers, never straight into the target)"
                    .to_string(),
            });
        }
        let Update {
            alpha,
            beta,
            conjugate,
        } = update;
        if update.is_plain() {
            self.execute_with(src, dst, true, Plain)
        } else if beta == T::zero() {
            self.execute_with(src, dst, true, Scale { alpha, conjugate })
        } else {
            let store = Accumulate {
                alpha,
                beta,
                conjugate,
            };
            self.execute_with(src, dst, true, store)
        }
    }
}

impl<T: Element> fmt::Debug for Redistribution<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redistribution")
            .field("source", &self.plan.source().to_string())
            .field("target", &self.target.to_string())
            .field("strategy", &self.strategy)
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
