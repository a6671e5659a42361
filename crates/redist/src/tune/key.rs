//! What a measured choice depends on, as this job sees it: the case (the
//! redistribution) and the machine (ranks, nodes, MPI library, processor).

use super::wisdom::Machine;
use crate::options::Options;
use dist_array::Layout;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::{Node, ProcGrid};
use redist_plan::plan::Window;

/// The case of a redistribution: its layouts, window and permutation, the
/// element size and every option that shapes its messages (not those that
/// choose how they travel: strategy, datatypes' probe, the measured choice,
/// the wisdom file).
pub(crate) fn case(
    source: &Layout,
    target: &Layout,
    window: &Window,
    permutation: Option<&[usize]>,
    options: &Options,
    elem_bytes: usize,
) -> String {
    let mut s = format!("{source} -> {target} elem {elem_bytes}B");
    if window.shape() != source.shape() {
        s.push_str(&format!(
            " window {:?}+{:?}->{:?}",
            window.source_origin(),
            window.shape(),
            window.target_origin()
        ));
    }
    if let Some(p) = permutation {
        s.push_str(&format!(" permute {p:?}"));
    }
    let o = options;
    s.push_str(&format!(
        " remap {} datatypes {} direct {} streaming {} max-message {}",
        o.remap, o.datatype_min_run, o.direct_min_run, o.streaming, o.max_message_elements
    ));
    if !o.node_direct {
        s.push_str(" no-node-direct");
    }
    if o.updates {
        s.push_str(" updates");
    }
    if !o.padding.source().is_empty() || !o.padding.target().is_empty() {
        s.push_str(&format!(
            " padding {:?}/{:?}",
            o.padding.source(),
            o.padding.target()
        ));
    }
    s
}

/// The processor's model name (the first `model name` of
/// `/proc/cpuinfo`), or `unknown`.
fn processor() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// The machine this job runs on, as `grid`'s communicator sees it: its
/// ranks, the most ranks on a node, the nodes, and rank 0's MPI library and
/// processor (only rank 0 looks wisdom up). Collective: two small
/// all-reduces.
pub(crate) fn machine(grid: &ProcGrid) -> Machine {
    machine_of(grid.communicator(), grid.node())
}

/// [`machine`] of the communicator `comm`, whose ranks on the calling
/// rank's node are `node`. Collective: two small all-reduces.
pub(crate) fn machine_of(comm: &SimpleCommunicator, node: &Node) -> Machine {
    let node = node.ranks();
    let me = usize::try_from(comm.rank()).unwrap_or(0);
    let leader = u64::from(node.first() == Some(&me));
    let mut nodes = 0u64;
    comm.all_reduce_into(&leader, &mut nodes, SystemOperation::sum());
    let mut most = 0u64;
    comm.all_reduce_into(&(node.len() as u64), &mut most, SystemOperation::max());
    Machine {
        ranks: usize::try_from(comm.size()).unwrap_or(0),
        ranks_per_node: usize::try_from(most).unwrap_or(0),
        nodes: usize::try_from(nodes).unwrap_or(0),
        mpi: mpi_extras::library::version().unwrap_or_else(|| "unknown".to_string()),
        processor: processor(),
    }
}
