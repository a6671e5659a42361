//! Redistributing data, on any number of ranks: the ADI solver's phase
//! change between whole rows and whole columns of an n x n array, planned
//! once in each direction and executed at every step.
//!
//! `cargo build --release --example tour_redistribute && mpirun -n 4 target/release/examples/tour_redistribute`

use ndcyclic::dist_array::{DistArray, Layout};
use ndcyclic::mpi::topology::Communicator;
use ndcyclic::procgrid::{self, ProcGrid};
use ndcyclic::redist::{Options, Redistribution};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = procgrid::init()?;
    let world = universe.world();
    let (p, n, steps) = (world.size() as usize, 300, 10);

    let rows = ProcGrid::new(&world, &[p, 1])?;
    let cols = ProcGrid::builder(&[1, p]).build_sharing(&rows)?; // same communicator
    let y_lines = Layout::parse(&[n, n], &format!("block,*@{p}x1"))?; // whole rows
    let x_lines = Layout::parse(&[n, n], &format!("*,block@1x{p}"))?; // whole columns
    let mut to_x =
        Redistribution::<f64>::new(&rows, &y_lines, &cols, &x_lines, Options::default())?;
    let mut to_y =
        Redistribution::<f64>::new(&cols, &x_lines, &rows, &y_lines, Options::default())?;

    let mut u_y = DistArray::from_fn(&rows, y_lines, |g| (g[0] * n + g[1]) as f64)?;
    let mut u_x = DistArray::zeros(&cols, to_x.target_layout().clone())?;
    for _ in 0..steps {
        to_x.execute_into(&u_y, &mut u_x)?; // planned once, no allocation after the first call
        u_x.map_inplace(|v| *v += 1.0); // work along whole columns goes here
        to_y.execute_into(&u_x, &mut u_y)?;
    }

    if let Some(u) = u_y.gather(0)? {
        assert!(u
            .indexed_iter()
            .all(|(g, &v)| v == (g[0] * n + g[1] + steps) as f64));
        println!("{steps} round trips of a {n}x{n} array over {p} ranks: every element arrived");
    }
    Ok(())
}
