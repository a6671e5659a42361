//! The ADI heat solver: u_t = u_xx + u_yy on the unit square, zero boundary,
//! u = sin(πx)·sin(πy) at t = 0, by Peaceman–Rachford steps that alternate
//! between whole x-lines and whole y-lines — two redistributions per step,
//! planned once.
//!
//! ```text
//! mpirun -n 24 cargo run --release --example adi
//! mpirun -n 4 cargo run --release --example adi -- --n 512 --steps 100 --png heat.png
//! mpirun -n 4 cargo run --release --example adi -- --x-layout "*,cyclic(8)@1x4" --json
//! ```
//!
//! `--grid auto` chooses how many ranks the line phases use by timing whole
//! steps on each choice (`--wisdom F` keeps it for later jobs):
//!
//! ```text
//! mpirun -n 4 target/release/examples/adi --n 512 --steps 200 --grid auto --wisdom /dev/shm/adi.wisdom
//! ```
//!
//! Checkpoint and restart (`--steps` is the total step count; the restart
//! may use any rank count and layouts, and ends with the same checksum):
//!
//! ```text
//! mpirun -n 24 target/release/examples/adi --steps 30 --checkpoint /dev/shm/adi.npy --every 30
//! mpirun -n 7 target/release/examples/adi --restart /dev/shm/adi.npy --steps 60
//! ```

use apps::adi::{self, AdiConfig, Checkpoints};
use apps::grid_choice;
use clap::Parser;
use dist_array::LayoutSpec;
use mpi::collective::CommunicatorCollectives;
use mpi::topology::Communicator;
use ndarray::Array2;
use redist::tune::GridSettings;
use redist::{Remap, Strategy};
use serde_json::json;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// ADI heat solver on a block-distributed field.
#[derive(Debug, Parser)]
#[command(name = "adi")]
struct Args {
    /// Interior grid points per dimension.
    #[arg(long, default_value_t = 256)]
    n: usize,
    /// Time steps in all, counted from t = 0 (a restart runs the steps after
    /// its checkpoint's).
    #[arg(long, default_value_t = 60)]
    steps: usize,
    /// Time step.
    #[arg(long, default_value_t = 1e-3)]
    dt: f64,
    /// Layout with whole x-lines (dimension 0 whole), default `*,block@1xP`.
    #[arg(long, value_name = "SPEC")]
    x_layout: Option<LayoutSpec>,
    /// Layout with whole y-lines (dimension 1 whole), default `block,*@Px1`.
    #[arg(long, value_name = "SPEC")]
    y_layout: Option<LayoutSpec>,
    /// `auto`: the line layouts' rank count (`block,*@Qx1`, `*,block@1xQ`,
    /// Q from P down to 1) chosen by timing whole steps on each.
    #[arg(long, value_name = "auto", value_parser = ["auto"], conflicts_with_all = ["x_layout", "y_layout"])]
    grid: Option<String>,
    /// Wisdom file for `--grid auto`: a choice kept there for this job is
    /// run without measuring; what is measured is added to it.
    #[arg(long, value_name = "FILE", requires = "grid")]
    wisdom: Option<PathBuf>,
    /// Exchange strategy: auto, alltoallv, scheduled or async.
    #[arg(long, default_value = "auto")]
    strategy: Strategy,
    /// Rank relabelling of the y -> x redistribution: none, closed-form or optimal.
    #[arg(long, default_value = "none")]
    remap: Remap,
    /// Start from sin(πx)sin(πy) + 0.5 sin(2πx)sin(3πy).
    #[arg(long)]
    two_modes: bool,
    /// Write a heat-map of the final field with a colour bar.
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
    /// Print one JSON line instead of the summary.
    #[arg(long)]
    json: bool,
    /// Save the field to this .npy file (and its step, n and dt to FILE.json)
    /// after every step that is a multiple of --every; each save replaces the
    /// previous one.
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// Steps between checkpoints, counted from t = 0 (default: --steps, one
    /// checkpoint after the last step). Needs --checkpoint.
    #[arg(long, value_name = "K", requires = "checkpoint")]
    every: Option<NonZeroUsize>,
    /// Resume from the checkpoint FILE (and FILE.json) written by
    /// --checkpoint, on any rank count and layouts; --n, --dt and --two-modes
    /// must be the checkpoint's.
    #[arg(long, value_name = "FILE")]
    restart: Option<PathBuf>,
}

