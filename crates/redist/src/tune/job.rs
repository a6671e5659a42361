//! Grids chosen for a job: each candidate process grid set up and timed
//! on whole steps of the job — every phase, its exchanges and its
//! computation — and the fastest kept, in a wisdom file when one is named.
//!
//! A grid's exchanges alone do not tell which grid is best: cuDecomp's own
//! benchmark notes that the grid whose communication was fastest did not
//! give the fastest FFT. So the job times what it runs: [`choose_grid`]
//! asks the job to set itself up on a grid and hand back one step, and
//! times that step.

use super::file;
use super::grids;
use super::key;
use super::measure::slowest_seconds;
use super::wisdom::{Entry, Kept, Key};
use crate::error::RedistError;
use crate::exec::agree::{self, Fingerprint};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::Node;
use std::fmt;
use std::path::PathBuf;
use std::time::Instant;

/// How [`choose_grid`] measures.
#[derive(Debug, Clone)]
pub struct GridSettings {
    /// Steps of each grid run before it is timed (plans built, caches
    /// warm, `auto`'s trial of routes spent).
    pub warmups: usize,
    /// Timed steps of each grid; the median of the slowest rank's counts.
    pub reps: usize,
    /// The wisdom file: read first (a grid found there for this job and
    /// machine is chosen without measuring), and written with what was
    /// measured. `None`: the file `NDCYCLIC_WISDOM` names, if any; an
    /// empty path: none at all.
    pub wisdom: Option<PathBuf>,
    /// Rank 0 prints each grid's time to stderr as it goes.
    pub progress: bool,
}

impl Default for GridSettings {
    /// Eight warm-up steps (enough for `auto`'s trial of routes, executions
    /// 2–8 of a redistribution), three timed ones, the environment's wisdom
    /// file, quiet.
    fn default() -> Self {
        GridSettings {
            warmups: 8,
            reps: 3,
            wisdom: None,
            progress: false,
        }
    }
}

/// What became of one candidate grid.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Timed: seconds per step, the median of the slowest rank's.
    Timed(f64),
    /// The job could not be set up on it: why (this rank's error, or that
    /// another rank's set-up failed).
    Refused(String),
}

/// One candidate grid and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct GridTried {
    /// The grid's extents.
    pub grid: Vec<usize>,
    /// Its time per step, or why it was not timed.
    pub outcome: Outcome,
}

/// What [`choose_grid`] chose.
#[derive(Debug, Clone, PartialEq)]
pub struct GridChoice {
    /// The chosen grid's extents.
    pub grid: Vec<usize>,
    /// Its time per step, measured now; `None` when the wisdom file gave it.
    pub seconds: Option<f64>,
    /// The first candidate's (the job's default grid's) time per step,
    /// measured beside it; `None` when the wisdom file gave the choice.
    pub default_seconds: Option<f64>,
    /// Whether the wisdom file gave the choice (nothing was measured).
    pub recalled: bool,
    /// Every candidate, in the order tried (none when recalled).
    pub tried: Vec<GridTried>,
    /// Steps run while measuring, warm-ups included.
    pub steps: usize,
    /// Seconds the choosing took (set-ups included), the slowest rank's.
    pub tuning_seconds: f64,
    /// What the wisdom file could not give or keep (the same on every
    /// rank); choosing never fails for a wisdom file's sake.
    pub warnings: Vec<String>,
}

impl GridChoice {
    /// The chosen grid's time over the default grid's (at most 1: the
    /// default is kept unless another grid is faster); 1 when recalled.
    pub fn ratio(&self) -> f64 {
        match (self.seconds, self.default_seconds) {
            (Some(s), Some(d)) if d > 0.0 => s / d,
            _ => 1.0,
        }
    }
}

