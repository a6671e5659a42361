//! `redist tune grid`: the process grid of a job of redistributions chosen
//! by timing its whole steps on each candidate grid
//! (`redist::tune::choose_grid`) and kept in a wisdom file.
//!
//! The job is a chain of phases (`--phases "block,*@G -> *,block@G ->
//! block,*@G"`): one step refreshes the first array's ghosts (with
//! `--ghosts W`) and moves it through every phase in turn. A
//! phase on the grid `G` takes each candidate's extents on its
//! distributed axes; a fixed phase keeps its own grid. The candidates are
//! every grid of the job's ranks with one extent per distributed axis
//! (the most nearly square first, the default), or those `--grids` names.

use super::phases::{self, Phase};
use crate::collective::report_and_verdict;
use crate::error::CliError;
use crate::measure::args::{by_element, ElementArg};
use crate::measure::setup::grid_for;
use crate::measure::values::{self, IndexValue, Moved};
use crate::shape::{layout_for, Shape};
use clap::Args;
use dist_array::{DistArray, Element, Layout, LayoutSpec};
use mpi::topology::{Communicator, SimpleCommunicator};
use redist::ghost::{Corners, GhostOptions, GhostSpec, GhostUpdate};
use redist::tune::{choose_grid, grids, GridChoice, GridSettings, Outcome};
use redist::{Options, Redistribution, Strategy};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `redist tune grid`.
#[derive(Debug, Clone, Args)]
pub struct GridArgs {
    /// Global array shape, e.g. `512x512`.
    #[arg(long, value_name = "AxBx..")]
    pub shape: Shape,
    /// The job's phases: layout specs joined by `->`, each on the grid
    /// being chosen (`@G`: its extents on the axes that are not `*`) or on
    /// a fixed grid, e.g. `"block,*@G -> *,block@G -> block,*@G"`.
    #[arg(long, value_name = "SPEC -> SPEC -> ..")]
    pub phases: String,
    /// Ghost widths, one for every axis or one per axis (`1` or `2,1,0`):
    /// each step first refreshes the ghosts of the first phase's array
    /// (every axis periodic, corners included), then moves it through the
    /// phases — a stencil solver's step. With ghosts, one phase is enough
    /// (`--phases "block,block,block@G" --ghosts 1` chooses a box
    /// decomposition).
    #[arg(long, value_delimiter = ',', value_name = "W,..")]
    pub ghosts: Vec<usize>,
    /// The candidate grids, e.g. `2x2,4x1` (default: every grid of the
    /// job's ranks with one extent per distributed axis of a phase on `G`,
    /// the most nearly square first).
    #[arg(long, value_delimiter = ',', value_name = "AxB,..")]
    pub grids: Vec<Shape>,
    /// Element type.
    #[arg(long = "type", value_enum, default_value = "f64")]
    pub element: ElementArg,
    /// The redistributions' exchange: auto, alltoallv, scheduled, async or
    /// combined.
    #[arg(long, default_value = "auto", value_name = "NAME")]
    pub strategy: Strategy,
    /// Steps of each grid before the timed ones (the redistributions'
    /// trial of routes spent).
    #[arg(long, default_value_t = 8)]
    pub warmups: usize,
    /// Timed steps of each grid; the slowest rank's median counts.
    #[arg(long, default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    pub reps: usize,
    /// A wisdom file: a grid it holds for this job and machine is taken
    /// without measuring; otherwise what was measured is added to it
    /// (default: `NDCYCLIC_WISDOM`; an empty name: none).
    #[arg(long, value_name = "FILE")]
    pub wisdom: Option<PathBuf>,
    /// Run one step on the chosen grid and check every element of the last
    /// phase's array against its global index.
    #[arg(long)]
    pub verify: bool,
    /// Print one JSON object on one line (rank 0, last line of stdout).
    #[arg(long)]
    pub json: bool,
}

/// Runs `redist tune grid` on `world`: every rank takes part; rank 0
/// writes to `out`.
///
/// # Errors
///
/// [`CliError::Unsupported`] for phases that leave nothing to choose or
/// candidate grids of the wrong number of extents; the layouts' errors
/// when no candidate's layouts fit the shape; the library's errors, alike
/// on every rank.
pub fn run(
    args: &GridArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    by_element!(args.element, run_typed(args, world, out))
}

/// `redist tune grid` with elements of type `T`: the phases and
/// candidates, the choice, the check, rank 0's report. Collective.
fn run_typed<T: IndexValue>(
    args: &GridArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let ranks = usize::try_from(world.size()).unwrap_or(0);
    let (phases, dims) = phases::parse(&args.phases, !args.ghosts.is_empty())?;
    ghost_spec(&args.ghosts, args.shape.len())?;
    let candidates = candidates(args, ranks, dims)?;
    check_layouts(&args.shape, &phases, &candidates)?;
    let root = world.rank() == 0;
    let settings = GridSettings {
        warmups: args.warmups,
        reps: args.reps,
        wisdom: args.wisdom.clone(),
        progress: root && !args.json,
    };
    let options = Options {
        strategy: args.strategy,
        // The exchanges decided by the rules: a grid is chosen, not them.
        wisdom: Some(PathBuf::new()),
        ..Options::default()
    };
    let choice = choose_grid(world, &job_name(args), &candidates, &settings, |grid| {
        let mut job = Job::<T>::new(args, &phases, grid, world, &options)?;
        Ok(move || job.step())
    })?;
    let verified = if args.verify {
        let mut job = Job::<T>::new(args, &phases, &choice.grid, world, &options)?;
        job.step()?;
        Some(job.as_expected())
    } else {
        None
    };
    let report = Report {
        args,
        phases: &phases,
        ranks,
        choice: &choice,
        verified,
    };
    report_and_verdict(world, || report.write(out), verified)
}