/// Writes the heat-map of `field` ([`adi::heat_map_rgb`]) as a PNG file.
fn write_png(field: &Array2<f64>, path: &Path) -> std::io::Result<()> {
    let (width, height, pixels) = adi::heat_map_rgb(field);
    let file = std::fs::File::create(path)?;
    let too_big = |_| std::io::Error::other("image too large for PNG");
    let (w, h) = (
        u32::try_from(width).map_err(too_big)?,
        u32::try_from(height).map_err(too_big)?,
    );
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(std::io::Error::other)?;
    writer
        .write_image_data(&pixels)
        .map_err(std::io::Error::other)?;
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let universe = match procgrid::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("adi: {e}");
            return ExitCode::from(2);
        }
    };
    let world = universe.world();
    let root = world.rank() == 0;
    let mut cfg = AdiConfig {
        n: args.n,
        steps: args.steps,
        dt: args.dt,
        x_layout: args.x_layout.clone(),
        y_layout: args.y_layout.clone(),
        strategy: args.strategy,
        remap: args.remap,
        two_modes: args.two_modes,
        progress: !args.json,
        checkpoint: args.checkpoint.clone().map(|path| Checkpoints {
            path,
            every: args.every.map_or(args.steps.max(1), NonZeroUsize::get),
        }),
        restart: args.restart.clone(),
    };
    let chosen = match args.grid {
        Some(_) => {
            let settings = GridSettings {
                wisdom: args.wisdom.clone(),
                progress: root && !args.json,
                ..GridSettings::default()
            };
            adi::choose_lines(&world, &cfg, &settings).map(Some)
        }
        None => Ok(None),
    };
    let solved = chosen.and_then(|c| {
        if let Some(c) = &c {
            let (y, x) = adi::line_layouts(c.grid[0])?;
            (cfg.y_layout, cfg.x_layout) = (Some(y), Some(x));
        }
        adi::solve(&world, &cfg).map(|r| (r, c))
    });
    let (result, choice) = match solved {
        Ok(r) => r,
        Err(e) => {
            // Every rank reaches the same verdict; rank 0 reports it.
            if root {
                eprintln!("adi: {e}");
            }
            // Nobody exits before rank 0 has printed: a launcher may kill
            // the job when the first rank exits with a failing code.
            world.barrier();
            return ExitCode::from(2);
        }
    };
    if !root {
        return ExitCode::SUCCESS;
    }
    let start = result.restarted_from.unwrap_or(0);
    if result.restarted_from == Some(args.steps) {
        eprintln!(
            "adi: the checkpoint is at step {start} already, the last of --steps {}: no steps to run",
            args.steps
        );
    }
    if let (Some(path), Some(field)) = (&args.png, &result.field) {
        if let Err(e) = write_png(field, path) {
            eprintln!("adi: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    let other = (result.time_s - result.redist_s - result.compute_s - result.checkpoint_s).max(0.0);
    if args.json {
        println!(
            "{}",
            json!({
                "n": args.n,
                "steps": args.steps,
                "ranks": result.ranks,
                "dt": args.dt,
                "max_error": result.max_error,
                "l2_error": result.l2_error,
                "checksum": format!("{:016x}", result.checksum),
                "time_s": result.time_s,
                "redist_s": result.redist_s,
                "compute_s": result.compute_s,
                "restarted_from_step": result.restarted_from,
                "checkpoints_written": result.checkpoints_written,
                "checkpoint_s": result.checkpoint_s,
                "restart_s": result.restart_s,
                "grid_choice": grid_choice::choice_json(choice.as_ref()),
            })
        );
    } else {
        println!(
            "ADI heat solver: n = {} ({}x{} interior points), {} steps of dt = {}, t = {:.4}",
            args.n, args.n, args.n, args.steps, args.dt, result.time
        );
        println!(
            "ranks {}  strategies y->x {}, x->y {}",
            result.ranks, result.strategies.0, result.strategies.1
        );
        if let (Some(from), Some(path)) = (result.restarted_from, &args.restart) {
            println!(
                "restarted from step {from} (checkpoint {}, read in {:.3} s): ran steps {}..={}",
                path.display(),
                result.restart_s,
                from + 1,
                args.steps
            );
        }
        println!(
            "max error {:.3e}   L2 error {:.3e}   (against exp(-2π²t)·sin(πx)·sin(πy){})",
            result.max_error,
            result.l2_error,
            if args.two_modes { " + second mode" } else { "" }
        );
        println!("checksum  {:016x}", result.checksum);
        if let Some(c) = &choice {
            println!("{}", grid_choice::choice_line(c));
        }
        println!(
            "time {:.3} s: compute {:.3} s, redistribution {:.3} s, checkpoints {:.3} s, \
             other {:.3} s  ({:.1} steps/s)",
            result.time_s,
            result.compute_s,
            result.redist_s,
            result.checkpoint_s,
            other,
            args.steps.saturating_sub(start) as f64 / result.time_s.max(1e-9)
        );
        if let Some(c) = &cfg.checkpoint {
            println!(
                "checkpoints written {} (every {} steps) to {} and {}.json",
                result.checkpoints_written,
                c.every,
                c.path.display(),
                c.path.display()
            );
        }
        println!(
            "bytes moved per step {} ({:.2} MB)",
            result.bytes_moved_per_step,
            result.bytes_moved_per_step as f64 / 1e6
        );
        if let Some(p) = &args.png {
            println!("heat-map written to {}", p.display());
        }
    }
    ExitCode::SUCCESS
}
