//! `redist run --baseline pdtran` and `--baseline pdgeadd`: PBLAS's
//! transposition and matrix addition timed on the same arrays, α and β as
//! the redistribution's, and their result compared with ndcyclic's element
//! by element. `pdtran` goes with `--transpose`; `pdgeadd` with it
//! (`TRANS = 'T'`) or without (`'N'`). Needs the tool built with the
//! `scalapack` feature; 2-D arrays of `f64`.
//!
//! PBLAS computes within one BLACS context: where the two arrays live on
//! grids of different shapes (or rank maps), the baseline does what a
//! ScaLAPACK program would to get the same result — the operation into an
//! array with the target's blocking on the source's grid, then `pdgemr2d`
//! onto the target's grid (and, with β ≠ 0, `pdgemr2d` of the target onto
//! that grid first); every step is timed (`route` says which).

use crate::error::CliError;
use crate::pdgemr2d::Timing;
use dist_array::{DistArray, Element, Layout};
use procgrid::ProcGrid;
use redist::Window;

/// Which PBLAS routine a baseline runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routine {
    /// `pdtran`: C := β·C + α·Aᵀ.
    Tran,
    /// `pdgeadd`: C := β·C + α·op(A).
    Geadd,
}

impl Routine {
    /// The routine's name, as in the JSON keys.
    pub fn name(self) -> &'static str {
        match self {
            Routine::Tran => "pdtran",
            Routine::Geadd => "pdgeadd",
        }
    }
}

/// What a PBLAS baseline computes, as ndcyclic's run did: `C := β·C +
/// α·op(A)` over a window, into a target that held `untouched` everywhere.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(
    not(feature = "scalapack"),
    expect(dead_code, reason = "read by the PBLAS calls, feature scalapack")
)]
pub struct Operation<'a> {
    /// The window: `sub(A)`'s origin and shape, `sub(C)`'s origin.
    pub window: &'a Window,
    /// Whether `op` transposes (`--transpose`).
    pub transpose: bool,
    /// α, the factor of `op(A)`.
    pub alpha: f64,
    /// β, the factor of C's old values.
    pub beta: f64,
    /// What every element of the target held before the first call.
    pub untouched: f64,
}

/// The two grids of a run, over one communicator.
#[derive(Debug, Clone, Copy)]
pub struct Grids<'a> {
    /// The grid the source A is distributed over.
    pub source: &'a ProcGrid,
    /// The grid the target C is distributed over.
    pub target: &'a ProcGrid,
}

/// What a PBLAS baseline measured, and how it ran.
#[derive(Debug, Clone)]
pub struct PblasTiming {
    /// Which routine.
    pub routine: Routine,
    /// Times and the comparison with ndcyclic's result.
    pub timing: Timing,
    /// `pdtran` / `pdgeadd` alone, or with `pdgemr2d` between grids.
    pub route: &'static str,
}

/// Refuses, before anything is built, a PBLAS baseline this build or these
/// arguments cannot run. Pure: every rank reaches the same verdict.
pub fn check_available<T: Element>(
    routine: Routine,
    from: &Layout,
    permutation: Option<&[usize]>,
) -> Result<(), CliError> {
    crate::pdgemr2d::check_available::<T>(from).map_err(|e| match e {
        CliError::Unsupported { expected, .. } => CliError::Unsupported {
            what: match routine {
                Routine::Tran => "--baseline pdtran",
                Routine::Geadd => "--baseline pdgeadd",
            },
            expected,
        },
        e => e,
    })?;
    let transposes = permutation == Some(&[1, 0][..]);
    if routine == Routine::Tran && !transposes {
        return Err(CliError::Unsupported {
            what: "--baseline pdtran",
            expected: "--transpose (pdtran transposes)".to_string(),
        });
    }
    Ok(())
}

/// Times `reps` calls of `routine` (after one untimed) computing, from
/// `src`, what `reference` holds: ndcyclic's result of `operation` done
/// once. Collective over the grids' communicator.
#[cfg(feature = "scalapack")]
pub fn time<T: Element>(
    routine: Routine,
    operation: &Operation<'_>,
    src: &DistArray<T>,
    reference: &DistArray<T>,
    grids: Grids<'_>,
    reps: usize,
    tick: &dyn Fn(usize),
) -> Result<PblasTiming, CliError> {
    use crate::collective::{max_over, sum_over};
    let (src, reference) = (
        crate::pdgemr2d::as_f64(src)?,
        crate::pdgemr2d::as_f64(reference)?,
    );
    let comm = grids.source.communicator();
    let untouched = operation.untouched;
    let mut call = Call::set_up(routine, src, reference.layout(), grids, untouched)?;
    let same = call.stage.is_none();
    let mut dst = DistArray::from_fn(grids.target, reference.layout().clone(), |_| untouched)?;
    let mut once = |dst: &mut DistArray<f64>| call.run(src, dst, operation);
    // The result to compare: one call from the target's first values.
    once(&mut dst)?;
    let differ = dst
        .local_slice()
        .iter()
        .zip(reference.local_slice())
        .filter(|(a, b)| a != b)
        .count() as u64;
    let agrees = sum_over(comm, differ) == 0;
    let mut times = Vec::with_capacity(reps);
    for rep in 0..reps {
        procgrid::waits::barrier(comm);
        let t = mpi::time();
        once(&mut dst)?;
        times.push(max_over(comm, mpi::time() - t));
        tick(rep + 1);
    }
    Ok(PblasTiming {
        routine,
        timing: Timing { times, agrees },
        route: if same {
            routine.name()
        } else if operation.beta != 0.0 {
            "pdgemr2d+pblas+pdgemr2d"
        } else {
            "pblas+pdgemr2d"
        },
    })
}

