//! `redist run`: execute a redistribution under `mpirun`, time it, verify it,
//! and compare it with a bare `MPI_Alltoallv` of the same bytes.
//!
//! Every element of the source holds a value derived from its global linear
//! index, so `--verify` can check every element of the result on the rank
//! that holds it. Times are the maximum over ranks of each repetition;
//! the report gives the median and the minimum.

use crate::collective::{agree_on_output, max_over, on_any_rank, on_every_rank, sum_over};
use crate::error::CliError;
use crate::memory;
use crate::shape::{format_extents, layout_for, Origin, Shape};
use clap::{Args, ValueEnum};
use dist_array::{Complex, DistArray, Element, Layout, LayoutSpec};
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::ProcGrid;
use redist::{Options, Redistribution, Remap, Strategy, Streaming, Window};
use serde_json::{json, Value};
use std::io::Write;
use std::time::Instant;

/// Element types `redist run` can move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ElementArg {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `Complex<f64>`.
    C64,
    /// `i32`.
    I32,
    /// `u8`.
    U8,
}

/// Baselines `redist run` can time next to the redistribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Baseline {
    /// A bare `MPI_Alltoallv` of the same byte counts on pre-packed buffers.
    Alltoallv,
    /// ScaLAPACK's `pdgemr2d` on the same layouts (2-D, `--type f64`;
    /// needs the tool built with the `scalapack` feature). Both arrays are
    /// then stored column-major, as ScaLAPACK's.
    Pdgemr2d,
}

/// Arguments of `redist run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Global array shape, e.g. `4096x4096`.
    #[arg(long, value_name = "AxBx..")]
    pub shape: Shape,
    /// Target array shape when it differs from the source's (`--shape`);
    /// then only a window moves (`--window`).
    #[arg(long, value_name = "AxBx..")]
    pub to_shape: Option<Shape>,
    /// Move only this window: its extents, e.g. `300x200` (default: as much
    /// as fits from the two origins).
    #[arg(long, value_name = "AxBx..")]
    pub window: Option<Shape>,
    /// First index of the window in the source array, 0-based, e.g. `3,17`
    /// (default: the origin).
    #[arg(long, value_name = "I,J,..")]
    pub from_window: Option<Origin>,
    /// First index of the window in the target array, 0-based (default: the
    /// origin). The rest of the target keeps its values, which `--verify`
    /// checks too.
    #[arg(long, value_name = "I,J,..")]
    pub to_window: Option<Origin>,
    /// Source layout spec string.
    #[arg(long, value_name = "SPEC")]
    pub from: LayoutSpec,
    /// Target layout spec string.
    #[arg(long, value_name = "SPEC")]
    pub to: LayoutSpec,
    /// Element type.
    #[arg(long = "type", value_enum, default_value = "f64")]
    pub element: ElementArg,
    /// Exchange strategy: auto, alltoallv, scheduled or async.
    #[arg(long, default_value = "auto", value_name = "NAME")]
    pub strategy: Strategy,
    /// How the target's ranks may be relabelled: none, closed-form or optimal.
    #[arg(long, default_value = "none", value_name = "MODE")]
    pub remap: Remap,
    /// Timed repetitions (after one untimed warm-up), 1 to 1000000.
    #[arg(long, default_value_t = 5, value_parser = reps_parser())]
    pub reps: usize,
    /// Check every element of the result against its global index.
    #[arg(long)]
    pub verify: bool,
    /// Also time baselines in the same run: alltoallv, pdgemr2d, or both
    /// (`alltoallv,pdgemr2d`).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub baseline: Vec<Baseline>,
    /// Print one JSON object on one line (rank 0, last line of stdout).
    #[arg(long)]
    pub json: bool,
    /// Shortest average run (elements) described to MPI by a derived datatype
    /// instead of packed; `0` uses the library default.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub datatype_min_run: usize,
    /// Send data between ranks of one node as MPI messages even where the
    /// receiver could read it straight from the sender's shared storage.
    #[arg(long)]
    pub no_node_direct: bool,
    /// When copies into the target use streaming (non-temporal) stores:
    /// auto (where a rank writes more than its share of the cache holds),
    /// never, always, or from a number of bytes written per rank.
    #[arg(long, default_value = "auto", value_name = "WHEN")]
    pub streaming: Streaming,
}

