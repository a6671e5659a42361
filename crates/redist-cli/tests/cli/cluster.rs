//! Runs `redist run --verify` across emulated nodes (`scripts/cluster.sh`:
//! network namespaces on a bridge, each with its own host name), so that
//! messages really travel between nodes while ranks of one node copy
//! directly: 2 nodes × 2 ranks and 3 nodes of 2, 1 and 2 ranks, over every
//! strategy, windows and remapping, and a usage error that must reach every
//! rank of every node without a hang. The ADI solver gives the checksum it
//! gives on one node, the 2-D FFT its errors. (The library's own MPI suite
//! runs across nodes too: `crates/redist/tests/redist_suite/across_nodes.rs`.)
//!
//! Needs root and network namespaces; elsewhere each test says why it did
//! not run and passes. Under MPICH 4.0 with UCX, `scripts/cluster.sh`
//! preloads a small fix for a hang in `MPI_Finalize` over UCX's TCP
//! transport (docs/testing.md, "Emulated nodes").

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

/// Seconds before a launch is killed: a hang fails the test.
const TIMEOUT_S: &str = "240";

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/cluster.sh")
}

/// Why emulated nodes cannot run here, if they cannot.
fn unavailable() -> Option<String> {
    let probe = Command::new(script())
        .args(["--nodes", "1", "--ranks-per-node", "1", "--", "true"])
        .output()
        .expect("bash runs scripts/cluster.sh");
    (!probe.status.success()).then(|| String::from_utf8_lossy(&probe.stderr).trim().to_string())
}

/// Whether emulated nodes can run here; says why not when they cannot.
fn available() -> bool {
    let why = unavailable();
    if let Some(why) = &why {
        eprintln!("not run: emulated nodes are unavailable here: {why}");
    }
    why.is_none()
}

/// The MPI the programs were built against, whose launcher starts them:
/// `NDCYCLIC_CLUSTER_MPI` (`mpich` by default; `scripts/test-openmpi.sh`
/// sets `openmpi`).
fn cluster_mpi() -> String {
    std::env::var("NDCYCLIC_CLUSTER_MPI").unwrap_or_else(|_| "mpich".into())
}

/// The launcher that starts programs on one node: `NDCYCLIC_MPIRUN` or `mpirun`.
fn mpirun() -> String {
    std::env::var("NDCYCLIC_MPIRUN").unwrap_or_else(|_| "mpirun".into())
}

/// `PROGRAM ARGS` on `nodes` emulated nodes of `per_node` ranks each.
fn on_cluster(nodes: usize, per_node: &str, program: &str, args: &[&str]) -> Output {
    let nodes = nodes.to_string();
    let mut cmd = Command::new("timeout");
    mpi_harness::yield_when_idle(&mut cmd);
    cmd.args(["-s", "TERM", TIMEOUT_S])
        .arg(script())
        .args([
            "--nodes",
            &nodes,
            "--ranks-per-node",
            per_node,
            "--mpi",
            &cluster_mpi(),
            "--",
            program,
        ])
        .args(args)
        .output()
        .expect("timeout runs scripts/cluster.sh")
}

fn describe(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The last line of standard output as JSON.
fn json(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap_or("");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("no JSON ({e}):\n{}", describe(out)))
}

/// Runs every case through `redist run --verify --json` on the cluster and
/// checks each verified on all ranks.
fn verify_cases(nodes: usize, per_node: &str, ranks: usize, cases: &[&[&str]]) {
    let _one = crate::common::one_launch_at_a_time();
    if !available() {
        return;
    }
    for case in cases {
        let mut args = vec!["run", "--reps", "2", "--verify", "--json"];
        args.extend_from_slice(case);
        let out = on_cluster(nodes, per_node, env!("CARGO_BIN_EXE_redist"), &args);
        assert!(out.status.success(), "{case:?}:\n{}", describe(&out));
        let report = json(&out);
        assert_eq!(report["verified"], Value::Bool(true), "{case:?}: {report}");
        assert_eq!(report["ranks"], Value::from(ranks), "{case:?}: {report}");
        assert_eq!(report["nodes"], Value::from(nodes), "{case:?}: {report}");
        let between = report["bytes_between_nodes"].as_u64().unwrap_or(u64::MAX);
        assert!(
            between > 0 && between <= report["bytes_moved"].as_u64().unwrap_or(0),
            "{case:?}: {report}"
        );
    }
}

#[test]
fn what_crosses_between_nodes_is_counted() {
    let _one = crate::common::one_launch_at_a_time();
    if !available() {
        return;
    }
    // Rows to columns on 5 ranks: every rank sends a fifth of its rows to
    // each other rank, 20 messages of 60x40 f64; on nodes of 2, 1 and 2
    // ranks, the 4 between the ranks of node 1 and of node 3 stay inside.
    let args = [
        "run",
        "--shape",
        "300x200",
        "--from",
        "block,*@5x1",
        "--to",
        "*,block@1x5",
        "--json",
    ];
    let out = on_cluster(3, "2,1,2", env!("CARGO_BIN_EXE_redist"), &args);
    assert!(out.status.success(), "{}", describe(&out));
    let report = json(&out);
    assert_eq!(report["nodes"], Value::from(3), "{report}");
    assert_eq!(
        report["messages_between_nodes"],
        Value::from(16),
        "{report}"
    );
    assert_eq!(
        report["bytes_between_nodes"],
        Value::from(16 * 60 * 40 * 8),
        "{report}"
    );
}

