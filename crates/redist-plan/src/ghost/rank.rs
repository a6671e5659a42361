//! One rank's ghost update: the boxes it receives from each owner, the
//! boxes it sends to each reader, and the boxes it copies within its own
//! storage (a periodic axis of grid extent 1, or ghosts wider than a
//! neighbour's part that wrap back to the rank).

use super::axis::{segments, Segment, Side};
use super::spec::{Corners, GhostSpec};
use crate::error::PlanError;
use crate::layout::Layout;
use std::collections::BTreeMap;
use std::mem::size_of;

/// A box of cells copied from an owner's interior into a reader's ghosts:
/// per axis (the layout's order), where it starts in the owner's padded
/// storage, where in the reader's, and its extent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GhostBox {
    /// Start in the owner's padded storage, per axis.
    pub src: Box<[usize]>,
    /// Start in the reader's padded storage, per axis.
    pub dst: Box<[usize]>,
    /// Extent per axis.
    pub len: Box<[usize]>,
}

impl GhostBox {
    /// Cells in the box.
    pub fn cells(&self) -> usize {
        self.len.iter().product()
    }
}

/// The boxes between one pair of ranks, in the order both list them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GhostMessage {
    /// The other rank: the owner for a receive, the reader for a send.
    pub peer: usize,
    /// The peer's padded storage shape (to read or write it directly).
    pub peer_padded: Box<[usize]>,
    /// The boxes, in the order both sides list them.
    pub boxes: Vec<GhostBox>,
    /// Cells in all of them.
    pub cells: usize,
}

/// What one rank does in a ghost update: its receives (one per owner of
/// some of its ghosts), its sends (one per reader of some of its
/// interior), and the boxes it copies within its own storage.
///
/// ```
/// use redist_plan::ghost::{Corners, GhostSpec, RankGhosts};
/// use redist_plan::Layout;
/// let layout = Layout::parse(&[8, 8], "block,block@2x2")?;
/// let spec = GhostSpec::new(&[1, 1], &[true, true], Corners::Box);
/// let g = RankGhosts::new(&layout, &spec, 0)?;
/// // Every other rank of a periodic 2x2 grid is a neighbour, both ways.
/// assert_eq!(g.recvs().len(), 3);
/// assert_eq!(g.sends().len(), 3);
/// // A padded 6x6 block has 36 - 16 = 20 ghost cells, all filled.
/// assert_eq!(g.ghost_cells(), 20);
/// # Ok::<(), redist_plan::PlanError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankGhosts {
    rank: usize,
    padded: Box<[usize]>,
    recvs: Vec<GhostMessage>,
    sends: Vec<GhostMessage>,
    own: Vec<GhostBox>,
}

/// The padded storage shape of `rank` in `layout` with `widths`: its local
/// extents plus twice the widths (all zero for a rank outside the layout).
pub fn padded_shape(layout: &Layout, rank: usize, widths: &[usize]) -> Vec<usize> {
    match layout.local_shape(rank) {
        Ok(shape) => shape.iter().zip(widths).map(|(&m, &w)| m + 2 * w).collect(),
        Err(_) => vec![0; layout.ndim()],
    }
}

impl RankGhosts {
    /// Rank `rank`'s part of the ghost update `spec` on `layout` (nothing
    /// for a rank outside the layout). Costs O(grid extents + its boxes).
    ///
    /// # Errors
    ///
    /// As [`GhostSpec::check`].
    pub fn new(layout: &Layout, spec: &GhostSpec, rank: usize) -> Result<RankGhosts, PlanError> {
        spec.check(layout)?;
        let widths = spec.widths();
        let mut out = RankGhosts {
            rank,
            padded: padded_shape(layout, rank, widths).into(),
            recvs: Vec::new(),
            sends: Vec::new(),
            own: Vec::new(),
        };
        let Ok(me) = layout.coords_of_rank(rank) else {
            return Ok(out);
        };
        let axes = layout.axes();
        let of = |d: usize, c: usize| segments(&axes[d], c, widths[d], spec.periodic()[d]);
        // Receives: this rank's segments, boxes grouped by owner.
        let mine: Vec<Vec<Segment>> = (0..me.len()).map(|d| of(d, me[d])).collect();
        let mut by_owner: BTreeMap<usize, Vec<GhostBox>> = BTreeMap::new();
        product(&mine, widths, spec.corners(), &mut |owner, b| {
            let owner = layout.rank_of_coords(owner).unwrap_or(rank);
            by_owner.entry(owner).or_default().push(b);
        });
        for (peer, boxes) in by_owner {
            if peer == rank {
                out.own = boxes;
            } else {
                out.recvs.push(message(layout, widths, peer, boxes));
            }
        }
        // Sends: per axis, the coordinates with a segment this rank owns;
        // each of their products is a reader, its boxes listed as it lists
        // them.
        let readers: Vec<Vec<usize>> = (0..me.len())
            .map(|d| {
                (0..axes[d].procs())
                    .filter(|&c| of(d, c).iter().any(|s| s.owner == me[d]))
                    .collect()
            })
            .collect();
        for reader in coordinates(&readers) {
            let peer = layout.rank_of_coords(&reader)?;
            if peer == rank {
                continue;
            }
            let theirs: Vec<Vec<Segment>> = (0..me.len())
                .map(|d| {
                    of(d, reader[d])
                        .into_iter()
                        .filter(|s| s.owner == me[d])
                        .collect()
                })
                .collect();
            let mut boxes = Vec::new();
            product(&theirs, widths, spec.corners(), &mut |_, b| boxes.push(b));
            if !boxes.is_empty() {
                out.sends.push(message(layout, widths, peer, boxes));
            }
        }
        Ok(out)
    }