/// The most timed repetitions `--reps` accepts: enough for any benchmark,
/// few enough that the vectors of times stay small.
pub const MAX_REPS: u64 = 1_000_000;

/// `--reps`: 1 ..= [`MAX_REPS`] (0 would time nothing).
fn reps_parser() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_REPS)
}

/// A value for every global linear index, per element type: what the source
/// holds and what `--verify` expects to find.
trait IndexValue: Element {
    /// The value of the element with global linear index `i`.
    fn index_value(i: usize) -> Self;
    /// A value no small index maps to: what the target holds outside a
    /// window.
    fn untouched() -> Self;
}

impl IndexValue for f32 {
    fn untouched() -> Self {
        -1.0
    }
    fn index_value(i: usize) -> Self {
        (i % (1 << 24)) as f32
    }
}
impl IndexValue for f64 {
    fn untouched() -> Self {
        -1.0
    }
    fn index_value(i: usize) -> Self {
        i as f64
    }
}
impl IndexValue for Complex<f64> {
    fn untouched() -> Self {
        Complex::new(-1.0, 1.0)
    }
    fn index_value(i: usize) -> Self {
        Complex::new(i as f64, -(i as f64))
    }
}
impl IndexValue for i32 {
    fn untouched() -> Self {
        -1
    }
    #[allow(clippy::cast_possible_truncation, reason = "values wrap on purpose")]
    fn index_value(i: usize) -> Self {
        i as i32
    }
}
impl IndexValue for u8 {
    fn untouched() -> Self {
        255
    }
    #[allow(clippy::cast_possible_truncation, reason = "below 251")]
    fn index_value(i: usize) -> Self {
        (i % 251) as u8
    }
}

/// Runs `redist run` on `world`: every rank takes part; rank 0 writes to `out`.
pub fn run(
    args: &RunArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    match args.element {
        ElementArg::F32 => run_typed::<f32>(args, world, out),
        ElementArg::F64 => run_typed::<f64>(args, world, out),
        ElementArg::C64 => run_typed::<Complex<f64>>(args, world, out),
        ElementArg::I32 => run_typed::<i32>(args, world, out),
        ElementArg::U8 => run_typed::<u8>(args, world, out),
    }
}