#[test]
fn random_layouts_verify_on_two_nodes_of_two() {
    verify_cases(
        2,
        "2",
        4,
        &[
            &[
                "--shape",
                "2048x2048",
                "--from",
                "cyclic(64),cyclic(64)@2x2",
                "--to",
                "cyclic(64),cyclic(64)@4x1",
            ],
            &[
                "--shape",
                "300x200",
                "--from",
                "block,*@4x1",
                "--to",
                "*,block@1x4",
                "--strategy",
                "scheduled",
            ],
            &[
                "--shape",
                "301x77",
                "--from",
                "cyclic(3),block@2x2",
                "--to",
                "cyclic(5),cyclic(2)@1x4",
                "--strategy",
                "alltoallv",
                "--remap",
                "optimal",
            ],
            &[
                "--shape",
                "1000",
                "--from",
                "block@4",
                "--to",
                "cyclic(7)@4",
                "--strategy",
                "async",
                "--no-node-direct",
            ],
            &[
                "--shape",
                "40x30x20",
                "--from",
                "block,*,*@4x1x1",
                "--to",
                "*,cyclic(3),block@1x2x2",
            ],
            &[
                "--shape",
                "256x256",
                "--from",
                "cyclic,cyclic@2x2",
                "--to",
                "cyclic(2),cyclic(2)@4x1",
                "--window",
                "190x95",
                "--from-window",
                "10,5",
            ],
        ],
    );
}

#[test]
fn random_layouts_verify_on_three_uneven_nodes() {
    verify_cases(
        3,
        "2,1,2",
        5,
        &[
            &[
                "--shape",
                "257x129",
                "--from",
                "cyclic(4),*@5x1",
                "--to",
                "*,cyclic(3)@1x5",
            ],
            &[
                "--shape",
                "99999",
                "--from",
                "cyclic(3)@5",
                "--to",
                "block@5",
                "--remap",
                "optimal",
                "--strategy",
                "scheduled",
            ],
            &[
                "--shape",
                "64x50",
                "--from",
                "block,block@5x1",
                "--to",
                "cyclic(2),cyclic(5)@1x5",
                "--strategy",
                "alltoallv",
            ],
        ],
    );
}

#[test]
fn a_usage_error_reaches_every_node_without_a_hang() {
    let _one = crate::common::one_launch_at_a_time();
    if !available() {
        return;
    }
    // A grid of 6 ranks on 4: refused on every rank, exit code 2.
    let args = [
        "run",
        "--shape",
        "100x100",
        "--from",
        "block,*@6x1",
        "--to",
        "*,block@1x4",
    ];
    let out = on_cluster(2, "2", env!("CARGO_BIN_EXE_redist"), &args);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("error:").count(), 1, "{}", describe(&out));
    assert!(!stderr.contains("panicked"), "{}", describe(&out));
}

/// Example `name` with `args` on 4 ranks of one node and on 2 emulated
/// nodes of 2: both JSON reports, or `None` (saying why) when it cannot run.
fn example_here_and_across(name: &str, args: &[&str]) -> Option<(Value, Value)> {
    let _one = crate::common::one_launch_at_a_time();
    if !available() {
        return None;
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_redist"));
    let example = bin.with_file_name("examples").join(name);
    if !example.exists() {
        eprintln!(
            "not run: {} is not built (cargo test --workspace builds it)",
            example.display()
        );
        return None;
    }
    let example = example.to_str().expect("a UTF-8 path");
    let mut one = Command::new(mpirun());
    mpi_harness::yield_when_idle(&mut one);
    let one = one
        .args(["-n", "4", example])
        .args(args)
        .output()
        .expect("mpirun runs");
    assert!(one.status.success(), "{}", describe(&one));
    let two = on_cluster(2, "2", example, args);
    assert!(two.status.success(), "{}", describe(&two));
    assert_eq!(json(&two)["ranks"], Value::from(4), "{}", describe(&two));
    Some((json(&one), json(&two)))
}

#[test]
fn the_adi_solver_gives_its_single_node_checksum_on_two_nodes() {
    let args = ["--n", "64", "--steps", "5", "--json"];
    if let Some((one, two)) = example_here_and_across("adi", &args) {
        assert_eq!(
            one["checksum"], two["checksum"],
            "one node {one}, two nodes {two}"
        );
    }
}

#[test]
fn the_2d_fft_gives_its_single_node_errors_on_two_nodes() {
    // The same decomposition does the same arithmetic wherever the ranks
    // are: every error figure is bit for bit the one-node figure.
    let args = ["--n", "96", "--m", "40", "--reps", "2", "--json"];
    if let Some((one, two)) = example_here_and_across("fft2d", &args) {
        for key in ["max_error", "roundtrip_error", "serial_error"] {
            assert_eq!(one[key], two[key], "{key}: one node {one}, two nodes {two}");
        }
        assert!(two["max_error"].as_f64().is_some_and(|e| e < 1e-9), "{two}");
    }
}
