//! Per-dimension distributions and layout spec strings.
//!
//! A spec string names one distribution per array dimension and the process
//! grid: `cyclic(64),cyclic(64)@2x3`, `block,*@4x1`, `cyclic(3)+1,block@2x2`.
//!
//! ```text
//! SPEC := DIST {"," DIST} "@" P {"x" P}
//! DIST := ("block" | "cyclic" | "cyclic(" N ")") ["+" K]  |  "*"
//! ```
//!
//! `+K` names the grid coordinate that owns the first block (ScaLAPACK's
//! RSRC/CSRC; default 0, `0 <= K < P`). `*` means not distributed and needs
//! grid extent 1. Keywords are case-insensitive and spaces between tokens are
//! ignored. Parsing and [`Display`](std::fmt::Display) round-trip.

use crate::error::PlanError;
use std::fmt;
use std::str::FromStr;

/// Most ranks a layout's grid may have: 2^24, far beyond any machine, so a
/// layout's rank map (two words per rank) stays below 256 MiB.
pub const MAX_RANKS: usize = 1 << 24;

/// How one array dimension is distributed over one grid dimension.
///
/// ```
/// use redist_plan::Dist;
/// assert_eq!("cyclic(4)+1".parse::<Dist>().unwrap(), Dist::cyclic(4).starting_at(1));
/// assert_eq!(Dist::block().to_string(), "block");
/// assert_eq!(Dist::cyclic(1).to_string(), "cyclic");
/// assert_eq!("*".parse::<Dist>().unwrap(), Dist::Collapsed);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dist {
    /// `block`: one block of `ceil(n / p)` indices per process (HPF `BLOCK`).
    Block {
        /// Grid coordinate holding the first block.
        first: usize,
    },
    /// `cyclic(b)`: blocks of `b` dealt round-robin (`cyclic` is `cyclic(1)`).
    Cyclic {
        /// Block size, at least 1.
        block: usize,
        /// Grid coordinate holding the first block.
        first: usize,
    },
    /// `*`: not distributed; the dimension is whole on every process of a
    /// grid dimension of extent 1.
    Collapsed,
}

impl Dist {
    /// `block`, first block on coordinate 0.
    pub const fn block() -> Dist {
        Dist::Block { first: 0 }
    }

    /// `cyclic(b)`, first block on coordinate 0.
    pub const fn cyclic(block: usize) -> Dist {
        Dist::Cyclic { block, first: 0 }
    }

    /// The same distribution with its first block on grid coordinate `first`
    /// (no effect on `*`).
    pub const fn starting_at(self, first: usize) -> Dist {
        match self {
            Dist::Block { .. } => Dist::Block { first },
            Dist::Cyclic { block, .. } => Dist::Cyclic { block, first },
            Dist::Collapsed => Dist::Collapsed,
        }
    }

    /// Grid coordinate holding the first block (0 for `*`).
    pub const fn first(&self) -> usize {
        match *self {
            Dist::Block { first } | Dist::Cyclic { first, .. } => first,
            Dist::Collapsed => 0,
        }
    }

    /// The block size this distribution gives an extent of `n` over `p`
    /// processes: `ceil(n / p)` for `block`, `b` for `cyclic(b)`, `n` for `*`
    /// (at least 1 in every case).
    pub const fn block_size(&self, n: usize, p: usize) -> usize {
        let b = match *self {
            Dist::Block { .. } => n.div_ceil(p),
            Dist::Cyclic { block, .. } => block,
            Dist::Collapsed => n,
        };
        if b == 0 {
            1
        } else {
            b
        }
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Dist::Collapsed => return write!(f, "*"),
            Dist::Block { .. } => write!(f, "block")?,
            Dist::Cyclic { block: 1, .. } => write!(f, "cyclic")?,
            Dist::Cyclic { block, .. } => write!(f, "cyclic({block})")?,
        }
        match self.first() {
            0 => Ok(()),
            k => write!(f, "+{k}"),
        }
    }
}

impl FromStr for Dist {
    type Err = PlanError;

    fn from_str(s: &str) -> Result<Dist, PlanError> {
        let mut p = Parser::new(s);
        let d = p.dist()?;
        p.end()?;
        Ok(d)
    }
}