/// One PBLAS call of a baseline, set up once: contexts, descriptors and,
/// where C cannot be in A's context, the array of C's blocking on A's grid
/// it computes in.
#[cfg(feature = "scalapack")]
struct Call {
    /// `pdtran` or `pdgeadd`.
    routine: Routine,
    everyone: redist_cli::scalapack::BlacsContext,
    /// Kept alive for the descriptors.
    _contexts: [redist_cli::scalapack::BlacsContext; 2],
    desc_a: redist_cli::scalapack::Descriptor,
    desc_c: redist_cli::scalapack::Descriptor,
    /// Where PBLAS computes when not in C itself, with its descriptor.
    stage: Option<(DistArray<f64>, redist_cli::scalapack::Descriptor)>,
}

#[cfg(feature = "scalapack")]
impl Call {
    /// The call of `routine` from arrays like `a` into arrays laid out as
    /// `c` (staging arrays start at `untouched`). Collective.
    fn set_up(
        routine: Routine,
        a: &DistArray<f64>,
        c: &Layout,
        grids: Grids<'_>,
        untouched: f64,
    ) -> Result<Call, CliError> {
        use redist_cli::scalapack::{self, BlacsContext};
        let (grid_a, grid_b) = (grids.source, grids.target);
        let a = a.layout();
        let ctx_a = BlacsContext::for_layout(grid_a, a)?;
        let desc_a = scalapack::descriptor(a, &ctx_a)?;
        // C itself where it shares A's grid and rank map (one context, as
        // PBLAS wants), else an array of C's blocking on A's grid.
        let same = c.grid_extents() == a.grid_extents() && c.rank_map() == a.rank_map();
        let everyone = BlacsContext::spanning(grid_a)?;
        let ctx_c = BlacsContext::for_layout(grid_b, c)?;
        let desc_c = scalapack::descriptor(c, if same { &ctx_a } else { &ctx_c })?;
        let stage = match same {
            true => None,
            false => {
                let s = on_grid_of(c, a)?;
                let desc = scalapack::descriptor(&s, &ctx_a)?;
                Some((DistArray::from_fn(grid_a, s, |_| untouched)?, desc))
            }
        };
        Ok(Call {
            routine,
            everyone,
            _contexts: [ctx_a, ctx_c],
            desc_a,
            desc_c,
            stage,
        })
    }

    /// `dst := β·dst + α·op(src)` over the operation's window, through
    /// the staging array where there is one. Collective.
    fn run(
        &mut self,
        src: &DistArray<f64>,
        dst: &mut DistArray<f64>,
        operation: &Operation<'_>,
    ) -> Result<(), CliError> {
        use redist_cli::scalapack::{self, AddOperands, PblasRoutine};
        let routine = match self.routine {
            Routine::Tran => PblasRoutine::Tran,
            Routine::Geadd => PblasRoutine::Geadd {
                transpose: operation.transpose,
            },
        };
        let Operation {
            window,
            alpha,
            beta,
            ..
        } = *operation;
        match &mut self.stage {
            Some((s, ds)) => {
                let whole = Window::whole(dst.layout().shape());
                if beta != 0.0 {
                    scalapack::pdgemr2d(&whole, dst, &self.desc_c, s, ds, &self.everyone)?;
                }
                let operands = AddOperands {
                    alpha,
                    a: src,
                    desc_a: &self.desc_a,
                    beta,
                    c: s,
                    desc_c: ds,
                };
                scalapack::pblas_add(routine, window, operands)?;
                scalapack::pdgemr2d(&whole, s, ds, dst, &self.desc_c, &self.everyone)?;
            }
            None => {
                let operands = AddOperands {
                    alpha,
                    a: src,
                    desc_a: &self.desc_a,
                    beta,
                    c: dst,
                    desc_c: &self.desc_c,
                };
                scalapack::pblas_add(routine, window, operands)?;
            }
        }
        Ok(())
    }
}

/// `c`'s blocking (block sizes, first processes) on `a`'s grid and rank
/// map, column-major: where PBLAS can compute C next to A.
#[cfg(feature = "scalapack")]
fn on_grid_of(c: &Layout, a: &Layout) -> Result<Layout, CliError> {
    use dist_array::{Dist, LayoutSpec};
    let grid = a.grid_extents();
    let dists = (0..2)
        .map(|d| Dist::cyclic(c.axis(d).block().max(1)).starting_at(c.axis(d).first() % grid[d]))
        .collect();
    let spec = LayoutSpec::new(dists, grid.to_vec())?;
    Ok(Layout::new(c.shape(), &spec)?
        .with_rank_map(a.rank_map())?
        .with_storage(dist_array::Order::ColumnMajor))
}

/// Without the `scalapack` feature [`check_available`] refuses first.
#[cfg(not(feature = "scalapack"))]
pub fn time<T: Element>(
    routine: Routine,
    _operation: &Operation<'_>,
    src: &DistArray<T>,
    _reference: &DistArray<T>,
    _grids: Grids<'_>,
    _reps: usize,
    _tick: &dyn Fn(usize),
) -> Result<PblasTiming, CliError> {
    check_available::<T>(routine, src.layout(), None).and(Err(CliError::Unsupported {
        what: "a PBLAS baseline",
        expected: "a redist built with the scalapack feature".to_string(),
    }))
}
