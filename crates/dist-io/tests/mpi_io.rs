//! Saving and loading under MPI (smoke).
use dist_array::{DistArray, Layout};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure_eq, MpiTest, TestResult};
use procgrid::ProcGrid;

fn smoke(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[1, n]).map_err(|e| e.to_string())?;
    let layout = Layout::parse(&[37, 29], &format!("cyclic(3),cyclic(2)@1x{n}")).unwrap();
    let a = DistArray::from_fn(&grid, layout, |g| (g[0] * 100 + g[1]) as f64).unwrap();
    let path = std::env::temp_dir().join(format!("smoke-{n}.npy"));
    for budget in [1 << 20, 2000] {
        let o = dist_io::IoOptions::default().staging_bytes(budget);
        dist_io::save(&a, &path, &o).map_err(|e| e.to_string())?;
        let rows = ProcGrid::new(world, &[n, 1]).unwrap();
        let spec = format!("block,*@{n}x1").parse().unwrap();
        let b: DistArray<f64> =
            dist_io::load(&rows, &spec, &path, &o).map_err(|e| e.to_string())?;
        ensure_eq!(b.gather(0).unwrap(), a.gather(0).unwrap());
    }
    Ok(())
}

fn main() {
    mpi_harness::run("dist_io", &[MpiTest::new("smoke", smoke)]);
}
