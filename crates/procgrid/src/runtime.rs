//! Starting MPI safely: one initialisation per process, a panic hook that
//! aborts the whole job, and detection of a mismatched launcher.

use crate::error::GridError;
use mpi::environment::Universe;
use mpi::topology::Communicator;
use mpi::Threading;
use std::sync::Once;

/// Initialises MPI for an ndcyclic program and returns the universe.
///
/// It does three things every entry point (examples, tools, test programs)
/// needs:
///
/// 1. initialises MPI with [`Threading::Funneled`]: only the main thread calls
///    MPI, while rayon threads pack, unpack and compute;
/// 2. installs [`abort_on_panic`], so a panic on one rank stops the whole job
///    instead of leaving the other ranks blocked in a collective;
/// 3. checks the launcher: when the launcher's environment says it started more
///    than one process but MPI sees a world of one, the binary was started by
///    another MPI implementation's `mpirun` and every process would silently run
///    as its own singleton. That is reported as [`GridError::WrongLauncher`].
///
/// Keep the returned universe alive for as long as MPI is used: dropping it
/// finalises MPI. Grids declared after it are dropped before it.
///
/// ```
/// let universe = procgrid::init().expect("MPI starts");
/// let world = universe.world();
/// # use mpi::topology::Communicator;
/// assert!(world.size() >= 1);
/// ```
///
/// # Errors
///
/// - [`GridError::AlreadyInitialized`] when MPI was already initialised in this
///   process (also after it was finalised: MPI starts once per process);
/// - [`GridError::WrongLauncher`] when the launcher says it started more than one
///   process but MPI sees a world of one (MPI is finalised again as it returns).
pub fn init() -> Result<Universe, GridError> {
    let (universe, _threading) =
        mpi::initialize_with_threading(Threading::Funneled).ok_or(GridError::AlreadyInitialized)?;
    abort_on_panic();
    let world_size = universe.world().size() as usize;
    check_launcher(world_size, |k| std::env::var(k).ok(), linked_library)?;
    Ok(universe)
}

/// Installs (once) a panic hook that prints the panic with the rank that
/// raised it and then calls `MPI_Abort` on `MPI_COMM_WORLD`.
///
/// Without it, a panic unwinds one rank while the others wait forever in
/// their next collective. The previously installed hook still runs first, so
/// the usual message and backtrace are printed.
///
/// ```
/// procgrid::abort_on_panic(); // harmless to call more than once
/// ```
pub fn abort_on_panic() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let rank = world_rank();
            eprintln!("ndcyclic: rank {rank} panicked; aborting the MPI job");
            previous(info);
            // Let the launcher forward the message before the abort tears the job down.
            std::thread::sleep(std::time::Duration::from_millis(200));
            mpi_extras::process::abort_world(101);
        }));
    });
}

/// This process's rank in `MPI_COMM_WORLD`, or -1 when MPI is not running.
fn world_rank() -> i32 {
    mpi_extras::process::world_rank().unwrap_or(-1)
}

/// Compares the launcher's idea of the job size with MPI's.
///
/// `env` looks up an environment variable and `linked` names the linked MPI;
/// both are parameters so the check is testable without a launcher or MPI.
pub(crate) fn check_launcher(
    world_size: usize,
    env: impl Fn(&str) -> Option<String>,
    linked: impl FnOnce() -> String,
) -> Result<(), GridError> {
    if world_size != 1 {
        return Ok(());
    }
    for variable in ["PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE"] {
        if let Some(n) = env(variable).and_then(|v| v.trim().parse::<usize>().ok()) {
            if n > 1 {
                return Err(GridError::WrongLauncher {
                    variable,
                    launcher_size: n,
                    linked: linked(),
                });
            }
        }
    }
    Ok(())
}

/// The first line of the linked MPI library's version string.
fn linked_library() -> String {
    mpi::environment::library_version()
        .ok()
        .and_then(|v| v.lines().next().map(|l| l.trim().to_string()))
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| "an unknown MPI library".to_string())
}

pub use mpi_extras::launcher::ranks_on_node;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_check() {
        let lib = || "test MPI".to_string();
        let none = |_: &str| None;
        assert!(check_launcher(1, none, lib).is_ok());
        let mpich4 = |k: &str| (k == "PMI_SIZE").then(|| "4".to_string());
        assert!(check_launcher(4, mpich4, lib).is_ok());
        let ompi = |k: &str| (k == "OMPI_COMM_WORLD_SIZE").then(|| "3".to_string());
        match check_launcher(1, ompi, lib) {
            Err(GridError::WrongLauncher {
                variable,
                launcher_size,
                ..
            }) => {
                assert_eq!(variable, "OMPI_COMM_WORLD_SIZE");
                assert_eq!(launcher_size, 3);
            }
            other => panic!("expected WrongLauncher, got {other:?}"),
        }
        let one = |k: &str| (k == "PMI_SIZE").then(|| "1".to_string());
        assert!(check_launcher(1, one, lib).is_ok());
    }
}
