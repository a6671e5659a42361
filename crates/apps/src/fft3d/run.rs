//! [`run`]: what `examples/fft3d.rs` runs — plan, check three ways, time.

use super::{
    default_waves, fft3_serial, spectrum_error, wave_value, Extents, Fft3d, FftError, PencilGrid,
    PhaseTimes, C64,
};
use crate::fft2d::{max_difference, median};
use dist_array::DistArray;
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use ndarray::Ix3;
use redist::Strategy;

/// Arrays of more elements than this are not gathered for the serial check
/// ([`FftResult::serial_error`] is `None`): rank 0 would hold the input,
/// the spectrum and the reference, 64 MiB each at this size.
pub const SERIAL_MAX_ELEMENTS: usize = 1 << 22;

/// Parameters of a run of [`run`].
#[derive(Debug, Clone)]
pub struct FftConfig {
    /// Extent along x.
    pub n: usize,
    /// Extent along y.
    pub m: usize,
    /// Extent along z.
    pub k: usize,
    /// The `P1 × P2` process grid; `None`: [`PencilGrid::balanced`] over the
    /// job's ranks.
    pub grid: Option<PencilGrid>,
    /// Exchange strategy of the four redistributions.
    pub strategy: Strategy,
    /// Timed forward + inverse repetitions (at least 1).
    pub reps: usize,
}

/// What a run produced; the same on every rank.
#[derive(Debug, Clone)]
pub struct FftResult {
    /// Ranks in the job.
    pub ranks: usize,
    /// The process grid in use.
    pub grid: PencilGrid,
    /// Max-norm error of the forward transform of [`default_waves`] against
    /// its known spectrum.
    pub max_error: f64,
    /// Max-norm difference between the distributed forward transform and
    /// [`fft3_serial`] of the gathered input; `None` above
    /// [`SERIAL_MAX_ELEMENTS`] elements (not checked).
    pub serial_error: Option<f64>,
    /// Max-norm error of inverse(forward(x)) − x, the first round trip.
    pub roundtrip_error: f64,
    /// Max-norm error of the array after the first round trip and `reps`
    /// timed ones, against the input.
    pub repeated_error: f64,
    /// Largest modulus of the spectrum (`nx·ny·nz` times the largest
    /// amplitude).
    pub spectrum_max: f64,
    /// One forward + inverse transform, seconds: the median over the
    /// repetitions of the slowest rank's time.
    pub time_s: f64,
    /// Of which the four redistributions (median of the slowest rank's).
    pub redist_s: f64,
    /// Of which the 1-D FFTs (median of the slowest rank's).
    pub lines_s: f64,
    /// The forward transform alone (median of the slowest rank's).
    pub forward_s: f64,
    /// The inverse transform alone (median of the slowest rank's).
    pub inverse_s: f64,
    /// The x-pencils → y-pencils redistribution of the forward transform
    /// (median of the slowest rank's).
    pub x_to_y_s: f64,
    /// Strategies used (x → y, y → z, z → y, y → x).
    pub strategies: [Strategy; 4],
    /// Bytes moved between ranks per forward + inverse transform.
    pub bytes_moved: usize,
    /// The x-, y- and z-pencil layouts (spec strings).
    pub layouts: [String; 3],
}

/// Max-norm difference between `spectrum` and [`fft3_serial`] of `input`
/// (x-pencils, axes `(y, z, x)`), both gathered on rank 0, which sends it
/// to every rank of `comm` (collective).
fn serial_error(
    comm: &SimpleCommunicator,
    input: &DistArray<C64>,
    spectrum: &DistArray<C64>,
) -> Result<f64, FftError> {
    let whole_input = input.gather(0)?;
    let whole_spectrum = spectrum.gather(0)?;
    let mut error = match (whole_input, whole_spectrum) {
        (Some(a), Some(s)) => {
            let a = a.into_dimensionality::<Ix3>();
            let s = s.into_dimensionality::<Ix3>();
            match (a, s) {
                (Ok(a), Ok(s)) => {
                    // (y, z, x) seen as (x, y, z).
                    let reference = fft3_serial(a.view().permuted_axes([2, 0, 1]));
                    reference
                        .iter()
                        .zip(s.iter())
                        .map(|(r, x)| (r - x).norm())
                        .fold(0.0, f64::max)
                }
                // Not 3-D: cannot happen for an Fft3d's arrays; the check
                // fails rather than the rank stopping alone.
                _ => f64::INFINITY,
            }
        }
        _ => 0.0,
    };
    comm.process_at_rank(0).broadcast_into(&mut error);
    Ok(error)
}

