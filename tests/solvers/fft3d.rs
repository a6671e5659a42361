//! The distributed 3-D FFT on pencils under MPI with 1, 2, 3, 4 and 6 ranks:
//! the spectrum of plane waves is their spikes, it equals a serial FFT of
//! the gathered array, and the inverse gives the input back — for extents
//! that are not multiples of the grid's, grids of every shape that fits
//! (2x2, 1x4, 4x1, 3x2, 2x3, Px1, 1xP, and grids smaller than the job, so
//! that some ranks hold nothing), and every exchange strategy. Before the
//! MPI launches, the launcher runs `examples/fft3d.rs` whole: at 1, 3 and 4
//! ranks (it exits with a failure when its errors are above rounding level)
//! and once at 2 ranks, reading the errors from its JSON line.

use apps::fft3d::{self, Fft3d, FftConfig, PencilGrid, Wave, C64};
use dist_array::DistArray;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, Example, MpiTest, Suite, TestResult};
use redist::Strategy;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Tolerance of the errors for an array of `elements` elements of waves
/// whose amplitudes add up to at most 2.5: 1e-9, scaled by the element
/// count above 1000 (the spectrum's spikes are that many times the
/// amplitudes).
fn tolerance(elements: usize) -> f64 {
    1e-9 * (elements as f64 / 1000.0).max(1.0)
}

