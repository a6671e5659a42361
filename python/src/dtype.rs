//! Element types numpy and ndcyclic share, and the dispatch from a numpy
//! dtype to the Rust type.

use crate::errors::Failure;
use num_complex::Complex;
use numpy::PyArrayDescr;
use numpy::PyArrayDescrMethods;
use pyo3::prelude::*;

/// An element type of both numpy and ndcyclic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// `float32`.
    F32,
    /// `float64`.
    F64,
    /// `complex64`.
    C64,
    /// `complex128`.
    C128,
    /// `int32`.
    I32,
    /// `int64`.
    I64,
    /// `uint8`.
    U8,
    /// `uint32`.
    U32,
    /// `uint64`.
    U64,
}

/// What the types are called in messages.
pub const NAMES: &str = "float32, float64, complex64, complex128, int32, int64, uint8, uint32 \
                         or uint64 (native byte order)";

impl DType {
    /// Every type, in a fixed order.
    pub const ALL: [DType; 9] = [
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U32,
        DType::U64,
    ];

    /// numpy's name.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
        }
    }

    /// The numpy dtype.
    pub fn descr(self, py: Python<'_>) -> Bound<'_, PyArrayDescr> {
        match self {
            DType::F32 => numpy::dtype::<f32>(py),
            DType::F64 => numpy::dtype::<f64>(py),
            DType::C64 => numpy::dtype::<Complex<f32>>(py),
            DType::C128 => numpy::dtype::<Complex<f64>>(py),
            DType::I32 => numpy::dtype::<i32>(py),
            DType::I64 => numpy::dtype::<i64>(py),
            DType::U8 => numpy::dtype::<u8>(py),
            DType::U32 => numpy::dtype::<u32>(py),
            DType::U64 => numpy::dtype::<u64>(py),
        }
    }

    /// The type of a numpy dtype (byte order included).
    ///
    /// # Errors
    ///
    /// `TypeError` for any other dtype.
    pub fn of(descr: &Bound<'_, PyArrayDescr>) -> Result<DType, Failure> {
        let py = descr.py();
        DType::ALL
            .into_iter()
            .find(|t| descr.is_equiv_to(&t.descr(py)))
            .ok_or_else(|| {
                Failure::type_error(format!(
                    "dtype {} is not supported; expected {NAMES}",
                    descr
                ))
            })
    }

    /// The type a dtype-like Python value names (`numpy.float64`, `"f8"`,
    /// `numpy.dtype(...)`, `complex`…), converted by `numpy.dtype`.
    ///
    /// # Errors
    ///
    /// `TypeError` when it names no dtype or one not supported.
    pub fn from_py(value: &Bound<'_, PyAny>) -> Result<DType, Failure> {
        let py = value.py();
        let descr = py
            .import("numpy")
            .and_then(|np| np.getattr("dtype"))
            .and_then(|dt| dt.call1((value,)))
            .map_err(|e| Failure::type_error(format!("not a dtype: {e}")))?;
        let descr = descr
            .downcast_into::<PyArrayDescr>()
            .map_err(|e| Failure::type_error(format!("not a dtype: {e}")))?;
        DType::of(&descr)
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        with_type!(self, T => std::mem::size_of::<T>())
    }

    /// Whether the type has the arithmetic of scaled updates (α, β).
    pub fn scales(self) -> bool {
        matches!(self, DType::F32 | DType::F64 | DType::C64 | DType::C128)
    }
}

/// Runs `$body` with `$T` the Rust type of `$dtype`.
macro_rules! with_type {
    ($dtype:expr, $T:ident => $body:expr) => {{
        use num_complex::Complex;
        match $dtype {
            $crate::dtype::DType::F32 => $crate::dtype::typed!($T = f32 => $body),
            $crate::dtype::DType::F64 => $crate::dtype::typed!($T = f64 => $body),
            $crate::dtype::DType::C64 => $crate::dtype::typed!($T = Complex<f32> => $body),
            $crate::dtype::DType::C128 => $crate::dtype::typed!($T = Complex<f64> => $body),
            $crate::dtype::DType::I32 => $crate::dtype::typed!($T = i32 => $body),
            $crate::dtype::DType::I64 => $crate::dtype::typed!($T = i64 => $body),
            $crate::dtype::DType::U8 => $crate::dtype::typed!($T = u8 => $body),
            $crate::dtype::DType::U32 => $crate::dtype::typed!($T = u32 => $body),
            $crate::dtype::DType::U64 => $crate::dtype::typed!($T = u64 => $body),
        }
    }};
}
pub(crate) use with_type;

/// `$body` with `$T` naming the type `$t` (one arm of [`with_type!`] and
/// [`each!`]).
macro_rules! typed {
    ($T:ident = $t:ty => $body:expr) => {{
        #[allow(dead_code, reason = "a body need not name its element type")]
        type $T = $t;
        $body
    }};
}
pub(crate) use typed;

