//! ndcyclic's MPI test harness.
//!
//! MPI can be initialised once per process, so MPI behaviour cannot be tested
//! by ordinary `#[test]` functions. Instead, a test program is an integration
//! test target with `harness = false` whose `main` calls [`run`]. Under
//! `cargo test` that program is the *launcher*: it starts itself under
//! `mpirun -n K` for every K of the suite (by default 1, 2, 3, 4, 5, 6 and 8),
//! each launch under a timeout, and fails with the failing ranks' output when
//! any rank fails or the launch hangs. Started by the launcher, the same program
//! is a *rank*: it initialises MPI and runs the test bodies on `MPI_COMM_WORLD`.
//!
//! A test body returns `Err(message)` on failure (see [`ensure!`] and
//! [`ensure_eq!`]); the failing rank prints the message and aborts the job, so
//! no rank is left blocked in a collective.
//!
//! ```no_run
//! // tests/mpi_example.rs, with `[[test]] name = "mpi_example" harness = false`
//! use mpi::topology::{Communicator, SimpleCommunicator};
//! use mpi_harness::{ensure_eq, MpiTest};
//!
//! fn sizes_agree(world: &SimpleCommunicator) -> Result<(), String> {
//!     ensure_eq!(world.size() as usize, mpi_harness::ranks());
//!     Ok(())
//! }
//!
//! fn main() {
//!     mpi_harness::run("mpi_example", &[MpiTest::new("sizes_agree", sizes_agree)]);
//! }
//! ```
//!
//! Command-line arguments of a test program (after `cargo test --test NAME --`):
//! `--ranks 2,3` launches only those rank counts, `--list` lists every test body
//! at every rank count (`SUITE::BODY np=K: test`) without launching,
//! and any other word keeps only the test bodies whose names contain it.
//! Environment: `NDCYCLIC_MPIRUN` (launcher, default `mpirun`),
//! `NDCYCLIC_MPIRUN_ARGS` (extra launcher arguments), `NDCYCLIC_MPI_TIMEOUT`
//! (seconds per launch, default 300), `NDCYCLIC_MPI_RANKS` (like `--ranks`),
//! `NDCYCLIC_MPI_VERBOSE=1` (print the ranks' output of passing launches too),
//! `NDCYCLIC_MPI_IDLE=spin` (let MPICH spin while it waits: [`yield_when_idle`]).
//!
//! A program of several suites, each with its own rank counts and, where
//! it must, its own launcher (emulated nodes), calls [`run_suites`]: one
//! binary to build and link for all of them; `--suite NAME` launches one.
//! Launched ranks wait without spinning ([`yield_when_idle`]).
//!
//! Whole programs (the tour's examples, `docs/tour.md`) are launched the
//! same way by [`run_examples`].
#![deny(missing_docs)]

mod examples;
mod idle;
mod launch;
mod suite;

pub use examples::{run_examples, Example};
pub use idle::{yield_shim, yield_when_idle};
pub use launch::Launcher;
pub use suite::{run_suites, Suite};

use launch::Report;
use mpi::topology::SimpleCommunicator;
use std::time::Instant;

/// Rank counts every suite is launched with unless told otherwise.
pub const DEFAULT_RANK_COUNTS: &[usize] = &[1, 2, 3, 4, 5, 6, 8];

/// Environment variable that marks a process as a rank started by the launcher.
const CHILD_VAR: &str = "NDCYCLIC_MPI_CHILD";

/// The outcome of a test body: `Err` carries a message saying what was wrong.
pub type TestResult = Result<(), String>;

/// One named test body, run by every rank on `MPI_COMM_WORLD`.
#[derive(Clone, Copy)]
pub struct MpiTest {
    name: &'static str,
    body: fn(&SimpleCommunicator) -> TestResult,
}

impl MpiTest {
    /// A test called `name` running `body`.
    pub const fn new(name: &'static str, body: fn(&SimpleCommunicator) -> TestResult) -> Self {
        MpiTest { name, body }
    }

