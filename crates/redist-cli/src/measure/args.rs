//! The command line of `redist run`: [`RunArgs`], the element types
//! ([`ElementArg`]) and the baselines ([`Baseline`]) it names.

use crate::shape::{Origin, Shape};
use clap::{Args, ValueEnum};
use dist_array::LayoutSpec;
use redist::{MinRun, Remap, Strategy, Streaming};

/// Element types `redist run` can move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ElementArg {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `Complex<f64>`.
    C64,
    /// `i32`.
    I32,
    /// `u8`.
    U8,
}

/// Calls `f::<T>(args…)` with `T` the element type an [`ElementArg`]
/// names (`by_element!(args.element, run_typed(args, world, out))`).
macro_rules! by_element {
    ($element:expr, $f:ident($($arg:expr),* $(,)?)) => {
        match $element {
            $crate::measure::args::ElementArg::F32 => $f::<f32>($($arg),*),
            $crate::measure::args::ElementArg::F64 => $f::<f64>($($arg),*),
            $crate::measure::args::ElementArg::C64 => $f::<dist_array::Complex<f64>>($($arg),*),
            $crate::measure::args::ElementArg::I32 => $f::<i32>($($arg),*),
            $crate::measure::args::ElementArg::U8 => $f::<u8>($($arg),*),
        }
    };
}
pub(crate) use by_element;

/// Baselines `redist run` can time next to the redistribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Baseline {
    /// A bare `MPI_Alltoallv` of the same byte counts on pre-packed buffers.
    Alltoallv,
    /// The same runs copied by one plain loop per rank, in target order,
    /// from its own source part and its node's peers' (mapped read-only):
    /// the access pattern alone, the limit of node-direct copies on this
    /// machine. Needs source parts in shared memory and one node.
    Pattern,
    /// ScaLAPACK's `pdgemr2d` on the same layouts (2-D, `--type f64`;
    /// needs the tool built with the `scalapack` feature). Both arrays are
    /// then stored column-major, as ScaLAPACK's.
    Pdgemr2d,
    /// PBLAS's `pdtran` (with `--transpose`), α and β as `--alpha`,
    /// `--beta`; as `pdgemr2d`, 2-D `f64` with the `scalapack` feature.
    Pdtran,
    /// PBLAS's `pdgeadd` (`TRANS = 'T'` with `--transpose`, else `'N'`).
    Pdgeadd,
}

