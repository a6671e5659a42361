//! The distributed 2-D FFT under MPI with 1, 2, 3, 4 and 5 ranks: the
//! spectrum of plane waves is their spikes, it equals a serial FFT of the
//! gathered array, and the inverse gives the input back — for extents that
//! are not multiples of the rank count, layout pairs with cyclic
//! distributions, `+K` first processes and grids smaller than the job, every
//! exchange strategy and both column storages.

use apps::fft2d::{self, ColumnStorage, Fft2d, FftConfig, Wave, C64};
use dist_array::DistArray;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, MpiTest, Suite, TestResult};
use redist::Strategy;

/// Tolerance of the three errors for an `n × m` transform of waves whose
/// amplitudes add up to at most 2.5: 1e-9, scaled by `n·m` above 1000
/// elements (the spectrum's spikes are `n·m` times the amplitudes).
fn tolerance(n: usize, m: usize) -> f64 {
    1e-9 * ((n * m) as f64 / 1000.0).max(1.0)
}

fn config(n: usize, m: usize) -> FftConfig {
    FftConfig {
        n,
        m,
        x_layout: None,
        y_layout: None,
        strategy: Strategy::Auto,
        columns: ColumnStorage::ColumnMajor,
        reps: 2,
    }
}

fn parse(spec: &str) -> Result<dist_array::LayoutSpec, String> {
    spec.parse().map_err(|e| format!("{spec}: {e}"))
}

/// Runs `cfg` and checks the three errors and the repeated round trip.
fn check(world: &SimpleCommunicator, cfg: &FftConfig) -> TestResult {
    let what = format!(
        "{}x{} y-layout {:?} x-layout {:?} strategy {} columns {} on {} ranks",
        cfg.n,
        cfg.m,
        cfg.y_layout.as_ref().map(ToString::to_string),
        cfg.x_layout.as_ref().map(ToString::to_string),
        cfg.strategy,
        cfg.columns,
        world.size()
    );
    let r = fft2d::run(world, cfg).map_err(|e| format!("{what}: {e}"))?;
    let tol = tolerance(cfg.n, cfg.m);
    ensure!(r.max_error < tol, "{what}: analytic error {}", r.max_error);
    ensure!(
        r.serial_error < tol,
        "{what}: serial error {}",
        r.serial_error
    );
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
    // The spikes are there: the largest is n·m times an amplitude of at least 0.75.
    ensure!(
        r.spectrum_max > 0.7 * (cfg.n * cfg.m) as f64,
        "{what}: spectrum maximum {}",
        r.spectrum_max
    );
    Ok(())
}

fn default_layouts(world: &SimpleCommunicator) -> TestResult {
    for (n, m) in [(30, 21), (17, 29), (1, 7), (6, 1), (64, 48)] {
        for columns in [ColumnStorage::ColumnMajor, ColumnStorage::Scratch] {
            let mut cfg = config(n, m);
            cfg.columns = columns;
            check(world, &cfg)?;
        }
    }
    Ok(())
}

fn other_layouts(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let half = p.div_ceil(2);
    let strategies = [
        Strategy::Alltoallv,
        Strategy::Scheduled,
        Strategy::Async,
        Strategy::Auto,
    ];
    let pairs = [
        (format!("cyclic,*@{p}x1"), format!("*,cyclic(3)@1x{p}")),
        (
            format!("cyclic(4)+{},*@{p}x1", p - 1),
            format!("*,block+{}@1x{p}", p / 2),
        ),
        (format!("block,*@{half}x1"), format!("*,cyclic(2)@1x{p}")),
        (
            format!("cyclic(5),*@{p}x1"),
            format!("*,cyclic+{}@1x{half}", half - 1),
        ),
        ("*,*@1x1".to_string(), format!("*,block@1x{p}")),
    ];
    for (k, (y, x)) in pairs.iter().enumerate() {
        for (s, strategy) in strategies.iter().enumerate() {
            let (n, m) = [(30, 21), (17, 29)][(k + s) % 2];
            let mut cfg = config(n, m);
            cfg.y_layout = Some(parse(y)?);
            cfg.x_layout = Some(parse(x)?);
            cfg.strategy = *strategy;
            cfg.columns = if s % 2 == 0 {
                ColumnStorage::ColumnMajor
            } else {
                ColumnStorage::Scratch
            };
            check(world, &cfg)?;
        }
    }
    Ok(())
}

