//! The value of every element: the source holds a value derived from its
//! global linear index ([`IndexValue`]), the target outside a window holds
//! [`IndexValue::untouched`], and `--verify` checks every element of the
//! result against them ([`all_as_expected`]).

use crate::collective::sum_over;
use crate::error::CliError;
use dist_array::{Complex, DistArray, Element, Layout};
use mpi::topology::SimpleCommunicator;
use procgrid::ProcGrid;
use redist::Window;

/// A value for every global linear index, per element type: what the source
/// holds and what `--verify` expects to find.
pub(crate) trait IndexValue: Element {
    /// The value of the element with global linear index `i`.
    fn index_value(i: usize) -> Self;
    /// A value no small index maps to: what the target holds outside a
    /// window.
    fn untouched() -> Self;
}

impl IndexValue for f32 {
    fn untouched() -> Self {
        -1.0
    }
    fn index_value(i: usize) -> Self {
        (i % (1 << 24)) as f32
    }
}
impl IndexValue for f64 {
    fn untouched() -> Self {
        -1.0
    }
    fn index_value(i: usize) -> Self {
        i as f64
    }
}
impl IndexValue for Complex<f64> {
    fn untouched() -> Self {
        Complex::new(-1.0, 1.0)
    }
    fn index_value(i: usize) -> Self {
        Complex::new(i as f64, -(i as f64))
    }
}
impl IndexValue for i32 {
    fn untouched() -> Self {
        -1
    }
    #[allow(clippy::cast_possible_truncation, reason = "values wrap on purpose")]
    fn index_value(i: usize) -> Self {
        i as i32
    }
}
impl IndexValue for u8 {
    fn untouched() -> Self {
        255
    }
    #[allow(clippy::cast_possible_truncation, reason = "below 251")]
    fn index_value(i: usize) -> Self {
        (i % 251) as u8
    }
}

impl IndexValue for i64 {
    fn untouched() -> Self {
        -1
    }
    #[allow(clippy::cast_possible_wrap, reason = "values wrap on purpose")]
    fn index_value(i: usize) -> Self {
        i as i64
    }
}
impl IndexValue for u32 {
    fn untouched() -> Self {
        u32::MAX
    }
    #[allow(clippy::cast_possible_truncation, reason = "values wrap on purpose")]
    fn index_value(i: usize) -> Self {
        i as u32
    }
}
impl IndexValue for u64 {
    fn untouched() -> Self {
        u64::MAX
    }
    fn index_value(i: usize) -> Self {
        i as u64
    }
}
impl IndexValue for Complex<f32> {
    fn untouched() -> Self {
        Complex::new(-1.0, 1.0)
    }
    fn index_value(i: usize) -> Self {
        let x = (i % (1 << 24)) as f32;
        Complex::new(x, -x)
    }
}

/// Element types a run can update (`--alpha`, `--beta`, `--conjugate`).
pub(super) trait Updated: IndexValue + redist::Scalar {
    /// The element of real value `x`.
    fn real(x: f64) -> Self;
}

impl Updated for f32 {
    #[allow(clippy::cast_possible_truncation, reason = "factors of an update")]
    fn real(x: f64) -> Self {
        x as f32
    }
}
impl Updated for f64 {
    fn real(x: f64) -> Self {
        x
    }
}
impl Updated for Complex<f64> {
    fn real(x: f64) -> Self {
        Complex::new(x, 0.0)
    }
}

/// Global linear index (row-major) of a global index.
pub(crate) fn linear(shape: &[usize], g: &[usize]) -> usize {
    g.iter().zip(shape).fold(0, |acc, (&x, &n)| acc * n + x)
}

/// The source array on `grid`: every element holds the value of its global
/// linear index.
pub(crate) fn source<T: IndexValue>(
    grid: &ProcGrid,
    layout: &Layout,
    batch: usize,
) -> Result<DistArray<T>, CliError> {
    let shape = layout.shape();
    let offset = batch * layout.len();
    Ok(DistArray::from_fn(grid, layout.clone(), |g| {
        T::index_value(linear(shape, g) + offset)
    })?)
}

/// The target array on `grid`: zeros when the whole array moves and is
/// overwritten, else [`IndexValue::untouched`] everywhere, which the window
/// overwrites (or an update reads).
pub(crate) fn target<T: IndexValue>(
    grid: &ProcGrid,
    layout: &Layout,
    window: Option<&Window>,
    updates: bool,
) -> Result<DistArray<T>, CliError> {
    Ok(match window {
        None if !updates => DistArray::zeros(grid, layout.clone())?,
        _ => DistArray::from_fn(grid, layout.clone(), |_| T::untouched())?,
    })
}

/// What a run moved, as the check of its result needs it: `window` (the
/// whole array when `None`) of a source of shape `shape` made by
/// [`source`], its axes permuted as `permutation` says.
#[derive(Clone, Copy)]
pub(crate) struct Moved<'a> {
    /// The source array's shape.
    pub shape: &'a [usize],
    /// The window moved; the whole array when `None`.
    pub window: Option<&'a Window>,
    /// Source dimension `d` onto target dimension `permutation[d]`; the
    /// axes kept in order when `None`.
    pub permutation: Option<&'a [usize]>,
}

/// Whether every element of `dst`, on every rank, holds what it should
/// after the run that `moved` describes, each moved source value `v`
/// stored as `stored(v)` (itself, or an update of [`target`]'s value);
/// the source is array `batch` of a batch ([`source`]). Collective over
/// `comm`.
pub(crate) fn all_as_expected<T: IndexValue>(
    comm: &SimpleCommunicator,
    dst: &DistArray<T>,
    moved: Moved<'_>,
    stored: &(dyn Fn(T) -> T + Sync),
    batch: usize,
) -> bool {
    let Moved {
        shape,
        window,
        permutation,
    } = moved;
    let offset = batch * shape.iter().product::<usize>();
    let linear = |shape: &[usize], g: &[usize]| linear(shape, g) + offset;
    // Global indices computed block by block: no table per local index.
    let expected = |g: &[usize]| match (window, permutation) {
        (_, Some(p)) => {
            let i: Vec<usize> = p.iter().map(|&a| g[a]).collect();
            stored(T::index_value(linear(shape, &i)))
        }
        (None, None) => stored(T::index_value(linear(shape, g))),
        (Some(w), None) => w
            .source_index_of(g)
            .map_or_else(T::untouched, |s| stored(T::index_value(linear(shape, &s)))),
    };
    let bad = dst.count_where(|g, v| *v != expected(g)) as u64;
    sum_over(comm, bad) == 0
}
