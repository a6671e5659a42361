//! The arguments of `redist plan`, which both of its reports read: the
//! whole plan's ([`crate::plan_report`]) and, with `--rank`, one rank's
//! ([`crate::rank_report`]).

use crate::shape::Shape;
use clap::Args;
use dist_array::LayoutSpec;
use redist::Remap;

/// Arguments of `redist plan`.
#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    /// Global array shape: extents joined by `x`, e.g. `4096x4096`.
    #[arg(long, value_name = "AxBx..")]
    pub shape: Shape,
    /// Source layout spec string, e.g. `cyclic(64),cyclic(64)@2x3`.
    #[arg(long, value_name = "SPEC")]
    pub from: LayoutSpec,
    /// Target layout spec string.
    #[arg(long, value_name = "SPEC")]
    pub to: LayoutSpec,
    /// How the target's ranks may be relabelled: none, closed-form or optimal.
    #[arg(long, default_value = "none", value_name = "MODE")]
    pub remap: Remap,
    /// Build only what rank R builds when the redistribution is set up
    /// (its messages, schedule and copy programs; no MPI, no data) and
    /// report that, at any number of ranks.
    #[arg(long, value_name = "R")]
    pub rank: Option<usize>,
    /// With --rank, also list the rank's sends and receives: [rank,
    /// elements, step] each.
    #[arg(long, requires = "rank")]
    pub list: bool,
    /// Print one JSON object on one line instead of the report.
    #[arg(long)]
    pub json: bool,
}