/// A grid for `layout` over the first ranks of `world` (sharing `base` when given).
fn grid_for(
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

/// Global linear index (row-major) of a global index.
fn linear(shape: &[usize], g: &[usize]) -> usize {
    g.iter().zip(shape).fold(0, |acc, (&x, &n)| acc * n + x)
}

fn run_typed<T: IndexValue>(
    args: &RunArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    // Every check up to the memory check is pure (the same arguments give
    // the same verdict on every rank) or agreed by a collective, so every
    // rank returns the same error.
    let ranks = usize::try_from(world.size()).unwrap_or(0);
    // Before the layouts are built: a layout keeps a rank map.
    if args.from.ranks().max(args.to.ranks()) > ranks {
        return Err(CliError::TooFewRanks {
            grids: format!("{} and {}", args.from, args.to),
            ranks,
        });
    }
    let pdgemr2d = args.baseline.contains(&Baseline::Pdgemr2d);
    let mut from = layout_for(&args.shape, &args.from)?;
    let mut to = layout_for(args.to_shape.as_ref().unwrap_or(&args.shape), &args.to)?;
    if pdgemr2d {
        crate::pdgemr2d::check_available::<T>(&from)?;
        // ScaLAPACK's local parts are column-major; so are both arrays here.
        from = from.with_storage(dist_array::Order::ColumnMajor);
        to = to.with_storage(dist_array::Order::ColumnMajor);
    }
    let window = window_for(args, from.shape(), to.shape())?;
    let root = world.rank() == 0;
    let grid_a = grid_for(&from, world, None)?;
    let grid_b = grid_for(&to, world, Some(&grid_a))?;
    let mut options = Options {
        remap: args.remap,
        strategy: args.strategy,
        ..Options::default()
    };
    if args.datatype_min_run > 0 {
        options.datatype_min_run = args.datatype_min_run;
    }
    options.node_direct = !args.no_node_direct;
    options.streaming = args.streaming;
    let start = Instant::now();
    let mut r = match &window {
        None => Redistribution::<T>::new(&grid_a, &from, &grid_b, &to, options)?,
        Some(w) => Redistribution::<T>::with_window(&grid_a, &from, &grid_b, &to, w, options)?,
    };
    let plan_ms = start.elapsed().as_secs_f64() * 1e3;
    let comm = grid_a.communicator();
    // Building is collective: the slowest rank's time, the largest program.
    let build_ms = max_over(comm, plan_ms);
    let program_bytes = max_over(comm, r.program_bytes() as u64);
    // Collective; before the arrays, so that its buffers count in the memory check.
    let bare = args
        .baseline
        .contains(&Baseline::Alltoallv)
        .then(|| redist::BareAlltoallv::new(&r));
    check_memory::<T>(comm, &from, r.target_layout(), bare.as_ref())?;
    let shape = from.shape().to_vec();
    let src = DistArray::from_fn(&grid_a, from.clone(), |g| T::index_value(linear(&shape, g)))?;
    let mut dst = match &window {
        None => DistArray::zeros(&grid_b, r.target_layout().clone())?,
        Some(_) => DistArray::from_fn(&grid_b, r.target_layout().clone(), |_| T::untouched())?,
    };
    let progress = Progress::new(root && !args.json, args.reps);
    r.execute_into(&src, &mut dst)?; // warm-up: buffers, connections
    let mut exec = Vec::with_capacity(args.reps);
    for rep in 0..args.reps {
        comm.barrier();
        let t = mpi::time();
        r.execute_into(&src, &mut dst)?;
        exec.push(max_over(comm, mpi::time() - t));
        progress.tick("redistribution", rep + 1);
    }
    let verified = if args.verify {
        // Global indices computed block by block: no table per local index.
        let expected = |g: &[usize]| match &window {
            None => T::index_value(linear(&shape, g)),
            Some(w) => w
                .source_index_of(g)
                .map_or_else(T::untouched, |s| T::index_value(linear(&shape, &s))),
        };
        let bad = dst.count_where(|g, v| *v != expected(g)) as u64;
        Some(sum_over(comm, bad) == 0)
    } else {
        None
    };
    // One copy of the local source data: the floor for an identity
    // redistribution (skipped above 2^28 elements to spare memory).
    let small = src.local_slice().len() <= MEMCPY_MAX_ELEMENTS;
    let mut memcpy = Vec::with_capacity(args.reps);
    if on_every_rank(comm, small) {
        let mut copy_target = src.local_slice().to_vec();
        for _ in 0..args.reps.max(1) {
            comm.barrier();
            let t = mpi::time();
            copy_target.copy_from_slice(src.local_slice());
            memcpy.push(max_over(comm, mpi::time() - t));
        }
        std::hint::black_box(&copy_target);
    }
    let mut skipped = None;
    let alltoallv = match bare {
        Some(bare) => match bare {
            // Checked on every rank before any buffer is allocated.
            Err(e) => {
                if root {
                    eprintln!("baseline skipped: {e}");
                }
                skipped = Some(e.to_string());
                None
            }
            Ok(bare) => {
                // Real data in every page: an untouched zero-filled buffer would be
                // read from the kernel's shared zero page and flatter the baseline.
                let send: Vec<T> = (0..bare.send_len()).map(T::index_value).collect();
                let mut recv: Vec<T> = (0..bare.recv_len()).map(T::index_value).collect();
                bare.run(&send, &mut recv)?; // warm-up
                let mut times = Vec::with_capacity(args.reps);
                for rep in 0..args.reps {
                    comm.barrier();
                    let t = mpi::time();
                    bare.run(&send, &mut recv)?;
                    times.push(max_over(comm, mpi::time() - t));
                    progress.tick("baseline", rep + 1);
                }
                Some(times)
            }
        },
        None => None,
    };
    let pdgemr2d = if pdgemr2d {
        Some(crate::pdgemr2d::time(
            r.plan().window(),
            &src,
            &dst,
            &grid_a,
            &grid_b,
            args.reps,
            &|rep| progress.tick("pdgemr2d", rep),
        )?)
    } else {
        None
    };
    let node_direct = r.reads_shared_sources() && src.shared_storage().is_some();
    let streamed = on_any_rank(comm, r.streams());
    let written = if root {
        let report = Report {
            args,
            from: &from,
            r: &r,
            ranks,
            plan_ms,
            build_ms,
            program_bytes,
            exec: &exec,
            memcpy: &memcpy,
            verified,
            alltoallv: alltoallv.as_deref(),
            skipped: skipped.as_deref(),
            node_direct,
            streamed,
            pdgemr2d: pdgemr2d.as_ref(),
        };
        report.write(out)
    } else {
        Ok(())
    };
    // Only rank 0 writes: every rank learns how it went and returns the same.
    agree_on_output(comm, written)?;
    if verified == Some(false) || pdgemr2d.is_some_and(|p| !p.agrees) {
        return Err(CliError::VerificationFailed);
    }
    Ok(())
}

/// What rank 0 reports on a run.
struct Report<'a, T: Element> {
    args: &'a RunArgs,
    from: &'a Layout,
    r: &'a Redistribution<T>,
    ranks: usize,
    plan_ms: f64,
    build_ms: f64,
    program_bytes: u64,
    exec: &'a [f64],
    memcpy: &'a [f64],
    verified: Option<bool>,
    alltoallv: Option<&'a [f64]>,
    skipped: Option<&'a str>,
    node_direct: bool,
    streamed: bool,
    pdgemr2d: Option<&'a crate::pdgemr2d::Timing>,
}

