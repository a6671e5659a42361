//! [`run`]: what `examples/fft2d.rs` runs — plan, check three ways, time.

use super::{
    default_waves, fft2_serial, max_difference, spectrum_error, wave_value, ColumnStorage, Fft2d,
    FftError, PhaseTimes, C64,
};
use dist_array::{DistArray, LayoutSpec};
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use ndarray::Ix2;
use redist::Strategy;

/// Parameters of a run of [`run`].
#[derive(Debug, Clone)]
pub struct FftConfig {
    /// Extent of dimension 0 (x).
    pub n: usize,
    /// Extent of dimension 1 (y).
    pub m: usize,
    /// Layout with whole columns (dimension 0 whole); `None`: `*,block@1xP`.
    pub x_layout: Option<LayoutSpec>,
    /// Layout with whole rows (dimension 1 whole); `None`: `block,*@Px1`.
    pub y_layout: Option<LayoutSpec>,
    /// Exchange strategy of both redistributions.
    pub strategy: Strategy,
    /// How columns are stored while they are transformed.
    pub columns: ColumnStorage,
    /// Timed forward + inverse repetitions (at least 1).
    pub reps: usize,
}

/// What a run produced; the same on every rank.
#[derive(Debug, Clone)]
pub struct FftResult {
    /// Ranks in the job.
    pub ranks: usize,
    /// Max-norm error of the forward transform of [`default_waves`] against
    /// its known spectrum.
    pub max_error: f64,
    /// Max-norm difference between the distributed forward transform and
    /// [`fft2_serial`] of the gathered input.
    pub serial_error: f64,
    /// Max-norm error of inverse(forward(x)) − x, the first round trip.
    pub roundtrip_error: f64,
    /// Max-norm error of the array after the first round trip and `reps`
    /// timed ones, against the input.
    pub repeated_error: f64,
    /// Largest modulus of the spectrum (`n·m` times the largest amplitude).
    pub spectrum_max: f64,
    /// One forward + inverse transform, seconds: the median over the
    /// repetitions of the slowest rank's time.
    pub time_s: f64,
    /// Of which the two redistributions (median of the slowest rank's).
    pub redist_s: f64,
    /// Of which the row FFTs (median of the slowest rank's).
    pub rows_s: f64,
    /// Of which the column FFTs (median of the slowest rank's).
    pub columns_s: f64,
    /// Strategies used (forward y → x, inverse x → y).
    pub strategies: (Strategy, Strategy),
    /// Bytes moved between ranks per forward + inverse transform.
    pub bytes_moved: usize,
    /// The y-layout and x-layout in use (spec strings).
    pub layouts: (String, String),
}

/// The median of `v` (the mean of the two middle values for an even count).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let k = v.len() / 2;
    if v.len() % 2 == 1 {
        v[k]
    } else {
        0.5 * (v[k - 1] + v[k])
    }
}

/// Max-norm difference between `spectrum` and [`fft2_serial`] of `input`,
/// both gathered on rank 0, which sends it to every rank of `comm`
/// (collective).
fn serial_error(
    comm: &SimpleCommunicator,
    input: &DistArray<C64>,
    spectrum: &DistArray<C64>,
) -> Result<f64, FftError> {
    let whole_input = input.gather(0)?;
    let whole_spectrum = spectrum.gather(0)?;
    let mut serial_error = match (whole_input, whole_spectrum) {
        (Some(a), Some(s)) => {
            let a = a.into_dimensionality::<Ix2>().expect("2-D input");
            let s = s.into_dimensionality::<Ix2>().expect("2-D spectrum");
            let reference = fft2_serial(a.view());
            reference
                .iter()
                .zip(s.iter())
                .map(|(r, x)| (r - x).norm())
                .fold(0.0, f64::max)
        }
        _ => 0.0,
    };
    comm.process_at_rank(0).broadcast_into(&mut serial_error);
    Ok(serial_error)
}