    /// The test's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

/// Returns `Err` with the location and message when a condition is false.
///
/// ```
/// fn body(x: usize) -> Result<(), String> {
///     mpi_harness::ensure!(x < 4, "x = {x} should be below 4");
///     Ok(())
/// }
/// assert!(body(3).is_ok());
/// assert!(body(5).unwrap_err().contains("x = 5 should be below 4"));
/// ```
#[macro_export]
macro_rules! ensure {
    ($cond:expr) => {
        if !$cond {
            return Err(format!("{}:{}: check failed: {}", file!(), line!(), stringify!($cond)));
        }
    };
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!("{}:{}: {}", file!(), line!(), format!($($fmt)+)));
        }
    };
}

/// Returns `Err` with both values when they differ.
///
/// ```
/// fn body(x: usize) -> Result<(), String> {
///     mpi_harness::ensure_eq!(x, 2, "for input {}", x);
///     Ok(())
/// }
/// assert!(body(2).is_ok());
/// assert!(body(3).unwrap_err().contains("left: 3"));
/// ```
#[macro_export]
macro_rules! ensure_eq {
    ($left:expr, $right:expr) => {
        $crate::ensure_eq!($left, $right, "")
    };
    ($left:expr, $right:expr, $($fmt:tt)+) => {
        match (&$left, &$right) {
            (l, r) => {
                if !(*l == *r) {
                    return Err(format!(
                        "{}:{}: {} != {} (left: {:?}, right: {:?}) {}",
                        file!(), line!(), stringify!($left), stringify!($right), l, r,
                        format!($($fmt)+)
                    ));
                }
            }
        }
    };
}

/// Every index of an array of `shape`, in row-major order: the naive
/// oracle that property and MPI tests scan element by element.
///
/// ```
/// assert_eq!(mpi_harness::all_indices(&[2, 2]), vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]);
/// assert_eq!(mpi_harness::all_indices(&[3, 0]).len(), 0);
/// ```
pub fn all_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &n in shape {
        out = out
            .into_iter()
            .flat_map(|v| (0..n).map(move |i| [v.clone(), vec![i]].concat()))
            .collect();
    }
    out
}

/// Whether `text` is the same on every rank of `world` (the minimum and
/// maximum of its hash agree): how a test checks that ranks reached the
/// same verdict, message or warning. Collective.
pub fn same_everywhere(world: &SimpleCommunicator, text: &str) -> bool {
    use mpi::collective::{CommunicatorCollectives, SystemOperation};
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let (mut lo, mut hi) = (0u64, 0u64);
    world.all_reduce_into(&h, &mut lo, SystemOperation::min());
    world.all_reduce_into(&h, &mut hi, SystemOperation::max());
    lo == hi
}

