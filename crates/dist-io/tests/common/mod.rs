//! What the MPI test programs of dist-io share: the value every test
//! array holds at each global index, a deterministic generator, the
//! agreement check of error texts, and the file size limit that makes one
//! rank's writes fail.
#![allow(
    clippy::cast_possible_truncation,
    reason = "test values are small or cut on purpose"
)]

use dist_array::{Complex, Element};

/// A small deterministic generator: every rank draws the same cases.
pub struct Lcg(pub u64);

impl Lcg {
    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// The value of global C-order linear index `i` in every element type, as
/// the NumPy test computes it too.
pub trait Code: Element {
    /// The value at linear index `i`.
    fn code(i: usize) -> Self;
}

macro_rules! code {
    ($($t:ty => $e:expr),* $(,)?) => {
        $(impl Code for $t {
            fn code(i: usize) -> Self {
                let f: fn(usize) -> $t = $e;
                f(i)
            }
        })*
    };
}

code! {
    f32 => |i| (i % (1 << 24)) as f32,
    f64 => |i| i as f64,
    i32 => |i| i as i32 - 7,
    i64 => |i| i as i64 - 7,
    u8 => |i| (i % 251) as u8,
    u32 => |i| i as u32,
    u64 => |i| i as u64,
    Complex<f32> => |i| Complex::new((i % (1 << 24)) as f32, -((i % 1000) as f32)),
    Complex<f64> => |i| Complex::new(i as f64, -(i as f64)),
}

/// The C-order linear index of `g` in an array of `shape`.
pub fn linear(shape: &[usize], g: &[usize]) -> usize {
    g.iter().zip(shape).fold(0, |acc, (&x, &n)| acc * n + x)
}

pub use mpi_harness::same_everywhere;

/// Sets this process's limit on the size of files it writes
/// (`RLIMIT_FSIZE`) and ignores `SIGXFSZ`, so a write past it fails with
/// EFBIG instead of killing the process: a full disk seen by one rank
/// alone. `libc::RLIM_INFINITY` lifts it.
pub fn limit_file_size(bytes: u64) {
    let lim = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: plain system calls on this process's own limits and signal
    // disposition.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
    }
}
