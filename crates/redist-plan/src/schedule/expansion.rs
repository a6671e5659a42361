//! The closed-form schedule of Walker and Otto for enlarging the block size,
//! CYCLIC(r) → CYCLIC(K·r) on the same P processes: K steps, each a
//! permutation of the processes, with no graph at all.
//!
//! Test support: no product code schedules with it. The tests check that it
//! reproduces the schedules printed in seed 001 (P = 4, K = 3 and P = 16,
//! K = 12), and use it as a referee of the plans: the schedule of a plan
//! from CYCLIC(r) to CYCLIC(K·r) never needs more than its K steps.

use crate::error::PlanError;

/// The closed-form schedule of Walker and Otto (1996, seed 001, §2.2.2–2.2.3)
/// for enlarging the block size of a block-cyclic distribution by a factor
/// K on P processes: CYCLIC(r) → CYCLIC(K·r).
///
/// Number the blocks of size r globally. Block B lives on process
/// `p = B mod P` as local block `b = B / P`, and after the change it lives on
/// process `q = (B / K) mod P` in slot `t = B mod K` of its larger block
/// (eq. 3). The pattern repeats every P·K blocks (a *superblock*), so one
/// superblock, `0 <= B < P·K`, describes all of it (eq. 4): each process
/// sends K blocks, one per step, and receives K blocks, one per step.
///
/// The schedule has K steps. In step k, process p sends block `B(k,p)` to
/// `q(k,p)`, and process q receives block `C(k,q)` from `p(k,q)`. Every step
/// is a permutation of the processes — each sends exactly one block and
/// receives exactly one — for every P and K, so there are neither hot spots
/// nor waiting. Some pairs of a step are local (`q(k,p) == p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExpansionSchedule {
    /// P, the number of processes.
    processes: usize,
    /// K, the factor by which the block size grows.
    factor: usize,
    /// g = gcd(P, K).
    gcd: usize,
    /// P' = P / g.
    reduced_processes: usize,
    /// K' = K / g.
    reduced_factor: usize,
    /// The inverse of K' modulo P' (0 when P' = 1).
    factor_inverse: usize,
}

/// What one process sends in one step of an [`ExpansionSchedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SendEntry {
    /// B(k,p): the global index of the block sent, within the first
    /// superblock (`0 <= block < P·K`).
    pub block: usize,
    /// q(k,p) = (B / K) mod P: the process it goes to.
    pub destination: usize,
    /// b(k,p) = B / P: its local index on the sender, within the superblock.
    pub local_block: usize,
}

/// What one process receives in one step of an [`ExpansionSchedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReceiveEntry {
    /// C(k,q): the global index of the block received, within the first
    /// superblock (`0 <= block < P·K`).
    pub block: usize,
    /// p(k,q) = C mod P: the process it comes from.
    pub source: usize,
    /// t(k,q) = C mod K: the slot of the receiver's larger block it goes to.
    pub slot: usize,
}

/// The closed-form schedule for CYCLIC(r) → CYCLIC(`factor`·r) on
/// `processes` processes (Walker and Otto 1996, seed 001); see
/// [`ExpansionSchedule`].
///
/// # Errors
///
/// - [`PlanError::InvalidArgument`] when `processes` or `factor` is zero, or when
///   `processes · factor` does not fit in `usize`.
pub fn expansion(processes: usize, factor: usize) -> Result<ExpansionSchedule, PlanError> {
    let positive = |what, value: usize| {
        if value == 0 {
            Err(PlanError::InvalidArgument {
                what,
                value: value.to_string(),
                expected: "a positive integer".to_string(),
            })
        } else {
            Ok(())
        }
    };
    positive("process count", processes)?;
    positive("block-size factor", factor)?;
    if processes.checked_mul(factor).is_none() {
        return Err(PlanError::InvalidArgument {
            what: "process count and block-size factor",
            value: format!("{processes} x {factor}"),
            expected: "a product that fits in usize".to_string(),
        });
    }
    let (gcd, _, _) = extended_gcd(processes as i128, factor as i128);
    let gcd = gcd as usize;
    let (reduced_processes, reduced_factor) = (processes / gcd, factor / gcd);
    // x with x·K' + y·P' = 1; then x is the inverse of K' modulo P'.
    let (_, x, _) = extended_gcd(reduced_factor as i128, reduced_processes as i128);
    let factor_inverse = x.rem_euclid(reduced_processes as i128) as usize;
    Ok(ExpansionSchedule {
        processes,
        factor,
        gcd,
        reduced_processes,
        reduced_factor,
        factor_inverse,
    })
}