/// Number of ranks the current launch was started with (the launcher's view;
/// 1 for a process started without the harness).
pub fn ranks() -> usize {
    std::env::var("NDCYCLIC_MPI_RANKS_LAUNCHED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// Whether this process is a rank started by the launcher (rather than the
/// launcher itself, started by `cargo test`): a suite that prepares its
/// launches (e.g. picks a launcher) does so only when this is false.
pub fn is_rank() -> bool {
    std::env::var_os(CHILD_VAR).is_some()
}

/// Runs a suite: as the launcher under `cargo test`, or as a rank under `mpirun`.
/// Uses [`DEFAULT_RANK_COUNTS`]. Exits the process with a failure status when
/// any launch fails.
pub fn run(suite: &str, tests: &[MpiTest]) {
    run_with_ranks(suite, DEFAULT_RANK_COUNTS, tests)
}

/// Like [`run`], with the suite's own rank counts.
pub fn run_with_ranks(suite: &str, rank_counts: &[usize], tests: &[MpiTest]) {
    run_suites(&[Suite::new(suite, tests).ranks(rank_counts)])
}

/// Parsed command line of a test program.
struct Args {
    /// `--ranks`: the rank counts of every launch.
    ranks: Option<Vec<usize>>,
    /// `NDCYCLIC_MPI_RANKS`: the rank counts of launches through `mpirun`.
    env_ranks: Option<Vec<usize>>,
    /// Words that keep only the bodies (or examples) whose names hold one.
    filters: Vec<String>,
    /// `--skip WORD`: leaves out the bodies whose names hold one.
    skip: Vec<String>,
    /// `--suite NAME`: only that suite of a program of several.
    suite: Option<String>,
    list: bool,
}

impl Args {
    fn parse() -> Args {
        let env_ranks = std::env::var("NDCYCLIC_MPI_RANKS")
            .ok()
            .and_then(|v| parse_counts(&v));
        let mut args = Args {
            ranks: None,
            env_ranks,
            filters: vec![],
            skip: vec![],
            suite: None,
            list: false,
        };
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            match a.as_str() {
                "--ranks" => {
                    if let Some(c) = it.next().as_deref().and_then(parse_counts) {
                        args.ranks = Some(c);
                    }
                }
                "--list" => args.list = true,
                "--skip" => args.skip.extend(it.next()),
                "--suite" => args.suite = it.next(),
                // libtest options cargo or users may pass; they take a value.
                "--test-threads" | "--format" | "--logfile" | "--color" => {
                    it.next();
                }
                s if s.starts_with("--ranks=") => {
                    if let Some(c) = parse_counts(&s["--ranks=".len()..]) {
                        args.ranks = Some(c);
                    }
                }
                s if s.starts_with('-') => {}
                s => args.filters.push(s.to_string()),
            }
        }
        args
    }

    /// The rank counts of launches whose own are `own`: `--ranks`, else
    /// `NDCYCLIC_MPI_RANKS` where it applies (launches through `mpirun`),
    /// else `own`.
    fn rank_counts(&self, own: &[usize], env_applies: bool) -> Vec<usize> {
        self.ranks
            .clone()
            .or_else(|| self.env_ranks.clone().filter(|_| env_applies))
            .unwrap_or_else(|| own.to_vec())
    }

    /// Whether the body or example `name` is selected.
    fn selects(&self, name: &str) -> bool {
        (self.filters.is_empty() || self.filters.iter().any(|f| name.contains(f.as_str())))
            && !self.skip.iter().any(|s| name.contains(s.as_str()))
    }
}

fn parse_counts(s: &str) -> Option<Vec<usize>> {
    let v: Option<Vec<usize>> = s
        .split(',')
        .map(|x| x.trim().parse().ok().filter(|&n| n > 0))
        .collect();
    v.filter(|v| !v.is_empty())
}

/// The launches of one test program: a line per launch as it ends, then
/// the failed launches' output and libtest's summary line.
struct Tally {
    start: Instant,
    passed: usize,
    failed: Vec<(String, Report)>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            start: Instant::now(),
            passed: 0,
            failed: vec![],
        }
    }

    /// Prints launch `name`'s verdict (and its output, when verbose).
    fn record(&mut self, name: String, report: Report) {
        let status = if report.ok() { "ok" } else { "FAILED" };
        println!(
            "test {name} ... {status} ({:.1} s)",
            report.elapsed.as_secs_f64()
        );
        if report.ok() {
            if verbose() {
                print!("{}", report.stdout);
            }
            self.passed += 1;
        } else {
            self.failed.push((name, report));
        }
    }

    /// Prints what failed and the summary; whether every launch passed.
    fn finish(self) -> bool {
        for (name, report) in &self.failed {
            println!("\n---- {name} ----");
            println!("{}", report.reason());
            println!("reproduce: {}", report.command);
            println!("--- stdout ---\n{}", report.stdout.trim_end());
            println!("--- stderr ---\n{}", report.stderr.trim_end());
        }
        println!(
            "\ntest result: {}. {} passed; {} failed; 0 ignored; 0 measured; 0 filtered out; finished in {:.2}s\n",
            if self.failed.is_empty() { "ok" } else { "FAILED" },
            self.passed,
            self.failed.len(),
            self.start.elapsed().as_secs_f64()
        );
        self.failed.is_empty()
    }
}

/// Whether `NDCYCLIC_MPI_VERBOSE` asks for the output of passing launches too.
fn verbose() -> bool {
    std::env::var_os("NDCYCLIC_MPI_VERBOSE").is_some_and(|v| !v.is_empty() && v != "0")
}
