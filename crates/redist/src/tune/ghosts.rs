//! Ghost updates measured: whether the ranks of a node read each other's
//! storage or exchange messages, timed on the real array and kept in the
//! wisdom file, where later updates of the same layout and spec read it
//! ([`GhostOptions::wisdom`]).
//!
//! A ghost update has one choice the engine makes by rule: node-direct
//! reads wherever a neighbour shares the node and its storage is shared
//! memory. Reads save a pack and a copy; on a node whose ranks share few
//! cores, a reader waiting for its owner's note can cost more than the
//! messages would. Measuring settles it for the machine at hand.

use super::file::{self, Recalled};
use super::key;
use super::measure::{say, slowest_seconds, TuneSettings};
use super::wisdom::{Entry, Kept, Key};
use crate::error::RedistError;
use crate::exec::agree;
use crate::ghost::{GhostOptions, GhostSpec, GhostUpdate};
use dist_array::{DistArray, Element, Layout};
use mpi::topology::Communicator;
use std::mem::size_of;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One way of a ghost update and its time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GhostTried {
    /// Whether ranks of a node read each other's storage.
    pub node_direct: bool,
    /// Seconds per update: the slowest rank's median.
    pub seconds: f64,
}

/// What [`tune_ghosts`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct GhostTuned {
    /// The fastest way (the default where nothing was faster).
    pub best: GhostTried,
    /// The way the options give untuned, and its time.
    pub default: GhostTried,
    /// Every way timed, the default first.
    pub tried: Vec<GhostTried>,
    /// Updates the measuring ran, in all.
    pub executions: usize,
    /// Seconds the measuring took (building included), the slowest rank's.
    pub seconds: f64,
}

impl GhostTuned {
    /// The best way's time over the default's (at most 1).
    pub fn ratio(&self) -> f64 {
        if self.default.seconds > 0.0 {
            self.best.seconds / self.default.seconds
        } else {
            1.0
        }
    }
}

/// The case of a ghost update: the layout, the ghost widths, which axes
/// wrap, the corners and the element size.
fn case(layout: &Layout, spec: &GhostSpec, elem_bytes: usize) -> String {
    format!(
        "ghost {layout} widths {:?} periodic {:?} corners {} elem {elem_bytes}B",
        spec.widths(),
        spec.periodic(),
        spec.corners()
    )
}

/// The key of `array`'s update by `spec`. Collective (two small
/// all-reduces).
fn key_of<T: Element>(array: &DistArray<T>, spec: &GhostSpec) -> Key {
    Key {
        case: case(array.layout(), spec, size_of::<T>()),
        machine: key::machine(array.grid()),
    }
}

/// Whether the wisdom file (`wisdom`, else `NDCYCLIC_WISDOM`) found
/// node-direct reads faster for `array`'s update by `spec` (`None`: no
/// file, or nothing for it), and the warnings every rank gives alike.
/// Collective when a file is named.
pub(crate) fn recall_ghosts<T: Element>(
    array: &DistArray<T>,
    spec: &GhostSpec,
    wisdom: Option<&Path>,
) -> (Option<bool>, Vec<String>) {
    let Some(path) = file::path(wisdom) else {
        return (None, Vec::new());
    };
    let comm = array.grid().communicator();
    let warning = match file::recall(comm, &path, &key_of(array, spec)) {
        Recalled::Found(Kept::Ghost { node_direct }) => return (Some(node_direct), Vec::new()),
        Recalled::Found(other) => format!(
            "wisdom file {}: its entry for this ghost update is not a ghost update's choice \
             ({other}); untuned",
            path.display()
        ),
        Recalled::Warning(w) | Recalled::Absent(w) => w,
    };
    if comm.rank() == 0 {
        eprintln!("ndcyclic: warning: {warning}");
    }
    (None, vec![warning])
}

/// Whether `holds` on some rank of `comm`. Collective.
fn any_rank(comm: &mpi::topology::SimpleCommunicator, holds: bool) -> bool {
    let mut any = [0u64];
    agree::all_reduce_max(comm, &[u64::from(holds)], &mut any);
    any[0] != 0
}

