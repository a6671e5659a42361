//! Measuring: each admissible choice of a redistribution timed on the real
//! arrays, with warm-ups, the slowest rank's median counting, beside
//! `auto`'s own choice; the fastest kept, and (optionally) written to a
//! wisdom file for later jobs.
//!
//! As cuDecomp's autotuner does for its grids and backends (three
//! warm-ups, then timed trials, the times reduced over the ranks), but
//! every trial is a whole execution of the redistribution the job will
//! run, and what was learnt outlives the job.

use super::file;
use super::key;
use super::measured::Measured;
use super::wisdom::{Entry, Kept, Key};
use crate::error::RedistError;
use crate::exec::agree;
use crate::exec::Redistribution;
use crate::options::{Options, Strategy};
use dist_array::{DistArray, Element, Layout};
use mpi::topology::Communicator;
use procgrid::ProcGrid;
use redist_plan::plan::Window;
use std::path::PathBuf;
use std::time::Instant;

/// How [`tune`] measures.
#[derive(Debug, Clone)]
pub struct TuneSettings {
    /// Executions of each choice before it is timed (at least 9 for
    /// `auto`'s own, whose executions 2–8 may try routes).
    pub warmups: usize,
    /// Timed executions of each choice; the median counts.
    pub reps: usize,
    /// A wisdom file to add the result to (merged with what it holds).
    pub wisdom: Option<PathBuf>,
    /// Rank 0 prints each choice's time to stderr as it goes.
    pub progress: bool,
}

impl Default for TuneSettings {
    /// Three warm-ups and five timed executions (cuDecomp's autotuner's
    /// defaults), no wisdom file, quiet.
    fn default() -> Self {
        TuneSettings {
            warmups: 3,
            reps: 5,
            wisdom: None,
            progress: false,
        }
    }
}

/// One choice and its time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tried {
    /// The choice.
    pub choice: Measured,
    /// Seconds per execution: the slowest rank's median.
    pub seconds: f64,
}

/// What [`tune`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Tuned {
    /// The fastest choice (`auto`'s own where nothing was faster).
    pub best: Tried,
    /// `auto`'s own choice (after its trial of routes) and its time.
    pub auto: Tried,
    /// Every choice timed, in the order tried.
    pub tried: Vec<Tried>,
    /// Executions the measuring ran, in all.
    pub executions: usize,
    /// Seconds the measuring took (building included), the slowest rank's.
    pub seconds: f64,
}

impl Tuned {
    /// The best choice's time over `auto`'s (at most 1 but for noise: the
    /// best is `auto`'s own where nothing was faster).
    pub fn ratio(&self) -> f64 {
        if self.auto.seconds > 0.0 {
            self.best.seconds / self.auto.seconds
        } else {
            1.0
        }
    }
}

/// The choices worth measuring on a communicator: `async` with messages
/// packed or typed, each with and without node-direct copies; `alltoallv`
/// packed or typed; and, where the ranks span several nodes, `combined`.
/// `scheduled` is not among them: it is chosen for its memory, and was
/// never the fastest (`docs/options.md`).
///
/// ```
/// use redist::tune::candidates;
/// assert_eq!(candidates(false).len(), 6);
/// assert!(candidates(true).iter().any(|m| m.strategy == redist::Strategy::Combined));
/// ```
pub fn candidates(spans_nodes: bool) -> Vec<Measured> {
    let mut c = Vec::new();
    for typed in [false, true] {
        for node_direct in [true, false] {
            c.push(Measured {
                strategy: Strategy::Async,
                typed,
                node_direct,
                min_run: None,
                direct_run: None,
            });
        }
    }
    for typed in [false, true] {
        c.push(Measured {
            strategy: Strategy::Alltoallv,
            typed,
            node_direct: false,
            min_run: None,
            direct_run: None,
        });
    }
    if spans_nodes {
        c.push(Measured {
            strategy: Strategy::Combined,
            typed: false,
            node_direct: false,
            min_run: None,
            direct_run: None,
        });
    }
    c
}

/// One execution of the redistribution being measured, on the job's
/// arrays: one array into another, or a batch.
type Execute<'a, T> = dyn FnMut(&mut Redistribution<T>) -> Result<(), RedistError> + 'a;

