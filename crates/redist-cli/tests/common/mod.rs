//! Launching the built `redist` binary under `mpirun` as a user would,
//! for the tests that check what it prints and how it exits.
//!
//! The launcher is `mpirun` from `PATH` (or `NDCYCLIC_MPIRUN`, with extra
//! arguments from `NDCYCLIC_MPIRUN_ARGS`, as for the MPI test programs);
//! every launch is killed after [`TIMEOUT`].
#![allow(dead_code, reason = "each test file uses a part")]

use serde_json::Value;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// The longest a launch may take before it is killed and the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// One launch at a time: on a 2-core machine, MPICH's spinning ranks of two
/// concurrent jobs slow each other down by an order of magnitude.
static LAUNCH: Mutex<()> = Mutex::new(());

/// Holds off every other launch of this program (`mpirun`, emulated
/// nodes) until the guard is dropped.
pub fn one_launch_at_a_time() -> MutexGuard<'static, ()> {
    LAUNCH.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a launch left behind.
pub struct Launch {
    /// The description of the launch, for assertion messages.
    pub command: String,
    /// The launcher's exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Display for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}\nexit code {:?}\n--- stdout\n{}--- stderr\n{}",
            self.command, self.code, self.stdout, self.stderr
        )
    }
}

impl Launch {
    /// The last line of standard output, which must be the JSON report.
    pub fn json(&self) -> Value {
        let last = self.stdout.lines().last().expect("some output");
        serde_json::from_str(last).unwrap_or_else(|e| panic!("last line is not JSON ({e}): {self}"))
    }
}

/// Reads all of `pipe` on a thread of its own (so neither pipe fills up
/// while the launch runs).
fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs `redist ARGS` on `ranks` ranks; kills the launcher's whole process
/// group after [`TIMEOUT`] and fails the test.
pub fn mpirun(ranks: usize, args: &[&str]) -> Launch {
    mpirun_with(ranks, &[], args)
}

/// [`mpirun`] with `env` added to the launcher's environment (which its
/// ranks on this machine inherit).
pub fn mpirun_with(ranks: usize, env: &[(&str, &str)], args: &[&str]) -> Launch {
    let _one_at_a_time = one_launch_at_a_time();
    let launcher = std::env::var("NDCYCLIC_MPIRUN").unwrap_or_else(|_| "mpirun".into());
    let extra = std::env::var("NDCYCLIC_MPIRUN_ARGS").unwrap_or_default();
    let mut cmd = Command::new(&launcher);
    cmd.args(extra.split_whitespace())
        .arg("-n")
        .arg(ranks.to_string())
        .arg(env!("CARGO_BIN_EXE_redist"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .envs(env.iter().copied())
        // Its own process group, so a hung launch is killed with its ranks.
        .process_group(0);
    mpi_harness::yield_when_idle(&mut cmd);
    let command = format!("{launcher} -n {ranks} redist {}", args.join(" "));
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {launcher} (is MPI installed?): {e}"));
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let start = Instant::now();
    let status = loop {
        match child.try_wait().expect("waiting for the launcher") {
            Some(status) => break Some(status),
            None if start.elapsed() > TIMEOUT => break None,
            None => thread::sleep(Duration::from_millis(20)),
        }
    };
    let Some(status) = status else {
        let group = format!("-{}", child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = child.kill();
        let _ = child.wait();
        let launch = Launch {
            command,
            code: None,
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        };
        panic!("timed out after {TIMEOUT:?}: {launch}");
    };
    Launch {
        command,
        code: status.code(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}
