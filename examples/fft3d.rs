//! The 3-D FFT on pencils: forward and inverse complex FFTs of an
//! `n × m × k` array over a `P1 × P2` grid of ranks — `rustfft` along x on
//! x-pencils, a redistribution that also permutes the axes to y-pencils,
//! `rustfft` along y, another to z-pencils, `rustfft` along z, and back.
//! The input is a sum of plane waves, so the spectrum is known: the run
//! checks it against those spikes, against a serial 3-D FFT of the gathered
//! array (up to `apps::fft3d::SERIAL_MAX_ELEMENTS` elements), and the
//! inverse against the input, and exits with status 1 when an error is
//! above rounding level.
//!
//! ```text
//! cargo build --release --example fft3d
//! mpirun -n 4 target/release/examples/fft3d --n 64 --m 48 --k 40
//! mpirun -n 6 target/release/examples/fft3d --n 128 --grid 3x2 --json
//! mpirun -n 4 target/release/examples/fft3d --n 256 --grid auto --wisdom /dev/shm/w.txt
//! ```
//!
//! `--grid auto` times whole forward + inverse transforms on every
//! `P1 × P2` grid of the job's ranks and runs the fastest; with `--wisdom`
//! the choice is kept, and a later job with the same extents reads it
//! instead of measuring.

use apps::fft3d::{self, FftConfig, FftResult, PencilGrid};
use apps::grid_choice;
use clap::Parser;
use mpi::collective::CommunicatorCollectives;
use mpi::topology::Communicator;
use redist::tune::{GridChoice, GridSettings};
use redist::Strategy;
use serde_json::json;
use std::process::ExitCode;

/// Distributed 3-D complex FFT on pencils, two redistributions per transform.
#[derive(Debug, Parser)]
#[command(name = "fft3d")]
struct Args {
    /// Extent along x.
    #[arg(long, default_value_t = 64)]
    n: usize,
    /// Extent along y (default: --n).
    #[arg(long)]
    m: Option<usize>,
    /// Extent along z (default: --n).
    #[arg(long)]
    k: Option<usize>,
    /// Process grid P1xP2 (default: the most nearly square grid of the
    /// job's ranks); may use fewer ranks than the job. `auto`: the fastest
    /// grid of the job's ranks, timed on whole transforms.
    #[arg(long, value_name = "P1xP2|auto")]
    grid: Option<GridArg>,
    /// Wisdom file for `--grid auto`: a grid kept there for this job is run
    /// without measuring; what is measured is added to it.
    #[arg(long, value_name = "FILE")]
    wisdom: Option<std::path::PathBuf>,
    /// Exchange strategy: auto, alltoallv, scheduled or async.
    #[arg(long, default_value = "auto")]
    strategy: Strategy,
    /// Timed forward + inverse transforms.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Print one JSON line instead of the summary.
    #[arg(long)]
    json: bool,
}

/// `--grid`: a grid given, or `auto`.
#[derive(Debug, Clone, Copy)]
enum GridArg {
    /// The fastest grid, measured.
    Auto,
    /// This grid.
    Given(PencilGrid),
}

impl std::str::FromStr for GridArg {
    type Err = String;

    fn from_str(s: &str) -> Result<GridArg, String> {
        if s == "auto" {
            return Ok(GridArg::Auto);
        }
        s.parse()
            .map(GridArg::Given)
            .map_err(|e: fft3d::FftError| e.to_string())
    }
}

/// The largest error accepted for an array of `elements` elements: 1e-9,
/// scaled by the element count above 1000 (the spectrum's spikes are that
/// many times the waves' amplitudes).
fn tolerance(elements: usize) -> f64 {
    1e-9 * (elements as f64 / 1000.0).max(1.0)
}

/// What is wrong with the run's errors, if anything.
fn failed_checks(r: &FftResult, elements: usize) -> Vec<String> {
    let tol = tolerance(elements);
    let mut errors = vec![
        ("max_error", r.max_error),
        ("roundtrip_error", r.roundtrip_error),
        ("repeated_error", r.repeated_error),
    ];
    errors.extend(r.serial_error.map(|e| ("serial_error", e)));
    errors
        .into_iter()
        // NaN fails too.
        .filter(|(_, e)| e.is_nan() || *e >= tol)
        .map(|(what, e)| format!("{what} {e:.3e} is above {tol:.1e}"))
        .collect()
}

