//! The arguments of a call as every rank knows them: each rank passes its
//! own descriptors (a process outside a grid passes a context of -1 and
//! perhaps nothing else meaningful), so the ranks exchange what they pass
//! in one all-gather, and each checks the whole — reaching the same
//! verdict, and knowing the layout of a grid it is not part of.

use crate::blacs::Blacs;
use crate::error::DropinError;
use std::os::raw::c_int;

/// A matrix argument as this rank passes it: its descriptor and the
/// 1-based first row and column of the sub-matrix.
#[derive(Debug, Clone, Copy)]
pub struct MatrixArg {
    /// ScaLAPACK's descriptor: DTYPE, CTXT, M, N, MB, NB, RSRC, CSRC, LLD.
    pub desc: [c_int; 9],
    /// First row of the sub-matrix (1-based).
    pub i: c_int,
    /// First column of the sub-matrix (1-based).
    pub j: c_int,
}

/// Where a matrix's arguments stand in the routine's argument list, for
/// ScaLAPACK's `INFO` codes.
#[derive(Debug, Clone, Copy)]
pub struct Positions {
    /// The row index argument.
    pub i: i32,
    /// The column index argument.
    pub j: i32,
    /// The descriptor argument.
    pub desc: i32,
}

/// Words one matrix contributes to the exchange.
pub const MATRIX_WORDS: usize = 14;

/// The number of rows (or columns) of an `n`-long dimension in blocks of
/// `nb` that process `p` of `procs` holds, the first block on `first`
/// (ScaLAPACK's `NUMROC`).
pub fn numroc(n: usize, nb: usize, p: usize, first: usize, procs: usize) -> usize {
    if nb == 0 || procs == 0 {
        return 0;
    }
    let me = (p + procs - first % procs) % procs;
    let blocks = n / nb;
    let mut count = blocks / procs * nb;
    let extra = blocks % procs;
    if me < extra {
        count += nb;
    } else if me == extra {
        count += n % nb;
    }
    count
}

/// This rank's words for matrix `arg`: its place in the grid of the
/// descriptor's context (or -1s outside it), the grid's shape, the
/// descriptor but for the context and `LLD`, the sub-matrix's origin, and
/// whether its `LLD` covers its local rows.
pub fn matrix_words(blacs: &Blacs, arg: &MatrixArg) -> [c_int; MATRIX_WORDS] {
    let d = &arg.desc;
    let info = (d[1] >= 0).then(|| blacs.gridinfo(d[1]));
    let (me, shape) = info.map_or(((-1, -1), (0, 0)), |g| (g.me, g.shape));
    let lld_ok = match (
        usize::try_from(me.0),
        [d[2], d[4], d[6]].map(usize::try_from),
    ) {
        (Ok(row), [Ok(m), Ok(mb), Ok(rsrc)]) if shape.0 > 0 => {
            let procs = usize::try_from(shape.0).unwrap_or(1);
            let rows = numroc(m, mb, row, rsrc, procs);
            usize::try_from(d[8]).is_ok_and(|lld| lld >= rows.max(1))
        }
        _ => true,
    };
    [
        me.0,
        me.1,
        shape.0,
        shape.1,
        d[0],
        d[2],
        d[3],
        d[4],
        d[5],
        d[6],
        d[7],
        arg.i,
        arg.j,
        c_int::from(lld_ok),
    ]
}

/// A matrix as every rank knows it after the exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matrix {
    /// Process rows and columns of its grid.
    pub grid: (usize, usize),
    /// The rank (in the exchange's communicator) at grid position
    /// `row · columns + column`.
    pub ranks: Vec<usize>,
    /// Global rows and columns.
    pub shape: (usize, usize),
    /// Row and column block sizes.
    pub blocks: (usize, usize),
    /// Process row and column of the first block.
    pub first: (usize, usize),
    /// The sub-matrix's first row and column, 0-based.
    pub origin: (usize, usize),
}

/// The exchanged words of one matrix, every rank's, and how to report a
/// bad one.
struct Words<'a> {
    all: &'a [c_int],
    width: usize,
    offset: usize,
    routine: &'static str,
    at: Positions,
}

