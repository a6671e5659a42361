//! Executing a plan under MPI: the [`Redistribution`] object, built once and
//! run many times, and its exchange strategies.
//!
//! - `alltoallv`: pack every outgoing message, one `MPI_Alltoallv`, unpack;
//! - `scheduled`: one `MPI_Sendrecv` per step of the plan's contention-free
//!   schedule, with buffers no larger than the largest message;
//! - `async`: post every receive, pack and send each message, unpack each
//!   message as it arrives (seed 000's asynchronous scheme). Between ranks
//!   of one node whose source storage is shared (every large
//!   [`DistArray`]), the receiver instead copies the message straight from
//!   the sender's storage into its own: one pass over the data, like the
//!   bare exchange ([`Options::node_direct`]);
//! - `auto`: the cheapest of the three under an α–β cost model whose α and β
//!   are measured once per communicator ([`crate::cost`]).
//!
//! In every strategy the part that stays on a rank is copied straight from
//! source to target storage, with no buffer and no MPI call.

use crate::cost::{self, CostModel};
use crate::node_memory::{self, PeerCache};
use crate::plan::{Plan, Remap};
use crate::transfer::{RankProgram, Transfer};
use crate::RedistError;
use dist_array::{DistArray, Element, Layout};
use mpi::ffi;
use mpi::topology::Communicator;
use procgrid::ProcGrid;
use std::fmt;
use std::os::raw::c_int;
use std::str::FromStr;

/// How messages are exchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// Chosen by the α–β cost model.
    #[default]
    Auto,
    /// One `MPI_Alltoallv`.
    Alltoallv,
    /// One `MPI_Sendrecv` per contention-free step.
    Scheduled,
    /// Non-blocking receives and sends; unpack in arrival order.
    Async,
}

impl FromStr for Strategy {
    type Err = RedistError;

    fn from_str(s: &str) -> Result<Strategy, RedistError> {
        match s {
            "auto" => Ok(Strategy::Auto),
            "alltoallv" => Ok(Strategy::Alltoallv),
            "scheduled" => Ok(Strategy::Scheduled),
            "async" => Ok(Strategy::Async),
            _ => Err(RedistError::InvalidArgument {
                what: "strategy",
                value: s.to_string(),
                expected: "auto, alltoallv, scheduled or async".to_string(),
            }),
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Strategy::Auto => "auto",
            Strategy::Alltoallv => "alltoallv",
            Strategy::Scheduled => "scheduled",
            Strategy::Async => "async",
        })
    }
}

/// Options of a [`Redistribution`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// How the target's ranks may be relabelled.
    pub remap: Remap,
    /// How messages are exchanged.
    pub strategy: Strategy,
    /// Largest number of elements in one point-to-point MPI message; longer
    /// messages are split. MPI counts are `i32`, so at most `i32::MAX`.
    pub max_message_elements: usize,
    /// Shortest average run (elements) for which one side of a message is
    /// described to MPI by a derived datatype over local storage instead of
    /// being packed into (or unpacked from) a buffer; `usize::MAX` always packs.
    pub datatype_min_run: usize,
    /// Shortest average source run (elements) for which `async` sends a
    /// message as one MPI message per contiguous run straight from source
    /// storage, skipping the pack; `usize::MAX` always packs. Measured with
    /// MPICH on 2 ranks (4096×4096 f64, `cyclic(64),cyclic(64)@1x2` →
    /// `@2x1`): 22 ms packed, 18.5 ms sent run by run.
    pub direct_min_run: usize,
    /// Whether `async` lets a receiver on the sender's node copy a message
    /// straight from the sender's source storage, when that storage is
    /// shared ([`DistArray::shared_storage`]): one pass over the data
    /// instead of pack, transfer and unpack. Falls back to messages on every
    /// rank if any rank cannot map its peers' storage.
    pub node_direct: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            remap: Remap::None,
            strategy: Strategy::Auto,
            max_message_elements: i32::MAX as usize,
            datatype_min_run: DATATYPE_MIN_RUN,
            direct_min_run: DIRECT_MIN_RUN,
            node_direct: true,
        }
    }
}

/// Tag of the library's point-to-point messages (chunk or run `k` uses
/// `TAG + k`; MPI guarantees tags up to 32767).
const TAG: c_int = 1000;

/// Tags of the notes between ranks of one node: the sender's note (whether
/// and how its source storage can be mapped) and the receiver's "done".
const NOTE: c_int = 30000;
const DONE: c_int = 30001;

/// Default of [`Options::direct_min_run`].
pub const DIRECT_MIN_RUN: usize = 4096;

/// Most runs a message may be split into for direct sends.
const DIRECT_MAX_RUNS: usize = 4096;

/// The source runs of `t` if it is sent run by run straight from source
/// storage. Sender and receiver both compute it from the same plan, so they
/// agree on how the message is split.
fn direct_runs(t: &Transfer, options: &Options) -> Option<Vec<(usize, usize)>> {
    if options.direct_min_run == usize::MAX {
        return None;
    }
    let cap = (t.len / options.direct_min_run.max(1)).clamp(1, DIRECT_MAX_RUNS);
    let runs = t.runs(true, cap)?;
    // Runs longer than one MPI message are sent in pieces.
    let max = options.max_message_elements;
    let pieces: Vec<(usize, usize)> = runs
        .iter()
        .flat_map(|&(off, len)| {
            (0..len.div_ceil(max)).map(move |k| (off + k * max, (len - k * max).min(max)))
        })
        .collect();
    (!pieces.is_empty() && pieces.len() <= DIRECT_MAX_RUNS).then_some(pieces)
}

