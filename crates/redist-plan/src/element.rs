//! Element types a distributed array can hold.

use bytemuck::Pod;
use num_complex::Complex;
use std::fmt::Debug;

/// A type a distributed array (`dist_array::DistArray`) can hold: plain old data (moved as
/// bytes by MPI), shareable across rayon threads, with the little arithmetic
/// the collective reductions need.
///
/// Implemented for `f32`, `f64`, `i32`, `i64`, `u8`, `u32`, `u64`,
/// `Complex<f32>` and `Complex<f64>`.
///
/// ```
/// use redist_plan::Element;
/// assert_eq!(<u8 as Element>::add(250u64, 10u8), 260u64); // sums widen
/// assert_eq!((-3.0f64).modulus(), 3.0);
/// assert_eq!(<f32 as Element>::NAME, "f32");
/// ```
pub trait Element: Pod + Send + Sync + PartialEq + Debug {
    /// The type sums accumulate in: wide enough not to overflow or lose
    /// precision on ordinary arrays (`u8` sums in `u64`, `f32` in `f64`).
    type Sum: Pod + Send + Sync + PartialEq + Debug;

    /// Short type name, as the `redist` tool spells it.
    const NAME: &'static str;

    /// Adds `x` to a running sum.
    fn add(sum: Self::Sum, x: Self) -> Self::Sum;

    /// Adds two partial sums.
    fn combine(a: Self::Sum, b: Self::Sum) -> Self::Sum;

    /// Absolute value (modulus for complex numbers), as `f64`.
    fn modulus(self) -> f64;
}

macro_rules! real_element {
    ($t:ty, $sum:ty, $name:literal) => {
        impl Element for $t {
            type Sum = $sum;
            const NAME: &'static str = $name;
            #[inline]
            fn add(sum: $sum, x: $t) -> $sum {
                sum + x as $sum
            }
            #[inline]
            fn combine(a: $sum, b: $sum) -> $sum {
                a + b
            }
            #[inline]
            fn modulus(self) -> f64 {
                (self as f64).abs()
            }
        }
    };
}

real_element!(f32, f64, "f32");
real_element!(f64, f64, "f64");
real_element!(i32, i64, "i32");
real_element!(i64, i128, "i64");
real_element!(u8, u64, "u8");
real_element!(u32, u64, "u32");
real_element!(u64, u128, "u64");

macro_rules! complex_element {
    ($t:ty, $name:literal) => {
        impl Element for Complex<$t> {
            type Sum = Complex<f64>;
            const NAME: &'static str = $name;
            #[inline]
            fn add(sum: Complex<f64>, x: Complex<$t>) -> Complex<f64> {
                Complex::new(sum.re + x.re as f64, sum.im + x.im as f64)
            }
            #[inline]
            fn combine(a: Complex<f64>, b: Complex<f64>) -> Complex<f64> {
                a + b
            }
            #[inline]
            fn modulus(self) -> f64 {
                (self.re as f64).hypot(self.im as f64)
            }
        }
    };
}

complex_element!(f32, "c32");
complex_element!(f64, "c64");