impl Words<'_> {
    /// Rank `r`'s words.
    fn of(&self, r: usize) -> &[c_int] {
        let start = r * self.width + self.offset;
        &self.all[start..start + MATRIX_WORDS]
    }

    /// The error for argument `position`.
    fn bad(&self, position: i32, what: String) -> DropinError {
        DropinError::Argument {
            routine: self.routine,
            position,
            what,
        }
    }

    /// The error for entry `entry` of the descriptor.
    fn bad_entry(&self, entry: i32, what: String) -> DropinError {
        self.bad(100 * self.at.desc + entry, what)
    }

    /// The ranks in the grid, after checking they pass the same descriptor
    /// and indices and a leading dimension covering their rows; the words
    /// of the first.
    fn members(&self) -> Result<(Vec<usize>, &[c_int]), DropinError> {
        let size = self.all.len() / self.width;
        let members: Vec<usize> = (0..size).filter(|&r| self.of(r)[0] >= 0).collect();
        let Some(&first) = members.first() else {
            return Err(self.bad_entry(2, "no process is in the descriptor's context".into()));
        };
        let w = self.of(first);
        for &r in &members {
            if self.of(r)[2..13] != w[2..13] {
                return Err(self.bad_entry(
                    2,
                    format!(
                        "ranks {first} and {r} of the grid pass different descriptors or indices"
                    ),
                ));
            }
            if self.of(r)[13] == 0 {
                return Err(self.bad_entry(9, format!("LLD below the local rows on rank {r}")));
            }
        }
        Ok((members, w))
    }

    /// Checks descriptor entries DTYPE to CSRC of `w` against a `p` × `q`
    /// grid, in ScaLAPACK's order.
    fn check_descriptor(&self, w: &[c_int], (p, q): (usize, usize)) -> Result<(), DropinError> {
        let below = |k: usize, n: usize| usize::try_from(w[k]).is_ok_and(|f| f < n);
        let checks = [
            (1, w[4] == 1, "DTYPE must be 1 (dense block-cyclic)"),
            (3, w[5] >= 0, "M must be ≥ 0"),
            (4, w[6] >= 0, "N must be ≥ 0"),
            (5, w[7] >= 1, "MB must be ≥ 1"),
            (6, w[8] >= 1, "NB must be ≥ 1"),
            (7, below(9, p), "RSRC must be a process row of the grid"),
            (8, below(10, q), "CSRC must be a process column of the grid"),
        ];
        match checks.iter().find(|(_, ok, _)| !ok) {
            Some(&(entry, _, what)) => {
                Err(self.bad_entry(entry, format!("{what} (descriptor {:?})", &w[4..11])))
            }
            None => Ok(()),
        }
    }

    /// The rank at each grid position, row-major, every position held by
    /// exactly one member.
    fn ranks(&self, members: &[usize], (p, q): (usize, usize)) -> Result<Vec<usize>, DropinError> {
        let mut ranks = vec![usize::MAX; p * q];
        for &r in members {
            let (row, col) = (
                usize::try_from(self.of(r)[0]),
                usize::try_from(self.of(r)[1]),
            );
            match (row, col) {
                (Ok(a), Ok(b)) if a < p && b < q && ranks[a * q + b] == usize::MAX => {
                    ranks[a * q + b] = r;
                }
                _ => return Err(self.bad_entry(2, format!("rank {r}'s grid position"))),
            }
        }
        if ranks.contains(&usize::MAX) {
            return Err(self.bad_entry(2, "a grid position without a process".into()));
        }
        Ok(ranks)
    }
}

impl Matrix {
    /// The matrix at word `offset` of each rank's `width` words in `all`,
    /// checked as ScaLAPACK checks it, for a sub-matrix of `rows` × `cols`;
    /// errors name `routine` and the positions `at`.
    ///
    /// # Errors
    ///
    /// [`DropinError::Argument`] naming the first bad argument (the same
    /// on every rank, which all hold the same `all`).
    pub fn agree(
        all: &[c_int],
        width: usize,
        offset: usize,
        routine: &'static str,
        at: Positions,
        rows: usize,
        cols: usize,
    ) -> Result<Matrix, DropinError> {
        let words = Words {
            all,
            width,
            offset,
            routine,
            at,
        };
        let (members, w) = words.members()?;
        let nat = |k: usize| usize::try_from(w[k]).ok();
        let grid = (nat(2).unwrap_or(0), nat(3).unwrap_or(0));
        words.check_descriptor(w, grid)?;
        let shape = (nat(5).unwrap_or(0), nat(6).unwrap_or(0));
        let (i, j) = (w[11], w[12]);
        let fits = |o: c_int, len: usize, extent: usize| {
            usize::try_from(o).is_ok_and(|o| o >= 1 && (len == 0 || o - 1 + len <= extent))
        };
        if !fits(i, rows, shape.0) {
            return Err(words.bad(
                at.i,
                format!("row {i} + {rows} rows leaves the {} rows", shape.0),
            ));
        }
        if !fits(j, cols, shape.1) {
            return Err(words.bad(
                at.j,
                format!("column {j} + {cols} columns leaves the {} columns", shape.1),
            ));
        }
        Ok(Matrix {
            grid,
            ranks: words.ranks(&members, grid)?,
            shape,
            blocks: (nat(7).unwrap_or(1), nat(8).unwrap_or(1)),
            first: (nat(9).unwrap_or(0), nat(10).unwrap_or(0)),
            origin: (nat(11).unwrap_or(1) - 1, nat(12).unwrap_or(1) - 1),
        })
    }

    /// The same matrix with its processes renumbered (`order[old]` the
    /// new number).
    pub fn renumbered(&self, order: &[usize]) -> Matrix {
        Matrix {
            ranks: self.ranks.iter().map(|&r| order[r]).collect(),
            ..self.clone()
        }
    }