/// `(g, x, y)` with `g = gcd(a, b) = x·a + y·b`, for `a, b >= 0`.
fn extended_gcd(a: i128, b: i128) -> (i128, i128, i128) {
    let (mut r0, mut r1) = (a, b);
    let (mut x0, mut x1) = (1, 0);
    let (mut y0, mut y1) = (0, 1);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (x0, x1) = (x1, x0 - q * x1);
        (y0, y1) = (y1, y0 - q * y1);
    }
    (r0, x0, y0)
}

impl ExpansionSchedule {
    /// P, the number of processes.
    pub fn processes(&self) -> usize {
        self.processes
    }

    /// K, the factor by which the block size grows.
    pub fn factor(&self) -> usize {
        self.factor
    }

    /// g = gcd(P, K): the side of the permutation blocks the schedule is
    /// made of.
    pub fn gcd(&self) -> usize {
        self.gcd
    }

    /// The number of steps, K.
    pub fn step_count(&self) -> usize {
        self.factor
    }

    /// The block of the *reduced system* (P' = P/g processes, factor
    /// K' = K/g, which are coprime) sent in reduced step `k'` by reduced
    /// process `p'`: the unique `B'` in `0..P'·K'` with
    /// `B' = q'·K' + k' = b'·P' + p'` (seed 001, eq. 7). Walker and Otto
    /// solve it with the extended Euclid algorithm, `x·K' + y·P' = 1`,
    /// `q' = λx + P'z`, `λ = p' − k'`; reducing modulo P' gives
    /// `q' = (p' − k')·x mod P'` directly.
    fn reduced_block(&self, k1: usize, p1: usize) -> usize {
        let pp = self.reduced_processes;
        let lambda = (p1 % pp + pp - k1 % pp) % pp;
        let q1 = (lambda as u128 * self.factor_inverse as u128 % pp as u128) as usize;
        q1 * self.reduced_factor + k1
    }

    /// What process `process` sends in step `step`, or `None` if
    /// `step >= K` or `process >= P`.
    ///
    /// With `g = gcd(P,K)`, `k = g·k' + γ` and `p = g·p' + α`, the block is
    /// `B(k,p) = g·B'(k',p') + P·K'·β + α` (seed 001, eq. 8) with
    /// `β = (α − γ) mod g` (eqs. 9–10, the layout of Fig. 7(a)): each entry
    /// of the reduced schedule grows into a g×g permutation block. The paper
    /// prints the result for P = 16, K = 12 in Fig. 8.
    pub fn send(&self, step: usize, process: usize) -> Option<SendEntry> {
        if step >= self.factor || process >= self.processes {
            return None;
        }
        let g = self.gcd;
        let (k1, gamma) = (step / g, step % g);
        let (p1, alpha) = (process / g, process % g);
        let beta = (alpha + g - gamma) % g;
        let block =
            g * self.reduced_block(k1, p1) + self.processes * self.reduced_factor * beta + alpha;
        Some(SendEntry {
            block,
            destination: (block / self.factor) % self.processes,
            local_block: block / self.processes,
        })
    }

    /// What process `process` receives in step `step`, or `None` if
    /// `step >= K` or `process >= P`.
    ///
    /// `C(k,q) = K·q + g·⌊k/g⌋ + ((⌊q/P'⌋ + k mod g) mod g)`. This is eq. 11
    /// of seed 001 as stated in its Appendix B (the printed eq. 11 is
    /// garbled: `q|k/q|` there should read `g⌊k/g⌋`). It follows from the
    /// send side: writing `q = β·P' + q'`, the block that reaches q in step
    /// k is `K·q + g·k' + α` with `α = (β + γ) mod g`, i.e. `C(k,q) = B(k,p)`
    /// for the one p with `q(k,p) = q` (compatibility, eq. 12). The tests
    /// check this against the inverse of [`send`](Self::send) for many P
    /// and K, and against the paper's Fig. 9.
    pub fn receive(&self, step: usize, process: usize) -> Option<ReceiveEntry> {
        if step >= self.factor || process >= self.processes {
            return None;
        }
        let g = self.gcd;
        let alpha = (process / self.reduced_processes + step % g) % g;
        let block = self.factor * process + g * (step / g) + alpha;
        Some(ReceiveEntry {
            block,
            source: block % self.processes,
            slot: block % self.factor,
        })
    }