    /// The rank this part belongs to.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// This rank's padded storage shape.
    pub fn padded(&self) -> &[usize] {
        &self.padded
    }

    /// Receives, one per owner of some of this rank's ghosts, by rank.
    pub fn recvs(&self) -> &[GhostMessage] {
        &self.recvs
    }

    /// Sends, one per reader of some of this rank's interior, by rank.
    pub fn sends(&self) -> &[GhostMessage] {
        &self.sends
    }

    /// Boxes copied within this rank's own storage.
    pub fn own(&self) -> &[GhostBox] {
        &self.own
    }

    /// Ghost cells this rank's update fills.
    pub fn ghost_cells(&self) -> usize {
        self.recvs.iter().map(|m| m.cells).sum::<usize>()
            + self.own.iter().map(GhostBox::cells).sum::<usize>()
    }

    /// Bytes this part holds (its plan: boxes and messages), which grows
    /// with the neighbours and the boxes, never with the cells.
    pub fn heap_bytes(&self) -> usize {
        let n = self.padded.len() * size_of::<usize>();
        let boxes = |b: &[GhostBox]| b.len() * (size_of::<GhostBox>() + 3 * n);
        let messages = |m: &[GhostMessage]| {
            m.iter()
                .map(|m| size_of::<GhostMessage>() + n + boxes(&m.boxes))
                .sum::<usize>()
        };
        n + messages(&self.recvs) + messages(&self.sends) + boxes(&self.own)
    }
}

/// The message of `boxes` with `peer`.
fn message(layout: &Layout, widths: &[usize], peer: usize, boxes: Vec<GhostBox>) -> GhostMessage {
    GhostMessage {
        peer,
        peer_padded: padded_shape(layout, peer, widths).into(),
        cells: boxes.iter().map(GhostBox::cells).sum(),
        boxes,
    }
}

/// Every product of one segment per axis of `segments` that holds ghosts
/// (`corners` says how many axes may be ghost segments at once), with the
/// coordinates owning it, in lexicographic order of the segments. Owners'
/// storage is padded by `widths` too.
fn product(
    segments: &[Vec<Segment>],
    widths: &[usize],
    corners: Corners,
    f: &mut impl FnMut(&[usize], GhostBox),
) {
    let n = segments.len();
    if n == 0 || segments.iter().any(Vec::is_empty) {
        return;
    }
    let mut pick = vec![0usize; n];
    let mut owner = vec![0usize; n];
    loop {
        let chosen: Vec<&Segment> = (0..n).map(|d| &segments[d][pick[d]]).collect();
        let ghosts = chosen.iter().filter(|s| s.side == Side::Ghost).count();
        let wanted = match corners {
            Corners::Star => ghosts == 1,
            Corners::Box => ghosts >= 1,
        };
        if wanted {
            for (o, s) in owner.iter_mut().zip(&chosen) {
                *o = s.owner;
            }
            f(
                &owner,
                GhostBox {
                    src: chosen.iter().zip(widths).map(|(s, w)| s.from + w).collect(),
                    dst: chosen.iter().map(|s| s.at).collect(),
                    len: chosen.iter().map(|s| s.len).collect(),
                },
            );
        }
        // The next pick, the last axis fastest.
        let mut d = n;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            pick[d] += 1;
            if pick[d] < segments[d].len() {
                break;
            }
            pick[d] = 0;
        }
    }
}

/// Every tuple of one entry per list, the last fastest.
fn coordinates(lists: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for list in lists {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                list.iter().map(move |&c| {
                    let mut next = prefix.clone();
                    next.push(c);
                    next
                })
            })
            .collect();
    }
    out
}
