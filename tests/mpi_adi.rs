//! The ADI solver under MPI with 1, 2, 3, 4, 6 and 24 ranks: the final field
//! is bitwise identical to the serial reference for every rank count and
//! every layout pair.

use apps::adi::{self, AdiConfig};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, MpiTest, TestResult};
use redist::{Remap, Strategy};

fn config(n: usize, steps: usize, dt: f64) -> AdiConfig {
    AdiConfig {
        n,
        steps,
        dt,
        x_layout: None,
        y_layout: None,
        strategy: Strategy::Auto,
        remap: Remap::None,
        two_modes: false,
        progress: false,
    }
}

fn reference(n: usize, steps: usize, dt: f64, two: bool) -> u64 {
    let u = adi::solve_serial(n, steps, dt, two).expect("serial solve");
    adi::fnv1a64(u.as_slice().expect("row-major"))
}

fn default_layouts(world: &SimpleCommunicator) -> TestResult {
    let (n, steps, dt) = (29, 6, 2e-3);
    let r = adi::solve(world, &config(n, steps, dt)).map_err(|e| e.to_string())?;
    ensure_eq!(
        r.checksum,
        reference(n, steps, dt, false),
        "checksum differs from the serial reference"
    );
    ensure!(r.max_error < 1e-3, "max error {}", r.max_error);
    ensure_eq!(r.field.is_some(), world.rank() == 0);
    Ok(())
}

fn other_layouts(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let (n, steps, dt) = (23, 5, 3e-3);
    let want = reference(n, steps, dt, true);
    let half = p.div_ceil(2);
    for (x, y, strategy, remap) in [
        (
            format!("*,cyclic(3)@1x{p}"),
            format!("cyclic(2),*@{p}x1"),
            Strategy::Scheduled,
            Remap::None,
        ),
        (
            format!("*,block+{}@1x{p}", p - 1),
            format!("cyclic(5),*@{half}x1"),
            Strategy::Alltoallv,
            Remap::Optimal,
        ),
        (
            format!("*,cyclic@1x{half}"),
            format!("block,*@{p}x1"),
            Strategy::Async,
            Remap::None,
        ),
    ] {
        let mut cfg = config(n, steps, dt);
        cfg.two_modes = true;
        cfg.x_layout = Some(x.parse().map_err(|e| format!("{x}: {e}"))?);
        cfg.y_layout = Some(y.parse().map_err(|e| format!("{y}: {e}"))?);
        cfg.strategy = strategy;
        cfg.remap = remap;
        let r = adi::solve(world, &cfg).map_err(|e| e.to_string())?;
        ensure_eq!(r.checksum, want, "x-layout {} y-layout {}", x, y);
    }
    Ok(())
}

fn second_order_convergence(world: &SimpleCommunicator) -> TestResult {
    // Halving h and dt together cuts the max error by 4 ± 1.
    let mut errors = vec![];
    for (n, steps, dt) in [(15, 10, 4e-3), (31, 20, 2e-3), (63, 40, 1e-3)] {
        errors.push(
            adi::solve(world, &config(n, steps, dt))
                .map_err(|e| e.to_string())?
                .max_error,
        );
    }
    for w in errors.windows(2) {
        let ratio = w[0] / w[1];
        ensure!(
            (3.0..=5.0).contains(&ratio),
            "errors {errors:?}: ratio {ratio}"
        );
    }
    Ok(())
}

fn refuses_bad_layouts(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let mut cfg = config(8, 1, 1e-3);
    cfg.x_layout = Some(
        format!("block,*@{p}x1")
            .parse()
            .map_err(|e| format!("{e}"))?,
    );
    if p > 1 {
        let e = adi::solve(world, &cfg)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        ensure!(e.contains("must keep dimension 0 whole"), "{e}");
    }
    let mut cfg = config(8, 1, -1.0);
    cfg.x_layout = None;
    ensure!(adi::solve(world, &cfg).is_err());
    Ok(())
}

fn main() {
    mpi_harness::run_with_ranks(
        "adi",
        &[1, 2, 3, 4, 6, 24],
        &[
            MpiTest::new("default_layouts", default_layouts),
            MpiTest::new("other_layouts", other_layouts),
            MpiTest::new("second_order_convergence", second_order_convergence),
            MpiTest::new("refuses_bad_layouts", refuses_bad_layouts),
        ],
    );
}
