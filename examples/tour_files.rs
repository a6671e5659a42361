//! Saving and loading, on any number of ranks: a field saved from 2-D
//! blocks to a `.npy` file that `numpy.load` opens, loaded back as whole
//! rows, one plane read alone, and a refusal that every rank gets alike.
//!
//! `cargo build --release --example tour_files && mpirun -n 4 target/release/examples/tour_files`

use ndcyclic::dist_array::{DistArray, Layout};
use ndcyclic::dist_io::{self, IoError, IoOptions};
use ndcyclic::mpi::topology::Communicator;
use ndcyclic::procgrid::{self, ProcGrid};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = procgrid::init()?;
    let world = universe.world();
    let (p, n) = (world.size() as usize, 300);
    let path = std::env::temp_dir().join(format!("tour-files-{p}.npy"));
    let options = IoOptions::default();

    // Blocks of 16 x 16 dealt over a 1 x p grid, saved: numpy.load sees the n x n array.
    let grid = ProcGrid::new(&world, &[1, p])?;
    let blocks = Layout::parse(&[n, n], &format!("cyclic(16),cyclic(16)@1x{p}"))?;
    let u = DistArray::from_fn(&grid, blocks, |g| (g[0] * n + g[1]) as f64)?;
    dist_io::save(&u, &path, &options)?; // a temporary file, renamed once every rank wrote
    let info = dist_io::info(&path, &options)?; // the header alone
    assert_eq!(
        (info.shape.clone(), info.element.numpy_name()),
        (vec![n, n], "float64")
    );

    // Loaded on another grid and layout: the shape and type come from the file.
    let rows = ProcGrid::new(&world, &[p, 1])?;
    let v: DistArray<f64> =
        dist_io::load(&rows, &format!("block,*@{p}x1").parse()?, &path, &options)?;
    assert_eq!(v.count_where(|g, &x| x != (g[0] * n + g[1]) as f64), 0);

    // Row 7 alone: a window of shape 1 x n at (7, 0), dealt cyclically.
    let cyclic = ProcGrid::new(&world, &[1, p])?;
    let spec = format!("*,cyclic@1x{p}").parse()?;
    let row: DistArray<f64> =
        dist_io::load_window(&cyclic, &spec, &path, &[7, 0], &[1, n], &options)?;
    assert_eq!(row.count_where(|g, &x| x != (7 * n + g[1]) as f64), 0);

    // Asking for another element type is refused, with the same error on every rank.
    match dist_io::load::<f32>(&rows, &format!("block,*@{p}x1").parse()?, &path, &options) {
        Err(IoError::Mismatch { found, .. }) => assert!(found.contains("f64")),
        other => panic!("expected a type mismatch, got {:?}", other.err()),
    }

    if world.rank() == 0 {
        println!("{info}: saved from {p} ranks, loaded as rows and as one row");
        std::fs::remove_file(&path)?;
    }
    Ok(())
}
