//! Ghost layers on any number of ranks: a field padded by one ghost layer,
//! one update planned once, a Jacobi-like sweep whose deep interior is
//! computed while the ghosts move, a boundary the update leaves alone, and
//! the same field saved as a plain array and redistributed.
//!
//! `cargo build --release --example tour_ghosts && mpirun -n 4 target/release/examples/tour_ghosts`

use ndarray::Axis;
use ndcyclic::dist_array::{DistArray, Layout};
use ndcyclic::mpi::topology::Communicator;
use ndcyclic::procgrid::{self, ProcGrid};
use ndcyclic::redist::ghost::{Corners, GhostSpec, GhostUpdate};
use ndcyclic::redist::{Options, Redistribution};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = procgrid::init()?;
    let world = universe.world();
    let (p, me, n) = (world.size() as usize, world.rank() as usize, 24);
    let grid = ProcGrid::new(&world, &[p, 1])?;
    let rows = Layout::parse(&[n * p, n], &format!("block,block@{p}x1"))?;

    // A padded field: the interior is local(), the whole block padded().
    let u = DistArray::from_fn(&grid, rows.clone(), |g| (g[0] * n + g[1]) as f64)?;
    let mut u = u.with_ghosts(&[1, 1])?;
    assert_eq!(u.padded().shape(), &[n + 2, n + 2]);

    // Periodic along the rows, not along the columns: the column ghosts are
    // ours, the boundary condition, and no update writes them.
    u.padded_mut().index_axis_mut(Axis(1), 0).fill(-1.0);
    let spec = GhostSpec::new(&[1, 1], &[true, false], Corners::Star);
    let mut ghosts = GhostUpdate::new(&u, &spec)?; // planned once, agreed by every rank
    ghosts.update(&mut u)?;
    let above = (me * n + n * p - 1) % (n * p); // the row before this rank's first
    assert_eq!(u.padded()[[0, 1]], (above * n) as f64);
    assert_eq!(u.padded()[[1, 0]], -1.0);

    // Overlap: the deep interior (its stencil reads no ghost) while ghosts move.
    let mut v = u.clone();
    let sweep = |from: &DistArray<f64>, to: &mut DistArray<f64>, rows: std::ops::Range<usize>| {
        let (a, mut b) = (from.padded(), to.padded_mut());
        for i in rows {
            for j in 1..=n {
                b[[i, j]] = 0.25 * (a[[i - 1, j]] + a[[i + 1, j]] + a[[i, j - 1]] + a[[i, j + 1]]);
            }
        }
    };
    let flight = ghosts.begin(&mut u)?;
    sweep(flight.array(), &mut v, 2..n); // padded rows 2..n: interior only
    flight.finish()?;
    sweep(&u, &mut v, 1..2); // the rims read the fresh ghosts
    sweep(&u, &mut v, n..n + 1);
    let first = me * n * n; // this rank's first row, (me * n) * n + j
    let neighbours = (above * n + 5) + (first + n + 5) + (first + 4) + (first + 6);
    assert_eq!(v.padded()[[1, 6]], 0.25 * neighbours as f64);

    // Everything else sees the interior only: reductions, files, redistributions.
    let columns = ProcGrid::builder(&[1, p]).build_sharing(&grid)?; // one communicator
    let mut c = DistArray::zeros(
        &columns,
        Layout::parse(&[n * p, n], &format!("*,block@1x{p}"))?,
    )?;
    let mut r = Redistribution::between(&u, &c, Options::default())?; // u's widths planned in
    r.execute_into(&u, &mut c)?; // reads u's interior, no extra pass
    assert_eq!(c.sum()?, u.sum()?);
    assert_eq!(c.gather(0)?, u.gather(0)?);
    if me == 0 {
        println!("tour_ghosts: ok on {p} ranks");
    }
    Ok(())
}
