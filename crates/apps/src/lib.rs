//! Applications written against ndcyclic's crates, shared by the examples
//! and tests of the workspace (not published):
//!
//! - [`adi`]: the ADI heat solver of `examples/adi.rs` — the distributed
//!   solver, its serial reference, and a heat-map of its field as RGB pixels;
//! - [`fft2d`]: the 2-D FFT of `examples/fft2d.rs` — the distributed forward
//!   and inverse transforms (rows, one redistribution, columns), plane waves
//!   with a known spectrum, and a serial reference;
//! - [`fft3d`]: the 3-D FFT of `examples/fft3d.rs` — the distributed forward
//!   and inverse transforms on pencils over a 2-D process grid (lines along
//!   x, y and z, two redistributions that permute the axes), plane waves
//!   with a known spectrum, and a serial reference.
//! - [`heat`]: the explicit heat solver of `examples/heat.rs` — a 2-D or
//!   3-D stencil on a block layout whose ghosts one update refreshes every
//!   step, the interior computed while they move, checked against the
//!   exact discrete solution of a Fourier mode;
//! - [`grid_choice`]: how the examples report a grid chosen by timing
//!   whole steps (`--grid auto`).
#![deny(missing_docs)]

pub mod adi;
pub mod fft2d;
pub mod fft3d;
pub mod grid_choice;
pub mod heat;
