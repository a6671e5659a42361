//! How the ranks of a launch wait: yielding the core while nothing arrives.
//!
//! MPICH's ch4 device spins while it waits and has no setting to yield; on
//! this project's 2-core machines a test launch of 3–8 ranks spent almost
//! all of its time in ranks spinning on a core that the rank they waited for
//! needed (8 ranks: 100 barriers in 3.4 s). The harness preloads
//! `yield_when_idle.so` (built from `shim/yield_when_idle.c` by `build.rs`)
//! into every launch: it stands in for UCX's progress call and yields the
//! core after 16 calls in a row found nothing to do (the same 100 barriers:
//! 4 ms). Every MPI call still runs as before, so the launches test the
//! same things; only the idle time goes. Open MPI yields by itself when
//! oversubscribed and never enters the library unless it runs over UCX.
//!
//! `NDCYCLIC_MPI_IDLE=spin` launches without it (MPICH's own waits).
//!
//! ```
//! let mut cmd = std::process::Command::new("mpirun");
//! mpi_harness::yield_when_idle(&mut cmd);
//! ```

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

/// The preloaded library, when it was built and is not turned off by
/// `NDCYCLIC_MPI_IDLE=spin`.
///
/// ```
/// if let Some(shim) = mpi_harness::yield_shim() {
///     assert!(shim.ends_with("yield_when_idle.so"));
/// }
/// ```
pub fn yield_shim() -> Option<&'static Path> {
    let path = env!("NDCYCLIC_YIELD_SHIM");
    let spin = std::env::var("NDCYCLIC_MPI_IDLE").is_ok_and(|v| v.trim() == "spin");
    (!path.is_empty() && !spin && Path::new(path).is_file()).then(|| Path::new(path))
}

/// Adds the yielding library to `cmd`'s `LD_PRELOAD` (after what is
/// preloaded already), so that the ranks `cmd` launches inherit it.
pub fn yield_when_idle(cmd: &mut Command) {
    let Some(shim) = yield_shim() else {
        return;
    };
    let mut preload = OsString::from(shim);
    if let Some(before) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload = before;
        preload.push(":");
        preload.push(shim);
    }
    cmd.env("LD_PRELOAD", preload);
}