/// Forward then inverse on an input without structure gives it back,
/// compared on the gathered arrays, with one plan reused over several
/// transforms; and forward alone agrees with the serial FFT.
fn inverse_gives_the_input_back(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let (n, m) = (23, 19);
    for (y, x, columns) in [
        (None, None, ColumnStorage::ColumnMajor),
        (
            Some(parse(&format!("cyclic(2)+{},*@{p}x1", p / 2))?),
            Some(parse(&format!("*,cyclic@1x{p}"))?),
            ColumnStorage::Scratch,
        ),
    ] {
        let mut fft =
            Fft2d::new(world, n, m, y, x, Strategy::Auto, columns).map_err(|e| e.to_string())?;
        let value = |g: &[usize]| {
            let (i, j) = (g[0] as f64, g[1] as f64);
            C64::new((0.37 * i * i + j).sin(), (1.1 * j - 0.2 * i * j).cos())
        };
        let input = DistArray::from_fn(fft.row_grid(), fft.row_layout().clone(), value)
            .map_err(|e| e.to_string())?;
        let mut rows = input.clone();
        let mut spectrum = DistArray::zeros(fft.column_grid(), fft.column_layout().clone())
            .map_err(|e| e.to_string())?;
        for round in 0..3 {
            fft.forward(&mut rows, &mut spectrum)
                .map_err(|e| e.to_string())?;
            if round == 0 {
                let a = input.gather(0).map_err(|e| e.to_string())?;
                let s = spectrum.gather(0).map_err(|e| e.to_string())?;
                if let (Some(a), Some(s)) = (a, s) {
                    let a = a.into_dimensionality::<ndarray::Ix2>().unwrap();
                    let reference = fft2d::fft2_serial(a.view());
                    let e = reference
                        .iter()
                        .zip(s.iter())
                        .map(|(r, x)| (r - x).norm())
                        .fold(0.0, f64::max);
                    ensure!(e < 1e-9, "forward against serial: {e}");
                }
            }
            fft.inverse(&mut spectrum, &mut rows)
                .map_err(|e| e.to_string())?;
            let (a, b) = (
                input.gather(0).map_err(|e| e.to_string())?,
                rows.gather(0).map_err(|e| e.to_string())?,
            );
            if let (Some(a), Some(b)) = (a, b) {
                let e = a
                    .iter()
                    .zip(b.iter())
                    .map(|(x, y)| (x - y).norm())
                    .fold(0.0, f64::max);
                ensure!(e < 1e-12, "round trip {round}: error {e}");
            }
        }
    }
    Ok(())
}

/// The analytic check catches a spike in the wrong place and a wrong
/// amplitude: the check can fail.
fn wrong_spectra_are_caught(world: &SimpleCommunicator) -> TestResult {
    let (n, m) = (17, 29);
    let mut fft = Fft2d::new(
        world,
        n,
        m,
        None,
        None,
        Strategy::Auto,
        ColumnStorage::ColumnMajor,
    )
    .map_err(|e| e.to_string())?;
    let waves = fft2d::default_waves(n, m);
    let mut rows = DistArray::from_fn(fft.row_grid(), fft.row_layout().clone(), |g| {
        fft2d::wave_value(&waves, n, m, g[0], g[1])
    })
    .map_err(|e| e.to_string())?;
    let mut spectrum = DistArray::zeros(fft.column_grid(), fft.column_layout().clone())
        .map_err(|e| e.to_string())?;
    fft.forward(&mut rows, &mut spectrum)
        .map_err(|e| e.to_string())?;
    let good = fft2d::spectrum_error(&spectrum, &waves).map_err(|e| e.to_string())?;
    ensure!(good < 1e-9, "right spectrum: error {good}");
    let nm = (n * m) as f64;
    let mutate = |f: &dyn Fn(&mut Vec<Wave>)| {
        let mut w = waves.clone();
        f(&mut w);
        fft2d::spectrum_error(&spectrum, &w).map_err(|e| e.to_string())
    };
    let moved_k0 = mutate(&|w| w[2].k0 += 1)?;
    let moved_k1 = mutate(&|w| w[1].k1 -= 1)?;
    let scaled = mutate(&|w| w[3].amplitude *= 1.01)?;
    let conjugated = mutate(&|w| w[2].amplitude = w[2].amplitude.conj())?;
    ensure!(moved_k0 > 0.5 * nm * 0.75, "moved k0: {moved_k0}");
    ensure!(moved_k1 > 0.5 * nm * 0.5, "moved k1: {moved_k1}");
    ensure!(scaled > 0.005 * nm * 0.36, "scaled amplitude: {scaled}");
    ensure!(conjugated > nm, "conjugated amplitude: {conjugated}");
    Ok(())
}

fn refuses_bad_layouts(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let refused = |y: Option<String>, x: Option<String>| -> Result<String, String> {
        let mut cfg = config(8, 6);
        cfg.y_layout = y.as_deref().map(parse).transpose()?;
        cfg.x_layout = x.as_deref().map(parse).transpose()?;
        Ok(fft2d::run(world, &cfg)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default())
    };
    if p > 1 {
        let e = refused(Some(format!("*,block@1x{p}")), None)?;
        ensure!(e.contains("must keep dimension 1 whole"), "{e}");
        let e = refused(None, Some(format!("block,*@{p}x1")))?;
        ensure!(e.contains("must keep dimension 0 whole"), "{e}");
    }
    let e = refused(Some("block,*,*@1x1x1".to_string()), None)?;
    ensure!(e.contains("must keep dimension 1 whole"), "{e}");
    let e = refused(None, Some(format!("*,block@1x{}", p + 1)))?;
    ensure!(e.contains("the job has"), "{e}");
    let mut cfg = config(0, 6);
    ensure!(fft2d::run(world, &cfg).is_err());
    cfg = config(4, 6);
    cfg.reps = 0;
    ensure!(fft2d::run(world, &cfg).is_err());
    Ok(())
}

/// The suite `fft2d`.
pub fn suite() -> Suite {
    Suite::new(
        "fft2d",
        &[
            MpiTest::new("default_layouts", default_layouts),
            MpiTest::new("other_layouts", other_layouts),
            MpiTest::new("inverse_gives_the_input_back", inverse_gives_the_input_back),
            MpiTest::new("wrong_spectra_are_caught", wrong_spectra_are_caught),
            MpiTest::new("refuses_bad_layouts", refuses_bad_layouts),
        ],
    )
    .ranks(&[1, 2, 3, 4, 5])
}