    /// Whether its processes are the first of the communicator (those a
    /// grid of its shape over the communicator takes).
    pub fn on_first_ranks(&self) -> bool {
        let mut sorted = self.ranks.clone();
        sorted.sort_unstable();
        sorted.iter().enumerate().all(|(k, &r)| k == r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numroc_counts_as_scalapack() {
        // 10 rows in blocks of 3 over 2 processes from process 0: blocks
        // 0, 2 (3 + 3 rows) on 0 and 1, 3 (3 + 1) on 1.
        assert_eq!(numroc(10, 3, 0, 0, 2), 6);
        assert_eq!(numroc(10, 3, 1, 0, 2), 4);
        // Starting on process 1: the other way round.
        assert_eq!(numroc(10, 3, 1, 1, 2), 6);
        assert_eq!(numroc(10, 3, 0, 1, 2), 4);
        assert_eq!(numroc(0, 3, 0, 0, 2), 0);
        for n in 0..40 {
            for nb in 1..6 {
                for procs in 1..5 {
                    for first in 0..procs {
                        let total: usize = (0..procs).map(|p| numroc(n, nb, p, first, procs)).sum();
                        assert_eq!(total, n);
                        // By counting: global row g is on (first + g / nb) % procs.
                        for p in 0..procs {
                            let count = (0..n).filter(|g| (first + g / nb) % procs == p).count();
                            assert_eq!(numroc(n, nb, p, first, procs), count);
                        }
                    }
                }
            }
        }
    }

    /// The words of a 2 x 1 grid over ranks 0 and 1 of a 3-rank exchange
    /// (rank 2 outside), each rank passing `desc`.
    fn words(desc: [c_int; 7], i: c_int, j: c_int, lld_ok: [c_int; 3]) -> Vec<c_int> {
        let mut all = Vec::new();
        for r in 0..3 {
            let (row, col, p, q) = if r < 2 { (r, 0, 2, 1) } else { (-1, -1, 0, 0) };
            all.extend([row, col, p, q]);
            all.extend(desc);
            all.extend([i, j, lld_ok[r as usize]]);
        }
        all
    }

    const AT: Positions = Positions {
        i: 4,
        j: 5,
        desc: 6,
    };

    #[test]
    fn a_good_matrix_is_known_everywhere() {
        let all = words([1, 10, 8, 3, 2, 1, 0], 2, 3, [1, 1, 1]);
        let m = Matrix::agree(&all, MATRIX_WORDS, 0, "PDGEMR2D", AT, 9, 6).unwrap();
        assert_eq!(m.grid, (2, 1));
        assert_eq!(m.ranks, vec![0, 1]);
        assert_eq!(
            (m.shape, m.blocks, m.first, m.origin),
            ((10, 8), (3, 2), (1, 0), (1, 2))
        );
        assert!(m.on_first_ranks());
    }

    #[test]
    fn bad_arguments_get_scalapack_positions() {
        let code = |all: &[c_int], (rows, cols): (usize, usize)| match Matrix::agree(
            all,
            MATRIX_WORDS,
            0,
            "PDGEMR2D",
            AT,
            rows,
            cols,
        ) {
            Err(DropinError::Argument { position, .. }) => position,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            code(&words([2, 10, 8, 3, 2, 0, 0], 1, 1, [1; 3]), (1, 1)),
            601
        );
        assert_eq!(
            code(&words([1, 10, 8, 0, 2, 0, 0], 1, 1, [1; 3]), (1, 1)),
            605
        );
        assert_eq!(
            code(&words([1, 10, 8, 3, 2, 2, 0], 1, 1, [1; 3]), (1, 1)),
            607
        );
        assert_eq!(
            code(&words([1, 10, 8, 3, 2, 0, 1], 1, 1, [1; 3]), (1, 1)),
            608
        );
        assert_eq!(
            code(&words([1, 10, 8, 3, 2, 0, 0], 1, 1, [1, 0, 1]), (1, 1)),
            609
        );
        assert_eq!(
            code(&words([1, 10, 8, 3, 2, 0, 0], 2, 1, [1; 3]), (10, 1)),
            4
        );
        assert_eq!(
            code(&words([1, 10, 8, 3, 2, 0, 0], 1, 0, [1; 3]), (1, 1)),
            5
        );
        // Ranks of the grid passing different descriptors.
        let mut all = words([1, 10, 8, 3, 2, 0, 0], 1, 1, [1; 3]);
        all[MATRIX_WORDS + 7] = 4;
        assert_eq!(code(&all, (1, 1)), 602);
        // No process in the context.
        let none: Vec<c_int> = words([1, 10, 8, 3, 2, 0, 0], 1, 1, [1; 3])
            .chunks(MATRIX_WORDS)
            .flat_map(|w| {
                let mut w = w.to_vec();
                w[0] = -1;
                w
            })
            .collect();
        assert_eq!(code(&none, (1, 1)), 602);
    }
}