/// Defines an enum of one variant per element type around a generic type
/// (`$name::F64(G<f64>)`…), with `dtype()`.
macro_rules! per_type {
    ($(#[$m:meta])* $name:ident, $G:ident) => {
        $(#[$m])*
        pub enum $name {
            /// `float32`.
            F32($G<f32>),
            /// `float64`.
            F64($G<f64>),
            /// `complex64`.
            C64($G<num_complex::Complex<f32>>),
            /// `complex128`.
            C128($G<num_complex::Complex<f64>>),
            /// `int32`.
            I32($G<i32>),
            /// `int64`.
            I64($G<i64>),
            /// `uint8`.
            U8($G<u8>),
            /// `uint32`.
            U32($G<u32>),
            /// `uint64`.
            U64($G<u64>),
        }

        impl $name {
            /// The element type.
            #[allow(dead_code, reason = "not every enum's element type is asked for")]
            pub fn dtype(&self) -> $crate::dtype::DType {
                match self {
                    $name::F32(_) => $crate::dtype::DType::F32,
                    $name::F64(_) => $crate::dtype::DType::F64,
                    $name::C64(_) => $crate::dtype::DType::C64,
                    $name::C128(_) => $crate::dtype::DType::C128,
                    $name::I32(_) => $crate::dtype::DType::I32,
                    $name::I64(_) => $crate::dtype::DType::I64,
                    $name::U8(_) => $crate::dtype::DType::U8,
                    $name::U32(_) => $crate::dtype::DType::U32,
                    $name::U64(_) => $crate::dtype::DType::U64,
                }
            }
        }
    };
}

pub(crate) use per_type;

/// Matches a [`per_type!`] enum, binding the inner value as `$v` (and its
/// element type as `$T`) in `$body`.
macro_rules! each {
    ($name:ident, $value:expr, $v:ident, $T:ident => $body:expr) => {{
        use num_complex::Complex;
        match $value {
            $name::F32($v) => $crate::dtype::typed!($T = f32 => $body),
            $name::F64($v) => $crate::dtype::typed!($T = f64 => $body),
            $name::C64($v) => $crate::dtype::typed!($T = Complex<f32> => $body),
            $name::C128($v) => $crate::dtype::typed!($T = Complex<f64> => $body),
            $name::I32($v) => $crate::dtype::typed!($T = i32 => $body),
            $name::I64($v) => $crate::dtype::typed!($T = i64 => $body),
            $name::U8($v) => $crate::dtype::typed!($T = u8 => $body),
            $name::U32($v) => $crate::dtype::typed!($T = u32 => $body),
            $name::U64($v) => $crate::dtype::typed!($T = u64 => $body),
        }
    }};
}
pub(crate) use each;

/// A value of a generic type into the [`per_type!`] variant of its
/// element type.
pub trait Wrap<G>: Sized {
    /// The variant holding `g`.
    fn wrap(g: G) -> Self;
}

/// Implements [`Wrap`] for a [`per_type!`] enum.
macro_rules! wrap_impls {
    ($name:ident, $G:ident) => {
        impl $crate::dtype::Wrap<$G<f32>> for $name {
            fn wrap(g: $G<f32>) -> Self {
                $name::F32(g)
            }
        }
        impl $crate::dtype::Wrap<$G<f64>> for $name {
            fn wrap(g: $G<f64>) -> Self {
                $name::F64(g)
            }
        }
        impl $crate::dtype::Wrap<$G<num_complex::Complex<f32>>> for $name {
            fn wrap(g: $G<num_complex::Complex<f32>>) -> Self {
                $name::C64(g)
            }
        }
        impl $crate::dtype::Wrap<$G<num_complex::Complex<f64>>> for $name {
            fn wrap(g: $G<num_complex::Complex<f64>>) -> Self {
                $name::C128(g)
            }
        }
        impl $crate::dtype::Wrap<$G<i32>> for $name {
            fn wrap(g: $G<i32>) -> Self {
                $name::I32(g)
            }
        }
        impl $crate::dtype::Wrap<$G<i64>> for $name {
            fn wrap(g: $G<i64>) -> Self {
                $name::I64(g)
            }
        }
        impl $crate::dtype::Wrap<$G<u8>> for $name {
            fn wrap(g: $G<u8>) -> Self {
                $name::U8(g)
            }
        }
        impl $crate::dtype::Wrap<$G<u32>> for $name {
            fn wrap(g: $G<u32>) -> Self {
                $name::U32(g)
            }
        }
        impl $crate::dtype::Wrap<$G<u64>> for $name {
            fn wrap(g: $G<u64>) -> Self {
                $name::U64(g)
            }
        }
    };
}
pub(crate) use wrap_impls;
