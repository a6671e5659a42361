//! The harness reports passing, failing, panicking and hanging launches correctly.

use std::process::Command;
use std::time::{Duration, Instant};

fn fixture(mode: &str, ranks: &str) -> (bool, String, Duration) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_harness-fixture"))
        .args(["--ranks", ranks])
        .env("FIXTURE_MODE", mode)
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
    assert!(text.contains("reproduce: NDCYCLIC_MPI_CHILD=1"), "{text}");
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
