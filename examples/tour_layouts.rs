//! Layouts and distributed arrays, on any number of ranks: a 1000 x 700
//! array in 64 x 64 blocks dealt round-robin over a balanced grid, its O(1)
//! index maps, a local update, a norm and a gather.
//!
//! `cargo build --release --example tour_layouts && mpirun -n 6 target/release/examples/tour_layouts`

use ndcyclic::dist_array::{DistArray, Layout};
use ndcyclic::procgrid::{self, ProcGrid};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = procgrid::init()?;
    let world = universe.world();
    let grid = ProcGrid::balanced(&world, 2)?; // 3x2 on 6 ranks
    let (p, q) = (grid.extents()[0], grid.extents()[1]);

    let layout = Layout::parse(&[1000, 700], &format!("cyclic(64),cyclic(64)@{p}x{q}"))?;
    let (owner, local) = layout.global_to_local(&[999, 5])?; // O(1) index maps
    let mut a = DistArray::from_fn(&grid, layout, |g| (g[0] + g[1]) as f64)?;
    a.map_inplace(|x| *x *= 0.5); // rayon over the local part
    let norm = a.norm2()?; // collective, the same on every rank
    let whole = a.gather(0)?; // Some(ndarray) on rank 0, None elsewhere

    if let Some(whole) = whole {
        assert_eq!(whole[[999, 5]], 502.0);
        let expected = whole.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!((norm - expected).abs() <= 1e-12 * expected);
        println!("(999, 5) is element {local:?} of rank {owner}; the norm is {norm:.1}");
    }
    Ok(())
}