/// Chooses the fastest of `candidates` (process grids; the first is the
/// job's default) for the job named `job`: for each, `setup(grid)` sets
/// the job up on that grid and returns one step of it, which is run
/// [`GridSettings::warmups`] times and then timed
/// [`GridSettings::reps`] times, each after a barrier; the slowest rank's
/// median counts, the whole step (exchanges and computation) timed. Each
/// grid's set-up is dropped before the next is made.
///
/// `job` names what the time depends on besides the machine — the job,
/// its shapes, element type and options (`fft3d 256x256x256 c64`): a
/// wisdom entry holds for the same name on the same machine. With a
/// wisdom file ([`GridSettings::wisdom`]) holding this job's grid, that
/// grid is chosen and nothing is set up; otherwise what was measured is
/// added to the file. A missing, unreadable, corrupt or foreign file gives
/// a warning on every rank ([`GridChoice::warnings`]), never an error.
///
/// Collective over `comm`; `setup` and the steps are called on every rank
/// alike and may be collective. A set-up that fails (on any rank) refuses
/// that grid ([`Outcome::Refused`]); a step that fails ends the choosing
/// with its error on that rank and [`RedistError::OtherRank`] on the
/// others. Either must fail where no other rank is left waiting for it in
/// a collective call: on every rank alike, or after its collective calls.
///
/// ```
/// use mpi::collective::CommunicatorCollectives;
/// use mpi::topology::Communicator;
/// use redist::tune::{choose_grid, grids, GridSettings};
/// use redist::RedistError;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let settings = GridSettings { warmups: 1, reps: 3, wisdom: Some("".into()), progress: false };
/// let chosen = choose_grid(&world, "example", &grids(p, 2), &settings, |grid: &[usize]| {
///     // A job's step on `grid`: here a sum over the ranks, and some work
///     // that grows with the grid's first extent.
///     let work = grid[0] * 1000;
///     let world = &world;
///     Ok::<_, RedistError>(move || {
///         let mut sum = 0u64;
///         world.all_reduce_into(&(work as u64), &mut sum, mpi::collective::SystemOperation::sum());
///         std::hint::black_box((0..work).sum::<usize>());
///         Ok(())
///     })
/// })
/// .unwrap();
/// assert_eq!(chosen.tried.len(), grids(p, 2).len());
/// assert!(chosen.ratio() <= 1.0);
/// ```
///
/// # Errors
///
/// [`RedistError::InvalidArgument`] for no candidates, an empty grid or
/// one of more ranks than `comm` has, and when no candidate could be set
/// up; [`RedistError::Disagreement`] when ranks pass different names,
/// candidates or settings; a step's error, as above.
pub fn choose_grid<S, E>(
    comm: &SimpleCommunicator,
    job: &str,
    candidates: &[Vec<usize>],
    settings: &GridSettings,
    setup: impl FnMut(&[usize]) -> Result<S, E>,
) -> Result<GridChoice, E>
where
    S: FnMut() -> Result<(), E>,
    E: From<RedistError> + fmt::Display,
{
    let started = Instant::now();
    let path = file::path(settings.wisdom.as_deref());
    check(comm, job, candidates, settings, path.as_ref())?;
    let machine = key::machine_of(comm, &Node::of(comm));
    let key = Key {
        case: format!("job {job}"),
        machine,
    };
    let mut warnings = Vec::new();
    if let Some(path) = &path {
        match recall(comm, path, &key, candidates) {
            Ok(grid) => {
                return Ok(GridChoice {
                    grid,
                    seconds: None,
                    default_seconds: None,
                    recalled: true,
                    tried: Vec::new(),
                    steps: 0,
                    tuning_seconds: slowest_seconds(comm, started.elapsed().as_nanos()),
                    warnings,
                })
            }
            Err(w) => warnings.extend(w),
        }
    }
    let (tried, steps) = measure_all(comm, candidates, settings, setup)?;
    let Some((grid, seconds)) = fastest(&tried) else {
        return Err(E::from(RedistError::InvalidArgument {
            what: "candidate grids",
            value: texts(candidates),
            expected: "at least one on which the job can be set up".to_string(),
        }));
    };
    let default_seconds = match tried.first().map(|t| &t.outcome) {
        Some(Outcome::Timed(s)) => Some(*s),
        _ => None,
    };
    if let Some(path) = &path {
        let entry = Entry {
            key,
            choice: Kept::Grid(grid.clone()),
            seconds,
            auto_seconds: default_seconds.unwrap_or(seconds),
        };
        warnings.extend(keep(comm, path, entry));
    }
    Ok(GridChoice {
        grid,
        seconds: Some(seconds),
        default_seconds,
        recalled: false,
        tried,
        steps,
        tuning_seconds: slowest_seconds(comm, started.elapsed().as_nanos()),
        warnings,
    })
}

