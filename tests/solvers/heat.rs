//! The heat solver under MPI with 1 to 5 ranks: 2-D and 3-D fields on
//! extents no grid divides end within rounding of the exact discrete decay
//! of their Fourier mode, and bit for bit the same field (checksum) with
//! and without overlap, with and without node-direct reads, and on another
//! layout; bad parameters fail on every rank. Before the launches, the
//! launcher runs `examples/heat.rs` whole: a checkpoint written on 4 ranks
//! and resumed on 3 ends with the uninterrupted run's checksum.

use apps::heat::{self, HeatConfig};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, Example, MpiTest, Suite, TestResult};
use serde_json::Value;
use std::process::Command;

fn config(n: usize, dims: usize, steps: usize) -> HeatConfig {
    HeatConfig {
        n,
        dims,
        steps,
        r: 0.2 / dims as f64,
        layout: None,
        overlap: true,
        node_direct: true,
        progress: false,
        checkpoint: None,
        restart: None,
        slice: false,
    }
}

fn the_same_field_every_way(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    for (n, dims, steps) in [(23, 2, 8), (11, 3, 5)] {
        let base = heat::solve(world, &config(n, dims, steps)).map_err(|e| e.to_string())?;
        ensure!(
            base.max_error < 1e-12,
            "{dims}-D max error {}",
            base.max_error
        );
        let rows = format!(
            "block{}@{p}{}",
            ",*".repeat(dims - 1),
            "x1".repeat(dims - 1)
        );
        for (what, cfg) in [
            (
                "no overlap",
                HeatConfig {
                    overlap: false,
                    ..config(n, dims, steps)
                },
            ),
            (
                "messages",
                HeatConfig {
                    node_direct: false,
                    ..config(n, dims, steps)
                },
            ),
            (
                "slabs",
                HeatConfig {
                    layout: Some(rows.parse().unwrap()),
                    ..config(n, dims, steps)
                },
            ),
        ] {
            let r = heat::solve(world, &cfg).map_err(|e| format!("{what}: {e}"))?;
            ensure_eq!(r.checksum, base.checksum, "{dims}-D {what}: another field");
        }
        ensure!(base.ghost_bytes_per_step > 0, "ghosts move");
    }
    Ok(())
}

fn refuses_bad_parameters(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    for (what, cfg) in [
        ("4 dimensions", config(8, 4, 1)),
        (
            "an unstable r",
            HeatConfig {
                r: 0.3,
                ..config(8, 2, 1)
            },
        ),
        (
            "several blocks per rank",
            HeatConfig {
                layout: Some(format!("cyclic,*@{p}x1").parse().unwrap()),
                ..config(4 * p, 2, 1)
            },
        ),
    ] {
        if what == "several blocks per rank" && p == 1 {
            continue;
        }
        ensure!(
            heat::solve(world, &cfg).is_err(),
            "{what}: refused on every rank"
        );
    }
    Ok(())
}

/// The example's JSON line of a run with `args` on `ranks`
/// (`target/<profile>/examples/heat`, launched as the harness launches).
fn example(ranks: usize, args: &[&str]) -> Result<Value, String> {
    let (mpirun, mut all) = super::example_launch("heat", ranks, args)?;
    all.push("--json".to_string());
    let out = Command::new(&mpirun)
        .args(&all)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "{mpirun} {}: {}",
            all.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.lines().last().unwrap_or("")).map_err(|e| e.to_string())
}

/// A checkpoint on 4 ranks resumed on 3 ends as the uninterrupted run.
fn checkpoint_restart() -> Result<(), String> {
    let path = std::env::temp_dir().join(format!("ndcyclic-heat-{}.npy", std::process::id()));
    let p = path.display().to_string();
    let common = ["--n", "20", "--dims", "3", "--steps", "6"];
    let whole = example(2, &common)?;
    let mut first = common.to_vec();
    first.extend(["--checkpoint", &p, "--every", "3"]);
    let written = example(4, &first)?;
    let mut again = common.to_vec();
    again.extend(["--restart", &p]);
    let resumed = example(3, &again);
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(format!("{p}.json"));
    let resumed = resumed?;
    if written["checksum"] != whole["checksum"] || resumed["checksum"] != whole["checksum"] {
        return Err(format!(
            "checksums {} {} {}",
            whole["checksum"], written["checksum"], resumed["checksum"]
        ));
    }
    if resumed["restarted_from_step"] != 6 || written["checkpoints_written"] != 2 {
        return Err(format!(
            "restarted from {}, {} checkpoints",
            resumed["restarted_from_step"], written["checkpoints_written"]
        ));
    }
    Ok(())
}

/// What the launcher runs before the suite's launches.
pub fn before_launches() {
    let mut words = vec![];
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--ranks" | "--test-threads" | "--format" | "--logfile" | "--skip" | "--color" => {
                args.next();
            }
            s if s.starts_with('-') => {}
            s => words.push(s.to_string()),
        }
    }
    if !words.is_empty() && !words.iter().any(|w| "heat example".contains(w.as_str())) {
        return;
    }
    mpi_harness::run_examples(
        "heat example",
        &[1, 2, 5],
        &[
            Example::mpi("heat").args(&["--n", "24", "--steps", "5", "--json"]),
            Example::mpi("heat").args(&[
                "--n",
                "12",
                "--dims",
                "3",
                "--steps",
                "4",
                "--no-overlap",
                "--json",
            ]),
        ],
    );
    if std::env::args().any(|a| a == "--list") {
        println!("heat example checkpoint np=4,3: test");
        return;
    }
    match checkpoint_restart() {
        Ok(()) => println!("test heat example checkpoint np=4,3 ... ok"),
        Err(e) => {
            println!("test heat example checkpoint np=4,3 ... FAILED\n{e}");
            std::process::exit(1);
        }
    }
}

/// The suite `heat`.
pub fn suite() -> Suite {
    Suite::new(
        "heat",
        &[
            MpiTest::new("the_same_field_every_way", the_same_field_every_way),
            MpiTest::new("refuses_bad_parameters", refuses_bad_parameters),
        ],
    )
    .ranks(&[1, 2, 3, 4, 5])
}