fn config((n, m, k): (usize, usize, usize)) -> FftConfig {
    FftConfig {
        n,
        m,
        k,
        grid: None,
        strategy: Strategy::Auto,
        reps: 1,
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Runs `cfg` and checks the errors, the repeated round trip and the
/// spikes' height.
fn check(world: &SimpleCommunicator, cfg: &FftConfig) -> TestResult {
    let what = format!(
        "{}x{}x{} grid {:?} strategy {} on {} ranks",
        cfg.n,
        cfg.m,
        cfg.k,
        cfg.grid.map(|g| g.to_string()),
        cfg.strategy,
        world.size()
    );
    let r = fft3d::run(world, cfg).map_err(|e| format!("{what}: {e}"))?;
    let elements = cfg.n * cfg.m * cfg.k;
    let tol = tolerance(elements);
    ensure!(r.max_error < tol, "{what}: analytic error {}", r.max_error);
    let serial = r.serial_error.ok_or(format!("{what}: no serial check"))?;
    ensure!(serial < tol, "{what}: serial error {serial}");
    ensure!(
        r.roundtrip_error < tol,
        "{what}: round-trip error {}",
        r.roundtrip_error
    );
    ensure!(
        r.repeated_error < tol,
        "{what}: error after {} more round trips {}",
        cfg.reps,
        r.repeated_error
    );
    // The spikes are there: the largest is N times an amplitude of at least 0.75.
    ensure!(
        r.spectrum_max > 0.7 * elements as f64,
        "{what}: spectrum maximum {}",
        r.spectrum_max
    );
    if let Some(g) = cfg.grid {
        ensure!(r.grid == g, "{what}: ran on grid {}", r.grid);
    }
    Ok(())
}

fn default_grid(world: &SimpleCommunicator) -> TestResult {
    for shape in [(12, 10, 9), (7, 5, 6), (16, 16, 16)] {
        check(world, &config(shape))?;
    }
    Ok(())
}

/// The grids [`grid_shapes`] runs on `p` ranks: `Px1` and `1xP`, those of
/// 2x2, 1x4, 4x1, 3x2 and 2x3 that use every rank, and grids that leave
/// ranks idle: `(P-1)x1`, and 2x2 from 5 ranks on.
fn grids_for(p: usize) -> Vec<(usize, usize)> {
    let mut grids = vec![(p, 1), (1, p)];
    grids.extend(
        [(2, 2), (1, 4), (4, 1), (3, 2), (2, 3)]
            .into_iter()
            .filter(|&(a, b)| a * b == p),
    );
    if p > 1 {
        grids.push((p - 1, 1));
    }
    if p > 4 {
        grids.push((2, 2));
    }
    let mut unique = vec![];
    for g in grids {
        if !unique.contains(&g) {
            unique.push(g);
        }
    }
    unique
}

/// Every grid of [`grids_for`], each with a shape and a strategy in turn.
fn grid_shapes(world: &SimpleCommunicator) -> TestResult {
    let strategies = [
        Strategy::Alltoallv,
        Strategy::Scheduled,
        Strategy::Async,
        Strategy::Auto,
    ];
    let shapes = [(12, 10, 9), (7, 5, 6), (5, 11, 3), (1, 1, 1), (2, 1, 3)];
    for (i, (p1, p2)) in grids_for(world.size() as usize).into_iter().enumerate() {
        let mut cfg = config(shapes[i % shapes.len()]);
        cfg.grid = Some(PencilGrid { p1, p2 });
        cfg.strategy = strategies[i % strategies.len()];
        check(world, &cfg)?;
    }
    Ok(())
}

/// The exchanges stay within the grid's lines: x ↔ y among the ranks of
/// one `c2`, y ↔ z among those of one `c1`; ranks outside the grid send
/// nothing.
fn exchanges_stay_in_grid_lines(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let me = world.rank() as usize;
    // The grids of [`grids_for`] with both extents above 1, or Px1.
    let mut grids: Vec<_> = grids_for(p)
        .into_iter()
        .filter(|&(a, b)| a > 1 && b > 1)
        .collect();
    if grids.is_empty() {
        grids.push((p, 1));
    }
    for (p1, p2) in grids {
        let grid = PencilGrid { p1, p2 };
        let fft = Fft3d::new(world, [7, 6, 5], Some(grid), Strategy::Auto).map_err(err)?;
        let [x_to_y, y_to_z, z_to_y, y_to_x] = fft.send_peers();
        if me >= grid.ranks() {
            ensure!(
                [&x_to_y, &y_to_z, &z_to_y, &y_to_x]
                    .iter()
                    .all(|v| v.is_empty()),
                "grid {grid}: idle rank {me} sends"
            );
            continue;
        }
        let (c1, c2) = (me / p2, me % p2);
        for (what, peers) in [("x -> y", &x_to_y), ("y -> x", &y_to_x)] {
            ensure!(
                peers
                    .iter()
                    .all(|&q| q < grid.ranks() && q % p2 == c2 && q != me),
                "grid {grid}: {what} from rank {me} to {peers:?}"
            );
            ensure!(peers.len() < p1.max(2), "grid {grid}: {what} {peers:?}");
        }
        for (what, peers) in [("y -> z", &y_to_z), ("z -> y", &z_to_y)] {
            ensure!(
                peers
                    .iter()
                    .all(|&q| q < grid.ranks() && q / p2 == c1 && q != me),
                "grid {grid}: {what} from rank {me} to {peers:?}"
            );
            ensure!(peers.len() < p2.max(2), "grid {grid}: {what} {peers:?}");
        }
    }
    Ok(())
}

/// Largest `|a − b|` of two gathered arrays (0 away from rank 0).
fn gathered_difference(a: &DistArray<C64>, b: &DistArray<C64>) -> Result<f64, String> {
    Ok(
        match (a.gather(0).map_err(err)?, b.gather(0).map_err(err)?) {
            (Some(a), Some(b)) => a
                .iter()
                .zip(b.iter())
                .map(|(x, y)| (x - y).norm())
                .fold(0.0, f64::max),
            _ => 0.0,
        },
    )
}

/// Forward then inverse on an input without structure gives it back,
/// compared on the gathered arrays, with one plan reused over several
/// transforms; and forward alone agrees with the serial FFT.
fn inverse_gives_the_input_back(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let extents = [9, 7, 10];
    for grid in [None, Some(PencilGrid { p1: 1, p2: p })] {
        let mut fft = Fft3d::new(world, extents, grid, Strategy::Auto).map_err(err)?;
        // x-pencils hold (y, z, x).
        let value = |g: &[usize]| {
            let (y, z, x) = (g[0] as f64, g[1] as f64, g[2] as f64);
            C64::new((0.37 * x * x + y - z).sin(), (1.1 * y - 0.2 * x * z).cos())
        };
        let input = DistArray::from_fn(fft.grid(), fft.x_layout().clone(), value).map_err(err)?;
        let mut x = input.clone();
        let mut spectrum = DistArray::zeros(fft.grid(), fft.z_layout().clone()).map_err(err)?;
        for round in 0..3 {
            fft.forward(&mut x, &mut spectrum).map_err(err)?;
            if round == 0 {
                let a = input.gather(0).map_err(err)?;
                let s = spectrum.gather(0).map_err(err)?;
                if let (Some(a), Some(s)) = (a, s) {
                    let a = a.into_dimensionality::<ndarray::Ix3>().map_err(err)?;
                    let reference = fft3d::fft3_serial(a.view().permuted_axes([2, 0, 1]));
                    let e = reference
                        .iter()
                        .zip(s.iter())
                        .map(|(r, x)| (r - x).norm())
                        .fold(0.0, f64::max);
                    ensure!(e < 1e-9, "forward against serial: {e}");
                }
            }
            fft.inverse(&mut spectrum, &mut x).map_err(err)?;
            let e = gathered_difference(&input, &x)?;
            ensure!(e < 1e-12, "grid {grid:?} round trip {round}: error {e}");
        }
    }
    Ok(())
}

/// The analytic check catches a spike in the wrong place and a wrong
/// amplitude: the check can fail.
fn wrong_spectra_are_caught(world: &SimpleCommunicator) -> TestResult {
    let extents = [7, 5, 6];
    let mut fft = Fft3d::new(world, extents, None, Strategy::Auto).map_err(err)?;
    let waves = fft3d::default_waves(extents);
    let mut x = DistArray::from_fn(fft.grid(), fft.x_layout().clone(), |g| {
        fft3d::wave_value(&waves, extents, [g[2], g[0], g[1]])
    })
    .map_err(err)?;
    let mut spectrum = DistArray::zeros(fft.grid(), fft.z_layout().clone()).map_err(err)?;
    fft.forward(&mut x, &mut spectrum).map_err(err)?;
    let good = fft3d::spectrum_error(&spectrum, &waves).map_err(err)?;
    ensure!(good < 1e-9, "right spectrum: error {good}");
    let volume = 210.0;
    let mutate = |f: &dyn Fn(&mut Vec<Wave>)| {
        let mut w = waves.clone();
        f(&mut w);
        fft3d::spectrum_error(&spectrum, &w).map_err(err)
    };
    let moved_x = mutate(&|w| w[2].k[0] += 1)?;
    let moved_y = mutate(&|w| w[1].k[1] -= 1)?;
    let moved_z = mutate(&|w| w[1].k[2] += 2)?;
    let scaled = mutate(&|w| w[3].amplitude *= 1.01)?;
    let conjugated = mutate(&|w| w[2].amplitude = w[2].amplitude.conj())?;
    ensure!(moved_x > 0.5 * volume * 0.75, "moved along x: {moved_x}");
    ensure!(moved_y > 0.5 * volume * 0.5, "moved along y: {moved_y}");
    ensure!(moved_z > 0.5 * volume * 0.5, "moved along z: {moved_z}");
    ensure!(scaled > 0.005 * volume * 0.36, "scaled amplitude: {scaled}");
    ensure!(conjugated > volume, "conjugated amplitude: {conjugated}");
    Ok(())
}

fn refuses_bad_parameters(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let refused = |cfg: &FftConfig| fft3d::run(world, cfg).err().map(|e| e.to_string());
    let mut cfg = config((4, 5, 6));
    cfg.grid = Some(PencilGrid { p1: p + 1, p2: 1 });
    let e = refused(&cfg).unwrap_or_default();
    ensure!(e.contains("the job has"), "{e}");
    cfg.grid = Some(PencilGrid { p1: 2, p2: p });
    let e = refused(&cfg).unwrap_or_default();
    ensure!(e.contains("the job has"), "{e}");
    let e = refused(&config((4, 0, 6))).unwrap_or_default();
    ensure!(e.contains("at least one element"), "{e}");
    cfg = config((4, 5, 6));
    cfg.reps = 0;
    ensure!(refused(&cfg).is_some());
    // Arrays in the wrong layouts: refused on every rank, nothing hangs, and
    // the plan still works afterwards.
    let extents = [4, 5, 6];
    let mut fft = Fft3d::new(world, extents, None, Strategy::Auto).map_err(err)?;
    let mut x = DistArray::zeros(fft.grid(), fft.x_layout().clone()).map_err(err)?;
    let mut z = DistArray::zeros(fft.grid(), fft.z_layout().clone()).map_err(err)?;
    let mut other = x.clone();
    ensure!(fft.forward(&mut x, &mut other).is_err());
    ensure!(fft.forward(&mut z, &mut other).is_err());
    ensure!(fft.inverse(&mut x, &mut other).is_err());
    fft.forward(&mut x, &mut z).map_err(err)?;
    fft.inverse(&mut z, &mut x).map_err(err)?;
    Ok(())
}

/// `choose_pencil_grid` times every `P1 × P2` grid of the job's ranks and
/// chooses one of them, the same on every rank; the transform on it is
/// right.
fn chosen_grids_transform_right(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let settings = redist::tune::GridSettings {
        warmups: 1,
        reps: 1,
        wisdom: Some(PathBuf::new()),
        progress: false,
    };
    let extents = [12, 10, 9];
    let c = fft3d::choose_pencil_grid(world, extents, Strategy::Auto, &settings).map_err(err)?;
    let candidates = fft3d::pencil_candidates(p);
    ensure!(c.tried.len() == candidates.len(), "{c:?}");
    ensure!(c.ratio() <= 1.0 && !c.recalled, "{c:?}");
    let chosen = PencilGrid {
        p1: c.grid[0],
        p2: c.grid[1],
    };
    ensure!(candidates.contains(&chosen), "{c:?}");
    ensure!(
        mpi_harness::same_everywhere(world, &chosen.to_string()),
        "one grid"
    );
    let mut cfg = config((12, 10, 9));
    cfg.grid = Some(chosen);
    check(world, &cfg)
}

/// The example program, built and started by [`examples_run`], at 2 ranks
/// on a 2x1 grid: its JSON line reports errors at rounding level.
fn example_json_reports_small_errors() -> Result<(), String> {
    let exe = std::env::current_exe().map_err(err)?;
    let dir: PathBuf = exe
        .parent()
        .and_then(|d| d.parent())
        .ok_or("the test program is not in <target>/<profile>/deps")?
        .join("examples");
    let mpirun = std::env::var("NDCYCLIC_MPIRUN").unwrap_or_else(|_| "mpirun".to_string());
    let mut args: Vec<String> = std::env::var("NDCYCLIC_MPIRUN_ARGS")
        .map(|v| v.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    args.extend(["-n", "2"].map(String::from));
    args.push(dir.join("fft3d").display().to_string());
    args.extend(
        [
            "--n", "12", "--m", "10", "--k", "9", "--grid", "2x1", "--reps", "2", "--json",
        ]
        .map(String::from),
    );
    let command = format!("{mpirun} {}", args.join(" "));
    let mut child = Command::new(&mpirun)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{command}: {e}"))?;
    let start = Instant::now();
    while child.try_wait().map_err(err)?.is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{command}: timed out"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().map_err(err)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("{command}: {}\n{stdout}\n{stderr}", out.status));
    }
    let line = stdout.lines().next().unwrap_or_default();
    let r: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("{command}: {e}: {line:?}"))?;
    let number = |key: &str| {
        r[key]
            .as_f64()
            .ok_or(format!("{command}: no number {key} in {line}"))
    };
    for key in ["max_error", "serial_error", "roundtrip_error"] {
        let e = number(key)?;
        ensure!(e < 1e-9, "{command}: {key} {e} in {line}");
    }
    for key in ["time_s", "redist_s", "x_to_y_s"] {
        let t = number(key)?;
        ensure!(t > 0.0 && t < 60.0, "{command}: {key} {t} in {line}");
    }
    ensure!(
        number("redist_s")? <= number("time_s")?,
        "{command}: {line}"
    );
    ensure!(r["ranks"] == 2 && r["grid"] == "2x1", "{command}: {line}");
    ensure!(
        r["n"] == 12 && r["m"] == 10 && r["k"] == 9 && r["strategy"] == "auto",
        "{command}: {line}"
    );
    Ok(())
}

/// The words of the command line that select tests or examples by name
/// (as the harness reads them: options and their values left out).
fn name_filters() -> Vec<String> {
    let mut words = vec![];
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--ranks" | "--test-threads" | "--format" | "--logfile" | "--skip" | "--color" => {
                it.next();
            }
            s if s.starts_with('-') => {}
            s => words.push(s.to_string()),
        }
    }
    words
}