/// Times `warmups` then `reps` executions of `r` (`execute`): the slowest
/// rank's median over `comm`, in seconds. Collective.
fn time<T: Element>(
    r: &mut Redistribution<T>,
    execute: &mut Execute<'_, T>,
    comm: &mpi::topology::SimpleCommunicator,
    warmups: usize,
    reps: usize,
) -> Result<f64, RedistError> {
    for _ in 0..warmups {
        execute(r)?;
    }
    let mut times = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        execute(r)?;
        times.push(t.elapsed().as_nanos());
    }
    times.sort_unstable();
    Ok(slowest_seconds(comm, times[times.len() / 2]))
}

/// The datatype thresholds worth trying beside `auto`'s for elements of
/// `elem_bytes` bytes, in elements: half and twice `auto`'s
/// ([`DATATYPE_MIN_RUN_BYTES`](crate::tuning::DATATYPE_MIN_RUN_BYTES)),
/// each where it differs from `auto`'s. Pure.
fn thresholds(elem_bytes: usize) -> Vec<usize> {
    let auto = crate::tuning::DATATYPE_MIN_RUN_BYTES
        .div_ceil(elem_bytes.max(1))
        .max(1);
    let mut t = vec![(auto / 2).max(1), auto * 2];
    t.retain(|&n| n != auto);
    t
}

/// The direct-send thresholds worth trying beside `auto`'s, in elements:
/// half and twice [`DIRECT_MIN_RUN`](crate::tuning::DIRECT_MIN_RUN).
fn direct_thresholds() -> [usize; 2] {
    let auto = crate::tuning::DIRECT_MIN_RUN;
    [(auto / 2).max(1), auto * 2]
}

/// How `r` routes its messages, summed over `comm`: those sent or received
/// as derived datatypes, and those sent run by run from source storage.
/// Collective (one all-reduce).
fn route_counts<T: Element>(
    r: &Redistribution<T>,
    comm: &mpi::topology::SimpleCommunicator,
) -> [u64; 2] {
    use mpi::collective::{CommunicatorCollectives, SystemOperation};
    let typed = r.typed_messages().map_or(0, |(s, v)| s + v);
    let direct = r.source_run_messages().unwrap_or(0);
    let mine = [typed as u64, direct as u64];
    let mut all = [0u64; 2];
    comm.all_reduce_into(&mine[..], &mut all[..], SystemOperation::sum());
    all
}

/// What `r` runs, as a measured choice: its exchange, whether some rank
/// describes a message by a datatype, whether receivers read shared
/// sources. Collective (one all-reduce).
fn runs<T: Element>(r: &Redistribution<T>, comm: &mpi::topology::SimpleCommunicator) -> Measured {
    let typed = r.typed_messages().is_some_and(|(s, v)| s + v > 0);
    let mine = [u64::from(typed), u64::from(r.reads_shared_sources())];
    let mut any = [0u64; 2];
    agree::all_reduce_max(comm, &mine, &mut any);
    Measured {
        strategy: r.strategy(),
        typed: any[0] != 0,
        node_direct: any[1] != 0,
        min_run: None,
        direct_run: None,
    }
}