/// Default of [`Options::datatype_min_run`]: derived datatypes are off by
/// default. Measured with MPICH 4.0 on 2 ranks (4096×4096 f64,
/// `cyclic(64),cyclic(64)@1x2` → `@2x1`): packing with our own loops took
/// 22 ms per execution, an `MPI_Alltoallw` over derived datatypes 28–37 ms
/// and non-blocking sends of them 39–50 ms. That MPICH is built
/// `--without-yaksa`, its faster datatype engine. Other MPI libraries may
/// differ; set the option to try them.
pub const DATATYPE_MIN_RUN: usize = usize::MAX;

/// A committed MPI datatype, freed on drop.
struct ElementType(ffi::MPI_Datatype);

impl ElementType {
    /// One element of `bytes` bytes.
    fn new(bytes: usize) -> ElementType {
        let mut t = unsafe { ffi::RSMPI_DATATYPE_NULL };
        // SAFETY: MPI is initialised (a grid exists); the out-pointer is valid.
        unsafe {
            ffi::MPI_Type_contiguous(bytes as c_int, ffi::RSMPI_UINT8_T, &mut t);
            ffi::MPI_Type_commit(&mut t);
        }
        ElementType(t)
    }

    /// The runs `(offset, len)` (in elements of `elem`, `bytes` each) of one
    /// message as a single derived datatype, so MPI copies straight from or
    /// into local storage without a pack buffer.
    fn runs(runs: &[(usize, usize)], elem: &ElementType, bytes: usize) -> ElementType {
        let lens: Vec<c_int> = runs.iter().map(|&(_, l)| l as c_int).collect();
        let displs: Vec<ffi::MPI_Aint> = runs
            .iter()
            .map(|&(o, _)| (o * bytes) as ffi::MPI_Aint)
            .collect();
        let mut t = unsafe { ffi::RSMPI_DATATYPE_NULL };
        // SAFETY: the arrays hold `runs.len()` entries; MPI copies them.
        unsafe {
            ffi::MPI_Type_create_hindexed(
                runs.len() as c_int,
                lens.as_ptr(),
                displs.as_ptr(),
                elem.0,
                &mut t,
            );
            ffi::MPI_Type_commit(&mut t);
        }
        ElementType(t)
    }

    /// A datatype for the runs of `t` on one side, when they are few and long
    /// enough and the message needs no splitting.
    fn for_transfer(
        t: &Transfer,
        source: bool,
        options: &Options,
        elem: &ElementType,
        bytes: usize,
    ) -> Option<ElementType> {
        if t.len > options.max_message_elements
            || t.len > i32::MAX as usize
            || options.datatype_min_run == usize::MAX
        {
            return None;
        }
        let runs = t.runs(source, (t.len / options.datatype_min_run.max(1)).max(1))?;
        Some(ElementType::runs(&runs, elem, bytes))
    }
}

impl Drop for ElementType {
    fn drop(&mut self) {
        if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            // SAFETY: the type was committed by us and is freed once.
            unsafe {
                ffi::MPI_Type_free(&mut self.0);
            }
        }
    }
}

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
    plan: Plan,
    source_grid: ProcGrid,
    target_grid: ProcGrid,
    me: usize,
    program: RankProgram,
    strategy: Strategy,
    max_message: usize,
    datatype: ElementType,
    /// Per send / receive: a derived datatype over local storage, if used.
    send_types: Vec<Option<ElementType>>,
    recv_types: Vec<Option<ElementType>>,
    /// Per send / receive of `async`: the message's source runs when it is
    /// sent run by run straight from source storage.
    send_direct: Vec<Option<Vec<(usize, usize)>>>,
    recv_direct: Vec<Option<Vec<(usize, usize)>>>,
    /// Whether every rank describes every message by datatypes (then
    /// `alltoallv` runs as one `MPI_Alltoallw` without buffers).
    alltoallw: bool,
    send_offsets: Vec<usize>,
    recv_offsets: Vec<usize>,
    send_total: usize,
    recv_total: usize,
    /// Per schedule step: index of this rank's send and receive, if any.
    steps: Vec<(Option<usize>, Option<usize>)>,
    send_buf: Vec<T>,
    recv_buf: Vec<T>,
    /// Per-rank arguments of the collective strategies, built once.
    counts: CollectiveArgs,
    /// Request lists of `async`, kept so that executing allocates nothing.
    recv_requests: Vec<ffi::MPI_Request>,
    send_requests: Vec<ffi::MPI_Request>,
    /// Per receive request: its message, and whether it is a note.
    owner: Vec<(usize, bool)>,
    /// Per receive message: requests still outstanding.
    remaining: Vec<usize>,
    /// `async` between ranks of one node, when their storage can be mapped.
    node: Option<NodeDirect>,
}