/// A layout's distribution alone: one [`Dist`] per array dimension and
/// the process-grid extents, without the array's shape.
///
/// ```
/// use redist_plan::{Dist, LayoutSpec};
/// let spec: LayoutSpec = "cyclic(3)+1, block @ 2x2".parse().unwrap();
/// assert_eq!(spec.dists(), &[Dist::cyclic(3).starting_at(1), Dist::block()]);
/// assert_eq!(spec.grid(), &[2, 2]);
/// assert_eq!(spec.to_string(), "cyclic(3)+1,block@2x2");
/// assert!("block,*@2x2".parse::<LayoutSpec>().is_err()); // `*` needs extent 1
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LayoutSpec {
    dists: Vec<Dist>,
    grid: Vec<usize>,
}

impl LayoutSpec {
    /// A spec from its parts, validated: as many distributions as grid
    /// extents, no zero extent or block size, `*` only on extent 1, every
    /// first coordinate inside its grid dimension.
    ///
    /// # Errors
    ///
    /// - [`PlanError::NoDimensions`] when `dists` is empty;
    /// - [`PlanError::RankMismatch`] when `grid` does not have one extent per distribution;
    /// - [`PlanError::ZeroExtent`] when an extent is 0, or [`PlanError::ExtentOverflow`]
    ///   when their product overflows `usize`;
    /// - [`PlanError::TooManyRanks`] when the grid has more than [`MAX_RANKS`] ranks;
    /// - [`PlanError::ZeroBlock`] when a `cyclic` block size is 0;
    /// - [`PlanError::CollapsedOnDistributed`] when a `*` dimension has a grid extent other than 1;
    /// - [`PlanError::FirstOutOfRange`] when a first coordinate is not below its grid extent.
    pub fn new(dists: Vec<Dist>, grid: Vec<usize>) -> Result<LayoutSpec, PlanError> {
        if dists.is_empty() {
            return Err(PlanError::NoDimensions);
        }
        if dists.len() != grid.len() {
            return Err(PlanError::RankMismatch {
                what: "grid extents for the distributions",
                expected: dists.len(),
                got: grid.len(),
            });
        }
        let ranks = crate::coords::check_extents(&grid)?;
        if ranks > MAX_RANKS {
            return Err(PlanError::TooManyRanks {
                ranks,
                limit: MAX_RANKS,
            });
        }
        for (dim, (d, &extent)) in dists.iter().zip(&grid).enumerate() {
            match *d {
                Dist::Cyclic { block: 0, .. } => return Err(PlanError::ZeroBlock { dim }),
                Dist::Collapsed if extent != 1 => {
                    return Err(PlanError::CollapsedOnDistributed { dim, extent })
                }
                _ => {}
            }
            if d.first() >= extent {
                return Err(PlanError::FirstOutOfRange {
                    dim,
                    first: d.first(),
                    extent,
                });
            }
        }
        Ok(LayoutSpec { dists, grid })
    }

    /// One distribution per array dimension.
    pub fn dists(&self) -> &[Dist] {
        &self.dists
    }

    /// Process-grid extents, one per array dimension.
    pub fn grid(&self) -> &[usize] {
        &self.grid
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.dists.len()
    }

    /// Number of processes in the grid.
    pub fn ranks(&self) -> usize {
        self.grid.iter().product()
    }
}

