//! Placeholder for the ADI heat solver (see the project's issues): builds a
//! balanced 2-D process grid over all ranks and prints who sits where.
//!
//! ```text
//! mpirun -n 24 cargo run --release --example adi
//! ```

use mpi::collective::CommunicatorCollectives;
use mpi::topology::Communicator;
use procgrid::ProcGrid;

fn main() {
    let universe = match procgrid::init() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("adi: {e}");
            std::process::exit(2);
        }
    };
    let world = universe.world();
    let grid = match ProcGrid::balanced(&world, 2) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("adi: {e}");
            std::process::exit(2);
        }
    };
    let coords = grid.coords().expect("a balanced grid uses every rank");
    let mine = [coords[0] as u64, coords[1] as u64];
    let mut all = vec![0u64; 2 * grid.size()];
    world.all_gather_into(&mine[..], &mut all[..]);
    if world.rank() == 0 {
        println!(
            "process grid {grid} ({} ranks, row-major); rank -> (row, column):",
            grid.size()
        );
        for (rank, c) in all.chunks(2).enumerate() {
            println!("  rank {rank:>3} -> ({}, {})", c[0], c[1]);
        }
        println!("the ADI heat solver itself lands with its own issue");
    }
}