/// The launcher's part, unless the command line selects other names: the
/// example at 1, 3 and 4 ranks (built first; exits the process when a
/// launch fails), then its JSON line at 2.
fn examples_run() {
    let filters = name_filters();
    if !filters.is_empty() && !filters.iter().any(|f| "fft3d".contains(f.as_str())) {
        return;
    }
    mpi_harness::run_examples(
        "fft3d example",
        &[1, 3, 4],
        &[
            Example::mpi("fft3d").args(&[
                "--n", "12", "--m", "10", "--k", "9", "--reps", "2", "--json",
            ]),
            Example::mpi("fft3d").args(&[
                "--n", "12", "--m", "10", "--k", "9", "--reps", "2", "--grid", "auto", "--json",
            ]),
        ],
    );
    if std::env::args().any(|a| a == "--list") {
        println!("fft3d example JSON np=2: test");
        return;
    }
    match example_json_reports_small_errors() {
        Ok(()) => println!("test fft3d example JSON np=2 ... ok"),
        Err(e) => {
            println!("test fft3d example JSON np=2 ... FAILED\n{e}");
            std::process::exit(1);
        }
    }
}

/// The suite `fft3d`.
pub fn suite() -> Suite {
    Suite::new(
        "fft3d",
        &[
            MpiTest::new("default_grid", default_grid),
            MpiTest::new("grid_shapes", grid_shapes),
            MpiTest::new("exchanges_stay_in_grid_lines", exchanges_stay_in_grid_lines),
            MpiTest::new("inverse_gives_the_input_back", inverse_gives_the_input_back),
            MpiTest::new("wrong_spectra_are_caught", wrong_spectra_are_caught),
            MpiTest::new("refuses_bad_parameters", refuses_bad_parameters),
            MpiTest::new("chosen_grids_transform_right", chosen_grids_transform_right),
        ],
    )
    .ranks(&[1, 2, 3, 4, 6])
}

/// What the launcher runs before the suite's launches.
pub fn before_launches() {
    examples_run();
}