/// Sets up and times each of `candidates` in turn (a refused set-up is
/// not timed), each set-up dropped before the next: what became of each,
/// and the steps run. Collective.
fn measure_all<S, E>(
    comm: &SimpleCommunicator,
    candidates: &[Vec<usize>],
    settings: &GridSettings,
    mut setup: impl FnMut(&[usize]) -> Result<S, E>,
) -> Result<(Vec<GridTried>, usize), E>
where
    S: FnMut() -> Result<(), E>,
    E: From<RedistError> + fmt::Display,
{
    let loud = settings.progress && comm.rank() == 0;
    let mut tried = Vec::with_capacity(candidates.len());
    let mut steps = 0;
    for grid in candidates {
        let outcome = match agreed_setup(comm, setup(grid)) {
            Ok(mut step) => {
                let seconds = time(comm, &mut step, settings.warmups, settings.reps)?;
                steps += settings.warmups + settings.reps.max(1);
                Outcome::Timed(seconds)
            }
            Err(why) => Outcome::Refused(why),
        };
        if loud {
            match &outcome {
                Outcome::Timed(s) => {
                    eprintln!(
                        "tune: grid {}: {:.3} ms per step",
                        grids::text(grid),
                        s * 1e3
                    )
                }
                Outcome::Refused(why) => {
                    eprintln!("tune: grid {}: refused ({why})", grids::text(grid))
                }
            }
        }
        tried.push(GridTried {
            grid: grid.clone(),
            outcome,
        });
    }
    Ok((tried, steps))
}

/// Adds `entry` to the wisdom file at `path`: the warning every rank gives
/// when it could not (choosing never fails for it). Collective.
fn keep(comm: &SimpleCommunicator, path: &std::path::Path, entry: Entry) -> Option<String> {
    let e = file::remember(comm, path, entry).err()?;
    let w = format!("{e}; the choice is not kept");
    if comm.rank() == 0 {
        eprintln!("ndcyclic: warning: {w}");
    }
    Some(w)
}

/// The candidates' texts, comma-separated.
fn texts(candidates: &[Vec<usize>]) -> String {
    candidates
        .iter()
        .map(|g| grids::text(g))
        .collect::<Vec<_>>()
        .join(",")
}

/// Checks the candidates and agrees on them, the name and the settings
/// (one all-reduce). Collective.
fn check<E: From<RedistError>>(
    comm: &SimpleCommunicator,
    job: &str,
    candidates: &[Vec<usize>],
    settings: &GridSettings,
    path: Option<&PathBuf>,
) -> Result<(), E> {
    let ranks = usize::try_from(comm.size()).unwrap_or(0);
    let bad = |value: String, expected: &str| RedistError::InvalidArgument {
        what: "candidate grids",
        value,
        expected: expected.to_string(),
    };
    let verdict = if candidates.is_empty() {
        Err(bad(String::new(), "at least one grid"))
    } else if let Some(g) = candidates.iter().find(|g| g.is_empty() || g.contains(&0)) {
        Err(bad(
            format!("{g:?}"),
            "grids of one or more positive extents",
        ))
    } else if let Some(g) = candidates.iter().find(|g| {
        g.iter()
            .try_fold(1usize, |p, &e| p.checked_mul(e))
            .is_none_or(|p| p > ranks)
    }) {
        Err(bad(
            grids::text(g),
            &format!("grids of at most the communicator's {ranks} ranks"),
        ))
    } else {
        Ok(())
    };
    let fingerprint = Fingerprint::new()
        .text(job)
        .text(&texts(candidates))
        .numbers(&[settings.warmups, settings.reps])
        .text(&format!("{path:?}"))
        .value();
    agree::agree(comm, verdict, fingerprint, "choose_grid").map_err(E::from)
}

/// The grid the wisdom file at `path` holds for `key`, if it is one of
/// `candidates`; else the warning every rank gives (none where there is
/// no file yet: measuring will write it). Collective.
fn recall(
    comm: &SimpleCommunicator,
    path: &std::path::Path,
    key: &Key,
    candidates: &[Vec<usize>],
) -> Result<Vec<usize>, Option<String>> {
    let why = match file::recall(comm, path, key) {
        file::Recalled::Absent(_) => return Err(None),
        file::Recalled::Found(Kept::Grid(g)) if candidates.contains(&g) => return Ok(g),
        file::Recalled::Found(Kept::Grid(g)) => format!(
            "wisdom file {}: its grid {} is not among this job's candidates ({}); measuring",
            path.display(),
            grids::text(&g),
            texts(candidates)
        ),
        file::Recalled::Found(other) => format!(
            "wisdom file {}: its entry for this job is not a grid ({other}); measuring",
            path.display()
        ),
        file::Recalled::Warning(w) => w.replace("; untuned", "; measuring"),
    };
    if comm.rank() == 0 {
        eprintln!("ndcyclic: warning: {why}");
    }
    Err(Some(why))
}