/// Counts, displacements and datatypes of `MPI_Alltoallv` / `MPI_Alltoallw`,
/// one entry per rank of the communicator.
struct CollectiveArgs {
    scounts: Vec<c_int>,
    sdispls: Vec<c_int>,
    rcounts: Vec<c_int>,
    rdispls: Vec<c_int>,
    /// `MPI_Alltoallw`: one derived datatype per peer, at displacement zero.
    wcounts_send: Vec<c_int>,
    wcounts_recv: Vec<c_int>,
    zeros: Vec<c_int>,
    stypes: Vec<ffi::MPI_Datatype>,
    rtypes: Vec<ffi::MPI_Datatype>,
}

impl<T: Element> Redistribution<T> {
    /// Plans the redistribution of arrays laid out as `source` on
    /// `source_grid` into `target` on `target_grid`. The two grids must be
    /// built over the same communicator (the same grid, or one built with
    /// [`GridBuilder::build_sharing`](procgrid::GridBuilder::build_sharing)).
    pub fn new(
        source_grid: &ProcGrid,
        source: &Layout,
        target_grid: &ProcGrid,
        target: &Layout,
        options: Options,
    ) -> Result<Redistribution<T>, RedistError> {
        if !source_grid.shares_communicator(target_grid) {
            return Err(RedistError::InvalidArgument {
                what: "grids",
                value: format!("{source_grid} and {target_grid}"),
                expected: "two grids over one communicator (GridBuilder::build_sharing)"
                    .to_string(),
            });
        }
        for (grid, layout) in [(source_grid, source), (target_grid, target)] {
            if grid.extents() != layout.grid_extents() {
                return Err(dist_array::DistError::GridMismatch {
                    layout_grid: layout.grid_extents().to_vec(),
                    grid: grid.extents().to_vec(),
                }
                .into());
            }
        }
        if options.max_message_elements == 0 || options.max_message_elements > i32::MAX as usize {
            return Err(RedistError::InvalidArgument {
                what: "max_message_elements",
                value: options.max_message_elements.to_string(),
                expected: format!("1..={}", i32::MAX),
            });
        }
        let plan = Plan::new(source, target, options.remap)?;
        let comm = source_grid.communicator();
        let me = comm.rank() as usize;
        let program = RankProgram::new(&plan, me);
        let prefix = |list: &[Transfer]| {
            let mut offsets = Vec::with_capacity(list.len());
            let mut total = 0;
            for t in list {
                offsets.push(total);
                total += t.len;
            }
            (offsets, total)
        };
        let (send_offsets, send_total) = prefix(&program.sends);
        let (recv_offsets, recv_total) = prefix(&program.recvs);
        let steps = plan
            .schedule()
            .steps()
            .iter()
            .map(|step| {
                let mut mine = (None, None);
                for &i in step {
                    let m = plan.messages()[i];
                    if m.from == me {
                        mine.0 = program.sends.iter().position(|t| t.peer == m.to);
                    }
                    if m.to == me {
                        mine.1 = program.recvs.iter().position(|t| t.peer == m.from);
                    }
                }
                mine
            })
            .collect();
        // alltoallv addresses whole buffers with i32 counts and displacements.
        let alltoallv_fits =
            plan.messages().iter().all(|m| m.len <= i32::MAX as usize) && rank_totals_fit(&plan);
        let strategy = match options.strategy {
            Strategy::Auto => {
                let model: CostModel = cost::model_for(comm);
                cost::choose(&model, &plan, std::mem::size_of::<T>(), alltoallv_fits)
            }
            Strategy::Alltoallv if !alltoallv_fits => {
                return Err(RedistError::InvalidArgument {
                    what: "strategy",
                    value: "alltoallv".to_string(),
                    expected: "scheduled or async: a rank exchanges more than 2^31-1 elements, \
                               which one MPI_Alltoallv cannot address"
                        .to_string(),
                })
            }
            s => s,
        };
        let bytes = std::mem::size_of::<T>();
        let datatype = ElementType::new(bytes);
        let send_types: Vec<Option<ElementType>> = program
            .sends
            .iter()
            .map(|t| ElementType::for_transfer(t, true, &options, &datatype, bytes))
            .collect();
        let recv_types: Vec<Option<ElementType>> = program
            .recvs
            .iter()
            .map(|t| ElementType::for_transfer(t, false, &options, &datatype, bytes))
            .collect();
        let send_direct = program
            .sends
            .iter()
            .map(|t| direct_runs(t, &options))
            .collect();
        let recv_direct = program
            .recvs
            .iter()
            .map(|t| direct_runs(t, &options))
            .collect();
        // One MPI_Alltoallw over datatypes replaces the packed MPI_Alltoallv
        // only if every rank can use it: decided together (one all-reduce).
        let typed_here = send_types
            .iter()
            .chain(&recv_types)
            .all(|t: &Option<ElementType>| t.is_some());
        let mut typed_everywhere = 0i32;
        {
            use mpi::collective::{CommunicatorCollectives, SystemOperation};
            comm.all_reduce_into(
                &i32::from(typed_here),
                &mut typed_everywhere,
                SystemOperation::min(),
            );
        }
        let size = comm.size() as usize;
        let mut counts = CollectiveArgs {
            scounts: vec![0; size],
            sdispls: vec![0; size],
            rcounts: vec![0; size],
            rdispls: vec![0; size],
            wcounts_send: vec![0; size],
            wcounts_recv: vec![0; size],
            zeros: vec![0; size],
            stypes: vec![datatype.0; size],
            rtypes: vec![datatype.0; size],
        };
        // Counts fit i32 whenever alltoallv is chosen (checked above); only
        // that strategy reads them.
        for ((t, &o), ty) in program.sends.iter().zip(&send_offsets).zip(&send_types) {
            counts.scounts[t.peer] = t.len as c_int;
            counts.sdispls[t.peer] = o as c_int;
            if let Some(ty) = ty {
                counts.wcounts_send[t.peer] = 1;
                counts.stypes[t.peer] = ty.0;
            }
        }
        for ((t, &o), ty) in program.recvs.iter().zip(&recv_offsets).zip(&recv_types) {
            counts.rcounts[t.peer] = t.len as c_int;
            counts.rdispls[t.peer] = o as c_int;
            if let Some(ty) = ty {
                counts.wcounts_recv[t.peer] = 1;
                counts.rtypes[t.peer] = ty.0;
            }
        }
        let remaining = vec![0; program.recvs.len()];
        // Every rank evaluates the same condition, so all or none take part.
        let node =
            if options.node_direct && strategy == Strategy::Async && plan.stats().messages > 0 {
                NodeDirect::new(comm, &program, me)
            } else {
                None
            };
        Ok(Redistribution {
            node,
            counts,
            recv_requests: Vec::new(),
            send_requests: Vec::new(),
            owner: Vec::new(),
            remaining,
            plan,
            source_grid: source_grid.clone(),
            target_grid: target_grid.clone(),
            me,
            program,
            strategy,
            max_message: options.max_message_elements,
            datatype,
            send_types,
            recv_types,
            alltoallw: typed_everywhere == 1,
            send_direct,
            recv_direct,
            send_offsets,
            recv_offsets,
            send_total,
            recv_total,
            steps,
            send_buf: Vec::new(),
            recv_buf: Vec::new(),
        })
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The target layout, carrying the chosen rank map: arrays built on it
    /// (with the target grid) receive the result.
    pub fn target_layout(&self) -> &Layout {
        self.plan.target()
    }

    /// The strategy in use (never `Auto`).
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Whether receivers on a sender's node copy straight from the sender's
    /// source storage when it is shared ([`Options::node_direct`], set up
    /// on every rank).
    pub fn reads_shared_sources(&self) -> bool {
        self.node.is_some()
    }

    /// Elements this rank sends to other ranks per execution.
    pub fn elements_sent(&self) -> usize {
        self.send_total
    }

    /// Elements this rank receives from other ranks per execution.
    pub fn elements_received(&self) -> usize {
        self.recv_total
    }

    /// Elements this rank copies locally per execution.
    pub fn elements_kept(&self) -> usize {
        self.program.local.as_ref().map_or(0, |t| t.len)
    }

    /// Redistributes `src` into a new array on the target grid and layout.
    /// Collective.
    pub fn execute(&mut self, src: &DistArray<T>) -> Result<DistArray<T>, RedistError> {
        self.check_source(src)?;
        let mut dst = DistArray::zeros(&self.target_grid, self.plan.target().clone())?;
        self.execute_into(src, &mut dst)?;
        Ok(dst)
    }

    fn check_source(&self, src: &DistArray<T>) -> Result<(), RedistError> {
        if src.layout() != self.plan.source() || !src.grid().shares_communicator(&self.source_grid)
        {
            return Err(dist_array::DistError::LayoutMismatch {
                left: src.layout().to_string(),
                right: self.plan.source().to_string(),
            }
            .into());
        }
        Ok(())
    }

    /// Redistributes `src` into `dst`, which must be laid out as
    /// [`target_layout`](Self::target_layout). Collective. After the first
    /// call it allocates nothing.
    pub fn execute_into(
        &mut self,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
    ) -> Result<(), RedistError> {
        self.check_source(src)?;
        if dst.layout() != self.plan.target() || !dst.grid().shares_communicator(&self.target_grid)
        {
            return Err(dist_array::DistError::LayoutMismatch {
                left: dst.layout().to_string(),
                right: self.plan.target().to_string(),
            }
            .into());
        }
        if self.plan.stats().messages == 0 {
            // Nothing crosses ranks (every rank knows it from the plan): no MPI call at all.
            self.copy_local(src, dst);
            return Ok(());
        }
        match self.strategy {
            Strategy::Alltoallv | Strategy::Auto => self.run_alltoallv(src, dst),
            Strategy::Scheduled => self.run_scheduled(src, dst),
            Strategy::Async => self.run_async(src, dst),
        }
        Ok(())
    }

    fn comm_raw(&self) -> ffi::MPI_Comm {
        use mpi::raw::AsRaw;
        self.source_grid.communicator().as_raw()
    }

    fn ensure_buffers(&mut self, send: usize, recv: usize) {
        if self.send_buf.len() < send {
            self.send_buf = vec![T::zeroed(); send];
        }
        if self.recv_buf.len() < recv {
            self.recv_buf = vec![T::zeroed(); recv];
        }
    }

    fn copy_local(&self, src: &DistArray<T>, dst: &mut DistArray<T>) {
        if let Some(t) = &self.program.local {
            t.copy_local(src.local_slice(), dst.local_slice_mut());
        }
    }

    fn run_alltoallv(&mut self, src: &DistArray<T>, dst: &mut DistArray<T>) {
        if self.alltoallw {
            return self.run_alltoallw(src, dst);
        }
        self.ensure_buffers(self.send_total, self.recv_total);
        for (t, &o) in self.program.sends.iter().zip(&self.send_offsets) {
            t.pack(src.local_slice(), &mut self.send_buf[o..o + t.len]);
        }
        self.copy_local(src, dst);
        // SAFETY: counts and displacements address the buffers, which hold
        // send_total and recv_total elements of the committed element type.
        unsafe {
            ffi::MPI_Alltoallv(
                self.send_buf.as_ptr().cast(),
                self.counts.scounts.as_ptr(),
                self.counts.sdispls.as_ptr(),
                self.datatype.0,
                self.recv_buf.as_mut_ptr().cast(),
                self.counts.rcounts.as_ptr(),
                self.counts.rdispls.as_ptr(),
                self.datatype.0,
                self.comm_raw(),
            );
        }
        let out = dst.local_slice_mut();
        for (t, &o) in self.program.recvs.iter().zip(&self.recv_offsets) {
            t.unpack(&self.recv_buf[o..o + t.len], out);
        }
    }

    /// Every message described by derived datatypes over local storage: one
    /// `MPI_Alltoallw` with no pack buffers at all.
    fn run_alltoallw(&mut self, src: &DistArray<T>, dst: &mut DistArray<T>) {
        self.copy_local(src, dst);
        let out = dst.local_slice_mut();
        // SAFETY: each datatype addresses elements of the local storage it is
        // used with (built from the same layouts); displacements are zero.
        unsafe {
            ffi::MPI_Alltoallw(
                src.local_slice().as_ptr().cast(),
                self.counts.wcounts_send.as_ptr(),
                self.counts.zeros.as_ptr(),
                self.counts.stypes.as_ptr(),
                out.as_mut_ptr().cast(),
                self.counts.wcounts_recv.as_ptr(),
                self.counts.zeros.as_ptr(),
                self.counts.rtypes.as_ptr(),
                self.comm_raw(),
            );
        }
    }

    fn run_scheduled(&mut self, src: &DistArray<T>, dst: &mut DistArray<T>) {
        let packed = |list: &[Transfer], types: &[Option<ElementType>]| {
            list.iter()
                .zip(types)
                .filter(|(_, ty)| ty.is_none())
                .map(|(t, _)| t.len)
                .max()
                .unwrap_or(0)
        };
        let max_send = packed(&self.program.sends, &self.send_types);
        let max_recv = packed(&self.program.recvs, &self.recv_types);
        self.ensure_buffers(max_send, max_recv);
        self.copy_local(src, dst);
        let comm = self.comm_raw();
        let null = unsafe { ffi::RSMPI_PROC_NULL };
        let src_ptr = src.local_slice().as_ptr();
        for step in 0..self.steps.len() {
            let (s, r) = self.steps[step];
            let send = s.map(|i| (&self.program.sends[i], self.send_types[i].as_ref()));
            let recv = r.map(|i| (&self.program.recvs[i], self.recv_types[i].as_ref()));
            if let Some((t, None)) = send {
                t.pack(src.local_slice(), &mut self.send_buf[..t.len]);
            }
            let chunks_of = |x: Option<(&Transfer, Option<&ElementType>)>| match x {
                None => 0,
                Some((_, Some(_))) => 1,
                Some((t, None)) => t.len.div_ceil(self.max_message),
            };
            let chunks = chunks_of(send).max(chunks_of(recv));
            let out = dst.local_slice_mut().as_mut_ptr();
            for k in 0..chunks {
                // (pointer, count, datatype, peer) of each side in round k.
                let (sp, sn, st, sd) = match send {
                    Some((t, Some(ty))) if k == 0 => (src_ptr, 1, ty.0, t.peer as c_int),
                    Some((t, None)) if k < chunks_of(send) => {
                        let (o, n) = chunk(t.len, self.max_message, k);
                        // SAFETY: o + n <= t.len <= send_buf.len().
                        (
                            unsafe { self.send_buf.as_ptr().add(o) },
                            n as c_int,
                            self.datatype.0,
                            t.peer as c_int,
                        )
                    }
                    _ => (src_ptr, 0, self.datatype.0, null),
                };
                let (rp, rn, rt, rs) = match recv {
                    Some((t, Some(ty))) if k == 0 => (out, 1, ty.0, t.peer as c_int),
                    Some((t, None)) if k < chunks_of(recv) => {
                        let (o, n) = chunk(t.len, self.max_message, k);
                        // SAFETY: o + n <= t.len <= recv_buf.len().
                        (
                            unsafe { self.recv_buf.as_mut_ptr().add(o) },
                            n as c_int,
                            self.datatype.0,
                            t.peer as c_int,
                        )
                    }
                    _ => (out, 0, self.datatype.0, null),
                };
                // SAFETY: pointers, counts and datatypes address valid storage.
                unsafe {
                    ffi::MPI_Sendrecv(
                        sp.cast(),
                        sn,
                        st,
                        sd,
                        TAG + k as c_int,
                        rp.cast(),
                        rn,
                        rt,
                        rs,
                        TAG + k as c_int,
                        comm,
                        ffi::RSMPI_STATUS_IGNORE,
                    );
                }
            }
            if let Some((t, None)) = recv {
                t.unpack(&self.recv_buf[..t.len], dst.local_slice_mut());
            }
        }
    }

    fn run_async(&mut self, src: &DistArray<T>, dst: &mut DistArray<T>) {
        // What goes straight from a shared source storage needs no buffer.
        let source = src.shared_storage();
        let direct = |i: usize, list: &[bool]| source.is_some() && list.get(i) == Some(&true);
        let node_sends = self.node.as_ref().map_or(&[][..], |n| &n.sends[..]);
        let packed_sends = (0..self.program.sends.len()).any(|i| {
            self.send_types[i].is_none() && self.send_direct[i].is_none() && !direct(i, node_sends)
        });
        let packed_recvs = self.recv_types.iter().any(Option::is_none);
        self.ensure_buffers(
            if packed_sends { self.send_total } else { 0 },
            if packed_recvs { self.recv_total } else { 0 },
        );
        let comm = self.comm_raw();
        let out = dst.local_slice_mut().as_mut_ptr();
        let recv_buf = self.recv_buf.as_mut_ptr();
        let mut state = AsyncState {
            recv_requests: std::mem::take(&mut self.recv_requests),
            owner: std::mem::take(&mut self.owner),
            remaining: std::mem::take(&mut self.remaining),
            send_requests: std::mem::take(&mut self.send_requests),
        };
        state.recv_requests.clear();
        state.owner.clear();
        state.remaining.iter_mut().for_each(|r| *r = 0);
        state.send_requests.clear();
        let mut node = self.node.take();
        // Receives: from ranks of this node, first the sender's note.
        for i in 0..self.program.recvs.len() {
            match &mut node {
                Some(n) if n.recvs[i] => {
                    let peer = self.program.recvs[i].peer;
                    // SAFETY: four u64s in `n.notes_in`, untouched until the note arrives.
                    let req = unsafe {
                        let p = n.notes_in.as_mut_ptr().add(i);
                        irecv(p.cast(), 4, ffi::RSMPI_UINT64_T, peer, NOTE, comm)
                    };
                    state.recv_requests.push(req);
                    state.owner.push((i, true));
                    state.remaining[i] += 1;
                }
                _ => self.post_recv_data(i, &mut state, out, recv_buf, comm),
            }
        }
        let src_ptr = src.local_slice().as_ptr();
        for (i, (t, &o)) in self
            .program
            .sends
            .iter()
            .zip(&self.send_offsets)
            .enumerate()
        {
            if let Some(n) = node.as_mut().filter(|n| n.sends[i]) {
                n.notes_out[i] = match &source {
                    Some(s) => [1, s.fd as u64, s.id, s.bytes as u64],
                    None => [0; 4],
                };
                // SAFETY: four u64s in `n.notes_out`, untouched until the Waitall.
                let note = unsafe {
                    let p = n.notes_out.as_ptr().add(i);
                    isend(p.cast(), 4, ffi::RSMPI_UINT64_T, t.peer, NOTE, comm)
                };
                state.send_requests.push(note);
                if source.is_some() {
                    // The receiver reads the source itself; wait for its "done".
                    // SAFETY: a zero-byte receive.
                    let done = unsafe { irecv(out.cast(), 0, self.datatype.0, t.peer, DONE, comm) };
                    state.send_requests.push(done);
                    continue;
                }
            }
            let mut post = |ptr: *const T, count: usize, ty: ffi::MPI_Datatype, tag: c_int| {
                // SAFETY: the storage is untouched until the Waitall below.
                let req = unsafe { isend(ptr.cast(), count, ty, t.peer, tag, comm) };
                state.send_requests.push(req);
            };
            match (&self.send_types[i], &self.send_direct[i]) {
                (Some(ty), _) => post(src_ptr, 1, ty.0, TAG),
                (None, Some(runs)) => {
                    for (k, &(off, len)) in runs.iter().enumerate() {
                        // SAFETY: each run lies within the source's local storage.
                        let ptr = unsafe { src_ptr.add(off) };
                        post(ptr, len, self.datatype.0, TAG + k as c_int);
                    }
                }
                (None, None) => {
                    t.pack(src.local_slice(), &mut self.send_buf[o..o + t.len]);
                    for k in 0..t.len.div_ceil(self.max_message) {
                        let (co, cn) = chunk(t.len, self.max_message, k);
                        // SAFETY: o + co + cn <= send_total <= send_buf.len().
                        let ptr = unsafe { self.send_buf.as_ptr().add(o + co) };
                        post(ptr, cn, self.datatype.0, TAG + k as c_int);
                    }
                }
            }
        }
        self.copy_local(src, dst);
        // SAFETY: reads a constant of the MPI library.
        let undefined = unsafe { ffi::RSMPI_UNDEFINED };
        loop {
            let mut index: c_int = 0;
            // SAFETY: the request array is valid; completed ones become
            // MPI_REQUEST_NULL, and an all-null array gives MPI_UNDEFINED.
            unsafe {
                ffi::MPI_Waitany(
                    state.recv_requests.len() as c_int,
                    state.recv_requests.as_mut_ptr(),
                    &mut index,
                    ffi::RSMPI_STATUS_IGNORE,
                );
            }
            if index == undefined {
                break;
            }
            let (i, is_note) = state.owner[index as usize];
            state.remaining[i] -= 1;
            if is_note {
                let n = node.as_mut().expect("notes come from ranks of this node");
                let note = n.notes_in[i];
                if note[0] == 0 {
                    // The sender's source is private: its data follows as messages.
                    self.post_recv_data(i, &mut state, out, recv_buf, comm);
                    continue;
                }
                let t = &self.program.recvs[i];
                let storage = dist_array::SharedStorage {
                    pid: n.pids[t.peer],
                    fd: note[1] as i32,
                    id: note[2],
                    bytes: note[3] as usize,
                };
                let peer = match n.cache.get(t.peer, &storage) {
                    Ok(p) => p,
                    // Checked at construction; failing now means the sender's
                    // memory is gone, and no rank could go on consistently.
                    Err(e) => panic!("mapping the storage of rank {} failed: {e}", t.peer),
                };
                // SAFETY: the sender's source storage holds `T`s and stays
                // untouched until this rank's "done".
                t.copy_local(unsafe { peer.slice::<T>() }, dst.local_slice_mut());
                // SAFETY: a zero-byte send.
                let done = unsafe { isend(out.cast(), 0, self.datatype.0, t.peer, DONE, comm) };
                state.send_requests.push(done);
                continue;
            }
            if state.remaining[i] == 0 && self.recv_types[i].is_none() {
                let t = &self.program.recvs[i];
                let o = self.recv_offsets[i];
                t.unpack(&self.recv_buf[o..o + t.len], dst.local_slice_mut());
            }
        }
        // SAFETY: as above.
        unsafe {
            ffi::MPI_Waitall(
                state.send_requests.len() as c_int,
                state.send_requests.as_mut_ptr(),
                ffi::RSMPI_STATUSES_IGNORE,
            );
        }
        self.node = node;
        self.recv_requests = state.recv_requests;
        self.send_requests = state.send_requests;
        self.owner = state.owner;
        self.remaining = state.remaining;
    }

    /// Posts the receives of message `i`'s data: one derived datatype over
    /// target storage, or runs or chunks into the receive buffer.
    fn post_recv_data(
        &self,
        i: usize,
        state: &mut AsyncState,
        out: *mut T,
        recv_buf: *mut T,
        comm: ffi::MPI_Comm,
    ) {
        let t = &self.program.recvs[i];
        let o = self.recv_offsets[i];
        let mut post = |ptr: *mut T, count: usize, ty: ffi::MPI_Datatype, tag: c_int| {
            // SAFETY: the storage outlives the request (waited in run_async).
            let req = unsafe { irecv(ptr.cast(), count, ty, t.peer, tag, comm) };
            state.recv_requests.push(req);
            state.owner.push((i, false));
            state.remaining[i] += 1;
        };
        match (&self.recv_types[i], &self.recv_direct[i]) {
            (Some(ty), _) => post(out, 1, ty.0, TAG),
            (None, Some(runs)) => {
                let mut at = o;
                for (k, &(_, len)) in runs.iter().enumerate() {
                    // SAFETY: the runs add up to t.len, within recv_buf.
                    post(
                        unsafe { recv_buf.add(at) },
                        len,
                        self.datatype.0,
                        TAG + k as c_int,
                    );
                    at += len;
                }
            }
            (None, None) => {
                for k in 0..t.len.div_ceil(self.max_message) {
                    let (co, cn) = chunk(t.len, self.max_message, k);
                    // SAFETY: o + co + cn <= recv_total <= recv_buf.len().
                    let ptr = unsafe { recv_buf.add(o + co) };
                    post(ptr, cn, self.datatype.0, TAG + k as c_int);
                }
            }
        }
    }
}

/// The request lists of one `async` execution (kept between executions so
/// that executing allocates nothing).
struct AsyncState {
    recv_requests: Vec<ffi::MPI_Request>,
    /// Per receive request: its message, and whether it is the sender's note.
    owner: Vec<(usize, bool)>,
    /// Per receive message: requests still outstanding.
    remaining: Vec<usize>,
    send_requests: Vec<ffi::MPI_Request>,
}

/// `async` between ranks of one node: which messages may be read straight
/// from the sender's shared source storage ([`crate::node_memory`]).
struct NodeDirect {
    /// Per send / receive: whether the peer is on this node.
    sends: Vec<bool>,
    recvs: Vec<bool>,
    /// Process id of every rank.
    pids: Vec<u32>,
    /// Per send / receive: the note (shared?, fd, storage id, bytes).
    notes_out: Vec<[u64; 4]>,
    notes_in: Vec<[u64; 4]>,
    cache: PeerCache,
}

impl NodeDirect {
    /// Collective over `comm`: `None` on every rank unless every rank can
    /// map the storage of the ranks of its node it receives from.
    fn new(
        comm: &mpi::topology::SimpleCommunicator,
        program: &RankProgram,
        me: usize,
    ) -> Option<NodeDirect> {
        use mpi::collective::CommunicatorCollectives;
        let node = node_memory::nodes(comm);
        let same = |a: usize, b: usize| a != b && node[a] == node[b];
        let recvs: Vec<bool> = program.recvs.iter().map(|t| same(t.peer, me)).collect();
        let sends: Vec<bool> = program.sends.iter().map(|t| same(me, t.peer)).collect();
        let read_from: Vec<usize> = program
            .recvs
            .iter()
            .filter(|t| same(t.peer, me))
            .map(|t| t.peer)
            .collect();
        let mut pids = vec![0u32; comm.size() as usize];
        comm.all_gather_into(&std::process::id(), &mut pids[..]);
        if !node_memory::can_map_peers(comm, &read_from) {
            return None;
        }
        Some(NodeDirect {
            notes_out: vec![[0; 4]; sends.len()],
            notes_in: vec![[0; 4]; recvs.len()],
            sends,
            recvs,
            pids,
            cache: PeerCache::default(),
        })
    }
}

/// `MPI_Irecv` of `count` elements of `ty` from `peer`.
///
/// # Safety
/// `ptr` addresses `count` elements of `ty` that outlive the request.
unsafe fn irecv(
    ptr: *mut std::ffi::c_void,
    count: usize,
    ty: ffi::MPI_Datatype,
    peer: usize,
    tag: c_int,
    comm: ffi::MPI_Comm,
) -> ffi::MPI_Request {
    let mut req = ffi::RSMPI_REQUEST_NULL;
    ffi::MPI_Irecv(ptr, count as c_int, ty, peer as c_int, tag, comm, &mut req);
    req
}

/// `MPI_Isend` of `count` elements of `ty` to `peer`.
///
/// # Safety
/// `ptr` addresses `count` elements of `ty`, untouched until the request completes.
unsafe fn isend(
    ptr: *const std::ffi::c_void,
    count: usize,
    ty: ffi::MPI_Datatype,
    peer: usize,
    tag: c_int,
    comm: ffi::MPI_Comm,
) -> ffi::MPI_Request {
    let mut req = ffi::RSMPI_REQUEST_NULL;
    ffi::MPI_Isend(ptr, count as c_int, ty, peer as c_int, tag, comm, &mut req);
    req
}

impl<T: Element> Redistribution<T> {
    /// Element counts per rank of a bare `MPI_Alltoallv` moving the same data
    /// as this redistribution, the part kept on each rank included: what a
    /// hand-written exchange would send. Returns (send counts, receive counts)
    /// indexed by rank; their sums size the buffers of
    /// [`bare_alltoallv`](Self::bare_alltoallv).
    pub fn bare_alltoallv_counts(&self) -> (Vec<usize>, Vec<usize>) {
        let size = self.source_grid.communicator().size() as usize;
        let mut send = vec![0; size];
        let mut recv = vec![0; size];
        for m in self.plan.messages() {
            if m.from == self.me {
                send[m.to] = m.len;
            }
            if m.to == self.me {
                recv[m.from] = m.len;
            }
        }
        (send, recv)
    }

