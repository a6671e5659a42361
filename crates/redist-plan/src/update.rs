//! Scale and accumulate: an execution that updates its target, `target :=
//! β·target + α·op(source)` with op the identity or the complex conjugate,
//! in the copies that write the target — no pass of its own
//! (the engine's `Redistribution::execute_update_into`).
//! What ScaLAPACK's `p?tran` and `p?geadd` compute, and COSTA's transform.
//!
//! With β = 0 the target is never read: whatever it holds (NaNs too) is
//! overwritten, as ScaLAPACK does.
//!
//! ```
//! use redist_plan::{Scalar, Update};
//! let u = Update::new(2.0f64, 3.0);
//! assert_eq!(u.apply(10.0, 1.0), 3.0 * 10.0 + 2.0 * 1.0);
//! let z = Update { alpha: redist_plan::Complex::new(1.0f64, 0.0), beta: Scalar::zero(), conjugate: true };
//! let v = z.apply(redist_plan::Complex::new(f64::NAN, 0.0), redist_plan::Complex::new(1.0, 2.0));
//! assert_eq!(v, redist_plan::Complex::new(1.0, -2.0)); // β = 0: the NaN is never read
//! ```

use crate::element::Element;
use crate::kernel::Store;
use num_complex::Complex;
use std::ops::{Add, Mul};

/// Element types an update can scale and add: real and complex floating
/// point (`f32`, `f64`, `Complex<f32>`, `Complex<f64>`), ScaLAPACK's
/// `s`, `d`, `c` and `z`.
pub trait Scalar: Element + Add<Output = Self> + Mul<Output = Self> {
    /// 0.
    fn zero() -> Self;
    /// 1.
    fn one() -> Self;
    /// The complex conjugate (the value itself for real numbers).
    fn conj(self) -> Self;
    /// The value as an `f64` where the type is `f64` (what lets copies
    /// update 8-byte elements with vector instructions), else `None`.
    fn as_f64(self) -> Option<f64> {
        None
    }
}

macro_rules! real_scalar {
    ($t:ty $(, $as_f64:expr)?) => {
        impl Scalar for $t {
            #[inline(always)]
            fn zero() -> Self {
                0.0
            }
            #[inline(always)]
            fn one() -> Self {
                1.0
            }
            #[inline(always)]
            fn conj(self) -> Self {
                self
            }
            $(
                #[inline(always)]
                fn as_f64(self) -> Option<f64> {
                    $as_f64(self)
                }
            )?
        }
    };
}

macro_rules! complex_scalar {
    ($t:ty) => {
        impl Scalar for Complex<$t> {
            #[inline(always)]
            fn zero() -> Self {
                Complex::new(0.0, 0.0)
            }
            #[inline(always)]
            fn one() -> Self {
                Complex::new(1.0, 0.0)
            }
            #[inline(always)]
            fn conj(self) -> Self {
                Complex::conj(&self)
            }
        }
    };
}

real_scalar!(f32);
real_scalar!(f64, Some);
complex_scalar!(f32);
complex_scalar!(f64);

/// An update of the target: `target := beta·target + alpha·op(source)`,
/// op the complex conjugate when `conjugate` is set, else the identity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Update<T> {
    /// α, the factor of the source.
    pub alpha: T,
    /// β, the factor of the target; 0 means the target is not read.
    pub beta: T,
    /// Whether op conjugates the source (complex elements).
    pub conjugate: bool,
}

impl<T: Scalar> Update<T> {
    /// `target := beta·target + alpha·source`.
    pub fn new(alpha: T, beta: T) -> Update<T> {
        Update {
            alpha,
            beta,
            conjugate: false,
        }
    }

    /// What the update makes of a target element `old` and a source
    /// element `v` (`old` is not used when β = 0).
    pub fn apply(&self, old: T, v: T) -> T {
        let v = if self.conjugate { v.conj() } else { v };
        if self.beta == T::zero() {
            self.alpha * v
        } else {
            self.beta * old + self.alpha * v
        }
    }

    /// Whether it stores the source as it is (α = 1, β = 0, no conjugate).
    pub fn is_plain(&self) -> bool {
        self.alpha == T::one() && self.beta == T::zero() && !self.conjugate
    }
}

/// An update with β = 0: the target is written, never read.
#[derive(Debug, Clone, Copy)]
pub struct Scale<T> {
    /// The factor α.
    pub alpha: T,
    /// Whether the source is conjugated first.
    pub conjugate: bool,
}

/// An update that reads the target: β ≠ 0.
#[derive(Debug, Clone, Copy)]
pub struct Accumulate<T> {
    /// The factor α of the source.
    pub alpha: T,
    /// The factor β of the target's old value.
    pub beta: T,
    /// Whether the source is conjugated first.
    pub conjugate: bool,
}

impl<T: Scalar> Store<T> for Scale<T> {
    const PLAIN: bool = false;

    #[inline(always)]
    fn f64_update(&self) -> Option<(f64, Option<f64>)> {
        self.alpha.as_f64().map(|a| (a, None))
    }

    #[inline(always)]
    unsafe fn put(&self, d: *mut T, v: T) {
        let v = if self.conjugate { v.conj() } else { v };
        // SAFETY: the caller's contract; the target is only written.
        unsafe { d.write(self.alpha * v) }
    }
}

impl<T: Scalar> Store<T> for Accumulate<T> {
    const PLAIN: bool = false;

    #[inline(always)]
    fn f64_update(&self) -> Option<(f64, Option<f64>)> {
        Some((self.alpha.as_f64()?, Some(self.beta.as_f64()?)))
    }

    #[inline(always)]
    unsafe fn put(&self, d: *mut T, v: T) {
        let v = if self.conjugate { v.conj() } else { v };
        // SAFETY: the caller's contract.
        unsafe { d.write(self.beta * d.read() + self.alpha * v) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_scale_accumulate_and_conjugate() {
        let u = Update::new(2.0f32, 0.5);
        assert_eq!(u.apply(4.0, 3.0), 2.0 + 6.0);
        assert!(Update::new(1.0f64, 0.0).is_plain());
        assert!(!Update::new(1.0f64, 1.0).is_plain());
        let c = |re, im| Complex::new(re, im);
        let z = Update {
            alpha: c(0.0f64, 1.0),
            beta: c(1.0, 0.0),
            conjugate: true,
        };
        // 1·(1+1i) + i·conj(2+3i) = 1+1i + i·(2-3i) = 1+1i + 3+2i
        assert_eq!(z.apply(c(1.0, 1.0), c(2.0, 3.0)), c(4.0, 3.0));
        let mut x = [f64::NAN];
        let s = Scale {
            alpha: 3.0f64,
            conjugate: false,
        };
        // SAFETY: a valid element of a local array.
        unsafe { s.put(x.as_mut_ptr(), 2.0) };
        assert_eq!(x[0], 6.0);
        let a = Accumulate {
            alpha: 3.0f64,
            beta: 2.0,
            conjugate: false,
        };
        // SAFETY: as above.
        unsafe { a.put(x.as_mut_ptr(), 1.0) };
        assert_eq!(x[0], 15.0);
    }
}
