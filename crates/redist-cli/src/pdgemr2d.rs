//! `redist run --baseline pdgemr2d`: ScaLAPACK's own redistribution,
//! `pdgemr2d`, timed on the same layouts, window and data as the
//! redistribution, and its result compared with ndcyclic's element by
//! element. Needs the tool built with the `scalapack` feature; 2-D arrays
//! of `f64` only (`pdgemr2d` is the double-precision routine).

use crate::error::CliError;
use dist_array::{DistArray, Element, Layout};
use procgrid::ProcGrid;
use redist::Window;

/// What the baseline measured.
#[derive(Debug, Clone)]
pub struct Timing {
    /// Seconds per repetition, the slowest rank's.
    pub times: Vec<f64>,
    /// Whether `pdgemr2d` left the target exactly as ndcyclic did, on every rank.
    pub agrees: bool,
}

/// Refuses, before anything is built, a `pdgemr2d` baseline this build or
/// these arguments cannot run. Pure: every rank reaches the same verdict.
pub fn check_available<T: Element>(from: &Layout) -> Result<(), CliError> {
    if !cfg!(feature = "scalapack") {
        return Err(CliError::Unsupported {
            what: "--baseline pdgemr2d",
            expected: "a redist built with the scalapack feature \
                       (cargo build --release -p redist-cli --features scalapack, \
                       after scripts/setup.sh --with-scalapack)"
                .to_string(),
        });
    }
    if std::any::TypeId::of::<T>() != std::any::TypeId::of::<f64>() {
        return Err(CliError::Unsupported {
            what: "--baseline pdgemr2d",
            expected: "--type f64 (pdgemr2d moves doubles)".to_string(),
        });
    }
    if from.ndim() != 2 {
        return Err(CliError::Unsupported {
            what: "--baseline pdgemr2d",
            expected: format!("a 2-D array (the shape has {} dimensions)", from.ndim()),
        });
    }
    Ok(())
}

/// `src` and `reference` as the `f64` arrays [`check_available`] made sure
/// they are.
#[cfg(feature = "scalapack")]
pub(crate) fn as_f64<T: Element>(a: &DistArray<T>) -> Result<&DistArray<f64>, CliError> {
    (a as &dyn std::any::Any)
        .downcast_ref::<DistArray<f64>>()
        .ok_or(CliError::Unsupported {
            what: "--baseline pdgemr2d",
            expected: "--type f64 (pdgemr2d moves doubles)".to_string(),
        })
}

/// Times `reps` calls of `pdgemr2d` (after one untimed) copying `window` of
/// `src` into a new array laid out as `reference`, initialised as ndcyclic's
/// target was (`-1` outside a window, which every element inside it
/// overwrites), and compares the result with `reference`, ndcyclic's
/// target. Collective over the grids' communicator.
#[cfg(feature = "scalapack")]
pub fn time<T: Element>(
    window: &Window,
    src: &DistArray<T>,
    reference: &DistArray<T>,
    grid_a: &ProcGrid,
    grid_b: &ProcGrid,
    reps: usize,
    tick: &dyn Fn(usize),
) -> Result<Timing, CliError> {
    use crate::collective::{max_over, sum_over};
    use redist_cli::scalapack::{self, BlacsContext};
    let (src, reference) = (as_f64(src)?, as_f64(reference)?);
    let comm = grid_a.communicator();
    let everyone = BlacsContext::spanning(grid_a)?;
    let ctx_a = BlacsContext::for_layout(grid_a, src.layout())?;
    let ctx_b = BlacsContext::for_layout(grid_b, reference.layout())?;
    let desc_a = scalapack::descriptor(src.layout(), &ctx_a)?;
    let desc_b = scalapack::descriptor(reference.layout(), &ctx_b)?;
    let mut dst = DistArray::from_fn(grid_b, reference.layout().clone(), |_| -1.0)?;
    scalapack::pdgemr2d(window, src, &desc_a, &mut dst, &desc_b, &everyone)?; // warm-up
    let mut times = Vec::with_capacity(reps);
    for rep in 0..reps {
        procgrid::waits::barrier(comm);
        let t = mpi::time();
        scalapack::pdgemr2d(window, src, &desc_a, &mut dst, &desc_b, &everyone)?;
        times.push(max_over(comm, mpi::time() - t));
        tick(rep + 1);
    }
    let differ = dst
        .local_slice()
        .iter()
        .zip(reference.local_slice())
        .filter(|(a, b)| a != b)
        .count() as u64;
    Ok(Timing {
        times,
        agrees: sum_over(comm, differ) == 0,
    })
}

/// Without the `scalapack` feature [`check_available`] refuses first; this
/// says the same should it be reached.
#[cfg(not(feature = "scalapack"))]
pub fn time<T: Element>(
    _window: &Window,
    _src: &DistArray<T>,
    _reference: &DistArray<T>,
    _grid_a: &ProcGrid,
    _grid_b: &ProcGrid,
    _reps: usize,
    _tick: &dyn Fn(usize),
) -> Result<Timing, CliError> {
    check_available::<T>(_src.layout()).and(Err(CliError::Unsupported {
        what: "--baseline pdgemr2d",
        expected: "a redist built with the scalapack feature".to_string(),
    }))
}
