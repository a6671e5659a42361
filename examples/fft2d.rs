//! The 2-D FFT phase change: forward and inverse complex FFTs of an `n × m`
//! array over P ranks — `rustfft` along whole rows, one planned
//! redistribution to whole columns, `rustfft` along the columns, and back.
//! The input is a sum of plane waves, so the spectrum is known: the run
//! checks it against those spikes, against a serial FFT of the gathered
//! array, and the inverse against the input.
//!
//! ```text
//! cargo build --release --example fft2d
//! mpirun -n 4 target/release/examples/fft2d --n 512 --m 512
//! mpirun -n 3 target/release/examples/fft2d --n 300 --m 200 \
//!     --y-layout "cyclic(4),*@3x1" --x-layout "*,cyclic(5)@1x3" --json
//! ```

use apps::fft2d::{self, ColumnStorage, FftConfig};
use clap::Parser;
use dist_array::LayoutSpec;
use mpi::collective::CommunicatorCollectives;
use mpi::topology::Communicator;
use redist::Strategy;
use serde_json::json;
use std::process::ExitCode;

/// Distributed 2-D complex FFT with one redistribution per transform.
#[derive(Debug, Parser)]
#[command(name = "fft2d")]
struct Args {
    /// Extent of dimension 0 (x).
    #[arg(long, default_value_t = 256)]
    n: usize,
    /// Extent of dimension 1 (y).
    #[arg(long, default_value_t = 256)]
    m: usize,
    /// Layout with whole columns (dimension 0 whole), default `*,block@1xP`.
    #[arg(long, value_name = "SPEC")]
    x_layout: Option<LayoutSpec>,
    /// Layout with whole rows (dimension 1 whole), default `block,*@Px1`.
    #[arg(long, value_name = "SPEC")]
    y_layout: Option<LayoutSpec>,
    /// Exchange strategy: auto, alltoallv, scheduled or async.
    #[arg(long, default_value = "auto")]
    strategy: Strategy,
    /// How columns are stored while transformed: column-major (contiguous,
    /// the redistribution transposes) or scratch (row-major, tiles).
    #[arg(long, default_value = "column-major")]
    columns: String,
    /// Timed forward + inverse transforms.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Print one JSON line instead of the summary.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let universe = match procgrid::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("fft2d: {e}");
            return ExitCode::from(2);
        }
    };
    let world = universe.world();
    let root = world.rank() == 0;
    // Every rank parses the same arguments and reaches the same verdict;
    // rank 0 reports it, and every rank returns (finalizing MPI) with code 2.
    let result = args.columns.parse::<ColumnStorage>().and_then(|columns| {
        let cfg = FftConfig {
            n: args.n,
            m: args.m,
            x_layout: args.x_layout.clone(),
            y_layout: args.y_layout.clone(),
            strategy: args.strategy,
            columns,
            reps: args.reps,
        };
        fft2d::run(&world, &cfg)
    });
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            if root {
                eprintln!("fft2d: {e}");
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
    if args.json {
        println!(
            "{}",
            json!({
                "n": args.n,
                "m": args.m,
                "ranks": result.ranks,
                "max_error": result.max_error,
                "serial_error": result.serial_error,
                "roundtrip_error": result.roundtrip_error,
                "time_s": result.time_s,
                "redist_s": result.redist_s,
                "rows_s": result.rows_s,
                "columns_s": result.columns_s,
                "y_layout": result.layouts.0,
                "x_layout": result.layouts.1,
                "bytes_moved": result.bytes_moved,
            })
        );
    } else {
        println!(
            "2-D FFT of {}x{} complex on {} ranks: {} -> {} (strategies {}, {})",
            args.n,
            args.m,
            result.ranks,
            result.layouts.0,
            result.layouts.1,
            result.strategies.0,
            result.strategies.1
        );
        println!(
            "spectrum error {:.3e} (against the plane waves' spikes, largest {:.3e}), \
             {:.3e} against a serial FFT",
            result.max_error, result.spectrum_max, result.serial_error
        );
        println!(
            "round trip error {:.3e} (first), {:.3e} (after {} more)",
            result.roundtrip_error, result.repeated_error, args.reps
        );
        println!(
            "forward + inverse {:.3} ms: rows {:.3} ms, redistribution {:.3} ms, columns {:.3} ms \
             ({} bytes moved)",
            result.time_s * 1e3,
            result.rows_s * 1e3,
            result.redist_s * 1e3,
            result.columns_s * 1e3,
            result.bytes_moved
        );
    }
    ExitCode::SUCCESS
}
