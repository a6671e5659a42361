//! The ADI solver under MPI with 1, 2, 3, 4, 6 and 24 ranks: the final field
//! is bitwise identical to the serial reference for every rank count and
//! every layout pair, and (up to 6 ranks) a run resumed from a checkpoint
//! on other layouts ends with the same field.
//!
//! Before the MPI launches, the launcher runs `examples/adi.rs` whole
//! ([`example_checkpoints`]): a checkpoint written on 4 ranks and resumed
//! on 3 with other layouts ends with the uninterrupted run's checksum; a
//! restart with another `--n`, `--dt` or a `--steps` before the
//! checkpoint, a checkpoint whose two files do not belong together, and
//! usage errors (`--every` without `--checkpoint`, `--every 0`, a missing
//! checkpoint) exit with code 2 and say why.

use apps::adi::{self, AdiConfig, Checkpoints};
use mpi::collective::Root;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, Example, MpiTest, Suite, TestResult};
use redist::{Remap, Strategy};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
        checkpoint: None,
        restart: None,
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

/// `choose_lines` times every rank count of the line phases, P down to 1,
/// and chooses one, the same on every rank; the run on its layouts ends
/// with the serial reference's field.
fn chosen_lines_give_the_reference(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let (n, steps, dt) = (29, 6, 2e-3);
    let settings = redist::tune::GridSettings {
        warmups: 0,
        reps: 1,
        wisdom: Some(PathBuf::new()),
        progress: false,
    };
    let mut cfg = config(n, steps, dt);
    let c = adi::choose_lines(world, &cfg, &settings).map_err(|e| e.to_string())?;
    ensure_eq!(c.tried.len(), p, "{c:?}");
    ensure!((1..=p).contains(&c.grid[0]) && c.ratio() <= 1.0, "{c:?}");
    ensure!(
        mpi_harness::same_everywhere(world, &format!("{:?}", c.grid)),
        "one choice"
    );
    let (y, x) = adi::line_layouts(c.grid[0]).map_err(|e| e.to_string())?;
    (cfg.y_layout, cfg.x_layout) = (Some(y), Some(x));
    let r = adi::solve(world, &cfg).map_err(|e| e.to_string())?;
    ensure_eq!(r.checksum, reference(n, steps, dt, false));
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

/// A checkpoint at step 3 on the default layouts, resumed to step 6 on
/// others (the y-lines on half the ranks: some hold nothing), ends with the
/// serial field; a restart with another `dt` is refused on every rank.
/// Not at 24 ranks: there MPI-IO's own collectives (opening, sizing and
/// closing the file) spin on 2 cores, and a save of the 17 x 17 field takes
/// seconds; the rank-count independent parts are the same at 6.
fn checkpoint_restart(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    if p > 8 {
        return Ok(());
    }
    let (n, dt) = (17, 2e-3);
    // One path for every rank: rank 0's pid.
    let mut token = std::process::id();
    world.process_at_rank(0).broadcast_into(&mut token);
    let path = std::env::temp_dir().join(format!("ndcyclic-mpi-adi-{token}-{p}.npy"));
    let side = adi::checkpoint::sidecar_path(&path).ok_or("no sidecar path")?;
    let outcome = (|| {
        let mut cfg = config(n, 3, dt);
        cfg.checkpoint = Some(Checkpoints {
            path: path.clone(),
            every: 3,
        });
        let r = adi::solve(world, &cfg).map_err(|e| e.to_string())?;
        ensure_eq!(r.checkpoints_written, 1);
        let mut cfg = config(n, 6, dt);
        cfg.restart = Some(path.clone());
        let half = p.div_ceil(2);
        let (x, y) = (
            format!("*,cyclic(3)@1x{p}"),
            format!("cyclic(2),*@{half}x1"),
        );
        cfg.x_layout = Some(x.parse().map_err(|e| format!("{x}: {e}"))?);
        cfg.y_layout = Some(y.parse().map_err(|e| format!("{y}: {e}"))?);
        let r = adi::solve(world, &cfg).map_err(|e| e.to_string())?;
        ensure_eq!(r.restarted_from, Some(3));
        ensure_eq!(
            r.checksum,
            reference(n, 6, dt, false),
            "resumed on {x} / {y}"
        );
        cfg.dt = 1e-3;
        let e = adi::solve(world, &cfg).err().map(|e| e.to_string());
        ensure!(
            e.as_deref()
                .is_some_and(|e| e.contains("restart with --dt 0.002")),
            "{e:?}"
        );
        Ok(())
    })();
    procgrid::waits::barrier(world);
    if world.rank() == 0 {
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(&side);
    }
    outcome
}

/// One launch of the example: exit code, stdout, stderr.
struct Run {
    command: String,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// `Err` with the output unless the run exited with `code`.
    fn expect_code(&self, code: i32) -> TestResult {
        ensure!(
            self.code == Some(code),
            "{}: exit code {:?}, expected {code}\n{}\n{}",
            self.command,
            self.code,
            self.stdout,
            self.stderr
        );
        Ok(())
    }

    /// The JSON line of a run that succeeded.
    fn json(&self) -> Result<Value, String> {
        self.expect_code(0)?;
        let line = self.stdout.lines().next().unwrap_or_default();
        serde_json::from_str(line).map_err(|e| format!("{}: {e}: {line:?}", self.command))
    }

    /// `Err` unless the run exited with code 2 saying every one of `words`.
    fn refused(&self, words: &[&str]) -> TestResult {
        self.expect_code(2)?;
        for w in words {
            ensure!(
                self.stderr.contains(w),
                "{}: stderr does not say {w:?}:\n{}",
                self.command,
                self.stderr
            );
        }
        Ok(())
    }
}

/// Runs `target/<profile>/examples/adi` under `mpirun -n np` with `args`.
fn adi(np: usize, args: &[&str]) -> Result<Run, String> {
    let (mpirun, all) = super::example_launch("adi", np, args)?;
    let command = format!("{mpirun} {}", all.join(" "));
    let mut child = Command::new(&mpirun)
        .args(&all)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{command}: {e}"))?;
    let start = Instant::now();
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{command}: timed out"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    Ok(Run {
        command,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The `float64` elements of the C-order `.npy` file at `path`.
fn npy_values(path: &Path) -> Result<(Vec<usize>, Vec<f64>), String> {
    let info = dist_io::info(path, &dist_io::IoOptions::default()).map_err(|e| e.to_string())?;
    ensure_eq!(info.element, dist_io::ElementType::of::<f64>());
    ensure_eq!(info.order, procgrid::Order::RowMajor);
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let from = usize::try_from(info.data_offset.unwrap_or(0)).map_err(|e| e.to_string())?;
    let values = bytes[from..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    Ok((info.shape, values))
}

/// The checkpoint cases of the example, in `dir`.
fn checkpoint_cases(dir: &Path) -> TestResult {
    let (n, dt) = (20, 1e-3);
    let file = |name: &str| dir.join(name).display().to_string();
    let (a, old, mixed) = (file("a.npy"), file("old.npy"), file("mixed.npy"));
    let want = |steps| format!("{:016x}", reference(n, steps, dt, false));

    // Uninterrupted: 8 steps on 2 ranks.
    let whole = adi(2, &["--n", "20", "--steps", "8", "--json"])?.json()?;
    ensure_eq!(whole["checksum"], want(8), "uninterrupted");
    ensure_eq!(whole["restarted_from_step"], Value::Null);

    // Checkpoints at steps 2 and 4 on 4 ranks, y-lines cyclic(3).
    let first = adi(
        4,
        &[
            "--n",
            "20",
            "--steps",
            "4",
            "--checkpoint",
            &a,
            "--every",
            "2",
            "--y-layout",
            "cyclic(3),*@4x1",
            "--json",
        ],
    )?
    .json()?;
    ensure_eq!(first["checkpoints_written"], 2);
    let side: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{a}.json")).map_err(|e| format!("{a}.json: {e}"))?,
    )
    .map_err(|e| format!("{a}.json: {e}"))?;
    ensure!(side["step"] == 4 && side["n"] == 20, "{side}");
    // The array is the field after step 4, as NumPy would read it.
    let (shape, values) = npy_values(Path::new(&a))?;
    ensure_eq!(shape, vec![n, n]);
    let serial = adi::solve_serial(n, 4, dt, false).map_err(|e| e.to_string())?;
    ensure!(
        values
            .iter()
            .zip(serial.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits()),
        "{a} is not the field after step 4"
    );
    std::fs::copy(&a, &old).map_err(|e| e.to_string())?;

    // Resumed on 3 ranks with other layouts, checkpointing into the same
    // file at step 6: the uninterrupted checksum.
    let resumed = adi(
        3,
        &[
            "--n",
            "20",
            "--steps",
            "8",
            "--restart",
            &a,
            "--x-layout",
            "*,cyclic(2)@1x3",
            "--y-layout",
            "block,*@2x1",
            "--checkpoint",
            &a,
            "--every",
            "3",
            "--json",
        ],
    )?
    .json()?;
    ensure_eq!(
        resumed["checksum"],
        whole["checksum"],
        "resumed at step 4 on 3 ranks"
    );
    ensure_eq!(resumed["restarted_from_step"], 4);
    ensure_eq!(resumed["checkpoints_written"], 1);
    ensure_eq!(resumed["steps"], 8);

    // A checkpoint at the last step runs nothing and reports its field.
    let done = adi(1, &["--n", "20", "--steps", "6", "--restart", &a, "--json"])?;
    ensure_eq!(done.json()?["checksum"], want(6), "checkpoint at step 6");
    ensure!(done.stderr.contains("no steps to run"), "{}", done.stderr);

    // Parameters that disagree with the checkpoint (at step 6 now).
    adi(
        2,
        &["--n", "20", "--dt", "2e-3", "--steps", "8", "--restart", &a],
    )?
    .refused(&[&a, "--dt 0.001", "this run has --dt 0.002"])?;
    adi(2, &["--n", "16", "--steps", "8", "--restart", &a])?
        .refused(&["20x20 field", "restart with --n 20"])?;
    adi(2, &["--n", "20", "--steps", "5", "--restart", &a])?
        .refused(&["at step 6, beyond --steps 5", "--steps 6 or more"])?;

    // The step-4 array beside the step-6 sidecar: the digest tells.
    std::fs::copy(&old, &mixed).map_err(|e| e.to_string())?;
    std::fs::copy(format!("{a}.json"), format!("{mixed}.json")).map_err(|e| e.to_string())?;
    adi(2, &["--n", "20", "--steps", "8", "--restart", &mixed])?
        .refused(&["not of the same checkpoint", "for step 6"])?;

    // Usage errors.
    adi(1, &["--n", "20", "--every", "2"])?.refused(&["--checkpoint"])?;
    adi(1, &["--n", "20", "--checkpoint", &a, "--every", "0"])?.refused(&["--every"])?;
    let missing = file("missing.npy");
    adi(1, &["--n", "20", "--restart", &missing])?
        .refused(&["missing.npy.json", "cannot read the sidecar"])?;
    Ok(())
}

/// The launcher's part, unless the command line selects other names: the
/// example built (and run once at 1 rank), then [`checkpoint_cases`] in a
/// temporary directory, removed afterwards. Exits the process on failure.
fn example_checkpoints() {
    // The words that select tests by name, as the harness reads them.
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
    let name = "adi example checkpoints";
    if !words.is_empty() && !words.iter().any(|w| name.contains(w.as_str())) {
        return;
    }
    mpi_harness::run_examples(
        "adi example",
        &[1],
        &[
            Example::mpi("adi").args(&["--n", "20", "--steps", "3", "--json"]),
            Example::mpi("adi").args(&["--n", "20", "--steps", "3", "--grid", "auto", "--json"]),
        ],
    );
    if std::env::args().any(|a| a == "--list") {
        println!("adi example checkpoints: test");
        return;
    }
    let dir: PathBuf =
        std::env::temp_dir().join(format!("ndcyclic-adi-checkpoints-{}", std::process::id()));
    let clock = Instant::now();
    let outcome = std::fs::create_dir_all(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))
        .and_then(|()| checkpoint_cases(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    match outcome {
        Ok(()) => println!(
            "test adi example checkpoints ... ok ({:.1} s)",
            clock.elapsed().as_secs_f64()
        ),
        Err(e) => {
            println!("test adi example checkpoints ... FAILED\n{e}");
            std::process::exit(1);
        }
    }
}

/// The suite `adi`.
pub fn suite() -> Suite {
    Suite::new(
        "adi",
        &[
            MpiTest::new("default_layouts", default_layouts),
            MpiTest::new("other_layouts", other_layouts),
            MpiTest::new("second_order_convergence", second_order_convergence),
            MpiTest::new("refuses_bad_layouts", refuses_bad_layouts),
            MpiTest::new("checkpoint_restart", checkpoint_restart),
            MpiTest::new(
                "chosen_lines_give_the_reference",
                chosen_lines_give_the_reference,
            ),
        ],
    )
    .ranks(&[1, 2, 3, 4, 6, 24])
}

/// What the launcher runs before the suite's launches.
pub fn before_launches() {
    example_checkpoints();
}
