//! `redist show` and `redist plan` on huge inputs, as single processes
//! (no `mpirun`): each either answers or refuses with exit code 2 and one
//! `error: ...` line, never panics, never aborts on a failed allocation and
//! never runs away. Every launch runs under an address-space limit of
//! [`ADDRESS_SPACE_KIB`] and is killed after [`TIMEOUT`].
//!
//! The tests named `library_limit_*` depend on limits the library crates
//! (`dist-array`, `redist`) do not have yet: each names where the library
//! fails today. They are meant to fail until the library refuses (or
//! handles) those inputs itself.

use serde_json::{json, Value};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The address space a launch may use (4 GiB): a layout or plan asking for
/// more fails at once instead of swapping the machine to death.
const ADDRESS_SPACE_KIB: u64 = 4 << 20;

/// The longest a launch may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The largest number of ranks the tool accepts (`shape::MAX_RANKS`).
const MAX_RANKS: usize = 1 << 20;

/// What a launch left behind.
struct Launch {
    command: String,
    /// Exit code, `None` when killed by a signal or the timeout.
    code: Option<i32>,
    timed_out: bool,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stdout: String = self.stdout.chars().take(2000).collect();
        let stderr: String = self.stderr.chars().take(4000).collect();
        write!(
            f,
            "{}\nexit code {:?}{}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            self.command,
            self.code,
            if self.timed_out { " (timed out)" } else { "" },
        )
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs `redist ARGS` without a launcher in the environment, under the
/// address-space limit and the timeout, with backtraces on (so that a panic
/// shows where it comes from).
fn redist(args: &[&str]) -> Launch {
    let limit = format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$@\"");
    let mut cmd = Command::new("sh");
    cmd.args(["-c", &limit, "sh", env!("CARGO_BIN_EXE_redist")])
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if ["PMI_", "PMIX_", "OMPI_", "HYDRA_", "MPIR_"]
            .iter()
            .any(|p| key.starts_with(p))
        {
            cmd.env_remove(key);
        }
    }
    let command = format!("redist {}", args.join(" "));
    let mut child = cmd.spawn().expect("sh starts");
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for redist") {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("waiting for redist");
        }
        thread::sleep(Duration::from_millis(20));
    };
    Launch {
        command,
        code: status.code(),
        timed_out,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// The tool's contract on any input: exit code 0 with output, or exit code
/// 2 with one `error:` line and no output; never a panic, an abort or a
/// runaway.
fn assert_answers_or_refuses(launch: &Launch) {
    assert!(!launch.timed_out, "ran away: {launch}");
    for bad in [
        "panicked",
        "memory allocation",
        "capacity overflow",
        "stack backtrace",
    ] {
        assert!(!launch.stderr.contains(bad), "{bad:?} in: {launch}");
    }
    match launch.code {
        Some(0) => assert!(!launch.stdout.is_empty(), "{launch}"),
        Some(2) => {
            assert!(launch.stderr.starts_with("error: "), "{launch}");
            assert_eq!(launch.stderr.lines().count(), 1, "{launch}");
            assert!(launch.stdout.is_empty(), "{launch}");
        }
        _ => panic!("neither an answer nor a refusal: {launch}"),
    }
}

fn assert_refused(launch: &Launch, needles: &[&str]) {
    assert_answers_or_refuses(launch);
    assert_eq!(launch.code, Some(2), "{launch}");
    for needle in needles {
        assert!(
            launch.stderr.contains(needle),
            "{needle:?} missing: {launch}"
        );
    }
}

fn json_of(launch: &Launch) -> Value {
    assert_answers_or_refuses(launch);
    assert_eq!(launch.code, Some(0), "{launch}");
    let last = launch.stdout.lines().last().expect("some output");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("not JSON ({e}): {launch}"))
}

/// 2^62, the extent the brief's examples use.
const E62: &str = "4611686018427387904";

