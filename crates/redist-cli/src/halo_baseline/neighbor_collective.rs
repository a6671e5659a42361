//! [`NeighborCollectiveHalo`]: the ghost update of `--baseline neighbor`,
//! one `MPI_Neighbor_alltoallw` per update over a distributed graph whose
//! edges are the neighbour directions: 2n faces for a star update, the
//! 3^n − 1 faces, edges and corners for a box update, each direction its
//! own edge even where several reach the same rank (a periodic axis of 1
//! or 2 processes). Each edge carries one subarray of the padded block,
//! read from the interior and written straight into the ghosts, so no
//! corner needs carrying.
//!
//! The edges are listed in one order of the directions on every rank:
//! sources as the neighbour in direction `s` whose cells fill this rank's
//! ghosts in direction `s`, destinations as the neighbour in direction
//! `−s`, whose ghosts in direction `s` this rank fills. Where a pair of
//! ranks is joined by several edges, the `k`-th a rank sends on is then the
//! `k`-th its neighbour receives on, which is how a distributed graph pairs
//! repeated edges (a Cartesian communicator pairs them otherwise, and
//! MPICH 4.0.2 gets that wrong: pmodels/mpich#2194).

use super::error::HaloError;
use super::geometry::{check_baseline, directions, neighbour_rank, side_of, GhostedBlock, Side};
use super::{member, padded_bytes, storage_size};
use bytemuck::Pod;
use dist_array::Layout;
use mpi::topology::SimpleCommunicator;
use mpi_extras::neighbors::{DistGraph, NeighborAlltoallw, NeighborBlock};
use mpi_extras::Datatype;
use redist::ghost::GhostSpec;
use std::ops::Range;

/// The neighbour-collective ghost update of one rank, built once and run
/// many times over its padded storage.
///
/// ```
/// use dist_array::Layout;
/// use mpi::topology::Communicator;
/// use redist::ghost::{Corners, GhostSpec};
/// use redist_cli::halo_baseline::{check_ghosts, fill_ghosted, NeighborCollectiveHalo};
///
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let n = world.size() as usize;
/// // A periodic axis of one process: every neighbour is this rank itself.
/// let layout = Layout::parse(&[3, 4 * n], &format!("block,block@1x{n}")).unwrap();
/// let halo = GhostSpec::new(&[2, 1], &[true, true], Corners::Box);
/// let value = |g: &[usize]| (10 * g[0] + g[1]) as i32;
/// let me = world.rank() as usize;
/// let mut storage = fill_ghosted(&layout, me, halo.widths(), value, -1).unwrap();
/// let update = NeighborCollectiveHalo::new(&world, &layout, &halo, 4).unwrap();
/// assert_eq!(update.edges(), 8);
/// update.update(&mut storage).unwrap();
/// assert!(check_ghosts(&layout, me, &halo, &storage, value, -1).unwrap().is_right());
/// ```
pub struct NeighborCollectiveHalo {
    graph: DistGraph,
    exchange: NeighborAlltoallw,
    rank: usize,
    /// Bytes of this rank's padded storage.
    bytes: usize,
}

impl NeighborCollectiveHalo {
    /// The update of this rank's block of `layout` over `comm` (whose rank
    /// `r` is the layout's rank `r`), for `element_bytes`-byte elements.
    /// Collective over `comm` (the graph is a communicator of its own).
    ///
    /// # Errors
    ///
    /// As [`AxisByAxisHalo::new`](super::AxisByAxisHalo::new).
    pub fn new(
        comm: &SimpleCommunicator,
        layout: &Layout,
        halo: &GhostSpec,
        element_bytes: usize,
    ) -> Result<NeighborCollectiveHalo, HaloError> {
        if element_bytes == 0 {
            return Err(HaloError::ZeroElement);
        }
        check_baseline(layout, halo, element_bytes)?;
        let me = member(comm, layout)?;
        let element = Datatype::element(element_bytes)?;
        let (mut sources, mut destinations) = (vec![], vec![]);
        let (mut recvs, mut sends) = (vec![], vec![]);
        let mut bytes = 0;
        if let Some(rank) = me {
            let block = GhostedBlock::new(layout, rank, halo.widths())?;
            bytes = padded_bytes(&block, element_bytes)?;
            if !block.is_empty() {
                for dir in directions(halo.widths(), halo.corners()) {
                    if let Some(from) = neighbour_rank(layout, &block, &dir, halo.periodic())? {
                        sources.push(from);
                        let ghosts = region(&block, &dir, |d, side| block.ghosts(d, side));
                        recvs.push(NeighborBlock::one(block.region_type(&ghosts, &element)?));
                    }
                    let back: Vec<i8> = dir.iter().map(|&s| -s).collect();
                    if let Some(to) = neighbour_rank(layout, &block, &back, halo.periodic())? {
                        destinations.push(to);
                        // The neighbour in direction -s takes our cells on
                        // its side, the -s side of the interior.
                        let face = region(&block, &back, |d, side| block.edge(d, side));
                        sends.push(NeighborBlock::one(block.region_type(&face, &element)?));
                    }
                }
            }
        }
        let graph = DistGraph::adjacent(comm, &sources, &destinations)?;
        let exchange = NeighborAlltoallw::new(&graph, sends, recvs)?;
        Ok(NeighborCollectiveHalo {
            graph,
            exchange,
            rank: me.unwrap_or(usize::MAX),
            bytes,
        })
    }

    /// Edges this rank receives on (one per neighbour direction it has).
    pub fn edges(&self) -> usize {
        self.graph.sources().len()
    }

    /// Fills the ghosts of `storage`, this rank's padded block (empty for a
    /// rank beyond the layout's). Collective over the communicator.
    ///
    /// # Errors
    ///
    /// As [`AxisByAxisHalo::update`](super::AxisByAxisHalo::update).
    pub fn update<T: Pod>(&self, storage: &mut [T]) -> Result<(), HaloError> {
        storage_size(self.rank, storage, self.bytes)?;
        Ok(self.exchange.run_within(&self.graph, storage)?)
    }
}

/// The cells of `block` in direction `dir`: along a moving axis those
/// `cells(axis, side)` names, along the others the interior.
fn region(
    block: &GhostedBlock,
    dir: &[i8],
    cells: impl Fn(usize, Side) -> Range<usize>,
) -> Vec<Range<usize>> {
    dir.iter()
        .enumerate()
        .map(|(d, &step)| match side_of(step) {
            Some(side) => cells(d, side),
            None => block.inside(d),
        })
        .collect()
}