/// The step `setup` returned, if every rank's set-up succeeded; else why
/// not (this rank's error, or which rank failed). Collective: one
/// all-reduce.
fn agreed_setup<S, E: fmt::Display>(
    comm: &SimpleCommunicator,
    setup: Result<S, E>,
) -> Result<S, String> {
    let size = u64::try_from(comm.size()).unwrap_or(u64::MAX);
    let me = u64::try_from(comm.rank()).unwrap_or(0);
    // The lowest failed rank comes back as size − rank.
    let mine = [if setup.is_err() { size - me } else { 0 }];
    let mut all = [0u64];
    agree::all_reduce_max(comm, &mine, &mut all);
    match setup {
        Err(e) => Err(e.to_string()),
        Ok(_) if all[0] != 0 => Err(format!("rank {} could not set it up", size - all[0])),
        Ok(step) => Ok(step),
    }
}

/// Runs `warmups` steps, then `reps` timed ones, each after a barrier: the
/// median over the steps of the slowest rank's seconds. A step that fails
/// on any rank ends it, every rank alike (one all-reduce per step).
fn time<S, E>(
    comm: &SimpleCommunicator,
    step: &mut S,
    warmups: usize,
    reps: usize,
) -> Result<f64, E>
where
    S: FnMut() -> Result<(), E>,
    E: From<RedistError>,
{
    let size = u64::try_from(comm.size()).unwrap_or(u64::MAX);
    let me = u64::try_from(comm.rank()).unwrap_or(0);
    let mut times = Vec::with_capacity(reps.max(1));
    for i in 0..warmups + reps.max(1) {
        procgrid::waits::barrier(comm);
        let t = Instant::now();
        let done = step();
        let nanos = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mine = [if done.is_err() { size - me } else { 0 }, nanos];
        let mut all = [0u64; 2];
        agree::all_reduce_max(comm, &mine, &mut all);
        match done {
            Err(e) => return Err(e),
            Ok(()) if all[0] != 0 => {
                return Err(E::from(RedistError::OtherRank {
                    what: "choose_grid",
                    rank: usize::try_from(size - all[0]).unwrap_or(usize::MAX),
                    kind: "the job's step",
                }))
            }
            Ok(()) if i >= warmups => times.push(all[1]),
            Ok(()) => {}
        }
    }
    times.sort_unstable();
    Ok(times[times.len() / 2] as f64 * 1e-9)
}

/// The first fastest timed grid and its seconds.
fn fastest(tried: &[GridTried]) -> Option<(Vec<usize>, f64)> {
    tried
        .iter()
        .filter_map(|t| match t.outcome {
            Outcome::Timed(s) => Some((t.grid.clone(), s)),
            Outcome::Refused(_) => None,
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tried(grid: &[usize], outcome: Outcome) -> GridTried {
        GridTried {
            grid: grid.to_vec(),
            outcome,
        }
    }

    #[test]
    fn the_fastest_timed_grid_wins_and_ties_keep_the_earlier() {
        use Outcome::{Refused, Timed};
        type Winner = Option<(Vec<usize>, f64)>;
        let table: [(Vec<GridTried>, Winner); 4] = [
            (vec![], None),
            (vec![tried(&[2, 2], Refused("no".into()))], None),
            (
                vec![
                    tried(&[2, 2], Timed(2.0)),
                    tried(&[4, 1], Timed(1.0)),
                    tried(&[1, 4], Refused("no".into())),
                ],
                Some((vec![4, 1], 1.0)),
            ),
            (
                vec![tried(&[2, 2], Timed(1.0)), tried(&[4, 1], Timed(1.0))],
                Some((vec![2, 2], 1.0)),
            ),
        ];
        for (t, expected) in table {
            assert_eq!(fastest(&t), expected, "{t:?}");
        }
    }

    #[test]
    fn the_ratio_is_against_the_default_grid() {
        let c = |seconds, default_seconds| GridChoice {
            grid: vec![2, 2],
            seconds,
            default_seconds,
            recalled: false,
            tried: Vec::new(),
            steps: 0,
            tuning_seconds: 0.0,
            warnings: Vec::new(),
        };
        assert_eq!(c(Some(1.0), Some(2.0)).ratio(), 0.5);
        assert_eq!(c(None, None).ratio(), 1.0);
        assert_eq!(c(Some(1.0), Some(0.0)).ratio(), 1.0);
    }
}