/// Runs `reps` forward + inverse transforms of `rows`, each after a barrier
/// on `comm`, with the same plans and redistributions each time: the phase
/// times of each.
fn timed_round_trips(
    fft: &mut Fft2d,
    rows: &mut DistArray<C64>,
    spectrum: &mut DistArray<C64>,
    reps: usize,
    comm: &SimpleCommunicator,
) -> Result<Vec<PhaseTimes>, FftError> {
    let mut times = vec![PhaseTimes::default(); reps];
    for t in &mut times {
        comm.barrier();
        let f = fft.forward(rows, spectrum)?;
        let i = fft.inverse(spectrum, rows)?;
        *t = PhaseTimes {
            rows_s: f.rows_s + i.rows_s,
            redist_s: f.redist_s + i.redist_s,
            columns_s: f.columns_s + i.columns_s,
        };
    }
    Ok(times)
}

/// The median over the repetitions of the slowest rank's `stage` of `times`,
/// repetition by repetition (collective).
fn slowest_median(
    comm: &SimpleCommunicator,
    times: &[PhaseTimes],
    stage: fn(&PhaseTimes) -> f64,
) -> f64 {
    let mine: Vec<f64> = times.iter().map(stage).collect();
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
/// [`Fft2d::new`]: every rank returns the same.
pub fn run(world: &SimpleCommunicator, cfg: &FftConfig) -> Result<FftResult, FftError> {
    if cfg.reps == 0 {
        return Err(FftError::Parameter("reps must be at least 1".into()));
    }
    let (n, m) = (cfg.n, cfg.m);
    let mut fft = Fft2d::new(
        world,
        n,
        m,
        cfg.y_layout.clone(),
        cfg.x_layout.clone(),
        cfg.strategy,
        cfg.columns,
    )?;
    let waves = default_waves(n, m);
    let input = DistArray::from_fn(fft.row_grid(), fft.row_layout().clone(), |g| {
        wave_value(&waves, n, m, g[0], g[1])
    })?;
    let mut rows = input.clone();
    let mut spectrum = DistArray::zeros(fft.column_grid(), fft.column_layout().clone())?;
    let grid = fft.row_grid().clone();
    let comm = grid.communicator();

    // (a) and (b): the spectrum against the waves' and against a serial FFT.
    fft.forward(&mut rows, &mut spectrum)?;
    let max_error = spectrum_error(&spectrum, &waves)?;
    let spectrum_max = spectrum.max_abs()?;
    let serial_error = serial_error(comm, &input, &spectrum)?;

    // (c): the round trip.
    fft.inverse(&mut spectrum, &mut rows)?;
    let roundtrip_error = max_difference(&rows, &input)?;

    let times = timed_round_trips(&mut fft, &mut rows, &mut spectrum, cfg.reps, comm)?;
    let repeated_error = max_difference(&rows, &input)?;
    let time_s = slowest_median(comm, &times, PhaseTimes::total);
    let redist_s = slowest_median(comm, &times, |t| t.redist_s);
    let rows_s = slowest_median(comm, &times, |t| t.rows_s);
    let columns_s = slowest_median(comm, &times, |t| t.columns_s);
    Ok(FftResult {
        ranks: usize::try_from(world.size()).expect("a communicator has a positive size"),
        max_error,
        serial_error,
        roundtrip_error,
        repeated_error,
        spectrum_max,
        time_s,
        redist_s,
        rows_s,
        columns_s,
        strategies: fft.strategies(),
        bytes_moved: 2 * fft.elements_moved() * std::mem::size_of::<C64>(),
        layouts: (
            fft.row_layout().spec().to_string(),
            fft.column_layout().spec().to_string(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing() {
        assert_eq!(
            "scratch".parse::<ColumnStorage>().unwrap(),
            ColumnStorage::Scratch
        );
        assert_eq!(ColumnStorage::ColumnMajor.to_string(), "column-major");
        assert!("rows".parse::<ColumnStorage>().is_err());
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