    /// One bare `MPI_Alltoallv` of pre-packed buffers with the counts of
    /// [`bare_alltoallv_counts`](Self::bare_alltoallv_counts): the baseline
    /// a redistribution is measured against. Collective.
    pub fn bare_alltoallv(&self, send: &[T], recv: &mut [T]) -> Result<(), RedistError> {
        let (sc, rc) = self.bare_alltoallv_counts();
        let displs = |c: &[usize]| {
            let mut d = Vec::with_capacity(c.len());
            let mut t = 0usize;
            for &x in c {
                d.push(t);
                t += x;
            }
            (d, t)
        };
        let (sd, st) = displs(&sc);
        let (rd, rt) = displs(&rc);
        if send.len() < st || recv.len() < rt || st > i32::MAX as usize || rt > i32::MAX as usize {
            return Err(RedistError::InvalidArgument {
                what: "baseline buffers",
                value: format!("{} and {} elements", send.len(), recv.len()),
                expected: format!("at least {st} and {rt} elements, each at most 2^31-1"),
            });
        }
        let ints = |v: &[usize]| v.iter().map(|&x| x as c_int).collect::<Vec<_>>();
        let (sc, sd, rc, rd) = (ints(&sc), ints(&sd), ints(&rc), ints(&rd));
        // SAFETY: the counts and displacements address the checked buffers.
        unsafe {
            ffi::MPI_Alltoallv(
                send.as_ptr().cast(),
                sc.as_ptr(),
                sd.as_ptr(),
                self.datatype.0,
                recv.as_mut_ptr().cast(),
                rc.as_ptr(),
                rd.as_ptr(),
                self.datatype.0,
                self.comm_raw(),
            );
        }
        Ok(())
    }
}

/// Offset and length of chunk `k` of a message of `len` elements in chunks of `max`.
fn chunk(len: usize, max: usize, k: usize) -> (usize, usize) {
    let start = (k * max).min(len);
    (start, (len - start).min(max))
}

/// Whether every rank's total send and receive counts fit MPI's `i32`.
fn rank_totals_fit(plan: &Plan) -> bool {
    let (send, recv) = plan.rank_volumes();
    send.iter().chain(&recv).all(|&n| n <= i32::MAX as usize)
}

impl<T: Element> fmt::Debug for Redistribution<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redistribution")
            .field("source", &self.plan.source().to_string())
            .field("target", &self.plan.target().to_string())
            .field("strategy", &self.strategy)
            .field("rank", &self.me)
            .finish()
    }
}