/// Arguments of `redist run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Global array shape, e.g. `4096x4096`.
    #[arg(long, value_name = "AxBx..")]
    pub shape: Shape,
    /// Target array shape when it differs from the source's (`--shape`);
    /// then only a window moves (`--window`).
    #[arg(long, value_name = "AxBx..")]
    pub to_shape: Option<Shape>,
    /// Move only this window: its extents, e.g. `300x200` (default: as much
    /// as fits from the two origins).
    #[arg(long, value_name = "AxBx..")]
    pub window: Option<Shape>,
    /// First index of the window in the source array, 0-based, e.g. `3,17`
    /// (default: the origin).
    #[arg(long, value_name = "I,J,..")]
    pub from_window: Option<Origin>,
    /// First index of the window in the target array, 0-based (default: the
    /// origin). The rest of the target keeps its values, which `--verify`
    /// checks too.
    #[arg(long, value_name = "I,J,..")]
    pub to_window: Option<Origin>,
    /// Permute the axes: source dimension `d` becomes target dimension
    /// `P[d]`, e.g. `1,0` (the 2-D transpose) or `2,0,1`; the target's
    /// shape is the source's permuted (`--to`'s spec describes it).
    #[arg(long, value_name = "P0,P1,..", conflicts_with_all = ["transpose", "to_shape"])]
    pub permute: Option<Origin>,
    /// Move K arrays of the same layouts in one exchange (`execute_batch_into`),
    /// and time K separate executions next to it (`separate_ms_median`).
    #[arg(long, value_name = "K", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1024))]
    pub batch: Option<usize>,
    /// With `--batch K`: array `j` of the batch is of the `j`-th of these
    /// types, round and round (`f64,c64,i32`), all moved in one exchange
    /// (`execute_mixed_batch`); the separate executions are then one
    /// mixed batch of one array each.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        requires = "batch",
        value_name = "T1,T2,.."
    )]
    pub batch_types: Vec<ElementArg>,
    /// The 2-D transpose: `--permute 1,0`.
    #[arg(long, conflicts_with = "to_shape")]
    pub transpose: bool,
    /// Update the target instead of overwriting it: target := β·target +
    /// α·op(source) with this α (default 1; f32, f64 and c64 only).
    #[arg(long, value_name = "ALPHA", allow_negative_numbers = true, value_parser = finite)]
    pub alpha: Option<f64>,
    /// β of the update (default 0: the target is not read).
    #[arg(long, value_name = "BETA", allow_negative_numbers = true, value_parser = finite)]
    pub beta: Option<f64>,
    /// op of the update: the complex conjugate (c64).
    #[arg(long)]
    pub conjugate: bool,
    /// Source layout spec string.
    #[arg(long, value_name = "SPEC")]
    pub from: LayoutSpec,
    /// Target layout spec string.
    #[arg(long, value_name = "SPEC")]
    pub to: LayoutSpec,
    /// Element type.
    #[arg(long = "type", value_enum, default_value = "f64")]
    pub element: ElementArg,
    /// Exchange strategy: auto, alltoallv, scheduled, async or combined.
    #[arg(long, default_value = "auto", value_name = "NAME")]
    pub strategy: Strategy,
    /// How the target's ranks may be relabelled: none, closed-form or optimal.
    #[arg(long, default_value = "none", value_name = "MODE")]
    pub remap: Remap,
    /// Timed repetitions (after one untimed warm-up, and up to seven more
    /// while an `async` redistribution tries packed against typed routes),
    /// 1 to 1000000.
    #[arg(long, default_value_t = 5, value_parser = reps_parser())]
    pub reps: usize,
    /// A wisdom file: `redist run` reads the choice measured for this
    /// redistribution on this machine from it (`auto` only; a file without
    /// one is a warning, never an error; default: `NDCYCLIC_WISDOM`);
    /// `redist tune` adds what it measures to it.
    #[arg(long, value_name = "FILE")]
    pub wisdom: Option<std::path::PathBuf>,
    /// Check every element of the result against its global index.
    #[arg(long)]
    pub verify: bool,
    /// Also time baselines in the same run: alltoallv, pattern, pdgemr2d,
    /// pdtran, pdgeadd, or several (`alltoallv,pattern`).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub baseline: Vec<Baseline>,
    /// Print one JSON object on one line (rank 0, last line of stdout).
    #[arg(long)]
    pub json: bool,
    /// When a side of a message is described to MPI by a derived datatype
    /// instead of packed: auto (the library's rule), never, or where its
    /// runs average at least N elements.
    #[arg(long, default_value = "auto", value_name = "auto|never|N")]
    pub datatype_min_run: MinRun,
    /// When `async` sends a message run by run straight from source
    /// storage: auto (the library's rule), never, or where its source runs
    /// average at least N elements.
    #[arg(long, default_value = "auto", value_name = "auto|never|N")]
    pub direct_min_run: MinRun,
    /// Send data between ranks of one node as MPI messages even where the
    /// receiver could read it straight from the sender's shared storage.
    #[arg(long)]
    pub no_node_direct: bool,
    /// When copies into the target use streaming (non-temporal) stores:
    /// auto (where a rank writes more than its share of the cache holds),
    /// never, always, or from a number of bytes written per rank.
    #[arg(long, default_value = "auto", value_name = "WHEN")]
    pub streaming: Streaming,
}

impl RunArgs {
    /// Whether the run updates the target (`--alpha`, `--beta`,
    /// `--conjugate`) rather than overwriting it.
    pub fn updates(&self) -> bool {
        self.alpha.is_some() || self.beta.is_some() || self.conjugate
    }

    /// The permutation of the axes `--permute` or `--transpose` asks for.
    pub fn permutation(&self) -> Option<Vec<usize>> {
        match (&self.permute, self.transpose) {
            (Some(p), _) => Some(p.to_vec()),
            (None, true) => Some(vec![1, 0]),
            (None, false) => None,
        }
    }
}

/// The most timed repetitions `--reps` accepts: enough for any benchmark,
/// few enough that the vectors of times stay small.
pub const MAX_REPS: u64 = 1_000_000;

/// `--alpha`, `--beta`: a finite number (α or β of NaN or ±∞ would make
/// every element of the target NaN or infinite, which no verification can
/// pass).
fn finite(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err("expected a finite number".to_string()),
        Err(e) => Err(format!("{e}; expected a number such as 2 or -0.5")),
    }
}

/// `--reps`: 1 ..= [`MAX_REPS`] (0 would time nothing).
fn reps_parser() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_REPS)
}
