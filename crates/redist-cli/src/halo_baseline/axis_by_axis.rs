//! [`AxisByAxisHalo`]: the ghost update of `--baseline sendrecv`, as a C
//! programmer writes it after 2DECOMP&FFT's `halo.f90`: one axis after the
//! other, receives of both ghost faces and sends of both interior faces
//! posted, then waited for, before the next axis.
//!
//! Corners travel in steps. The face exchanged along axis `d` spans, on
//! every axis before `d`, the ghosts already filled there as well as the
//! interior (for a box update), and on every axis after `d` the interior
//! only. So after the last axis a corner cell holds what its diagonal
//! neighbour sent along the first axis and each neighbour between passed
//! on. Along an axis whose side has no neighbour (a non-periodic edge) the
//! span stops at the interior there: those ghosts are the user's boundary
//! and never written. A star update's faces span the interior on every
//! other axis.

use super::error::HaloError;
use super::geometry::{axis_neighbour, check_baseline, GhostedBlock, Side};
use super::{member, padded_bytes, storage_size};
use bytemuck::Pod;
use dist_array::Layout;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_extras::neighbors::{NeighborMessage, NeighborMessages};
use mpi_extras::Datatype;
use redist::ghost::{Corners, GhostSpec};
use std::ops::Range;

/// The axis-by-axis ghost update of one rank, built once and run many
/// times over its padded storage.
///
/// ```
/// use dist_array::Layout;
/// use mpi::topology::Communicator;
/// use redist::ghost::{Corners, GhostSpec};
/// use redist_cli::halo_baseline::{check_ghosts, fill_ghosted, AxisByAxisHalo};
///
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let n = world.size() as usize;
/// let layout = Layout::parse(&[4 * n, 5], &format!("block,block@{n}x1")).unwrap();
/// let halo = GhostSpec::new(&[1, 2], &[true, true], Corners::Box);
/// let value = |g: &[usize]| (10 * g[0] + g[1]) as f64;
/// let me = world.rank() as usize;
/// let mut storage = fill_ghosted(&layout, me, halo.widths(), value, -1.0).unwrap();
/// let mut update = AxisByAxisHalo::new(&world, &layout, &halo, 8).unwrap();
/// update.update(&mut storage).unwrap();
/// assert!(check_ghosts(&layout, me, &halo, &storage, value, -1.0).unwrap().is_right());
/// ```
pub struct AxisByAxisHalo {
    comm: SimpleCommunicator,
    rank: usize,
    /// Per axis, its messages (none along an axis of width 0, or for a rank
    /// that takes no part).
    axes: Vec<NeighborMessages>,
    /// Bytes of this rank's padded storage.
    bytes: usize,
}

/// The tag of the faces moving towards higher coordinates along axis `d`
/// (`2d`) and towards lower ones (`2d + 1`): with the same rank on both
/// sides (a periodic axis of 1 or 2 processes) the tag tells the two
/// faces apart. Beyond MPI's least tag bound it saturates, and
/// `NeighborMessages::new` refuses it.
fn tag(d: usize, towards: Side) -> i32 {
    let t = d
        .saturating_mul(2)
        .saturating_add(usize::from(towards == Side::Low));
    i32::try_from(t).unwrap_or(i32::MAX)
}