/// The candidate grids: `--grids`, each of `dims` extents, or every grid
/// of `ranks` ranks with `dims` extents.
fn candidates(args: &GridArgs, ranks: usize, dims: usize) -> Result<Vec<Vec<usize>>, CliError> {
    if args.grids.is_empty() {
        return Ok(grids(ranks, dims));
    }
    match args.grids.iter().find(|g| g.len() != dims) {
        Some(g) => Err(CliError::Unsupported {
            what: "--grids",
            expected: format!(
                "grids of {dims} extent(s), one per distributed axis of a phase on `G` \
                 (got {g})"
            ),
        }),
        None => Ok(args.grids.iter().map(|g| g.0.clone()).collect()),
    }
}

/// The first layout error of the phases on the first candidate, where no
/// candidate's layouts all fit the shape (pure: the same verdict on every
/// rank). A candidate some of whose layouts do not fit is refused by the
/// choosing; where every one is, the reason is this error.
fn check_layouts(
    shape: &Shape,
    phases: &[Phase],
    candidates: &[Vec<usize>],
) -> Result<(), CliError> {
    let fits = |grid: &[usize]| -> Result<(), CliError> {
        for p in phases {
            layout_for(shape, &spec(p, grid)?)?;
        }
        Ok(())
    };
    let verdicts: Vec<Result<(), CliError>> = candidates.iter().map(|g| fits(g)).collect();
    if verdicts.iter().any(Result::is_ok) {
        return Ok(());
    }
    verdicts.into_iter().next().unwrap_or(Ok(()))
}

/// The ghost update of `--ghosts` (one width, or one per axis of an
/// array of `ndim` axes; every axis periodic, corners included), if any.
fn ghost_spec(widths: &[usize], ndim: usize) -> Result<Option<GhostSpec>, CliError> {
    let widths = match widths.len() {
        0 => return Ok(None),
        1 => vec![widths[0]; ndim],
        n if n == ndim => widths.to_vec(),
        _ => {
            return Err(CliError::Unsupported {
                what: "--ghosts",
                expected: format!("one width, or one per axis ({ndim})"),
            })
        }
    };
    Ok(Some(GhostSpec::new(
        &widths,
        &vec![true; ndim],
        Corners::Box,
    )))
}

/// A phase's spec on `grid`, parsed.
fn spec(phase: &Phase, grid: &[usize]) -> Result<LayoutSpec, CliError> {
    Ok(phase.on(grid).parse::<LayoutSpec>()?)
}

/// The name the wisdom file keeps the choice under: the shape, the phases
/// as written, the element type and the exchange.
fn job_name(args: &GridArgs) -> String {
    let phases: Vec<String> = args
        .phases
        .split("->")
        .map(|p| p.trim().to_string())
        .collect();
    format!(
        "redist phases {} {} ghosts {:?} type {:?} strategy {}",
        args.shape,
        phases.join(" -> "),
        args.ghosts,
        args.element,
        args.strategy
    )
    .to_lowercase()
}

/// The job set up on one candidate grid: an array per phase, filled as
/// `redist run`'s source, the redistribution from each phase to the next,
/// and the first array's ghost update (with `--ghosts`).
struct Job<T: Element> {
    arrays: Vec<DistArray<T>>,
    steps: Vec<Redistribution<T>>,
    ghosts: Option<GhostUpdate<T>>,
    shape: Vec<usize>,
}

