//! The explicit step of the heat equation on padded storage:
//! `v = u + r Σ_d (u[+e_d] - 2u + u[-e_d])`, the (2·d+1)-point stencil, over
//! a region of the interior, line by line along the fastest axis, each
//! line fused (one pass reads the stencil's lines and writes one).
//!
//! An update is split around the sweep: the *deep* interior (cells whose
//! stencil reads no ghost) is computed while ghosts move, the *rim* (the
//! rest) after they arrived ([`rim`]).

use rayon::prelude::*;
use std::ops::Range;

/// The padded storage of one rank, row-major: its shape and the ghost
/// width (1 on every axis).
#[derive(Debug, Clone)]
pub struct Padded {
    /// Extents per axis, ghosts included.
    pub shape: Vec<usize>,
    strides: Vec<usize>,
}

impl Padded {
    /// Row-major storage of `shape`.
    pub fn new(shape: &[usize]) -> Padded {
        let mut strides = vec![1; shape.len()];
        for d in (0..shape.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * shape[d + 1];
        }
        Padded {
            shape: shape.to_vec(),
            strides,
        }
    }

    /// The interior's padded ranges (the ghost width is 1).
    pub fn interior(&self) -> Vec<Range<usize>> {
        self.shape.iter().map(|&p| 1..p.saturating_sub(1)).collect()
    }

    /// The deep interior: one cell in from the interior on every side
    /// but along the `ready` axes (whose ghosts are there already), where
    /// it is the whole interior.
    pub fn deep(&self, ready: &[bool]) -> Vec<Range<usize>> {
        (self.shape.iter().zip(ready))
            .map(|(&p, &r)| match r {
                true => 1..p.saturating_sub(1),
                false => 2..p.saturating_sub(2).max(2),
            })
            .collect()
    }
}

/// The interior minus the deep interior ([`Padded::deep`] of `ready`),
/// as disjoint boxes: per axis `d` not ready, the first and last interior
/// slab along `d`, deep along the axes before it, whole along the axes
/// after it.
pub fn rim(p: &Padded, ready: &[bool]) -> Vec<Vec<Range<usize>>> {
    let (inner, deep) = (p.interior(), p.deep(ready));
    let n = p.shape.len();
    let mut boxes = Vec::new();
    if inner.iter().any(|r| r.is_empty()) {
        return Vec::new();
    }
    for d in 0..n {
        if ready[d] {
            continue;
        }
        let (first, last) = (inner[d].start, inner[d].end - 1);
        let mut slabs = Vec::with_capacity(2);
        slabs.push(first..first + 1);
        if last > first {
            slabs.push(last..last + 1);
        }
        for slab in slabs {
            let b: Vec<Range<usize>> = (0..n)
                .map(|e| match e.cmp(&d) {
                    std::cmp::Ordering::Less => deep[e].clone(),
                    std::cmp::Ordering::Equal => slab.clone(),
                    std::cmp::Ordering::Greater => inner[e].clone(),
                })
                .collect();
            if b.iter().all(|r| !r.is_empty()) {
                boxes.push(b);
            }
        }
    }
    boxes
}

/// One explicit step over `region` (padded ranges) of `u` into `v` (both
/// padded as `p`, 2-D or 3-D), `r = dt / h²`. Parallel over the outermost
/// axis.
pub fn step(p: &Padded, u: &[f64], v: &mut [f64], region: &[Range<usize>], r: f64) {
    let n = p.shape.len();
    let s = &p.strides;
    let lines = region[n - 1].clone();
    if region.iter().any(|x| x.is_empty()) {
        return;
    }
    let centre = 1.0 - 2.0 * n as f64 * r;
    let plane = s[0];
    v.par_chunks_mut(plane)
        .enumerate()
        .filter(|(i, _)| region[0].contains(i))
        .for_each(|(i, out)| {
            let rows: Vec<usize> = if n == 3 {
                region[1].clone().collect()
            } else {
                vec![0]
            };
            if lines.len() == 1 {
                // A slab one cell thick along the fastest axis: cell by
                // cell, without a line's slices (the same sums, in the
                // same order, as the lines below).
                let k = lines.start;
                let (s0, s1) = (s[0], if n == 3 { s[1] } else { 0 });
                for j in rows {
                    let at = i * s0 + j * s1 + k;
                    let sides = u[at - 1] + u[at + 1] + u[at - s0] + u[at + s0];
                    out[at - i * s0] = if n == 3 {
                        centre * u[at] + r * (sides + u[at - s1] + u[at + s1])
                    } else {
                        centre * u[at] + r * sides
                    };
                }
                return;
            }
            for j in rows {
                let at = i * s[0] + if n == 3 { j * s[1] } else { 0 };
                let line = |off: isize| {
                    let start = (at as isize + off) as usize;
                    &u[start + lines.start..start + lines.end]
                };
                // The line, its neighbours along the fastest axis, along
                // the outermost, and (3-D) along the middle one.
                let (c, fast_lo, fast_hi) = (line(0), line(-1), line(1));
                let (outer_lo, outer_hi) = (line(-(s[0] as isize)), line(s[0] as isize));
                let o = &mut out[at - i * s[0] + lines.start..at - i * s[0] + lines.end];
                if n == 3 {
                    let (mid_lo, mid_hi) = (line(-(s[1] as isize)), line(s[1] as isize));
                    for k in 0..o.len() {
                        let sides = fast_lo[k] + fast_hi[k] + outer_lo[k] + outer_hi[k];
                        o[k] = centre * c[k] + r * (sides + mid_lo[k] + mid_hi[k]);
                    }
                } else {
                    for k in 0..o.len() {
                        let sides = fast_lo[k] + fast_hi[k] + outer_lo[k] + outer_hi[k];
                        o[k] = centre * c[k] + r * sides;
                    }
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The deep interior and the rim cover the interior once.
    #[test]
    fn deep_and_rim_cover_the_interior_once() {
        for (shape, ready) in [
            (vec![6, 7], vec![false, false]),
            (vec![3, 5], vec![false, true]),
            (vec![5, 4, 6], vec![false, false, false]),
            (vec![5, 4, 6], vec![false, true, true]),
            (vec![3, 3, 3], vec![true, false, true]),
            (vec![4, 3], vec![false, false]),
        ] {
            let p = Padded::new(&shape);
            let mut count = vec![0u8; shape.iter().product()];
            let mut mark = |b: &[Range<usize>]| {
                let mut idx = vec![0; b.len()];
                let total: usize = b.iter().map(|r| r.len()).product();
                for mut k in 0..total {
                    for d in (0..b.len()).rev() {
                        idx[d] = b[d].start + k % b[d].len();
                        k /= b[d].len();
                    }
                    let at: usize = idx.iter().zip(&shape).fold(0, |f, (&i, &n)| f * n + i);
                    count[at] += 1;
                }
            };
            let deep = p.deep(&ready);
            if deep.iter().all(|r| !r.is_empty()) {
                mark(&deep);
            }
            for b in rim(&p, &ready) {
                mark(&b);
            }
            let inner = p.interior();
            for (at, &c) in count.iter().enumerate() {
                let mut rest = at;
                let mut inside = true;
                for d in (0..shape.len()).rev() {
                    inside &= inner[d].contains(&(rest % shape[d]));
                    rest /= shape[d];
                }
                assert_eq!(c, u8::from(inside), "{shape:?} cell {at}");
            }
        }
    }
}