/// Largest `|a − b|` of two arrays of one layout (collective).
fn difference(a: &DistArray<C64>, b: &DistArray<C64>) -> Result<f64, FftError> {
    max_difference(a, b).map_err(FftError::from_fft2d)
}

/// Runs `reps` forward + inverse transforms of `x_pencils`, each after a
/// barrier on `comm`, with the same plans and redistributions each time:
/// the forward and inverse phase times of each.
fn timed_round_trips(
    fft: &mut Fft3d,
    x_pencils: &mut DistArray<C64>,
    spectrum: &mut DistArray<C64>,
    reps: usize,
    comm: &SimpleCommunicator,
) -> Result<Vec<(PhaseTimes, PhaseTimes)>, FftError> {
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        comm.barrier();
        let f = fft.forward(x_pencils, spectrum)?;
        let i = fft.inverse(spectrum, x_pencils)?;
        times.push((f, i));
    }
    Ok(times)
}

/// The median over the repetitions of the slowest rank's `stage` of `times`,
/// repetition by repetition (collective).
fn slowest_median(
    comm: &SimpleCommunicator,
    times: &[(PhaseTimes, PhaseTimes)],
    stage: impl Fn(&PhaseTimes, &PhaseTimes) -> f64,
) -> f64 {
    let mine: Vec<f64> = times.iter().map(|(f, i)| stage(f, i)).collect();
    let mut all = vec![0.0f64; mine.len()];
    comm.all_reduce_into(&mine[..], &mut all[..], SystemOperation::max());
    median(all)
}

/// Plans the transform, checks it three ways on the plane waves of
/// [`default_waves`] and times `reps` forward + inverse transforms, on
/// every rank of `world` (collective).
///
/// # Errors
///
/// [`FftError::Parameter`] for `reps == 0`, and the errors of
/// [`Fft3d::new`]: every rank returns the same.
pub fn run(world: &SimpleCommunicator, cfg: &FftConfig) -> Result<FftResult, FftError> {
    if cfg.reps == 0 {
        return Err(FftError::Parameter("reps must be at least 1".into()));
    }
    let extents: Extents = [cfg.n, cfg.m, cfg.k];
    let mut fft = Fft3d::new(world, extents, cfg.grid, cfg.strategy)?;
    let waves = default_waves(extents);
    // x-pencils hold (y, z, x).
    let input = DistArray::from_fn(fft.grid(), fft.x_layout().clone(), |g| {
        wave_value(&waves, extents, [g[2], g[0], g[1]])
    })?;
    let mut x_pencils = input.clone();
    let mut spectrum = DistArray::zeros(fft.grid(), fft.z_layout().clone())?;
    let grid = fft.grid().clone();
    let comm = grid.communicator();

    // (a) and (b): the spectrum against the waves' and against a serial FFT.
    fft.forward(&mut x_pencils, &mut spectrum)?;
    let max_error = spectrum_error(&spectrum, &waves)?;
    let spectrum_max = spectrum.max_abs()?;
    let serial_error = if extents.iter().product::<usize>() <= SERIAL_MAX_ELEMENTS {
        Some(serial_error(comm, &input, &spectrum)?)
    } else {
        None
    };

    // (c): the round trip.
    fft.inverse(&mut spectrum, &mut x_pencils)?;
    let roundtrip_error = difference(&x_pencils, &input)?;

    let times = timed_round_trips(&mut fft, &mut x_pencils, &mut spectrum, cfg.reps, comm)?;
    let repeated_error = difference(&x_pencils, &input)?;
    let median_of =
        |stage: fn(&PhaseTimes, &PhaseTimes) -> f64| slowest_median(comm, &times, stage);
    Ok(FftResult {
        ranks: usize::try_from(world.size()).expect("a communicator has a positive size"),
        grid: fft.pencil_grid(),
        max_error,
        serial_error,
        roundtrip_error,
        repeated_error,
        spectrum_max,
        time_s: median_of(|f, i| f.total() + i.total()),
        redist_s: median_of(|f, i| f.redist() + i.redist()),
        lines_s: median_of(|f, i| f.lines() + i.lines()),
        forward_s: median_of(|f, _| f.total()),
        inverse_s: median_of(|_, i| i.total()),
        x_to_y_s: median_of(|f, _| f.xy_redist_s),
        strategies: fft.strategies(),
        bytes_moved: fft.elements_moved() * std::mem::size_of::<C64>(),
        layouts: [fft.x_layout(), fft.y_layout(), fft.z_layout()].map(|l| l.spec().to_string()),
    })
}