/// Measures every admissible choice ([`candidates`]) of the redistribution
/// from `source` to `target` on the arrays `a` and `b` (laid out so), and
/// `auto`'s own beside them; returns the fastest. With
/// [`TuneSettings::wisdom`], adds it to that wisdom file, where later jobs
/// (`Options::wisdom`, `NDCYCLIC_WISDOM`) find it and run it without
/// measuring. `b` is overwritten. Collective.
///
/// ```
/// use dist_array::{DistArray, Layout};
/// use procgrid::ProcGrid;
/// use redist::tune::{tune, TuneSettings};
/// use redist::Options;
/// use mpi::topology::Communicator;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
/// let rows = Layout::parse(&[64, 64], &format!("block,*@{p}x1")).unwrap();
/// let blocks = Layout::parse(&[64, 64], &format!("cyclic(4),cyclic(4)@{p}x1")).unwrap();
/// let a = DistArray::from_fn(&grid, rows.clone(), |g| (g[0] + g[1]) as f64).unwrap();
/// let mut b = DistArray::zeros(&grid, blocks.clone()).unwrap();
/// let settings = TuneSettings { warmups: 1, reps: 3, ..TuneSettings::default() };
/// let tuned = tune(&grid, &rows, &grid, &blocks, &Options::default(), &a, &mut b, &settings).unwrap();
/// assert!(tuned.best.seconds <= tuned.auto.seconds);
/// assert_eq!(b.gather(0).unwrap(), a.gather(0).unwrap());
/// ```
///
/// # Errors
///
/// As [`Redistribution::new`] and [`Redistribution::execute_into`] for the
/// arrays and layouts; [`RedistError::Wisdom`] when the wisdom file could
/// not be written (on every rank).
#[allow(
    clippy::too_many_arguments,
    reason = "the arguments of Redistribution::new, the two arrays and the settings"
)]
pub fn tune<T: Element>(
    source_grid: &ProcGrid,
    source: &Layout,
    target_grid: &ProcGrid,
    target: &Layout,
    options: &Options,
    a: &DistArray<T>,
    b: &mut DistArray<T>,
    settings: &TuneSettings,
) -> Result<Tuned, RedistError> {
    let case = Case {
        source_grid,
        source,
        target_grid,
        target,
        options,
    };
    measure(&case, &mut |r| r.execute_into(a, b), settings)
}

/// [`tune`] for a job that moves its arrays in batches: each choice timed
/// on whole batches, `srcs` into `dsts`
/// ([`Redistribution::execute_batch_into`]) — how a batch moves (one
/// exchange for all, stacked groups, array by array) follows from the
/// choice, so a batch can favour another than one array does. The
/// wisdom entry is the redistribution's, as [`tune`]'s is: the job's own
/// use of it measured. `dsts` are overwritten. Collective.
///
/// ```
/// use dist_array::{DistArray, Layout};
/// use procgrid::ProcGrid;
/// use redist::tune::{tune_batch, TuneSettings};
/// use redist::Options;
/// use mpi::topology::Communicator;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
/// let rows = Layout::parse(&[32, 32], &format!("block,*@{p}x1")).unwrap();
/// let blocks = Layout::parse(&[32, 32], &format!("cyclic(4),cyclic(4)@{p}x1")).unwrap();
/// let a: Vec<DistArray<f64>> = (0..4)
///     .map(|k| DistArray::from_fn(&grid, rows.clone(), |g| (k * 1000 + g[0] + g[1]) as f64).unwrap())
///     .collect();
/// let mut b: Vec<DistArray<f64>> = (0..4).map(|_| DistArray::zeros(&grid, blocks.clone()).unwrap()).collect();
/// let srcs: Vec<&DistArray<f64>> = a.iter().collect();
/// let mut dsts: Vec<&mut DistArray<f64>> = b.iter_mut().collect();
/// let settings = TuneSettings { warmups: 1, reps: 3, ..TuneSettings::default() };
/// let tuned = tune_batch(&grid, &rows, &grid, &blocks, &Options::default(), &srcs, &mut dsts, &settings).unwrap();
/// assert!(tuned.best.seconds <= tuned.auto.seconds);
/// assert_eq!(b[3].gather(0).unwrap(), a[3].gather(0).unwrap());
/// ```
///
/// # Errors
///
/// As [`tune`], and as [`Redistribution::execute_batch_into`] for the
/// arrays.
#[allow(
    clippy::too_many_arguments,
    reason = "the arguments of Redistribution::new, the two batches and the settings"
)]
pub fn tune_batch<T: Element>(
    source_grid: &ProcGrid,
    source: &Layout,
    target_grid: &ProcGrid,
    target: &Layout,
    options: &Options,
    srcs: &[&DistArray<T>],
    dsts: &mut [&mut DistArray<T>],
    settings: &TuneSettings,
) -> Result<Tuned, RedistError> {
    let case = Case {
        source_grid,
        source,
        target_grid,
        target,
        options,
    };
    measure(&case, &mut |r| r.execute_batch_into(srcs, dsts), settings)
}