impl<T: Element> Report<'_, T> {
    /// Writes the JSON line (`--json`) or the readable summary to `out`.
    fn write(&self, out: &mut dyn Write) -> Result<(), CliError> {
        let Report {
            args,
            from,
            r,
            ranks,
            plan_ms,
            build_ms,
            program_bytes,
            exec,
            memcpy,
            verified,
            alltoallv,
            skipped,
            node_direct,
            streamed,
            pdgemr2d,
        } = *self;
        let elem = std::mem::size_of::<T>();
        let stats = r.plan().stats();
        let ms = |v: &[f64]| median(v) * 1e3;
        let mut v = json!({
            "shape": from.shape(),
            "to_shape": r.target_layout().shape(),
            "from": from.spec().to_string(),
            "to": r.target_layout().spec().to_string(),
            "ranks": ranks,
            "type": format!("{:?}", args.element).to_lowercase(),
            "strategy": r.strategy().to_string(),
            "remap": args.remap.to_string(),
            "reps": args.reps,
            "elements": stats.elements,
            "bytes_total": stats.elements * elem,
            "bytes_moved": stats.moved * elem,
            "plan_ms": plan_ms,
            "build_ms": build_ms,
            "program_bytes": program_bytes,
            "exec_ms_median": ms(exec),
            "exec_ms_min": exec.iter().copied().fold(f64::INFINITY, f64::min) * 1e3,
            "memcpy_ms_median": (!memcpy.is_empty()).then(|| ms(memcpy)),
            "verified": verified,
            "target_rank_map": r.target_layout().rank_map(),
            "node_direct": node_direct,
            "streaming": args.streaming.to_string(),
            "streamed": streamed,
            "storage": match from.storage() {
                dist_array::Order::RowMajor => "row-major",
                dist_array::Order::ColumnMajor => "column-major",
            },
        });
        let w = r.plan().window();
        if !r.plan().is_whole() {
            v["window"] = json!(w.shape());
            v["from_window"] = json!(w.source_origin());
            v["to_window"] = json!(w.target_origin());
        }
        if let Some(reason) = skipped {
            v["baseline_skipped"] = json!(reason);
        }
        if let Some(times) = alltoallv {
            v["alltoallv_ms_median"] = json!(ms(times));
            v["exec_over_alltoallv"] = json!(median(exec) / median(times).max(1e-12));
        }
        if let Some(p) = pdgemr2d {
            v["pdgemr2d_ms_median"] = json!(ms(&p.times));
            v["pdgemr2d_over_exec"] = json!(median(&p.times) / median(exec).max(1e-12));
            v["pdgemr2d_agrees"] = json!(p.agrees);
        }
        if args.json {
            writeln!(out, "{v}")?;
        } else {
            out.write_all(summary(&v).as_bytes())?;
        }
        out.flush()?;
        Ok(())
    }
}