#[test]
fn show_extent_2_62() {
    let v = json_of(&redist(&[
        "show", "--shape", E62, "--layout", "block@2", "--json",
    ]));
    assert_eq!(v["shape"], json!([1u64 << 62]));
    assert_eq!(v["local_shapes"], json!([[1u64 << 61], [1u64 << 61]]));
    let drawing = redist(&["show", "--shape", E62, "--layout", "cyclic(3)+1@3"]);
    assert_answers_or_refuses(&drawing);
    assert_eq!(drawing.code, Some(0), "{drawing}");
    assert!(
        drawing.stdout.contains(&format!("total {}", 1u64 << 62)),
        "{drawing}"
    );
}

#[test]
fn show_and_plan_refuse_an_element_count_that_overflows() {
    for shape in [&format!("{E62}x4"), "18446744073709551615x2"] {
        assert_refused(
            &redist(&["show", "--shape", shape, "--layout", "block,block@2x1"]),
            &["overflows the index arithmetic"],
        );
        assert_refused(
            &redist(&[
                "plan",
                "--shape",
                shape,
                "--from",
                "block,block@2x1",
                "--to",
                "cyclic,cyclic@1x2",
            ]),
            &["overflows the index arithmetic"],
        );
    }
}

#[test]
fn show_and_plan_near_the_usize_limit() {
    // 3037000500^2 elements fit in usize (9.2e18); the bytes would not.
    let v = json_of(&redist(&[
        "show",
        "--shape",
        "3037000500x3037000500",
        "--layout",
        "block,block@2x1",
        "--json",
    ]));
    assert_eq!(
        v["local_shapes"],
        json!([
            [1518500250u64, 3037000500u64],
            [1518500250u64, 3037000500u64]
        ])
    );
    let v = json_of(&redist(&[
        "plan",
        "--shape",
        "3037000500x3037000500",
        "--from",
        "block,block@2x1",
        "--to",
        "cyclic,cyclic@1x2",
        "--json",
    ]));
    assert_eq!(v["elements"], json!(3037000500u64 * 3037000500u64));
}

/// Every pair of a few layouts on the brief's huge shapes, through `show`
/// (JSON and drawing) and `plan` (every remap): an answer or a refusal.
#[test]
fn huge_shapes_answer_or_refuse() {
    let dists = [
        "block",
        "cyclic",
        "cyclic(3)",
        "cyclic(2)+1",
        "cyclic(1000000007)",
    ];
    for shape in [E62, "9223372036854775807", "18446744073709551615"] {
        for d in dists {
            for p in [2, 7] {
                let layout = format!("{d}@{p}");
                assert_answers_or_refuses(&redist(&[
                    "show", "--shape", shape, "--layout", &layout, "--json",
                ]));
                assert_answers_or_refuses(&redist(&[
                    "show", "--shape", shape, "--layout", &layout,
                ]));
            }
        }
        for (from, to) in [
            ("block@2", "cyclic@2"),
            ("cyclic(3)@2", "cyclic(5)@2"),
            ("cyclic(7)@4", "cyclic(4)@4"),
            ("block@3", "cyclic(2)@5"),
        ] {
            for remap in ["none", "closed-form", "optimal"] {
                assert_answers_or_refuses(&redist(&[
                    "plan", "--shape", shape, "--from", from, "--to", to, "--remap", remap,
                    "--json",
                ]));
            }
        }
    }
}