fn print_json(args: &Args, cfg: &FftConfig, r: &FftResult, choice: Option<&GridChoice>) {
    println!(
        "{}",
        json!({
            "n": cfg.n,
            "m": cfg.m,
            "k": cfg.k,
            "ranks": r.ranks,
            "grid": r.grid.to_string(),
            "strategy": args.strategy.to_string(),
            "strategies": r.strategies.map(|s| s.to_string()),
            "max_error": r.max_error,
            "serial_error": r.serial_error,
            "roundtrip_error": r.roundtrip_error,
            "repeated_error": r.repeated_error,
            "time_s": r.time_s,
            "redist_s": r.redist_s,
            "lines_s": r.lines_s,
            "forward_s": r.forward_s,
            "inverse_s": r.inverse_s,
            "x_to_y_s": r.x_to_y_s,
            "reps": args.reps,
            "bytes_moved": r.bytes_moved,
            "layouts": r.layouts,
            "grid_choice": grid_choice::choice_json(choice),
        })
    );
}

fn print_summary(cfg: &FftConfig, r: &FftResult) {
    let [x, y, z] = &r.layouts;
    let s = r.strategies.map(|s| s.to_string()).join(", ");
    println!(
        "3-D FFT of {}x{}x{} complex on {} ranks, grid {}: x-pencils {x}, y-pencils {y}, \
         z-pencils {z} (strategies {s})",
        cfg.n, cfg.m, cfg.k, r.ranks, r.grid
    );
    let serial = match r.serial_error {
        Some(e) => format!("{e:.3e} against a serial FFT"),
        None => "no serial check (too large)".to_string(),
    };
    println!(
        "spectrum error {:.3e} (against the plane waves' spikes, largest {:.3e}), {serial}",
        r.max_error, r.spectrum_max
    );
    println!(
        "round trip error {:.3e} (first), {:.3e} (after {} more)",
        r.roundtrip_error, r.repeated_error, cfg.reps
    );
    println!(
        "forward + inverse {:.3} ms: FFTs {:.3} ms, redistributions {:.3} ms \
         (forward {:.3} ms, of which x -> y {:.3} ms; {} bytes moved)",
        r.time_s * 1e3,
        r.lines_s * 1e3,
        r.redist_s * 1e3,
        r.forward_s * 1e3,
        r.x_to_y_s * 1e3,
        r.bytes_moved
    );
}

fn main() -> ExitCode {
    let args = Args::parse();
    let universe = match procgrid::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("fft3d: {e}");
            return ExitCode::from(2);
        }
    };
    let world = universe.world();
    let root = world.rank() == 0;
    let mut cfg = FftConfig {
        n: args.n,
        m: args.m.unwrap_or(args.n),
        k: args.k.unwrap_or(args.n),
        grid: None,
        strategy: args.strategy,
        reps: args.reps,
    };
    // Every rank parses the same arguments and reaches the same verdict;
    // rank 0 reports it, and every rank returns (finalizing MPI) with code 2.
    let chosen = match args.grid {
        Some(GridArg::Auto) => {
            let settings = GridSettings {
                wisdom: args.wisdom.clone(),
                progress: root && !args.json,
                ..GridSettings::default()
            };
            fft3d::choose_pencil_grid(&world, [cfg.n, cfg.m, cfg.k], cfg.strategy, &settings)
                .map(Some)
        }
        Some(GridArg::Given(g)) => {
            cfg.grid = Some(g);
            Ok(None)
        }
        None => Ok(None),
    };
    let result = chosen.and_then(|c| {
        if let Some(c) = &c {
            cfg.grid = Some(PencilGrid {
                p1: c.grid[0],
                p2: c.grid[1],
            });
        }
        fft3d::run(&world, &cfg).map(|r| (r, c))
    });
    let (result, choice) = match result {
        Ok(r) => r,
        Err(e) => {
            if root {
                eprintln!("fft3d: {e}");
            }
            // Nobody exits before rank 0 has printed: a launcher may kill
            // the job when the first rank exits with a failing code.
            world.barrier();
            return ExitCode::from(2);
        }
    };
    let elements = cfg.n.saturating_mul(cfg.m).saturating_mul(cfg.k);
    let failed = failed_checks(&result, elements);
    if root {
        if args.json {
            print_json(&args, &cfg, &result, choice.as_ref());
        } else {
            print_summary(&cfg, &result);
            if let Some(c) = &choice {
                println!("{}", grid_choice::choice_line(c));
            }
        }
        for f in &failed {
            eprintln!("fft3d: check failed: {f}");
        }
    }
    // Every rank has the same results, so every rank exits alike.
    world.barrier();
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
