//! Suites: the test bodies a program launches together, at each of their
//! rank counts, and the two sides of a run — the launcher that starts the
//! launches under `cargo test`, and the ranks that run the bodies.
//!
//! A test program may hold several suites (each with its own rank counts
//! and, if it must, its own launcher): one binary to build and link where
//! there were several, every suite launched as before. The launcher tells
//! each launch which suite it runs (`--suite NAME`).

use crate::launch::{launch, Launcher};
use crate::{is_rank, Args, MpiTest, Tally, DEFAULT_RANK_COUNTS};
use mpi::topology::Communicator;
use std::time::{Duration, Instant};

/// The bodies launched together, at each of the suite's rank counts.
///
/// ```
/// use mpi_harness::{MpiTest, Suite};
///
/// fn body(_: &mpi::topology::SimpleCommunicator) -> mpi_harness::TestResult {
///     Ok(())
/// }
/// const TESTS: &[MpiTest] = &[MpiTest::new("body", body), MpiTest::new("slow", body)];
/// let nodes = Suite::new("on nodes", TESTS)
///     .ranks(&[4, 5])
///     .without(&["slow"])
///     .launcher(mpi_harness::Launcher::new("scripts/cluster-mpirun.sh", &["--mpi", "mpich"]));
/// assert_eq!(nodes.name(), "on nodes");
/// ```
#[derive(Clone)]
pub struct Suite {
    name: String,
    tests: Vec<MpiTest>,
    rank_counts: Vec<usize>,
    launcher: Option<Launcher>,
}

impl Suite {
    /// The suite `name` of `tests`, launched with [`DEFAULT_RANK_COUNTS`].
    pub fn new(name: &str, tests: &[MpiTest]) -> Suite {
        Suite {
            name: name.to_string(),
            tests: tests.to_vec(),
            rank_counts: DEFAULT_RANK_COUNTS.to_vec(),
            launcher: None,
        }
    }

    /// The same suite, launched with these rank counts (`--ranks` and
    /// `NDCYCLIC_MPI_RANKS` still choose others).
    pub fn ranks(self, rank_counts: &[usize]) -> Suite {
        Suite {
            rank_counts: rank_counts.to_vec(),
            ..self
        }
    }

    /// The same suite without the bodies named `names`.
    pub fn without(self, names: &[&str]) -> Suite {
        let tests = self
            .tests
            .into_iter()
            .filter(|t| !names.contains(&t.name))
            .collect();
        Suite { tests, ..self }
    }

    /// The same suite, launched by `launcher` instead of `mpirun`, at its
    /// own rank counts (`--ranks` still chooses others; `NDCYCLIC_MPI_RANKS`,
    /// which is about `mpirun`'s launches, does not).
    pub fn launcher(self, launcher: Launcher) -> Suite {
        Suite {
            launcher: Some(launcher),
            ..self
        }
    }

    /// The suite's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The bodies the command line selects.
    fn selected(&self, args: &Args) -> Vec<MpiTest> {
        self.tests
            .iter()
            .filter(|t| args.selects(t.name))
            .copied()
            .collect()
    }
}

/// Runs a program's suites: as the launcher under `cargo test` (every suite
/// the command line selects, each at each of its rank counts), or as a rank
/// under `mpirun` (the suite its launch names). Exits the process with a
/// failure status when any launch fails.
pub fn run_suites(suites: &[Suite]) {
    let args = Args::parse();
    if is_rank() {
        let suite = match &args.suite {
            Some(name) => suites.iter().find(|s| &s.name == name),
            None => suites.first(),
        };
        let Some(suite) = suite else {
            eprintln!("no suite named {:?} in this program", args.suite);
            std::process::exit(2);
        };
        run_rank(&suite.name, &suite.selected(&args));
        return;
    }
    let several = suites.len() > 1;
    let mut ok = true;
    for suite in suites {
        if args.suite.as_ref().is_some_and(|name| name != &suite.name) {
            continue;
        }
        ok &= launch_suite(suite, &args, several);
    }
    std::process::exit(if ok { 0 } else { 1 });
}

/// The rank side: initialise MPI, run every selected body, abort on failure.
fn run_rank(suite: &str, tests: &[MpiTest]) {
    let universe = match procgrid::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("{suite}: cannot start MPI: {e}");
            std::process::exit(2);
        }
    };
    let world = universe.world();
    let rank = world.rank();
    for t in tests {
        let start = Instant::now();
        if let Err(msg) = (t.body)(&world) {
            eprintln!(
                "{suite}::{} FAILED on rank {rank} of {}: {msg}",
                t.name,
                world.size()
            );
            // Give the launcher time to forward the message before the abort tears the job down.
            let _ = std::io::Write::flush(&mut std::io::stdout());
            std::thread::sleep(Duration::from_millis(300));
            world.abort(1);
        }
        procgrid::waits::barrier(&world);
        if rank == 0 {
            println!(
                "  {suite}::{} ok ({:.2} s)",
                t.name,
                start.elapsed().as_secs_f64()
            );
        }
    }
}

/// The launcher side of one suite: a launch for every rank count (none
/// when the command line selects none of its bodies); whether all passed.
/// `several`: the program holds other suites, so each launch names its own.
fn launch_suite(suite: &Suite, args: &Args, several: bool) -> bool {
    let tests = suite.selected(args);
    let rank_counts = args.rank_counts(&suite.rank_counts, suite.launcher.is_none());
    let name = &suite.name;
    if args.list {
        // Every body at every rank count: what the launches run.
        for k in &rank_counts {
            for t in &tests {
                println!("{name}::{} np={k}: test", t.name);
            }
        }
        return true;
    }
    if tests.is_empty() && several {
        return true;
    }
    let exe = std::env::current_exe().expect("the test program knows its own path");
    let launcher = suite.launcher.clone().unwrap_or_else(Launcher::from_env);
    let mut rank_args = args.filters.clone();
    for word in &args.skip {
        rank_args.extend(["--skip".to_string(), word.clone()]);
    }
    if several {
        rank_args.extend(["--suite".to_string(), name.clone()]);
    }
    println!(
        "\nrunning {} MPI launches of {} tests ({name})",
        rank_counts.len(),
        tests.len()
    );
    let mut tally = Tally::new();
    for &k in &rank_counts {
        tally.record(
            format!("{name} np={k}"),
            launch(&exe, Some(k), &rank_args, &launcher),
        );
    }
    tally.finish()
}
