//! Process grids, on any number of ranks: a balanced 2-D grid and the
//! calling rank's grid row, then a periodic grid in BLACS' column-major
//! order and a neighbour one step along it.
//!
//! `cargo build --release --example tour_grids && mpirun -n 6 target/release/examples/tour_grids`

use ndcyclic::mpi::topology::Communicator;
use ndcyclic::procgrid::{self, Order, ProcGrid};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = procgrid::init()?; // MPI + abort-on-panic + launcher check
    let world = universe.world();
    let p = world.size() as usize;

    let grid = ProcGrid::balanced(&world, 2)?; // 3x2 on 6 ranks, 7x1 on 7
    let me = grid.coords().ok_or("a balanced grid holds every rank")?;
    let row = grid.row_grid()?.ok_or("every member has a grid row")?;
    assert_eq!(row.size(), grid.extents()[1]); // the ranks of my grid row
    assert_eq!(row.coords(), Some(&me[1..]));

    // A 2 x p/2 torus over the first ranks (one rank is left out when p is odd).
    let torus = ProcGrid::builder(&[p.min(2), (p / 2).max(1)])
        .periodic(&[true, true])
        .order(Order::ColumnMajor) // BLACS 'C' order: dimension 0 varies fastest
        .subset(true)
        .build(&world)?;
    if let (Some(at), Some(step)) = (torus.coords(), torus.shift(1, -1)?) {
        let (rows, cols) = (torus.extents()[0], torus.extents()[1]);
        let left = at[0] + rows * ((at[1] + cols - 1) % cols); // column-major rank
        assert_eq!(step.dest, Some(left)); // the neighbour one step left
    }
    if world.rank() == 0 {
        println!(
            "grid {:?}, row of {}; torus {:?}, rank 0's left neighbour: {:?}",
            grid.extents(),
            row.size(),
            torus.extents(),
            torus.shift(1, -1)?.and_then(|s| s.dest)
        );
    }
    Ok(())
}