impl fmt::Display for LayoutSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.dists.iter().enumerate() {
            if i > 0 {
                write!(f, ",")?;
            }
            write!(f, "{d}")?;
        }
        write!(f, "@")?;
        for (i, p) in self.grid.iter().enumerate() {
            if i > 0 {
                write!(f, "x")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl FromStr for LayoutSpec {
    type Err = PlanError;

    fn from_str(s: &str) -> Result<LayoutSpec, PlanError> {
        let mut p = Parser::new(s);
        let mut dists = vec![p.dist()?];
        while p.eat(',') {
            dists.push(p.dist()?);
        }
        let at = p.pos;
        if !p.eat('@') {
            return Err(
                p.error("expected `,` and another distribution, or `@` and the grid extents")
            );
        }
        let mut grid = vec![p.number("a grid extent")?];
        while p.eat('x') || p.eat('X') {
            grid.push(p.number("a grid extent")?);
        }
        p.end()?;
        if dists.len() != grid.len() {
            p.pos = at;
            return Err(p.error(&format!(
                "{} distributions but {} grid extents; give one grid extent per distribution",
                dists.len(),
                grid.len()
            )));
        }
        LayoutSpec::new(dists, grid)
    }
}

/// A hand-written recursive-descent parser over the characters of a spec.
struct Parser<'a> {
    src: &'a str,
    chars: Vec<char>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        Parser {
            src,
            chars: src.chars().collect(),
            pos: 0,
        }
    }

    fn skip_spaces(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_spaces();
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// The token at the current position: a run of letters and digits, or one character.
    fn token(&mut self) -> String {
        self.skip_spaces();
        let rest = &self.chars[self.pos.min(self.chars.len())..];
        match rest.first() {
            None => String::new(),
            Some(c) if c.is_alphanumeric() => {
                rest.iter().take_while(|c| c.is_alphanumeric()).collect()
            }
            Some(c) => c.to_string(),
        }
    }

    fn error(&mut self, message: &str) -> PlanError {
        let found = self.token();
        PlanError::Parse {
            spec: self.src.to_string(),
            column: self.pos + 1,
            found,
            message: message.to_string(),
        }
    }

    fn word(&mut self) -> String {
        self.skip_spaces();
        let start = self.pos;
        while self
            .chars
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphabetic())
        {
            self.pos += 1;
        }
        self.chars[start..self.pos]
            .iter()
            .collect::<String>()
            .to_ascii_lowercase()
    }

    fn number(&mut self, what: &str) -> Result<usize, PlanError> {
        self.skip_spaces();
        let start = self.pos;
        while self.chars.get(self.pos).is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits: String = self.chars[start..self.pos].iter().collect();
        self.pos = start;
        if digits.is_empty() {
            return Err(self.error(&format!("expected {what} (a non-negative integer)")));
        }
        let n = digits
            .parse::<usize>()
            .map_err(|_| self.error(&format!("{what} is too large")))?;
        self.pos = start + digits.len();
        Ok(n)
    }

    fn dist(&mut self) -> Result<Dist, PlanError> {
        if self.eat('*') {
            return Ok(Dist::Collapsed);
        }
        let start = self.pos;
        let dist = match self.word().as_str() {
            "block" => Dist::block(),
            "cyclic" => {
                if self.eat('(') {
                    let at = self.pos;
                    let b = self.number("a block size")?;
                    if b == 0 {
                        self.pos = at;
                        return Err(self.error("block size must be at least 1"));
                    }
                    if !self.eat(')') {
                        return Err(self.error("expected `)` after the block size"));
                    }
                    Dist::cyclic(b)
                } else {
                    Dist::cyclic(1)
                }
            }
            _ => {
                self.pos = start;
                return Err(
                    self.error("expected a distribution: `block`, `cyclic`, `cyclic(N)` or `*`")
                );
            }
        };
        if self.eat('+') {
            let k = self.number("a first-process coordinate after `+`")?;
            return Ok(dist.starting_at(k));
        }
        Ok(dist)
    }

    fn end(&mut self) -> Result<(), PlanError> {
        if self.peek().is_some() {
            return Err(self.error("unexpected input after the end of the spec"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::{quickcheck, Arbitrary, Gen};

    #[derive(Clone, Debug)]
    struct Spec(LayoutSpec);

    impl Arbitrary for Spec {
        fn arbitrary(g: &mut Gen) -> Self {
            let ndim = usize::arbitrary(g) % 4 + 1;
            let mut dists = vec![];
            let mut grid = vec![];
            for _ in 0..ndim {
                let p = usize::arbitrary(g) % 5 + 1;
                let first = usize::arbitrary(g) % p;
                let d = match u8::arbitrary(g) % 4 {
                    0 if p == 1 => Dist::Collapsed,
                    0 | 1 => Dist::block().starting_at(first),
                    2 => Dist::cyclic(1).starting_at(first),
                    _ => Dist::cyclic(usize::arbitrary(g) % 1000 + 1).starting_at(first),
                };
                dists.push(d);
                grid.push(p);
            }
            Spec(LayoutSpec::new(dists, grid).unwrap())
        }
    }

    quickcheck! {
        fn display_parse_round_trip(s: Spec) -> bool {
            let text = s.0.to_string();
            text.parse::<LayoutSpec>() == Ok(s.0.clone()) && text.parse::<LayoutSpec>().unwrap().to_string() == text
        }
    }

    #[test]
    fn design_examples_parse() {
        for s in [
            "cyclic(64),cyclic(64)@2x3",
            "block,*@4x1",
            "*,block@1x4",
            "cyclic,cyclic(5),block@2x2x1",
            "cyclic(3)+1,block@2x2",
        ] {
            let spec: LayoutSpec = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(spec.to_string(), s);
        }
        let spec: LayoutSpec = "CYCLIC(2) , Block+1 @ 3 X 2".parse().unwrap();
        assert_eq!(spec.to_string(), "cyclic(2),block+1@3x2");
        assert_eq!(
            "cyclic(1)@4".parse::<LayoutSpec>().unwrap().to_string(),
            "cyclic@4"
        );
    }

    fn parse_err(s: &str) -> (usize, String, String) {
        match s.parse::<LayoutSpec>() {
            Err(PlanError::Parse {
                column,
                found,
                message,
                ..
            }) => (column, found, message),
            other => panic!("{s}: expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn parse_errors_name_token_and_column() {
        assert_eq!(parse_err("blok@2").0, 1);
        assert_eq!(parse_err("blok@2").1, "blok");
        let (col, found, msg) = parse_err("block,cyclic(x)@2x2");
        assert_eq!((col, found.as_str()), (14, "x"));
        assert!(msg.contains("block size"), "{msg}");
        assert_eq!(parse_err("cyclic(0)@2").0, 8);
        assert!(parse_err("cyclic(0)@2").2.contains("at least 1"));
        assert_eq!(parse_err("block@").1, "");
        assert_eq!(parse_err("block,block@2").0, 12);
        assert!(parse_err("block,block@2")
            .2
            .contains("2 distributions but 1 grid extents"));
        assert_eq!(parse_err("block@2x2x").0, 11);
        assert_eq!(parse_err("block;block@2x2").1, ";");
        assert_eq!(parse_err("cyclic(4@2").1, "@");
        assert_eq!(parse_err("block+@2").1, "@");
        assert_eq!(parse_err("block@2 extra").1, "extra");
        assert_eq!(parse_err("").0, 1);
        assert!(parse_err("cyclic(99999999999999999999999)@2")
            .2
            .contains("too large"));
        let msg = "blok@2".parse::<LayoutSpec>().unwrap_err().to_string();
        assert!(
            msg.contains("column 1") && msg.contains("blok") && msg.contains("`block`"),
            "{msg}"
        );
    }

    #[test]
    fn semantic_errors_are_typed() {
        assert_eq!(
            "block,*@2x2".parse::<LayoutSpec>(),
            Err(PlanError::CollapsedOnDistributed { dim: 1, extent: 2 })
        );
        assert_eq!(
            "block+2@2".parse::<LayoutSpec>(),
            Err(PlanError::FirstOutOfRange {
                dim: 0,
                first: 2,
                extent: 2
            })
        );
        assert!(matches!(
            "block@0".parse::<LayoutSpec>(),
            Err(PlanError::ZeroExtent { .. })
        ));
        assert_eq!(
            LayoutSpec::new(vec![Dist::cyclic(0)], vec![1]),
            Err(PlanError::ZeroBlock { dim: 0 })
        );
        assert_eq!(
            LayoutSpec::new(vec![Dist::block()], vec![1, 1]),
            Err(PlanError::RankMismatch {
                what: "grid extents for the distributions",
                expected: 1,
                got: 2
            })
        );
        assert_eq!(
            LayoutSpec::new(vec![], vec![]),
            Err(PlanError::NoDimensions)
        );
    }

    #[test]
    fn grids_beyond_the_rank_limit_are_refused() {
        let e = "block@100000000000".parse::<LayoutSpec>().unwrap_err();
        assert!(
            matches!(
                e,
                PlanError::TooManyRanks {
                    ranks: 100_000_000_000,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("at most 16777216"), "{e}");
        assert!("block,block@4096x4096".parse::<LayoutSpec>().is_ok());
        assert!("block,block@4097x4096".parse::<LayoutSpec>().is_err());
    }
}
