//! Choosing the aggregators: the ranks that write the file's ranges and
//! read them back.

use crate::error::IoError;
use crate::options::Aggregators;
use mpi::topology::Communicator;
use procgrid::ProcGrid;

/// The aggregator ranks of `grid`'s communicator that `choice` names, in
/// the order they take the file's blocks. Collective over the
/// communicator (one all-gather of every rank's node and its place on
/// it), except for [`Aggregators::Ranks`], checked without communication.
pub(crate) fn resolve(grid: &ProcGrid, choice: &Aggregators) -> Result<Vec<usize>, IoError> {
    let size = grid.communicator().size() as usize;
    if let Aggregators::Ranks(ranks) = choice {
        let mut seen = vec![false; size];
        for &r in ranks {
            if r >= size || std::mem::replace(&mut seen[r], true) {
                return Err(IoError::invalid(
                    "aggregator ranks",
                    format!("{ranks:?}"),
                    format!("distinct ranks below {size}"),
                ));
            }
        }
        return Ok(ranks.clone());
    }
    let node = grid.node();
    let me = grid.communicator().rank() as usize;
    let leader = node.ranks().first().copied().unwrap_or(me);
    let place = node.ranks().iter().position(|&r| r == me).unwrap_or(0);
    let mine = [leader as u64, place as u64];
    let mut all = vec![0u64; 2 * size];
    procgrid::waits::all_gather_into(grid.communicator(), &mine[..], &mut all[..]);
    let places: Vec<(usize, usize)> = all
        .chunks_exact(2)
        .map(|c| {
            (
                usize::try_from(c[0]).unwrap_or(0),
                usize::try_from(c[1]).unwrap_or(0),
            )
        })
        .collect();
    Ok(pick(&places, choice))
}

/// The aggregators among ranks whose `(node leader, place on the node)`
/// are `places` (indexed by rank): by place on the node, then by node.
fn pick(places: &[(usize, usize)], choice: &Aggregators) -> Vec<usize> {
    let nodes = || {
        let mut leaders: Vec<usize> = places.iter().map(|p| p.0).collect();
        leaders.sort_unstable();
        leaders.dedup();
        leaders.len()
    };
    let (per_node, total) = match *choice {
        Aggregators::Auto if nodes() == 1 => (usize::MAX, usize::MAX),
        Aggregators::Auto => (1, usize::MAX),
        Aggregators::PerNode(k) => (k, usize::MAX),
        Aggregators::Count(n) => (usize::MAX, n),
        Aggregators::Ranks(ref r) => return r.clone(),
    };
    let mut order: Vec<usize> = (0..places.len())
        .filter(|&r| places[r].1 < per_node)
        .collect();
    order.sort_by_key(|&r| (places[r].1, places[r].0, r));
    order.truncate(total);
    order.sort_unstable();
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregators_spread_over_the_nodes() {
        // Ranks 0-3 on node 0, 4-7 on node 4 (leaders name the nodes).
        let places: Vec<(usize, usize)> = (0..8).map(|r| (r / 4 * 4, r % 4)).collect();
        assert_eq!(pick(&places, &Aggregators::PerNode(1)), vec![0, 4]);
        assert_eq!(pick(&places, &Aggregators::Auto), vec![0, 4]);
        let one_node: Vec<(usize, usize)> = (0..3).map(|r| (0, r)).collect();
        assert_eq!(pick(&one_node, &Aggregators::Auto), vec![0, 1, 2]);
        assert_eq!(pick(&places, &Aggregators::PerNode(2)), vec![0, 1, 4, 5]);
        assert_eq!(pick(&places, &Aggregators::Count(3)), vec![0, 1, 4]);
        assert_eq!(pick(&places, &Aggregators::Count(99)).len(), 8);
        assert_eq!(pick(&places, &Aggregators::PerNode(9)).len(), 8);
        // Ranks dealt round-robin over two nodes.
        let dealt: Vec<(usize, usize)> = (0..6).map(|r| (r % 2, r / 2)).collect();
        assert_eq!(pick(&dealt, &Aggregators::PerNode(1)), vec![0, 1]);
        assert_eq!(pick(&dealt, &Aggregators::Count(3)), vec![0, 1, 2]);
    }
}
