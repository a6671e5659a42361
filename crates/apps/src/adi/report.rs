//! What a run reports of its final field: its errors against the exact
//! solution and its checksum, agreed by every rank, and the field itself
//! on rank 0.

use super::exact::exact;
use super::views::view2;
use super::AdiError;
use dist_array::{DistArray, Layout};
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use ndarray::{Array2, Ix2};

/// FNV-1a 64 over the little-endian bytes of `values`.
///
/// ```
/// assert_eq!(apps::adi::fnv1a64(&[]), 0xcbf29ce484222325);
/// ```
pub fn fnv1a64(values: &[f64]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for v in values {
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// This rank's largest error and sum of squared errors of `u` (on `layout`)
/// against the exact solution at time `t`; zeros on a rank outside the grid.
pub(super) fn local_errors(
    u: &DistArray<f64>,
    layout: &Layout,
    h: f64,
    t: f64,
    two_modes: bool,
) -> Result<(f64, f64), AdiError> {
    let (mut max_e, mut sum_e2) = (0.0f64, 0.0f64);
    if let Some(rank) = u.rank() {
        let coords = layout.coords_of_rank(rank)?;
        let gi = layout.axis(0).local_to_global_table(coords[0]);
        let gj = layout.axis(1).local_to_global_table(coords[1]);
        let u = view2(u);
        for (li, &i) in gi.iter().enumerate() {
            for (lj, &j) in gj.iter().enumerate() {
                let reference = exact((i + 1) as f64 * h, (j + 1) as f64 * h, t, two_modes);
                let e = (u[[li, lj]] - reference).abs();
                max_e = max_e.max(e);
                sum_e2 += e * e;
            }
        }
    }
    Ok((max_e, sum_e2))
}

/// The (max-norm, discrete L2) errors from every rank's [`local_errors`],
/// the same on every rank (collective).
pub(super) fn agreed_errors(comm: &SimpleCommunicator, local: (f64, f64), h: f64) -> (f64, f64) {
    let (max_e, sum_e2) = local;
    let mut max_error = 0.0f64;
    comm.all_reduce_into(&max_e, &mut max_error, SystemOperation::max());
    let mut total = 0.0f64;
    comm.all_reduce_into(&sum_e2, &mut total, SystemOperation::sum());
    (max_error, (h * h * total).sqrt())
}

/// The field `u` gathered on rank 0 (`None` elsewhere) and its checksum,
/// which every rank receives (collective).
pub(super) fn gather_field(
    u: &DistArray<f64>,
    comm: &SimpleCommunicator,
) -> Result<(Option<Array2<f64>>, u64), AdiError> {
    let field = u
        .gather(0)?
        .map(|f| f.into_dimensionality::<Ix2>().expect("2-D field"));
    let mut checksum = field.as_ref().map_or(0, |f| {
        fnv1a64(f.as_standard_layout().as_slice().expect("contiguous"))
    });
    comm.process_at_rank(0).broadcast_into(&mut checksum);
    Ok((field, checksum))
}