/// The redistribution being measured, as [`Redistribution::new`] takes it.
struct Case<'a> {
    source_grid: &'a ProcGrid,
    source: &'a Layout,
    target_grid: &'a ProcGrid,
    target: &'a Layout,
    options: &'a Options,
}

/// [`tune`]'s steps on any execution: `auto`'s own timed, then each
/// admissible choice that can run here, the fastest kept (and written).
/// Collective.
fn measure<T: Element>(
    case: &Case<'_>,
    execute: &mut Execute<'_, T>,
    settings: &TuneSettings,
) -> Result<Tuned, RedistError> {
    let started = Instant::now();
    let comm = case.source_grid.communicator();
    let loud = settings.progress && comm.rank() == 0;
    // No wisdom file read while measuring, not even the environment's.
    let base = Options {
        strategy: Strategy::Auto,
        measured: None,
        wisdom: Some(PathBuf::new()),
        ..case.options.clone()
    };
    let mut timer = Timer {
        case,
        base: &base,
        execute,
        settings,
        loud,
        executions: 0,
    };
    let auto = timer.auto()?;
    let tried = timer.choices()?;
    let executions = timer.executions;
    let best = fastest(auto, &tried);
    // The arrays hold the redistribution's result, as after any execution.
    if let Some(path) = &settings.wisdom {
        keep::<T>(case, &base, path, best, auto.seconds)?;
    }
    Ok(Tuned {
        best,
        auto,
        tried,
        executions,
        seconds: slowest_seconds(comm, started.elapsed().as_nanos()),
    })
}

/// What times the choices of one case, and the executions it ran.
struct Timer<'a, 'e, T: Element> {
    case: &'a Case<'a>,
    /// The options of every choice: the case's, read from no file.
    base: &'a Options,
    execute: &'a mut Execute<'e, T>,
    settings: &'a TuneSettings,
    loud: bool,
    executions: usize,
}

impl<T: Element> Timer<'_, '_, T> {
    /// The redistribution of the case under `options`. Collective.
    fn build(&self, options: Options) -> Result<Redistribution<T>, RedistError> {
        let c = self.case;
        Redistribution::<T>::new(c.source_grid, c.source, c.target_grid, c.target, options)
    }

    /// `r` timed after `warmups`, counted.
    fn time(&mut self, r: &mut Redistribution<T>, warmups: usize) -> Result<f64, RedistError> {
        let comm = self.case.source_grid.communicator();
        let reps = self.settings.reps;
        let seconds = time(r, self.execute, comm, warmups, reps)?;
        self.executions += warmups + reps.max(1);
        Ok(seconds)
    }

    /// `choice`'s redistribution `r` timed, counted and reported.
    fn time_choice(
        &mut self,
        r: &mut Redistribution<T>,
        choice: Measured,
    ) -> Result<Tried, RedistError> {
        let seconds = self.time(r, self.settings.warmups)?;
        say(self.loud, &choice.to_string(), seconds);
        Ok(Tried { choice, seconds })
    }

    /// `auto`'s own choice (past its trial of routes) and its time.
    fn auto(&mut self) -> Result<Tried, RedistError> {
        let mut auto = self.build(self.base.clone())?;
        let seconds = self.time(&mut auto, self.settings.warmups.max(9))?;
        let choice = runs(&auto, self.case.source_grid.communicator());
        say(self.loud, &format!("auto ({choice})"), seconds);
        Ok(Tried { choice, seconds })
    }

    /// Every admissible choice that runs here, timed, and under `async`
    /// the thresholds near `auto`'s where they route other messages.
    fn choices(&mut self) -> Result<Vec<Tried>, RedistError> {
        let grid = self.case.source_grid;
        let comm = grid.communicator();
        let spans_nodes = grid.node().ranks().len() < usize::try_from(comm.size()).unwrap_or(0);
        // Node-direct copies the options turn off are not a choice.
        let allowed = self.case.options.node_direct;
        let admissible = candidates(spans_nodes)
            .into_iter()
            .filter(|c| allowed || !c.node_direct);
        let mut tried = Vec::new();
        for choice in admissible {
            let mut r = self.measured(choice)?;
            // A choice that cannot run here (counts that do not fit, one
            // node) is not timed.
            if r.strategy() != choice.strategy {
                continue;
            }
            tried.push(self.time_choice(&mut r, choice)?);
            if choice.strategy == Strategy::Async {
                let routed_here = route_counts(&r, comm);
                drop(r);
                tried.extend(self.thresholds(choice, routed_here)?);
            }
        }
        Ok(tried)
    }