/// Times `warmups` then `reps` updates of `array`: the slowest rank's
/// median, in seconds. Collective.
fn time<T: Element>(
    update: &mut GhostUpdate<T>,
    array: &mut DistArray<T>,
    warmups: usize,
    reps: usize,
) -> Result<f64, RedistError> {
    for _ in 0..warmups.max(1) {
        update.update(array)?;
    }
    let mut times = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        update.update(array)?;
        times.push(t.elapsed().as_nanos());
    }
    times.sort_unstable();
    Ok(slowest_seconds(
        array.grid().communicator(),
        times[times.len() / 2],
    ))
}

/// Measures the ghost update `spec` of `array` both ways its options
/// allow — node-direct reads where they run, and messages — and returns
/// the fastest; with [`TuneSettings::wisdom`], adds it to that wisdom
/// file, where later updates of this layout and spec on this machine
/// ([`GhostOptions::wisdom`], `NDCYCLIC_WISDOM`) run it without
/// measuring. The array's ghosts are refreshed. Collective.
///
/// ```
/// use dist_array::{DistArray, Layout};
/// use mpi::topology::Communicator;
/// use procgrid::ProcGrid;
/// use redist::ghost::{Corners, GhostOptions, GhostSpec};
/// use redist::tune::{tune_ghosts, TuneSettings};
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
/// let layout = Layout::parse(&[16 * p, 16], &format!("block,block@{p}x1")).unwrap();
/// let a = DistArray::from_fn(&grid, layout, |g| (g[0] + g[1]) as f64).unwrap();
/// let mut a = a.with_ghosts(&[1, 1]).unwrap();
/// let spec = GhostSpec::new(&[1, 1], &[true, false], Corners::Box);
/// let settings = TuneSettings { warmups: 1, reps: 3, ..TuneSettings::default() };
/// let tuned = tune_ghosts(&mut a, &spec, &GhostOptions::default(), &settings).unwrap();
/// assert!(tuned.best.seconds <= tuned.default.seconds);
/// assert!(!tuned.tried.is_empty());
/// ```
///
/// # Errors
///
/// As [`GhostUpdate::with_options`] and [`GhostUpdate::update`];
/// [`RedistError::Wisdom`] when the wisdom file could not be written (on
/// every rank).
pub fn tune_ghosts<T: Element>(
    array: &mut DistArray<T>,
    spec: &GhostSpec,
    options: &GhostOptions,
    settings: &TuneSettings,
) -> Result<GhostTuned, RedistError> {
    let started = Instant::now();
    let grid = array.grid().clone();
    let comm = grid.communicator();
    let loud = settings.progress && comm.rank() == 0;
    // No wisdom file read while measuring, not even the environment's.
    let base = GhostOptions {
        wisdom: Some(PathBuf::new()),
        ..options.clone()
    };
    let mut ways = vec![base.node_direct, false];
    ways.dedup();
    let mut tried: Vec<GhostTried> = Vec::new();
    let mut executions = 0;
    for node_direct in ways {
        let o = GhostOptions {
            node_direct,
            ..base.clone()
        };
        let mut update = GhostUpdate::with_options(array, spec, o)?;
        // What runs: reads only where some rank has a neighbour on its node.
        let ran = node_direct && any_rank(comm, update.reads_shared());
        let seconds = time(&mut update, array, settings.warmups, settings.reps)?;
        executions += settings.warmups.max(1) + settings.reps.max(1);
        let way = Kept::Ghost { node_direct: ran };
        say(loud, &way.to_string(), seconds);
        tried.push(GhostTried {
            node_direct: ran,
            seconds,
        });
        if !ran {
            // Messages already: there is no other way to try.
            break;
        }
    }
    let default = tried[0];
    let best = (tried.iter().copied())
        .min_by(|x, y| x.seconds.total_cmp(&y.seconds))
        .filter(|b| b.seconds < default.seconds)
        .unwrap_or(default);
    if let Some(path) = &settings.wisdom {
        let entry = Entry {
            key: key_of(array, spec),
            choice: Kept::Ghost {
                node_direct: best.node_direct,
            },
            seconds: best.seconds,
            auto_seconds: default.seconds,
        };
        file::remember(comm, path, entry)?;
    }
    Ok(GhostTuned {
        best,
        default,
        tried,
        executions,
        seconds: slowest_seconds(comm, started.elapsed().as_nanos()),
    })
}
