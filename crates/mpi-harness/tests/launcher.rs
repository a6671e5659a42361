//! The harness reports passing, failing, panicking and hanging launches correctly.

use std::process::Command;
use std::time::{Duration, Instant};

fn fixture(mode: &str, ranks: &str) -> (bool, String, Duration) {
    fixture_with(&["--ranks", ranks], &[("FIXTURE_MODE", mode)])
}

/// The fixture started with `args` and `env` as `cargo test` starts it.
fn fixture_with(args: &[&str], env: &[(&str, &str)]) -> (bool, String, Duration) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_harness-fixture"))
        .args(args)
        .envs(env.iter().copied())
        .env("NDCYCLIC_MPI_TIMEOUT", "10")
        .env_remove("NDCYCLIC_MPI_CHILD")
        .env_remove("NDCYCLIC_MPI_RANKS")
        .output()
        .expect("the fixture runs");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text, start.elapsed())
}

#[test]
fn passing_launches_pass() {
    let (ok, text, _) = fixture("pass", "1,3");
    assert!(ok, "{text}");
    assert!(text.contains("test fixture np=3 ... ok"), "{text}");
    assert!(
        text.contains("test result: ok. 2 passed; 0 failed"),
        "{text}"
    );
}

#[test]
fn a_failing_rank_fails_the_launch_with_its_message() {
    let (ok, text, _) = fixture("fail", "1,2");
    assert!(!ok, "{text}");
    assert!(text.contains("test fixture np=2 ... FAILED"), "{text}");
    assert!(text.contains("FAILED on rank 1 of 2"), "{text}");
    assert!(text.contains("deliberate failure on rank 1"), "{text}");
    assert!(text.contains("reproduce: "), "{text}");
    assert!(
        text.contains("NDCYCLIC_MPI_CHILD=1 NDCYCLIC_MPI_RANKS_LAUNCHED=2 "),
        "{text}"
    );
    assert!(text.contains("1 passed; 1 failed"), "{text}");
}

#[test]
fn a_panicking_rank_aborts_the_job() {
    let (ok, text, elapsed) = fixture("panic", "3");
    assert!(!ok, "{text}");
    assert!(text.contains("rank 1 panicked"), "{text}");
    assert!(text.contains("deliberate panic"), "{text}");
    assert!(
        !text.contains("timed out"),
        "the panic hook must abort, not hang: {text}"
    );
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
}

#[test]
fn a_hanging_rank_times_out_and_is_killed() {
    let (ok, text, elapsed) = fixture("hang", "2");
    assert!(!ok, "{text}");
    assert!(text.contains("timed out after"), "{text}");
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
    // No process of the killed job may survive it, under either launcher
    // (Open MPI's ranks run in process groups of their own): every one
    // inherited FIXTURE_MODE=hang from the fixture.
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != std::process::id())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_none_or(|(_, rest)| rest.trim_start().starts_with('Z'));
            !zombie
                && std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                    env.split(|&b| b == 0)
                        .any(|entry| entry == b"FIXTURE_MODE=hang")
                })
        })
        .map(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .unwrap_or_default()
                .replace('\0', " ")
        })
        .collect();
    assert!(left.is_empty(), "left-over fixture processes: {left:?}");
}

#[test]
fn a_program_of_several_suites_launches_each_at_its_own_rank_counts() {
    let two = ("FIXTURE_SUITES", "2");
    let (ok, list, _) = fixture_with(&["--list"], &[two]);
    assert!(ok, "{list}");
    for k in mpi_harness::DEFAULT_RANK_COUNTS {
        assert!(
            list.contains(&format!("fixture::body np={k}: test")),
            "{list}"
        );
    }
    assert!(list.contains("second::sized np=3: test"), "{list}");
    assert!(!list.contains("second::body"), "left out: {list}");
    assert!(!list.contains("second::sized np=1"), "{list}");

    // The launch of `second` runs its own body, on its own rank count.
    let (ok, text, _) = fixture_with(
        &["--suite", "second"],
        &[two, ("NDCYCLIC_MPI_VERBOSE", "1")],
    );
    assert!(ok, "{text}");
    assert!(text.contains("test second np=3 ... ok"), "{text}");
    assert!(text.contains("second::sized ok"), "{text}");
    assert!(
        !text.contains("fixture np="),
        "only the suite asked for: {text}"
    );

    // `--skip` leaves a body out of every suite.
    let (ok, text, _) = fixture_with(&["--list", "--skip", "siz"], &[two]);
    assert!(
        ok && !text.contains("sized") && text.contains("fixture::body"),
        "{text}"
    );
}

#[test]
fn launches_yield_the_core_unless_told_to_spin() {
    let shim = mpi_harness::yield_shim().expect("build.rs builds yield_when_idle.so with cc");
    assert!(shim.is_file(), "{}", shim.display());
    let mut cmd = Command::new("true");
    mpi_harness::yield_when_idle(&mut cmd);
    let preload = cmd
        .get_envs()
        .find(|(k, _)| *k == "LD_PRELOAD")
        .and_then(|(_, v)| v)
        .expect("LD_PRELOAD is set")
        .to_string_lossy()
        .to_string();
    assert!(preload.ends_with(&shim.display().to_string()), "{preload}");
    // A launch preloads it, and says so in the line that repeats it; with
    // NDCYCLIC_MPI_IDLE=spin it does not.
    let (_, text, _) = fixture_with(&["--ranks", "2"], &[("FIXTURE_MODE", "fail")]);
    assert!(text.contains("reproduce: LD_PRELOAD="), "{text}");
    let (_, text, _) = fixture_with(
        &["--ranks", "2"],
        &[("FIXTURE_MODE", "fail"), ("NDCYCLIC_MPI_IDLE", "spin")],
    );
    assert!(text.contains("reproduce: NDCYCLIC_MPI_CHILD=1"), "{text}");
    // The library stands in for UCX's progress call, and only for it.
    let symbols = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(shim)
        .output()
        .expect("nm runs");
    let symbols = String::from_utf8_lossy(&symbols.stdout);
    let defined: Vec<&str> = symbols
        .lines()
        .filter(|l| l.contains(" T "))
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert_eq!(defined, ["ucp_worker_progress"], "{symbols}");
}
