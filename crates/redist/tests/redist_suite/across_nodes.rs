//! The redistribution suite across emulated nodes (the suite `redist
//! across nodes` of `mpi_redist`): 4 ranks
//! on 2 nodes of 2 and 5 ranks on nodes of 2, 2 and 1
//! (`scripts/cluster-mpirun.sh`, which builds them with `scripts/cluster.sh`:
//! network namespaces on a bridge, each with its own host name), so that
//! ranks of one node copy directly while messages cross the emulated links.
//!
//! Needs root and network namespaces; elsewhere it says why it did not run
//! and passes. The launches always go through `cluster-mpirun.sh` with the
//! MPI named by `NDCYCLIC_CLUSTER_MPI` (`mpich`, the default, or `openmpi`:
//! `scripts/test-openmpi.sh` sets it), on the rank counts above unless
//! `--ranks` says otherwise.

use mpi_harness::{is_rank, Launcher, Suite};
use std::path::PathBuf;
use std::process::Command;

/// Rank counts of the launches: 2 nodes of 2, then 3 nodes of 2, 2 and 1.
const RANK_COUNTS: &[usize] = &[4, 5];

/// Left out here: it checks that memory does not grow over 4 000
/// executions, which has nothing to do with nodes, and with 4 ranks
/// spinning on 2 cores each exchange across the emulated nodes takes
/// milliseconds (70 s for this test alone).
const LEFT_OUT: &[&str] = &["thousand_executions"];

fn scripts() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts")
}

/// Why emulated nodes cannot run here, if they cannot.
fn unavailable() -> Option<String> {
    match Command::new(scripts().join("cluster.sh"))
        .args(["--nodes", "1", "--ranks-per-node", "1", "--", "true"])
        .output()
    {
        Ok(probe) if probe.status.success() => None,
        Ok(probe) => Some(String::from_utf8_lossy(&probe.stderr).trim().to_string()),
        Err(e) => Some(format!("scripts/cluster.sh cannot be started: {e}")),
    }
}

/// The suite, or `None` (saying why) where nodes cannot be emulated.
pub fn suite() -> Option<Suite> {
    suite_of("redist across nodes", super::TESTS, LEFT_OUT)
}

/// The suite `name` of `tests` but `left_out` across emulated nodes, or
/// `None` (saying why, once) where nodes cannot be emulated.
pub fn suite_of(name: &str, tests: &[mpi_harness::MpiTest], left_out: &[&str]) -> Option<Suite> {
    static WHY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if !is_rank() {
        if let Some(why) = WHY.get_or_init(unavailable) {
            println!("\nnot run: emulated nodes are unavailable here: {why}\n");
            return None;
        }
    }
    let mpi = std::env::var("NDCYCLIC_CLUSTER_MPI").unwrap_or_else(|_| "mpich".into());
    let launcher = Launcher::new(
        scripts().join("cluster-mpirun.sh").display().to_string(),
        &["--mpi", &mpi],
    );
    Some(
        Suite::new(name, tests)
            .ranks(RANK_COUNTS)
            .without(left_out)
            .launcher(launcher),
    )
}
