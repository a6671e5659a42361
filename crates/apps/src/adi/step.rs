//! One Peaceman–Rachford step of the distributed solver: the explicit and
//! implicit halves on whole lines, a redistribution between them.

use super::explicit::{explicit_columns, explicit_rows};
use super::fields::Fields;
use super::mesh::Mesh;
use super::plans::Exchanges;
use super::tridiagonal::{solve_columns, solve_rows};
use super::views::{view2, view2_mut};
use super::AdiError;
use std::time::Instant;

/// One Peaceman–Rachford step of `fields`; returns its seconds of
/// (computation, redistribution).
pub(super) fn step(
    exchanges: &mut Exchanges,
    fields: &mut Fields,
    mesh: &Mesh,
) -> Result<(f64, f64), AdiError> {
    let (coef, r) = (&mesh.coef[..], mesh.r);
    let t0 = Instant::now();
    // y-term explicit on whole y-lines.
    explicit_rows(view2(&fields.u), view2_mut(&mut fields.w_y), r);
    let t1 = Instant::now();
    exchanges
        .to_x
        .execute_into_unchecked(&fields.w_y, &mut fields.w_x)?;
    let t2 = Instant::now();
    // x-systems on whole x-lines, then the x-term explicit.
    solve_columns(view2_mut(&mut fields.w_x), coef, r);
    explicit_columns(view2(&fields.w_x), view2_mut(&mut fields.v_x), r);
    let t3 = Instant::now();
    exchanges
        .to_y
        .execute_into_unchecked(&fields.v_x, &mut fields.u)?;
    let t4 = Instant::now();
    // y-systems on whole y-lines.
    solve_rows(view2_mut(&mut fields.u), coef, r);
    let t5 = Instant::now();
    let compute_s = (t1 - t0).as_secs_f64() + (t3 - t2).as_secs_f64() + (t5 - t4).as_secs_f64();
    let redist_s = (t2 - t1).as_secs_f64() + (t4 - t3).as_secs_f64();
    Ok((compute_s, redist_s))
}
