//! One launch of a program under `mpirun` (or directly): its command line,
//! its output files, the timeout, and the kills that leave none of its
//! processes behind; [`Report`] says what it did.

use crate::CHILD_VAR;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What one mpirun launch did.
pub(crate) struct Report {
    status: Option<ExitStatus>,
    timed_out: Option<Duration>,
    pub(crate) elapsed: Duration,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) command: String,
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

    pub(crate) fn ok(&self) -> bool {
        self.timed_out.is_none() && self.status.is_some_and(|s| s.success())
    }

    pub(crate) fn reason(&self) -> String {
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

/// The program that starts a launch's ranks, and its first arguments
/// (before `-n K`).
#[derive(Clone, Debug)]
pub struct Launcher {
    program: String,
    args: Vec<String>,
}

impl Launcher {
    /// `program` with `args` first, for the launches of a [`crate::Suite`]
    /// that must not go through `mpirun` (emulated nodes, for example).
    pub fn new(program: impl Into<String>, args: &[&str]) -> Launcher {
        Launcher {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    /// `NDCYCLIC_MPIRUN` (default `mpirun`) with `NDCYCLIC_MPIRUN_ARGS`.
    pub(crate) fn from_env() -> Launcher {
        Launcher {
            program: std::env::var("NDCYCLIC_MPIRUN").unwrap_or_else(|_| "mpirun".to_string()),
            args: std::env::var("NDCYCLIC_MPIRUN_ARGS")
                .map(|v| v.split_whitespace().map(String::from).collect())
                .unwrap_or_default(),
        }
    }
}

impl Invocation {
    /// `exe` with `args` under `launcher -n k` (`launcher`'s arguments
    /// first), or directly when `k` is `None`.
    fn new(exe: &Path, k: Option<usize>, args: &[String], launcher: &Launcher) -> Invocation {
        match k {
            Some(k) => {
                let mpirun = launcher.program.clone();
                let mut cmd_args: Vec<String> = launcher.args.clone();
                cmd_args.extend(["-n".to_string(), k.to_string(), exe.display().to_string()]);
                cmd_args.extend(args.iter().cloned());
                let preload = crate::idle::yield_shim()
                    .map(|shim| format!("LD_PRELOAD={} ", shim.display()))
                    .unwrap_or_default();
                let shown: Vec<String> = cmd_args.iter().map(|a| quoted(a)).collect();
                let command = format!(
                    "{preload}{CHILD_VAR}=1 NDCYCLIC_MPI_RANKS_LAUNCHED={k} {mpirun} {}",
                    shown.join(" ")
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
        crate::idle::yield_when_idle(&mut cmd);
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        cmd
    }
}

/// `arg` as a shell reads it back: in single quotes when it holds a space.
fn quoted(arg: &str) -> String {
    if arg.contains(char::is_whitespace) {
        format!("'{}'", arg.replace('\'', "'\\''"))
    } else {
        arg.to_string()
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

/// Starts `exe` with `args` under `launcher -n k` (`k` = `None`: directly,
/// for programs without MPI), under the timeout, and reports what it did;
/// none of its processes outlives the call.
pub(crate) fn launch(exe: &Path, k: Option<usize>, args: &[String], launcher: &Launcher) -> Report {
    let invocation = Invocation::new(exe, k, args, launcher);
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
