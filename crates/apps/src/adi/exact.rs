//! The problem's two known fields: the initial one and the exact solution
//! it decays into.

use std::f64::consts::PI;

/// The initial field at (x, y).
pub(super) fn initial(x: f64, y: f64, two_modes: bool) -> f64 {
    let mut u = (PI * x).sin() * (PI * y).sin();
    if two_modes {
        u += 0.5 * (2.0 * PI * x).sin() * (3.0 * PI * y).sin();
    }
    u
}

/// The exact solution at (x, y, t).
pub(super) fn exact(x: f64, y: f64, t: f64, two_modes: bool) -> f64 {
    let mut u = (-2.0 * PI * PI * t).exp() * (PI * x).sin() * (PI * y).sin();
    if two_modes {
        u += 0.5 * (-13.0 * PI * PI * t).exp() * (2.0 * PI * x).sin() * (3.0 * PI * y).sin();
    }
    u
}