impl<T: IndexValue> Job<T> {
    /// The phases of `args` on `grid`: their layouts, grids (sharing one
    /// communicator), arrays, redistributions and ghost update.
    /// Collective.
    fn new(
        args: &GridArgs,
        phases: &[Phase],
        grid: &[usize],
        world: &SimpleCommunicator,
        options: &Options,
    ) -> Result<Job<T>, CliError> {
        let shape = &args.shape;
        let layouts = (phases.iter())
            .map(|p| layout_for(shape, &spec(p, grid)?))
            .collect::<Result<Vec<Layout>, CliError>>()?;
        let first = grid_for(&layouts[0], world, None)?;
        let mut grids = vec![first.clone()];
        for l in &layouts[1..] {
            grids.push(grid_for(l, world, Some(&first))?);
        }
        let source = values::source::<T>(&grids[0], &layouts[0], 0)?;
        let (source, ghosts) = match ghost_spec(&args.ghosts, shape.len())? {
            None => (source, None),
            Some(spec) => {
                let a = source.into_shared().with_ghosts(spec.widths())?;
                let update = GhostUpdate::with_options(&a, &spec, GhostOptions::default())?;
                (a, Some(update))
            }
        };
        let mut arrays = vec![source];
        for (g, l) in grids.iter().zip(&layouts).skip(1) {
            arrays.push(values::target::<T>(g, l, None, false)?);
        }
        let steps = (0..layouts.len() - 1)
            .map(|i| Redistribution::<T>::between(&arrays[i], &arrays[i + 1], options.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Job {
            arrays,
            steps,
            ghosts,
            shape: shape.0.clone(),
        })
    }

    /// One step: the array moved through every phase in turn. Collective.
    fn step(&mut self) -> Result<(), CliError> {
        if let Some(g) = &mut self.ghosts {
            g.update(&mut self.arrays[0])?;
        }
        for (i, r) in self.steps.iter_mut().enumerate() {
            let (done, rest) = self.arrays.split_at_mut(i + 1);
            r.execute_into(&done[i], &mut rest[0])?;
        }
        Ok(())
    }

    /// Whether the last phase's array holds every element's global index
    /// value, on every rank. Collective.
    fn as_expected(&self) -> bool {
        let last = self.arrays.last().expect("a job has two phases or more");
        let moved = Moved {
            shape: &self.shape,
            window: None,
            permutation: None,
        };
        values::all_as_expected(last.grid().communicator(), last, moved, &|v| v, 0)
    }
}

/// What rank 0 reports: the arguments, the choice and the check.
struct Report<'a> {
    args: &'a GridArgs,
    phases: &'a [Phase],
    ranks: usize,
    choice: &'a GridChoice,
    verified: Option<bool>,
}

impl Report<'_> {
    /// Each phase's spec on `grid`.
    fn on(&self, grid: &[usize]) -> Vec<String> {
        self.phases.iter().map(|p| p.on(grid)).collect()
    }

    /// One JSON line with `--json`, else a table.
    fn write(&self, out: &mut dyn Write) -> Result<(), CliError> {
        if self.args.json {
            writeln!(out, "{}", self.json())?;
            Ok(())
        } else {
            self.table(out)
        }
    }

    /// The report as one JSON object.
    fn json(&self) -> serde_json::Value {
        let (args, choice) = (self.args, self.choice);
        let ms = |s: f64| s * 1e3;
        let tried: Vec<serde_json::Value> = (choice.tried.iter())
            .map(|t| {
                let mut v = json!({"grid": grids::text(&t.grid), "phases": self.on(&t.grid)});
                match &t.outcome {
                    Outcome::Timed(s) => v["ms"] = json!(ms(*s)),
                    Outcome::Refused(why) => v["refused"] = json!(why),
                }
                v
            })
            .collect();
        json!({
            "command": "tune grid",
            "shape": args.shape.0,
            "phases": self.on(&choice.grid),
            "ghosts": args.ghosts,
            "ranks": self.ranks,
            "type": format!("{:?}", args.element).to_lowercase(),
            "warmups": args.warmups,
            "reps": args.reps,
            "grid": grids::text(&choice.grid),
            "recalled": choice.recalled,
            "ms": choice.seconds.map(ms),
            "default_ms": choice.default_seconds.map(ms),
            "chosen_over_default": choice.ratio(),
            "tried": tried,
            "steps": choice.steps,
            "tune_seconds": choice.tuning_seconds,
            "warnings": choice.warnings,
            "wisdom": args.wisdom.as_ref().map(|p| p.display().to_string()),
            "verified": self.verified,
        })
    }

    /// The report as a table: a line per grid, then the choice.
    fn table(&self, out: &mut dyn Write) -> Result<(), CliError> {
        let (args, choice) = (self.args, self.choice);
        writeln!(
            out,
            "{} {} on {} ranks, {} warm-up and {} timed steps per grid",
            args.shape,
            args.phases.trim(),
            self.ranks,
            args.warmups,
            args.reps
        )?;
        for t in &choice.tried {
            let what = match &t.outcome {
                Outcome::Timed(s) => format!("{:.3} ms per step", s * 1e3),
                Outcome::Refused(why) => format!("refused: {why}"),
            };
            let mark = if t.grid == choice.grid {
                "  <- chosen"
            } else {
                ""
            };
            let phases = self.on(&t.grid).join(" -> ");
            writeln!(out, "  {}: {phases}: {what}{mark}", grids::text(&t.grid))?;
        }
        let how = if choice.recalled {
            "from the wisdom file, nothing measured".to_string()
        } else {
            format!(
                "{:.2}x the default grid's time; measuring took {} steps, {:.2} s{}",
                choice.ratio(),
                choice.steps,
                choice.tuning_seconds,
                (args.wisdom.as_ref())
                    .map(|p| format!("; added to {}", p.display()))
                    .unwrap_or_default()
            )
        };
        writeln!(out, "chosen {} ({how})", grids::text(&choice.grid))?;
        for w in &choice.warnings {
            writeln!(out, "warning: {w}")?;
        }
        if let Some(ok) = self.verified {
            writeln!(out, "verified: {ok}")?;
        }
        Ok(())
    }
}
