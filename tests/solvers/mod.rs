//! The suites of `mpi_solvers`: one module a solver.

pub mod adi;
pub mod fft2d;
pub mod fft3d;
pub mod heat;

/// The launcher and its arguments that start `target/<profile>/examples/NAME`
/// under `mpirun -n np` with `args` (`NDCYCLIC_MPIRUN` and
/// `NDCYCLIC_MPIRUN_ARGS` as the harness reads them).
pub fn example_launch(
    name: &str,
    np: usize,
    args: &[&str],
) -> Result<(String, Vec<String>), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let program = exe
        .parent()
        .and_then(std::path::Path::parent)
        .ok_or("the test program is not in <target>/<profile>/deps")?
        .join("examples")
        .join(name);
    let mpirun = std::env::var("NDCYCLIC_MPIRUN").unwrap_or_else(|_| "mpirun".to_string());
    let mut all: Vec<String> = std::env::var("NDCYCLIC_MPIRUN_ARGS")
        .map(|v| v.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    all.extend(["-n".to_string(), np.to_string()]);
    all.push(program.display().to_string());
    all.extend(args.iter().map(|a| a.to_string()));
    Ok((mpirun, all))
}