/// The window `redist run` moves: `None` for the whole array (no window
/// argument and one shape), else the window of `--window` (default: as much
/// as fits from both origins) from `--from-window` to `--to-window`
/// (default: the origins). Pure: every rank reaches the same verdict.
fn window_for(
    args: &RunArgs,
    source: &[usize],
    target: &[usize],
) -> Result<Option<Window>, CliError> {
    let given = args.window.is_some() || args.from_window.is_some() || args.to_window.is_some();
    if !given && source == target {
        return Ok(None);
    }
    let ndim = source.len();
    if target.len() != ndim {
        return Err(CliError::BadWindow {
            what: "--to-shape",
            value: format_extents(target),
            expected: format!("{ndim} extent(s), as --shape {}", format_extents(source)),
        });
    }
    let origin = |o: &Option<Origin>, what: &'static str| -> Result<Vec<usize>, CliError> {
        match o {
            None => Ok(vec![0; ndim]),
            Some(o) if o.len() == ndim => Ok(o.to_vec()),
            Some(o) => Err(CliError::BadWindow {
                what,
                value: format!("{} index(es)", o.len()),
                expected: format!("{ndim}, one per dimension"),
            }),
        }
    };
    let ia = origin(&args.from_window, "--from-window")?;
    let ib = origin(&args.to_window, "--to-window")?;
    for (what, o, full) in [("--from-window", &ia, source), ("--to-window", &ib, target)] {
        if o.iter().zip(full).any(|(&i, &n)| i > n) {
            return Err(CliError::BadWindow {
                what,
                value: format!("{o:?}"),
                expected: format!("an index inside the array {}", format_extents(full)),
            });
        }
    }
    let shape = match &args.window {
        Some(w) if w.len() == ndim => w.to_vec(),
        Some(w) => {
            return Err(CliError::BadWindow {
                what: "--window",
                value: w.to_string(),
                expected: format!("{ndim} extent(s), one per dimension"),
            })
        }
        None => (0..ndim)
            .map(|d| (source[d] - ia[d]).min(target[d] - ib[d]))
            .collect(),
    };
    // Whether it fits is the library's check (Plan::with_window).
    Ok(Some(Window::new(&ia, &ib, &shape)?))
}