impl AxisByAxisHalo {
    /// The update of this rank's block of `layout` over `comm` (whose rank
    /// `r` is the layout's rank `r`), for `element_bytes`-byte elements.
    /// Collective over `comm` (it works on a duplicate, so its messages
    /// never meet the caller's).
    ///
    /// # Errors
    ///
    /// - [`HaloError::ZeroElement`] for 0-byte elements;
    /// - [`HaloError::TooFewRanks`] when the layout has more ranks than
    ///   `comm`;
    /// - [`HaloError::NotOneBlockPerAxis`], [`HaloError::PerAxis`],
    ///   [`HaloError::WidthBeyondNeighbour`], [`HaloError::Overflow`]: a
    ///   layout or halo the hand-written update does not serve (decided
    ///   alike on every rank);
    /// - [`HaloError::Mpi`] when a datatype cannot be built.
    pub fn new(
        comm: &SimpleCommunicator,
        layout: &Layout,
        halo: &GhostSpec,
        element_bytes: usize,
    ) -> Result<AxisByAxisHalo, HaloError> {
        if element_bytes == 0 {
            return Err(HaloError::ZeroElement);
        }
        check_baseline(layout, halo, element_bytes)?;
        let me = member(comm, layout)?;
        let element = Datatype::element(element_bytes)?;
        let mut axes = Vec::with_capacity(layout.ndim());
        let mut bytes = 0;
        if let Some(rank) = me {
            let block = GhostedBlock::new(layout, rank, halo.widths())?;
            bytes = padded_bytes(&block, element_bytes)?;
            if !block.is_empty() {
                for d in 0..layout.ndim() {
                    axes.push(axis_messages(layout, halo, &block, d, &element)?);
                }
            }
        }
        Ok(AxisByAxisHalo {
            comm: comm.duplicate(),
            rank: me.unwrap_or(usize::MAX),
            axes,
            bytes,
        })
    }

    /// Fills the ghosts of `storage`, this rank's padded block (empty for a
    /// rank beyond the layout's). Collective over the communicator: every
    /// rank of the layout calls it.
    ///
    /// # Errors
    ///
    /// - [`HaloError::StorageSize`] when `storage` is not the rank's padded
    ///   block of elements of the size built for;
    /// - [`HaloError::Mpi`] when MPI returns an error code.
    pub fn update<T: Pod>(&mut self, storage: &mut [T]) -> Result<(), HaloError> {
        storage_size(self.rank, storage, self.bytes)?;
        for messages in &mut self.axes {
            if !messages.is_empty() {
                messages.run(&self.comm, storage)?;
            }
        }
        Ok(())
    }
}

/// The messages of `block` along axis `d`: its two ghost faces received
/// from the neighbours along `d`, its two interior faces sent to them.
fn axis_messages(
    layout: &Layout,
    halo: &GhostSpec,
    block: &GhostedBlock,
    d: usize,
    element: &Datatype,
) -> Result<NeighborMessages, HaloError> {
    let (mut recvs, mut sends) = (vec![], vec![]);
    if halo.widths()[d] == 0 {
        return Ok(NeighborMessages::new(recvs, sends)?);
    }
    // The face's extent along every other axis.
    let span: Vec<Range<usize>> = (0..layout.ndim())
        .map(|e| {
            let inside = block.inside(e);
            if e >= d || halo.corners() == Corners::Star {
                return inside;
            }
            let reaches = |side| {
                axis_neighbour(layout.axis(e), block.coords()[e], side, halo.periodic()[e])
                    .is_some()
            };
            let lo = if reaches(Side::Low) { 0 } else { inside.start };
            let hi = if reaches(Side::High) {
                block.padded()[e]
            } else {
                inside.end
            };
            lo..hi
        })
        .collect();
    let along = |range: Range<usize>| {
        let mut region = span.clone();
        region[d] = range;
        region
    };
    for side in [Side::Low, Side::High] {
        let Some(c) = axis_neighbour(layout.axis(d), block.coords()[d], side, halo.periodic()[d])
        else {
            continue;
        };
        let mut coords = block.coords().to_vec();
        coords[d] = c;
        let peer = layout.rank_of_coords(&coords)?;
        let away = match side {
            Side::Low => Side::High,
            Side::High => Side::Low,
        };
        // The ghosts on `side` come from the neighbour there, whose face
        // moves towards `away` to reach us.
        recvs.push(NeighborMessage {
            peer,
            tag: tag(d, away),
            at: 0,
            datatype: block.region_type(&along(block.ghosts(d, side)), element)?,
        });
        // Our interior face on `side` goes to that neighbour, towards `side`.
        sends.push(NeighborMessage {
            peer,
            tag: tag(d, side),
            at: 0,
            datatype: block.region_type(&along(block.edge(d, side)), element)?,
        });
    }
    Ok(NeighborMessages::new(recvs, sends)?)
}