    /// `choice` with each threshold near `auto`'s — the datatypes' (where
    /// `choice` types messages) and the direct sends' — timed where it
    /// routes messages otherwise than `choice` does (`routed_here`:
    /// [`route_counts`]).
    fn thresholds(
        &mut self,
        choice: Measured,
        routed_here: [u64; 2],
    ) -> Result<Vec<Tried>, RedistError> {
        let comm = self.case.source_grid.communicator();
        let typed = (thresholds(std::mem::size_of::<T>()).into_iter())
            .filter(|_| choice.typed)
            .map(|n| Measured {
                min_run: Some(n),
                ..choice
            });
        let direct = direct_thresholds().into_iter().map(|n| Measured {
            direct_run: Some(n),
            ..choice
        });
        let mut tried = Vec::new();
        for near in typed.chain(direct).collect::<Vec<_>>() {
            let mut r = self.measured(near)?;
            if route_counts(&r, comm) != routed_here {
                tried.push(self.time_choice(&mut r, near)?);
            }
        }
        Ok(tried)
    }

    /// The redistribution running `choice`. Collective.
    fn measured(&self, choice: Measured) -> Result<Redistribution<T>, RedistError> {
        self.build(Options {
            measured: Some(choice),
            ..self.base.clone()
        })
    }
}

/// Adds `best` (and `auto`'s time beside it) to the wisdom file at `path`
/// under the case's key. Collective.
fn keep<T: Element>(
    case: &Case<'_>,
    base: &Options,
    path: &std::path::Path,
    best: Tried,
    auto_seconds: f64,
) -> Result<(), RedistError> {
    let key = Key {
        case: key::case(
            case.source,
            case.target,
            &Window::whole(case.source.shape()),
            None,
            base,
            std::mem::size_of::<T>(),
        ),
        machine: key::machine(case.source_grid),
    };
    let entry = Entry {
        key,
        choice: Kept::Exchange(best.choice),
        seconds: best.seconds,
        auto_seconds,
    };
    file::remember(case.source_grid.communicator(), path, entry)
}

/// The progress line of one choice timed, on stderr when `loud`.
pub(super) fn say(loud: bool, what: &str, seconds: f64) {
    if loud {
        eprintln!("tune: {what}: {:.3} ms", seconds * 1e3);
    }
}

/// The fastest of `tried`, where it beats `auto`; else `auto`.
fn fastest(auto: Tried, tried: &[Tried]) -> Tried {
    match tried.iter().min_by(|x, y| x.seconds.total_cmp(&y.seconds)) {
        Some(t) if t.seconds < auto.seconds => *t,
        _ => auto,
    }
}

/// The largest of every rank's `nanos`, in seconds. Collective.
pub(super) fn slowest_seconds(comm: &mpi::topology::SimpleCommunicator, nanos: u128) -> f64 {
    let mine = [u64::try_from(nanos).unwrap_or(u64::MAX)];
    let mut slowest = [0u64];
    agree::all_reduce_max(comm, &mine, &mut slowest);
    slowest[0] as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::thresholds;

    #[test]
    fn direct_thresholds_lie_either_side_of_autos() {
        let [below, above] = super::direct_thresholds();
        assert!(below < crate::tuning::DIRECT_MIN_RUN && crate::tuning::DIRECT_MIN_RUN < above);
    }

    #[test]
    fn thresholds_lie_either_side_of_autos() {
        // element bytes; thresholds in elements (auto's: 128 bytes)
        let rows: [(usize, &[usize]); 5] = [
            (8, &[8, 32]),
            (1, &[64, 256]),
            (16, &[4, 16]),
            (128, &[2]),
            (1000, &[2]),
        ];
        for (bytes, want) in rows {
            assert_eq!(thresholds(bytes), want, "{bytes} B");
        }
    }
}