#[test]
fn layouts_of_too_many_ranks_are_refused() {
    let limit = format!("expected at most {MAX_RANKS} ranks");
    // Above what the tool lists (2^20) but a layout the library accepts.
    assert_refused(
        &redist(&["show", "--shape", "8", "--layout", "block@2097152"]),
        &["invalid layout block@2097152: 2097152 ranks", &limit],
    );
    // Above what any layout may have (2^24): refused as the spec is parsed,
    // with clap's usage error (exit 2, the library's message).
    for (shape, layout) in [
        ("8", "block@100000000000"),
        (E62, "cyclic(1)@4611686018427387904"),
    ] {
        let launch = redist(&["show", "--shape", shape, "--layout", layout, "--json"]);
        assert!(!launch.timed_out, "ran away: {launch}");
        assert_eq!(launch.code, Some(2), "{launch}");
        assert!(
            launch.stderr.contains("layouts support at most 16777216"),
            "{launch}"
        );
        assert!(!launch.stderr.contains("panicked"), "{launch}");
    }
    assert_refused(
        &redist(&[
            "plan",
            "--shape",
            "8x8",
            "--from",
            "block,block@2x2",
            "--to",
            "block,block@1048576x2",
        ]),
        &["2097152 ranks", &limit],
    );
}

#[test]
fn show_of_a_million_ranks_lists_the_first_1024() {
    let shape = MAX_RANKS.to_string();
    let layout = format!("block@{MAX_RANKS}");
    let drawing = redist(&["show", "--shape", &shape, "--layout", &layout]);
    assert_answers_or_refuses(&drawing);
    assert_eq!(drawing.code, Some(0), "{drawing}");
    assert!(drawing.stdout.lines().count() < 1100, "{drawing}");
    assert!(
        drawing.stdout.contains(&format!(
            "{} more ranks not listed (--json lists every rank's local shape)",
            MAX_RANKS - 1024
        )),
        "{drawing}"
    );
    assert!(
        drawing.stdout.ends_with(&format!(
            "elements per rank: min 1, max 1, total {MAX_RANKS}\n"
        )),
        "{drawing}"
    );
    let v = json_of(&redist(&[
        "show", "--shape", &shape, "--layout", &layout, "--json",
    ]));
    assert_eq!(v["local_shapes"].as_array().map(Vec::len), Some(MAX_RANKS));
}

// ---------------------------------------------------------------------------
// Depend on limits the library does not have yet.
// ---------------------------------------------------------------------------

/// Depends on a library limit. Today `redist::plan::axis::AxisPlan::new`
/// stores the runs of one period, and when lcm(s·P, t·Q) exceeds the extent
/// the period is the whole extent: the runs grow with the extent (about
/// n / min(s, t) of them) until the allocation fails
/// (crates/redist-plan/src/plan/axis/mod.rs:169 pushing, the walk at :207).
#[test]
fn library_limit_plan_of_a_period_longer_than_memory() {
    for remap in ["none", "optimal"] {
        assert_answers_or_refuses(&redist(&[
            "plan",
            "--shape",
            E62,
            "--from",
            "cyclic(1000003)@7",
            "--to",
            "cyclic(999979)@11",
            "--remap",
            remap,
            "--json",
        ]));
    }
}

/// Depends on a library limit. Today `AxisPlan::new` allocates one run list
/// per (source process, target process) pair of a dimension: 65536 x 65536
/// lists of 24 bytes, 103 GB (crates/redist-plan/src/plan/axis/mod.rs:154).
#[test]
fn library_limit_plan_of_many_processes_in_one_dimension() {
    assert_answers_or_refuses(&redist(&[
        "plan",
        "--shape",
        "65536",
        "--from",
        "block@65536",
        "--to",
        "cyclic@65536",
        "--json",
    ]));
}

/// Depends on a library limit. Today `redist::remap::position_volumes`
/// lists every (source rank, target position) pair with data — 2^40 for a
/// 1024x1024 grid whose every rank sends to every other — before the plan
/// is built (crates/redist-plan/src/remap/mod.rs:175-205, called from
/// crates/redist-plan/src/whole.rs:92).
#[test]
fn library_limit_plan_of_a_million_ranks_all_to_all() {
    assert_answers_or_refuses(&redist(&[
        "plan",
        "--shape",
        "1048576x1048576",
        "--from",
        "block,block@1024x1024",
        "--to",
        "cyclic,cyclic@1024x1024",
        "--json",
    ]));
}
