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
//! `--ranks 2,3` launches only those rank counts, `--list` lists the launches,
//! and any other word keeps only the test bodies whose names contain it.
//! Environment: `NDCYCLIC_MPIRUN` (launcher, default `mpirun`),
//! `NDCYCLIC_MPIRUN_ARGS` (extra launcher arguments), `NDCYCLIC_MPI_TIMEOUT`
//! (seconds per launch, default 300), `NDCYCLIC_MPI_RANKS` (like `--ranks`),
//! `NDCYCLIC_MPI_VERBOSE=1` (print the ranks' output of passing launches too).
//!
//! Whole programs (the README's examples) are launched the same way by
//! [`run_examples`].
#![deny(missing_docs)]

mod examples;

pub use examples::{run_examples, Example};

use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

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
    pub fn new(name: &'static str, body: fn(&SimpleCommunicator) -> TestResult) -> Self {
        MpiTest { name, body }
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

/// Number of ranks the current launch was started with (the launcher's view;
/// 1 for a process started without the harness).
pub fn ranks() -> usize {
    std::env::var("NDCYCLIC_MPI_RANKS_LAUNCHED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// Runs a suite: as the launcher under `cargo test`, or as a rank under `mpirun`.
/// Uses [`DEFAULT_RANK_COUNTS`]. Exits the process with a failure status when
/// any launch fails.
pub fn run(suite: &str, tests: &[MpiTest]) {
    run_with_ranks(suite, DEFAULT_RANK_COUNTS, tests)
}

/// Like [`run`], with the suite's own rank counts.
pub fn run_with_ranks(suite: &str, rank_counts: &[usize], tests: &[MpiTest]) {
    let args = Args::parse(rank_counts);
    let selected: Vec<MpiTest> = tests
        .iter()
        .filter(|t| {
            args.filters.is_empty() || args.filters.iter().any(|f| t.name.contains(f.as_str()))
        })
        .copied()
        .collect();
    if std::env::var_os(CHILD_VAR).is_some() {
        run_rank(suite, &selected);
    } else {
        let ok = launch_all(suite, &args, &selected);
        std::process::exit(if ok { 0 } else { 1 });
    }
}

/// Parsed command line of a test program.
struct Args {
    rank_counts: Vec<usize>,
    filters: Vec<String>,
    list: bool,
}

impl Args {
    fn parse(default_counts: &[usize]) -> Args {
        let mut rank_counts = std::env::var("NDCYCLIC_MPI_RANKS")
            .ok()
            .and_then(|v| parse_counts(&v))
            .unwrap_or_else(|| default_counts.to_vec());
        let mut filters = vec![];
        let mut list = false;
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            match a.as_str() {
                "--ranks" => {
                    if let Some(c) = it.next().as_deref().and_then(parse_counts) {
                        rank_counts = c;
                    }
                }
                "--list" => list = true,
                // libtest options cargo or users may pass; they take a value.
                "--test-threads" | "--format" | "--logfile" | "--skip" | "--color" => {
                    it.next();
                }
                s if s.starts_with("--ranks=") => {
                    if let Some(c) = parse_counts(&s["--ranks=".len()..]) {
                        rank_counts = c;
                    }
                }
                s if s.starts_with('-') => {}
                s => filters.push(s.to_string()),
            }
        }
        Args {
            rank_counts,
            filters,
            list,
        }
    }
}

fn parse_counts(s: &str) -> Option<Vec<usize>> {
    let v: Option<Vec<usize>> = s
        .split(',')
        .map(|x| x.trim().parse().ok().filter(|&n| n > 0))
        .collect();
    v.filter(|v| !v.is_empty())
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
        world.barrier();
        if rank == 0 {
            println!(
                "  {suite}::{} ok ({:.2} s)",
                t.name,
                start.elapsed().as_secs_f64()
            );
        }
    }
}

/// The launcher side: start the suite under mpirun for every rank count.
fn launch_all(suite: &str, args: &Args, tests: &[MpiTest]) -> bool {
    if args.list {
        for k in &args.rank_counts {
            println!("np{k}: test");
        }
        return true;
    }
    let exe = std::env::current_exe().expect("the test program knows its own path");
    println!(
        "\nrunning {} MPI launches of {} tests ({suite})",
        args.rank_counts.len(),
        tests.len()
    );
    let mut tally = Tally::new();
    for &k in &args.rank_counts {
        tally.record(
            format!("{suite} np={k}"),
            launch(&exe, Some(k), &args.filters),
        );
    }
    tally.finish()
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

/// What one mpirun launch did.
struct Report {
    status: Option<ExitStatus>,
    timed_out: Option<Duration>,
    elapsed: Duration,
    stdout: String,
    stderr: String,
    command: String,
}

impl Report {
    /// The report of a launch that has not run yet, repeated by `command`.
    fn new(command: String) -> Report {
        Report {
            status: None,
            timed_out: None,
            elapsed: Duration::ZERO,
            stdout: String::new(),
            stderr: String::new(),
            command,
        }
    }

    fn ok(&self) -> bool {
        self.timed_out.is_none() && self.status.is_some_and(|s| s.success())
    }

    fn reason(&self) -> String {
        match (self.timed_out, self.status) {
            (Some(t), _) => format!(
                "timed out after {:.0} s (hang?); the job was killed",
                t.as_secs_f64()
            ),
            (None, Some(s)) => format!("mpirun exited with {s}"),
            (None, None) => "mpirun could not be started".to_string(),
        }
    }
}

/// What one launch runs: the program, its arguments, and the command line
/// that repeats it.
struct Invocation {
    /// `mpirun` (or `NDCYCLIC_MPIRUN`), or the program itself.
    program: String,
    /// The arguments of `program`.
    args: Vec<String>,
    /// The rank count under `mpirun`; `None` for a program started directly.
    ranks: Option<usize>,
    /// The shell command that repeats the launch (printed as `reproduce:`).
    command: String,
}

impl Invocation {
    /// `exe` with `args` under `mpirun -n k` (`NDCYCLIC_MPIRUN_ARGS` first),
    /// or directly when `k` is `None`.
    fn new(exe: &Path, k: Option<usize>, args: &[String]) -> Invocation {
        match k {
            Some(k) => {
                let mpirun =
                    std::env::var("NDCYCLIC_MPIRUN").unwrap_or_else(|_| "mpirun".to_string());
                let mut cmd_args: Vec<String> = std::env::var("NDCYCLIC_MPIRUN_ARGS")
                    .map(|v| v.split_whitespace().map(String::from).collect())
                    .unwrap_or_default();
                cmd_args.extend(["-n".to_string(), k.to_string(), exe.display().to_string()]);
                cmd_args.extend(args.iter().cloned());
                let command = format!(
                    "{CHILD_VAR}=1 NDCYCLIC_MPI_RANKS_LAUNCHED={k} {mpirun} {}",
                    cmd_args.join(" ")
                );
                Invocation {
                    program: mpirun,
                    args: cmd_args,
                    ranks: Some(k),
                    command,
                }
            }
            None => {
                let program = exe.display().to_string();
                let command = format!("{program} {}", args.join(" "));
                Invocation {
                    program,
                    args: args.to_vec(),
                    ranks: None,
                    command,
                }
            }
        }
    }

    /// The process to start for launch `tag`, in a process group of its own,
    /// its standard output and error going to `out` and `err`.
    fn command(&self, tag: &str, out: File, err: File) -> Command {
        let mut cmd = Command::new(&self.program);
        if let Some(k) = self.ranks {
            cmd.env(CHILD_VAR, "1")
                .env("NDCYCLIC_MPI_RANKS_LAUNCHED", k.to_string());
        }
        cmd.args(&self.args)
            // Every process of this launch inherits it, whoever starts it:
            // how the ranks are found when they are not in the launcher's
            // process group (Open MPI's daemons start them in groups of their own).
            .env(JOB_VAR, tag)
            // Harmless for MPICH; lets Open MPI's launcher run as root and oversubscribe.
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        cmd
    }
}

/// How long a launch may run: `NDCYCLIC_MPI_TIMEOUT` seconds, default 300.
fn launch_timeout() -> Duration {
    Duration::from_secs_f64(
        std::env::var("NDCYCLIC_MPI_TIMEOUT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(300.0),
    )
}

/// The name of a launch, unique on the machine: `ndcyclic-mpi-<pid>-<k>`
/// (`serial` for a program started directly). Its processes carry it in
/// [`JOB_VAR`], and its output files are named after it.
fn job_tag(k: Option<usize>) -> String {
    format!(
        "ndcyclic-mpi-{}-{}",
        std::process::id(),
        k.map_or("serial".to_string(), |k| k.to_string())
    )
}

/// The files of the temporary directory that a launch's standard output
/// and error go to while it runs.
struct OutputFiles {
    /// The temporary directory.
    dir: PathBuf,
    /// `<tag>.out`.
    out: PathBuf,
    /// `<tag>.err`.
    err: PathBuf,
}

impl OutputFiles {
    /// The output files of launch `tag`.
    fn new(tag: &str) -> OutputFiles {
        let dir = std::env::temp_dir();
        let out = dir.join(format!("{tag}.out"));
        let err = dir.join(format!("{tag}.err"));
        OutputFiles { dir, out, err }
    }

    /// Creates (or empties) both files; `None` when either cannot be.
    fn create(&self) -> Option<(File, File)> {
        match (File::create(&self.out), File::create(&self.err)) {
            (Ok(out), Ok(err)) => Some((out, err)),
            _ => None,
        }
    }

    /// Appends what the files hold to `report`'s output, and removes them.
    fn collect_into(&self, report: &mut Report) {
        report.stdout += &std::fs::read_to_string(&self.out).unwrap_or_default();
        report.stderr += &std::fs::read_to_string(&self.err).unwrap_or_default();
        let _ = std::fs::remove_file(&self.out);
        let _ = std::fs::remove_file(&self.err);
    }
}

/// How a started launch ended.
enum Ending {
    /// It exited by itself.
    Exited(ExitStatus),
    /// It outran the timeout and was killed with every process of the
    /// launch, `after` this long.
    Killed {
        /// Its status once killed, if it could be collected.
        status: Option<ExitStatus>,
        /// Time from the start of the launch to the end of the kill.
        after: Duration,
    },
    /// Asking whether it had exited failed.
    WaitFailed(std::io::Error),
}

/// Waits for `child`, looking every 20 ms; once `timeout` has passed since
/// `start`, kills its process group, the child itself and every process of
/// launch `tag`.
fn wait_or_kill(child: &mut Child, tag: &str, start: Instant, timeout: Duration) -> Ending {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ending::Exited(status),
            Ok(None) if start.elapsed() > timeout => {
                kill_group(child.id());
                let _ = child.kill();
                let status = child.wait().ok();
                kill_job(tag);
                return Ending::Killed {
                    status,
                    after: start.elapsed(),
                };
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Ending::WaitFailed(e),
        }
    }
}

/// Starts `exe` with `args` under `mpirun -n k` (`k` = `None`: directly,
/// for programs without MPI), under the timeout, and reports what it did;
/// none of its processes outlives the call.
fn launch(exe: &Path, k: Option<usize>, args: &[String]) -> Report {
    let invocation = Invocation::new(exe, k, args);
    let timeout = launch_timeout();
    let tag = job_tag(k);
    let files = OutputFiles::new(&tag);
    let start = Instant::now();
    let mut report = Report::new(invocation.command.clone());
    let Some((out, err)) = files.create() else {
        report.stderr = format!("cannot create output files in {}", files.dir.display());
        return report;
    };
    let program = &invocation.program;
    match invocation.command(&tag, out, err).spawn() {
        Err(e) => {
            report.stderr = format!("cannot start `{program}`: {e}");
        }
        Ok(mut child) => match wait_or_kill(&mut child, &tag, start, timeout) {
            Ending::Exited(status) => report.status = Some(status),
            Ending::Killed { status, after } => {
                report.status = status;
                report.timed_out = Some(after);
            }
            Ending::WaitFailed(e) => {
                report.stderr = format!("waiting for `{program}` failed: {e}");
            }
        },
    }
    // A launcher that has exited may leave ranks behind (Open MPI's, after
    // an abort): none may outlive the launch.
    kill_job(&tag);
    report.elapsed = start.elapsed();
    files.collect_into(&mut report);
    report
}

/// The environment variable naming the launch a process belongs to.
const JOB_VAR: &str = "NDCYCLIC_MPI_JOB";

/// Kills every process whose environment names launch `tag` (the ranks and
/// daemons of one launch, in whatever process group they run) and waits up
/// to 5 s until none is left. Linux reads `/proc/<pid>/environ`; elsewhere
/// the process group is all there is.
fn kill_job(tag: &str) {
    let marker = format!("{JOB_VAR}={tag}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let pids = job_processes(&marker);
        if pids.is_empty() || Instant::now() > deadline {
            return;
        }
        for pid in pids {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Live processes (zombies excluded) whose environment holds `marker`.
fn job_processes(marker: &str) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    let me = std::process::id();
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            let dir = format!("/proc/{pid}");
            let zombie = std::fs::read_to_string(format!("{dir}/stat"))
                .ok()
                .and_then(|s| Some(s.rsplit_once(')')?.1.trim_start().starts_with('Z')))
                .unwrap_or(true);
            !zombie
                && std::fs::read(format!("{dir}/environ")).is_ok_and(|env| {
                    env.split(|&b| b == 0)
                        .any(|entry| entry == marker.as_bytes())
                })
        })
        .filter_map(|pid| libc::pid_t::try_from(pid).ok())
        .collect()
}

/// Whether `NDCYCLIC_MPI_VERBOSE` asks for the output of passing launches too.
fn verbose() -> bool {
    std::env::var_os("NDCYCLIC_MPI_VERBOSE").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Kills the launcher's whole process group (mpirun, its proxies and the ranks).
///
/// Calls `kill(2)` directly: procps-ng 4.0.2's `kill` command misreads a
/// negative process-group argument (`kill -KILL -1234` sends the signal to
/// another group, even to every process), so it must not be used here.
fn kill_group(pid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: getpgid/getpgrp/kill have no memory-safety preconditions.
    unsafe {
        // Only a group the launcher leads, and never our own.
        if pgid > 1 && libc::getpgid(pgid) == pgid && pgid != libc::getpgrp() {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}
