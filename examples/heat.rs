//! The explicit heat solver: u_t = Δu on the periodic unit square or cube,
//! the 5-point (2-D) or 7-point (3-D) stencil on a block layout with one
//! ghost layer, refreshed every step by one ghost update planned once —
//! by default overlapped: the interior whose stencil needs no ghost is
//! computed while the ghosts move. It starts from a Fourier mode and
//! checks itself against the exact discrete solution (each step multiplies
//! the mode by a known factor).
//!
//! ```text
//! mpirun -n 4 cargo run --release --example heat
//! mpirun -n 2 target/release/examples/heat --dims 3 --n 256 --steps 50
//! mpirun -n 2 target/release/examples/heat --dims 3 --n 256 --steps 50 --no-overlap
//! mpirun -n 4 target/release/examples/heat --dims 2 --n 1024 --png heat.png
//! ```
//!
//! Checkpoint and restart (`--steps` counts from t = 0; the restart may use
//! any rank count and layout, and ends with the same checksum):
//!
//! ```text
//! mpirun -n 4 target/release/examples/heat --steps 40 --checkpoint /dev/shm/heat.npy --every 20
//! mpirun -n 3 target/release/examples/heat --restart /dev/shm/heat.npy --steps 40
//! ```

use apps::heat::{self, Checkpoints, HeatConfig};
use clap::Parser;
use dist_array::LayoutSpec;
use mpi::collective::CommunicatorCollectives;
use mpi::topology::Communicator;
use ndarray::Array2;
use serde_json::json;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Explicit heat solver on a block-distributed field with ghost layers.
#[derive(Debug, Parser)]
#[command(name = "heat")]
struct Args {
    /// Grid points per axis.
    #[arg(long, default_value_t = 256)]
    n: usize,
    /// 2 or 3 dimensions.
    #[arg(long, default_value_t = 2)]
    dims: usize,
    /// Time steps in all, counted from t = 0.
    #[arg(long, default_value_t = 100)]
    steps: usize,
    /// dt / h² (stable up to 1 / (2·dims); default half of that).
    #[arg(long)]
    r: Option<f64>,
    /// The layout, one block per rank per axis (default: block on every
    /// axis of a balanced grid).
    #[arg(long, value_name = "SPEC")]
    layout: Option<LayoutSpec>,
    /// Refresh the ghosts first, then compute (no overlap).
    #[arg(long)]
    no_overlap: bool,
    /// Move every ghost as a message, also between ranks of one node.
    #[arg(long)]
    no_node_direct: bool,
    /// Write a heat-map of the final field (3-D: its slice z = n/2).
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
    /// One JSON line instead of the summary.
    #[arg(long)]
    json: bool,
    /// Save the field to this .npy file (and its step to FILE.json) after
    /// every step that is a multiple of --every.
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// Steps between checkpoints (default: --steps). Needs --checkpoint.
    #[arg(long, value_name = "K", requires = "checkpoint")]
    every: Option<NonZeroUsize>,
    /// Resume from a checkpoint written by --checkpoint, on any rank count
    /// and layout; --n, --dims and --r must be its.
    #[arg(long, value_name = "FILE")]
    restart: Option<PathBuf>,
}

/// Writes the heat-map of `field` as a PNG file.
fn write_png(field: &Array2<f64>, path: &Path) -> std::io::Result<()> {
    let (width, height, pixels) = apps::adi::heat_map_rgb(field);
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
        .map_err(std::io::Error::other)
}

fn main() -> ExitCode {
    let args = Args::parse();
    let universe = match procgrid::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("heat: {e}");
            return ExitCode::from(2);
        }
    };
    let world = universe.world();
    let root = world.rank() == 0;
    let cfg = HeatConfig {
        n: args.n,
        dims: args.dims,
        steps: args.steps,
        r: args.r.unwrap_or(0.25 / args.dims.max(1) as f64),
        layout: args.layout.clone(),
        overlap: !args.no_overlap,
        node_direct: !args.no_node_direct,
        progress: !args.json,
        checkpoint: args.checkpoint.clone().map(|path| Checkpoints {
            path,
            every: args.every.map_or(args.steps.max(1), NonZeroUsize::get),
        }),
        restart: args.restart.clone(),
        slice: args.png.is_some(),
    };
    let result = match heat::solve(&world, &cfg) {
        Ok(r) => r,
        Err(e) => {
            if root {
                eprintln!("heat: {e}");
            }
            world.barrier();
            return ExitCode::from(2);
        }
    };
    if !root {
        return ExitCode::SUCCESS;
    }
    if let (Some(path), Some(slice)) = (&args.png, &result.slice) {
        if let Err(e) = write_png(slice, path) {
            eprintln!("heat: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    let ran = args.steps - result.restarted_from.unwrap_or(0);
    let steps_per_s = ran as f64 / result.time_s.max(1e-9);
    if args.json {
        println!(
            "{}",
            json!({
                "n": args.n,
                "dims": args.dims,
                "steps": args.steps,
                "ranks": result.ranks,
                "r": cfg.r,
                "overlap": cfg.overlap,
                "node_direct": cfg.node_direct,
                "max_error": result.max_error,
                "checksum": format!("{:016x}", result.checksum),
                "time_s": result.time_s,
                "ghost_s": result.ghost_s,
                "compute_s": result.compute_s,
                "checkpoint_s": result.checkpoint_s,
                "checkpoints_written": result.checkpoints_written,
                "restarted_from_step": result.restarted_from,
                "steps_per_s": steps_per_s,
                "ghost_bytes_per_step": result.ghost_bytes_per_step,
            })
        );
        return ExitCode::SUCCESS;
    }
    println!(
        "heat equation, {}-D periodic, n = {} per axis, {} steps of r = dt/h² = {}, on {} ranks{}",
        args.dims,
        args.n,
        args.steps,
        cfg.r,
        result.ranks,
        if cfg.overlap {
            ", interior overlapped with the ghost update"
        } else {
            ""
        }
    );
    if let Some(from) = result.restarted_from {
        println!(
            "restarted from step {from}: ran steps {}..={}",
            from + 1,
            args.steps
        );
    }
    println!(
        "max error {:.3e} (relative, against the exact discrete decay of the mode)",
        result.max_error
    );
    println!("checksum  {:016x}", result.checksum);
    println!(
        "time {:.3} s: stencil {:.3} s, ghost update {:.3} s (not hidden), checkpoints {:.3} s  ({:.1} steps/s)",
        result.time_s, result.compute_s, result.ghost_s, result.checkpoint_s, steps_per_s
    );
    println!(
        "ghost bytes per step {} ({:.2} MB)",
        result.ghost_bytes_per_step,
        result.ghost_bytes_per_step as f64 / 1e6
    );
    if let Some(c) = &cfg.checkpoint {
        println!(
            "checkpoints written {} to {}",
            result.checkpoints_written,
            c.path.display()
        );
    }
    if let Some(p) = &args.png {
        println!("heat-map written to {}", p.display());
    }
    ExitCode::SUCCESS
}