/// Refuses, on every rank alike, a run whose arrays and buffers do not fit
/// in memory, before any of them is allocated: each rank adds up the bytes
/// it needs (its source and target local parts, the `memcpy` copy of its
/// source part, the baseline's buffers) and compares the largest need with
/// the smallest share of memory ([`memory::available_per_rank`]).
fn check_memory<T: Element>(
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
    comm.all_reduce_into(&mine[..], &mut all[..], SystemOperation::max());
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

/// The largest local source part (elements) `redist run` copies once with
/// `memcpy` for `memcpy_ms_median`; larger parts are not copied.
const MEMCPY_MAX_ELEMENTS: usize = 1 << 28;

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[s.len() / 2]
}

/// The readable report of a run.
fn summary(v: &Value) -> String {
    let mut s = format!(
        "redistribute {} -> {}  shape {}  on {} ranks  type {}\n",
        v["from"].as_str().unwrap_or(""),
        v["to"].as_str().unwrap_or(""),
        v["shape"],
        v["ranks"],
        v["type"].as_str().unwrap_or("")
    );
    if let Some(w) = v["window"].as_array() {
        s += &format!(
            "window {} from {} of the source to {} of the target {}\n",
            w.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("x"),
            v["from_window"],
            v["to_window"],
            v["to_shape"]
        );
    }
    s += &format!(
        "strategy {}  remap {}  streaming {} ({})  bytes moved {} of {}\n",
        v["strategy"].as_str().unwrap_or(""),
        v["remap"].as_str().unwrap_or(""),
        v["streaming"].as_str().unwrap_or(""),
        if v["streamed"] == true {
            "streamed"
        } else {
            "ordinary stores"
        },
        v["bytes_moved"],
        v["bytes_total"]
    );
    s += &format!(
        "exec      median {:10.3} ms   min {:10.3} ms   ({} reps)\n",
        v["exec_ms_median"].as_f64().unwrap_or(0.0),
        v["exec_ms_min"].as_f64().unwrap_or(0.0),
        v["reps"]
    );
    if let Some(m) = v["memcpy_ms_median"].as_f64() {
        s += &format!("memcpy    median {m:10.3} ms   (one copy of the local source data)\n");
    }
    if let Some(a) = v["alltoallv_ms_median"].as_f64() {
        s += &format!(
            "alltoallv median {a:10.3} ms   (bare MPI_Alltoallv, same bytes)   exec/alltoallv {:.2}\n",
            v["exec_over_alltoallv"].as_f64().unwrap_or(0.0)
        );
    }
    if let Some(p) = v["pdgemr2d_ms_median"].as_f64() {
        s += &format!(
            "pdgemr2d  median {p:10.3} ms   (ScaLAPACK, same layouts)   pdgemr2d/exec {:.2}{}\n",
            v["pdgemr2d_over_exec"].as_f64().unwrap_or(0.0),
            if v["pdgemr2d_agrees"].as_bool() == Some(true) {
                ""
            } else {
                "   RESULTS DIFFER"
            }
        );
    }
    match v["verified"].as_bool() {
        Some(true) => s += "verified: every element matches its global index\n",
        Some(false) => s += "verified: MISMATCH\n",
        None => {}
    }
    s
}

/// Progress on rank 0's stderr for runs longer than a few seconds.
struct Progress {
    on: bool,
    total: usize,
    start: Instant,
    last: std::cell::Cell<f64>,
}

impl Progress {
    fn new(on: bool, total: usize) -> Progress {
        Progress {
            on,
            total,
            start: Instant::now(),
            last: std::cell::Cell::new(0.0),
        }
    }

    fn tick(&self, what: &str, done: usize) {
        let t = self.start.elapsed().as_secs_f64();
        if !self.on || t < 3.0 || t - self.last.get() < 2.0 {
            return;
        }
        self.last.set(t);
        let rate = done as f64 / t;
        let eta = (self.total - done) as f64 / rate.max(1e-9);
        eprintln!(
            "  {what}: {done}/{} reps, {t:.0} s elapsed, {rate:.2} reps/s, ETA {eta:.0} s",
            self.total
        );
    }
}