    /// For each of the K steps, the `(source, destination)` pair of every
    /// process, sources in order `0..P`. Each step is a permutation of the
    /// processes; pairs with `source == destination` are local copies.
    pub fn step_pairs(&self) -> Vec<Vec<(usize, usize)>> {
        (0..self.factor)
            .map(|k| {
                (0..self.processes)
                    .filter_map(|p| self.send(k, p).map(|e| (p, e.destination)))
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use crate::options::Remap;
    use crate::whole::Plan;
    use quickcheck::quickcheck;
    use std::collections::BTreeSet;

    /// Seed 001, Fig. 6: P' = 4, K' = 3 (rows: step, columns: process).
    const FIG6_BLOCK: [[usize; 4]; 3] = [[0, 9, 6, 3], [4, 1, 10, 7], [8, 5, 2, 11]];
    const FIG6_PROCESS: [[usize; 4]; 3] = [[0, 3, 2, 1], [1, 0, 3, 2], [2, 1, 0, 3]];
    const FIG6_LOCAL: [[usize; 4]; 3] = [[0, 2, 1, 0], [1, 0, 2, 1], [2, 1, 0, 2]];

    // Seed 001, Fig. 8 (send side) and Fig. 9 (receive side): P = 16, K = 12.
    const FIG8_BLOCK: [[usize; 16]; 12] = [
        [
            0, 49, 98, 147, 36, 85, 134, 183, 24, 73, 122, 171, 12, 61, 110, 159,
        ],
        [
            144, 1, 50, 99, 180, 37, 86, 135, 168, 25, 74, 123, 156, 13, 62, 111,
        ],
        [
            96, 145, 2, 51, 132, 181, 38, 87, 120, 169, 26, 75, 108, 157, 14, 63,
        ],
        [
            48, 97, 146, 3, 84, 133, 182, 39, 72, 121, 170, 27, 60, 109, 158, 15,
        ],
        [
            16, 65, 114, 163, 4, 53, 102, 151, 40, 89, 138, 187, 28, 77, 126, 175,
        ],
        [
            160, 17, 66, 115, 148, 5, 54, 103, 184, 41, 90, 139, 172, 29, 78, 127,
        ],
        [
            112, 161, 18, 67, 100, 149, 6, 55, 136, 185, 42, 91, 124, 173, 30, 79,
        ],
        [
            64, 113, 162, 19, 52, 101, 150, 7, 88, 137, 186, 43, 76, 125, 174, 31,
        ],
        [
            32, 81, 130, 179, 20, 69, 118, 167, 8, 57, 106, 155, 44, 93, 142, 191,
        ],
        [
            176, 33, 82, 131, 164, 21, 70, 119, 152, 9, 58, 107, 188, 45, 94, 143,
        ],
        [
            128, 177, 34, 83, 116, 165, 22, 71, 104, 153, 10, 59, 140, 189, 46, 95,
        ],
        [
            80, 129, 178, 35, 68, 117, 166, 23, 56, 105, 154, 11, 92, 141, 190, 47,
        ],
    ];
    const FIG8_PROCESS: [[usize; 16]; 12] = [
        [0, 4, 8, 12, 3, 7, 11, 15, 2, 6, 10, 14, 1, 5, 9, 13],
        [12, 0, 4, 8, 15, 3, 7, 11, 14, 2, 6, 10, 13, 1, 5, 9],
        [8, 12, 0, 4, 11, 15, 3, 7, 10, 14, 2, 6, 9, 13, 1, 5],
        [4, 8, 12, 0, 7, 11, 15, 3, 6, 10, 14, 2, 5, 9, 13, 1],
        [1, 5, 9, 13, 0, 4, 8, 12, 3, 7, 11, 15, 2, 6, 10, 14],
        [13, 1, 5, 9, 12, 0, 4, 8, 15, 3, 7, 11, 14, 2, 6, 10],
        [9, 13, 1, 5, 8, 12, 0, 4, 11, 15, 3, 7, 10, 14, 2, 6],
        [5, 9, 13, 1, 4, 8, 12, 0, 7, 11, 15, 3, 6, 10, 14, 2],
        [2, 6, 10, 14, 1, 5, 9, 13, 0, 4, 8, 12, 3, 7, 11, 15],
        [14, 2, 6, 10, 13, 1, 5, 9, 12, 0, 4, 8, 15, 3, 7, 11],
        [10, 14, 2, 6, 9, 13, 1, 5, 8, 12, 0, 4, 11, 15, 3, 7],
        [6, 10, 14, 2, 5, 9, 13, 1, 4, 8, 12, 0, 7, 11, 15, 3],
    ];
    const FIG8_LOCAL: [[usize; 16]; 12] = [
        [0, 3, 6, 9, 2, 5, 8, 11, 1, 4, 7, 10, 0, 3, 6, 9],
        [9, 0, 3, 6, 11, 2, 5, 8, 10, 1, 4, 7, 9, 0, 3, 6],
        [6, 9, 0, 3, 8, 11, 2, 5, 7, 10, 1, 4, 6, 9, 0, 3],
        [3, 6, 9, 0, 5, 8, 11, 2, 4, 7, 10, 1, 3, 6, 9, 0],
        [1, 4, 7, 10, 0, 3, 6, 9, 2, 5, 8, 11, 1, 4, 7, 10],
        [10, 1, 4, 7, 9, 0, 3, 6, 11, 2, 5, 8, 10, 1, 4, 7],
        [7, 10, 1, 4, 6, 9, 0, 3, 8, 11, 2, 5, 7, 10, 1, 4],
        [4, 7, 10, 1, 3, 6, 9, 0, 5, 8, 11, 2, 4, 7, 10, 1],
        [2, 5, 8, 11, 1, 4, 7, 10, 0, 3, 6, 9, 2, 5, 8, 11],
        [11, 2, 5, 8, 10, 1, 4, 7, 9, 0, 3, 6, 11, 2, 5, 8],
        [8, 11, 2, 5, 7, 10, 1, 4, 6, 9, 0, 3, 8, 11, 2, 5],
        [5, 8, 11, 2, 4, 7, 10, 1, 3, 6, 9, 0, 5, 8, 11, 2],
    ];
    const FIG9_BLOCK: [[usize; 16]; 12] = [
        [
            0, 12, 24, 36, 49, 61, 73, 85, 98, 110, 122, 134, 147, 159, 171, 183,
        ],
        [
            1, 13, 25, 37, 50, 62, 74, 86, 99, 111, 123, 135, 144, 156, 168, 180,
        ],
        [
            2, 14, 26, 38, 51, 63, 75, 87, 96, 108, 120, 132, 145, 157, 169, 181,
        ],
        [
            3, 15, 27, 39, 48, 60, 72, 84, 97, 109, 121, 133, 146, 158, 170, 182,
        ],
        [
            4, 16, 28, 40, 53, 65, 77, 89, 102, 114, 126, 138, 151, 163, 175, 187,
        ],
        [
            5, 17, 29, 41, 54, 66, 78, 90, 103, 115, 127, 139, 148, 160, 172, 184,
        ],
        [
            6, 18, 30, 42, 55, 67, 79, 91, 100, 112, 124, 136, 149, 161, 173, 185,
        ],
        [
            7, 19, 31, 43, 52, 64, 76, 88, 101, 113, 125, 137, 150, 162, 174, 186,
        ],
        [
            8, 20, 32, 44, 57, 69, 81, 93, 106, 118, 130, 142, 155, 167, 179, 191,
        ],
        [
            9, 21, 33, 45, 58, 70, 82, 94, 107, 119, 131, 143, 152, 164, 176, 188,
        ],
        [
            10, 22, 34, 46, 59, 71, 83, 95, 104, 116, 128, 140, 153, 165, 177, 189,
        ],
        [
            11, 23, 35, 47, 56, 68, 80, 92, 105, 117, 129, 141, 154, 166, 178, 190,
        ],
    ];
    const FIG9_SOURCE: [[usize; 16]; 12] = [
        [0, 12, 8, 4, 1, 13, 9, 5, 2, 14, 10, 6, 3, 15, 11, 7],
        [1, 13, 9, 5, 2, 14, 10, 6, 3, 15, 11, 7, 0, 12, 8, 4],
        [2, 14, 10, 6, 3, 15, 11, 7, 0, 12, 8, 4, 1, 13, 9, 5],
        [3, 15, 11, 7, 0, 12, 8, 4, 1, 13, 9, 5, 2, 14, 10, 6],
        [4, 0, 12, 8, 5, 1, 13, 9, 6, 2, 14, 10, 7, 3, 15, 11],
        [5, 1, 13, 9, 6, 2, 14, 10, 7, 3, 15, 11, 4, 0, 12, 8],
        [6, 2, 14, 10, 7, 3, 15, 11, 4, 0, 12, 8, 5, 1, 13, 9],
        [7, 3, 15, 11, 4, 0, 12, 8, 5, 1, 13, 9, 6, 2, 14, 10],
        [8, 4, 0, 12, 9, 5, 1, 13, 10, 6, 2, 14, 11, 7, 3, 15],
        [9, 5, 1, 13, 10, 6, 2, 14, 11, 7, 3, 15, 8, 4, 0, 12],
        [10, 6, 2, 14, 11, 7, 3, 15, 8, 4, 0, 12, 9, 5, 1, 13],
        [11, 7, 3, 15, 8, 4, 0, 12, 9, 5, 1, 13, 10, 6, 2, 14],
    ];
    const FIG9_SLOT: [[usize; 16]; 12] = [
        [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3],
        [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 0, 0, 0, 0],
        [2, 2, 2, 2, 3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1],
        [3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2],
        [4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7],
        [5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 4, 4, 4, 4],
        [6, 6, 6, 6, 7, 7, 7, 7, 4, 4, 4, 4, 5, 5, 5, 5],
        [7, 7, 7, 7, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6],
        [8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11],
        [9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11, 8, 8, 8, 8],
        [10, 10, 10, 10, 11, 11, 11, 11, 8, 8, 8, 8, 9, 9, 9, 9],
        [11, 11, 11, 11, 8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10],
    ];

    #[test]
    fn reproduces_figure_6() {
        let s = expansion(4, 3).unwrap();
        for k in 0..3 {
            for p in 0..4 {
                let e = s.send(k, p).unwrap();
                assert_eq!(e.block, FIG6_BLOCK[k][p], "B({k},{p})");
                assert_eq!(e.destination, FIG6_PROCESS[k][p], "q({k},{p})");
                assert_eq!(e.local_block, FIG6_LOCAL[k][p], "b({k},{p})");
            }
        }
    }

    #[test]
    fn reproduces_figures_8_and_9() {
        let s = expansion(16, 12).unwrap();
        assert_eq!(
            (s.processes(), s.factor(), s.gcd(), s.step_count()),
            (16, 12, 4, 12)
        );
        for k in 0..12 {
            for p in 0..16 {
                let e = s.send(k, p).unwrap();
                assert_eq!(e.block, FIG8_BLOCK[k][p], "B({k},{p})");
                assert_eq!(e.destination, FIG8_PROCESS[k][p], "q({k},{p})");
                assert_eq!(e.local_block, FIG8_LOCAL[k][p], "b({k},{p})");
                let r = s.receive(k, p).unwrap();
                assert_eq!(r.block, FIG9_BLOCK[k][p], "C({k},{p})");
                assert_eq!(r.source, FIG9_SOURCE[k][p], "p({k},{p})");
                assert_eq!(r.slot, FIG9_SLOT[k][p], "t({k},{p})");
            }
        }
    }

    #[test]
    fn figure_6_by_example() {
        // P = 4 processes, block size grows by K = 3 (the paper's Fig. 6).
        let s = expansion(4, 3).unwrap();
        assert_eq!(s.step_count(), 3);
        let e = s.send(0, 1).unwrap();
        // In step 0 process 1 sends global block 9 (its local block 2) to process 3 ...
        assert_eq!((e.block, e.local_block, e.destination), (9, 2, 3));
        // ... and process 3 receives it in step 0, into slot 0.
        let r = s.receive(0, 3).unwrap();
        assert_eq!((r.block, r.source, r.slot), (9, 1, 0));
        // The (source, destination) pairs of step 0.
        let pairs = s.step_pairs();
        assert_eq!(pairs.len(), 3);
        assert_eq!(pairs[0], vec![(0, 0), (1, 3), (2, 2), (3, 1)]);
    }

    #[test]
    fn figures_8_and_9_by_example() {
        let s = expansion(16, 12).unwrap();
        assert_eq!(s.gcd(), 4);
        assert_eq!(s.send(1, 0).unwrap().block, 144);
        let e = s.send(4, 1).unwrap();
        assert_eq!((e.block, e.destination, e.local_block), (65, 5, 4));
        assert_eq!(s.send(12, 0), None);
        let r = s.receive(1, 12).unwrap();
        assert_eq!((r.block, r.source, r.slot), (144, 0, 0));
        // Compatibility: the source sends exactly this block in this step.
        assert_eq!(s.send(1, r.source).unwrap().block, r.block);
        assert!(expansion(0, 3).is_err());
    }

    /// The closed form as a referee of the product: for CYCLIC(r) →
    /// CYCLIC(K·r) on P processes, the plan's schedule never needs more than
    /// the closed form's K steps, and over whole superblocks the plan's
    /// messages between different processes are exactly the pairs the
    /// closed form's steps send.
    #[test]
    fn plans_never_need_more_steps_than_the_closed_form() {
        for p in [1, 2, 3, 4, 5, 6, 8, 16] {
            for k in [1, 2, 3, 4, 6, 12] {
                let s = expansion(p, k).unwrap();
                for r in [1, 3] {
                    let superblock = p * k * r;
                    for n in [2 * superblock, 2 * superblock + r * (p + 1) - 1, r * k + 1] {
                        let from = Layout::parse(&[n], &format!("cyclic({r})@{p}")).unwrap();
                        let to = Layout::parse(&[n], &format!("cyclic({})@{p}", k * r)).unwrap();
                        let plan = Plan::new(&from, &to, Remap::None).unwrap();
                        let case = format!("P {p} K {k} r {r} n {n}");
                        assert!(plan.stats().steps <= s.step_count(), "{case}");
                        if n % superblock != 0 {
                            continue;
                        }
                        let messages: BTreeSet<(usize, usize)> = plan
                            .messages()
                            .iter()
                            .filter(|m| m.from != m.to)
                            .map(|m| (m.from, m.to))
                            .collect();
                        let sent: BTreeSet<(usize, usize)> = s
                            .step_pairs()
                            .into_iter()
                            .flatten()
                            .filter(|&(a, b)| a != b)
                            .collect();
                        assert_eq!(messages, sent, "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn rejects_invalid_parameters() {
        for (p, k) in [(0, 3), (4, 0), (0, 0), (usize::MAX, 2)] {
            assert!(
                matches!(expansion(p, k), Err(PlanError::InvalidArgument { .. })),
                "{p} {k}"
            );
        }
        let s = expansion(1, 1).unwrap();
        assert_eq!(s.step_pairs(), vec![vec![(0, 0)]]);
        assert_eq!(s.send(1, 0), None);
        assert_eq!(s.receive(0, 1), None);
    }

    /// Every property of the expansion schedule for one (P, K), checked
    /// against brute force over one superblock.
    fn expansion_holds(processes: usize, factor: usize) -> Result<(), String> {
        let s = expansion(processes, factor).map_err(|e| e.to_string())?;
        let derived = sends_hold(&s, processes, factor)?;
        receives_match(&s, &derived, processes, factor)?;
        columns_hold(&s, processes, factor)?;
        step_pairs_match(&s, processes, factor)
    }

    /// The send side: each entry a block of its process, with its local
    /// block and destination right, and every step a permutation. Returns
    /// the receive side derived from it (per step, the block reaching each
    /// process).
    fn sends_hold(
        s: &ExpansionSchedule,
        processes: usize,
        factor: usize,
    ) -> Result<Vec<Vec<Option<usize>>>, String> {
        let pk = processes * factor;
        // Receive schedule derived from the send side: in each step, the
        // block that reaches q is the one whose destination is q.
        let mut derived = vec![vec![None; processes]; factor];
        for (k, row) in derived.iter_mut().enumerate() {
            for p in 0..processes {
                let e = s.send(k, p).ok_or("send out of range")?;
                if e.block >= pk || e.block % processes != p {
                    return Err(format!("B({k},{p}) = {} is not a block of p", e.block));
                }
                if e.local_block != e.block / processes || e.destination != e.block / factor {
                    return Err(format!("b or q wrong at ({k},{p})"));
                }
                // Permutation condition 1: destinations of a step are distinct.
                if row[e.destination].replace(e.block).is_some() {
                    return Err(format!(
                        "step {k}: process {} receives twice",
                        e.destination
                    ));
                }
            }
        }
        Ok(derived)
    }

    /// The receive side's closed form agrees with the one derived from the
    /// sends.
    fn receives_match(
        s: &ExpansionSchedule,
        derived: &[Vec<Option<usize>>],
        processes: usize,
        factor: usize,
    ) -> Result<(), String> {
        for (k, row) in derived.iter().enumerate() {
            for (q, &block) in row.iter().enumerate() {
                let r = s.receive(k, q).ok_or("receive out of range")?;
                // The closed form agrees with the inverse of the send side,
                // which is the compatibility condition eq. 12 both ways.
                if Some(r.block) != block {
                    return Err(format!("C({k},{q}) = {} but derived {block:?}", r.block));
                }
                if r.block / factor != q
                    || r.source != r.block % processes
                    || r.slot != r.block % factor
                {
                    return Err(format!("p or t wrong at ({k},{q})"));
                }
                if s.send(k, r.source).map(|e| e.block) != Some(r.block) {
                    return Err(format!("eq. 12 fails at ({k},{q})"));
                }
            }
        }
        Ok(())
    }

    /// Each process sends each of its blocks once, to the brute-force
    /// destinations, and each receiver fills each slot once.
    fn columns_hold(s: &ExpansionSchedule, processes: usize, factor: usize) -> Result<(), String> {
        // Permutation condition 2: column p holds each of p's blocks
        // b·P + p, b in 0..K, exactly once — so its destinations are exactly
        // the brute-force destinations ((b·P + p) / K) mod P with multiplicity.
        for p in 0..processes {
            let mut sent: Vec<usize> = (0..factor)
                .filter_map(|k| s.send(k, p).map(|e| e.block))
                .collect();
            sent.sort_unstable();
            let expected: Vec<usize> = (0..factor).map(|b| b * processes + p).collect();
            if sent != expected {
                return Err(format!("process {p} sends {sent:?}, expected {expected:?}"));
            }
            let mut dest: Vec<usize> = (0..factor)
                .filter_map(|k| s.send(k, p).map(|e| e.destination))
                .collect();
            let mut brute: Vec<usize> = (0..factor)
                .map(|b| ((b * processes + p) / factor) % processes)
                .collect();
            dest.sort_unstable();
            brute.sort_unstable();
            if dest != brute {
                return Err(format!(
                    "process {p}: destinations {dest:?}, expected {brute:?}"
                ));
            }
        }
        // Every slot of every receiver is filled exactly once.
        for q in 0..processes {
            let mut slots: Vec<usize> = (0..factor)
                .filter_map(|k| s.receive(k, q).map(|r| r.slot))
                .collect();
            slots.sort_unstable();
            if slots != (0..factor).collect::<Vec<_>>() {
                return Err(format!("process {q} fills slots {slots:?}"));
            }
        }
        Ok(())
    }

    /// `step_pairs` lists the send side.
    fn step_pairs_match(
        s: &ExpansionSchedule,
        processes: usize,
        factor: usize,
    ) -> Result<(), String> {
        let pairs = s.step_pairs();
        if pairs.len() != factor
            || pairs.iter().enumerate().any(|(k, step)| {
                step.len() != processes
                    || step.iter().enumerate().any(|(p, &(from, to))| {
                        from != p || Some(to) != s.send(k, p).map(|e| e.destination)
                    })
            })
        {
            return Err("step_pairs disagrees with send".into());
        }
        Ok(())
    }

    #[test]
    fn expansion_holds_for_all_small_cases() {
        for processes in 1..=24 {
            for factor in 1..=24 {
                assert_eq!(
                    expansion_holds(processes, factor),
                    Ok(()),
                    "P={processes} K={factor}"
                );
            }
        }
    }

    quickcheck! {
        fn expansion_holds_for_random_cases(p: u16, k: u16, common: u8) -> bool {
            // A shared factor makes large gcds likely.
            let c = 1 + usize::from(common) % 8;
            let processes = c * (1 + usize::from(p) % 40);
            let factor = c * (1 + usize::from(k) % 40);
            expansion_holds(processes, factor).is_ok()
        }
    }
}
