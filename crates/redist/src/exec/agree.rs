//! Agreement: every rank reaches the same verdict, even when ranks were
//! handed different arguments.
//!
//! Identical code on every rank is not agreement: a rank given another
//! layout, a wrong array or other options would return an error on its own
//! while the others went on into a collective and waited forever. So
//! building a redistribution ends with one small all-reduce of each rank's
//! verdict and of a fingerprint of everything that must match, and every
//! execution with one all-reduce of each rank's verdict on its arrays. A
//! rank that failed returns its own error; the others learn which rank
//! failed, and what kind of error it had.

use crate::error::RedistError;
use crate::options::Options;
use dist_array::Layout;
use mpi::collective::Root;
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::ProcGrid;
use redist_plan::plan::Window;

/// A 64-bit FNV-1a hash, fed field by field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fingerprint(u64);

impl Fingerprint {
    pub fn new() -> Fingerprint {
        Fingerprint(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Feeds `n` (as 8 bytes, so lists of numbers cannot run together).
    pub fn number(&mut self, n: u64) -> &mut Fingerprint {
        self.bytes(&n.to_le_bytes());
        self
    }

    /// Feeds a list of numbers, with its length.
    pub fn numbers(&mut self, ns: &[usize]) -> &mut Fingerprint {
        self.number(ns.len() as u64);
        for &n in ns {
            self.number(n as u64);
        }
        self
    }

    /// Feeds `s`, with its length.
    pub fn text(&mut self, s: &str) -> &mut Fingerprint {
        self.number(s.len() as u64);
        self.bytes(s.as_bytes());
        self
    }

    /// Feeds a layout: shape, distributions, grid, rank map (its order, or
    /// every entry of an explicit one), storage order.
    pub fn layout(&mut self, l: &Layout) -> &mut Fingerprint {
        self.numbers(l.shape()).text(&l.spec().to_string());
        match l.rank_dims() {
            Some(dims) => self.text("dims").numbers(&dims),
            None => self.numbers(&l.rank_map()),
        };
        self.text(&format!("{:?}", l.storage()))
    }

    /// Feeds a window: both origins and the shape.
    pub fn window(&mut self, w: &Window) -> &mut Fingerprint {
        self.numbers(w.source_origin())
            .numbers(w.target_origin())
            .numbers(w.shape())
    }

    /// Feeds a grid's extents and rank order.
    pub fn grid(&mut self, g: &ProcGrid) -> &mut Fingerprint {
        self.numbers(g.extents()).text(&format!("{:?}", g.order()))
    }

    /// Feeds the options.
    pub fn options(&mut self, o: &Options) -> &mut Fingerprint {
        self.text(&o.remap.to_string())
            .text(&o.strategy.to_string())
            .number(o.max_message_elements as u64)
            .text(&o.datatype_min_run.to_string())
            .text(&o.direct_min_run.to_string())
            .text(&o.streaming.to_string())
            .number(u64::from(o.node_direct))
            .number(u64::from(o.updates))
            .text("padding")
            .numbers(o.padding.source())
            .numbers(o.padding.target())
            .text(&o.measured.map(|m| m.to_string()).unwrap_or_default())
            .text(
                &o.wisdom
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            )
    }

    pub fn value(&self) -> u64 {
        self.0
    }
}

/// Agrees over `comm` on a verdict: `local` is this rank's, `fingerprint`
/// a hash of what must be the same on every rank (0 when nothing is
/// compared). One all-reduce when every rank succeeded, one more (a
/// broadcast of the error's kind) when some did not. Collective.
///
/// Returns `Ok(value)` on every rank only when every rank succeeded with
/// the same fingerprint. Otherwise every rank returns an error: its own
/// where it failed, else [`RedistError::OtherRank`] naming the lowest rank
/// that failed and its kind of error, or [`RedistError::Disagreement`]
/// when the fingerprints differ.
pub(crate) fn agree<V>(
    comm: &SimpleCommunicator,
    local: Result<V, RedistError>,
    fingerprint: u64,
    what: &'static str,
) -> Result<V, RedistError> {
    agree_with(comm, local.map(|v| (v, [])), fingerprint, what).map(|(v, _)| v)
}

/// Like [`agree`], with `N` figures of every rank riding on the same
/// all-reduce: each rank's value carries its own (zeros where it failed),
/// and on success every rank gets each figure's maximum over the ranks.
pub(crate) fn agree_with<V, const N: usize>(
    comm: &SimpleCommunicator,
    local: Result<(V, [u64; N]), RedistError>,
    fingerprint: u64,
    what: &'static str,
) -> Result<(V, [u64; N]), RedistError> {
    let size = u64::try_from(comm.size()).unwrap_or(u64::MAX);
    let me = u64::try_from(comm.rank()).unwrap_or(0);
    let failed = local.is_err();
    // Maxima of: a failure flag, the fingerprint and its complement (so
    // both the largest and the smallest fingerprint come back), size - rank
    // of failed ranks (the lowest failed rank), and the figures.
    let mut mine = vec![
        u64::from(failed),
        fingerprint,
        !fingerprint,
        if failed { size - me } else { 0 },
    ];
    mine.extend(local.as_ref().map_or([0; N], |(_, f)| *f));
    let mut all = vec![0u64; mine.len()];
    all_reduce_max(comm, &mine, &mut all);
    if all[0] == 0 {
        if all[1] != !all[2] {
            return Err(RedistError::Disagreement {
                what,
                detail: "ranks passed different layouts, grids, options or element types"
                    .to_string(),
            });
        }
        let mut figures = [0u64; N];
        figures.copy_from_slice(&all[4..]);
        return local.map(|(v, _)| (v, figures));
    }
    // Some rank failed: the lowest one tells the others what kind of error.
    let root = size - all[3];
    let mut kind = match &local {
        Err(e) => e.kind_code(),
        Ok(_) => 0,
    };
    comm.process_at_rank(i32::try_from(root).unwrap_or(0))
        .broadcast_into(&mut kind);
    match local {
        Err(e) => Err(e),
        Ok(_) => Err(RedistError::OtherRank {
            rank: usize::try_from(root).unwrap_or(usize::MAX),
            what,
            kind: RedistError::kind_name(kind),
        }),
    }
}

/// The element-wise maximum of every rank's `mine` over `comm`, into `all`
/// (collective), waiting as [`procgrid::waits::complete`] does.
pub(crate) fn all_reduce_max(comm: &SimpleCommunicator, mine: &[u64], all: &mut [u64]) {
    let max = mpi::collective::SystemOperation::max();
    procgrid::waits::all_reduce_into(comm, mine, all, max);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_tell_layouts_and_options_apart() {
        let a = Layout::parse(&[8, 8], "cyclic(2),block@2x2").unwrap();
        let b = Layout::parse(&[8, 8], "cyclic(3),block@2x2").unwrap();
        let f = |l: &Layout, o: &Options| Fingerprint::new().layout(l).options(o).value();
        let o = Options::default();
        assert_eq!(f(&a, &o), f(&a.clone(), &o));
        assert_ne!(f(&a, &o), f(&b, &o));
        assert_ne!(
            f(&a, &o),
            f(&a.clone().with_storage(procgrid::Order::ColumnMajor), &o)
        );
        assert_ne!(
            f(&a, &o),
            f(&a.clone().with_rank_map(vec![1, 0, 2, 3]).unwrap(), &o)
        );
        let other = Options {
            node_direct: false,
            ..o.clone()
        };
        assert_ne!(f(&a, &o), f(&a, &other));
        // Ghost widths count, on either side.
        let padded = |s: &[usize], t: &[usize]| Options {
            padding: redist_plan::padding::Padding::new(s, t),
            ..o.clone()
        };
        assert_eq!(f(&a, &o), f(&a, &padded(&[0, 0], &[])));
        assert_ne!(f(&a, &o), f(&a, &padded(&[1, 0], &[])));
        assert_ne!(f(&a, &padded(&[1, 0], &[])), f(&a, &padded(&[], &[1, 0])));
        assert_ne!(f(&a, &padded(&[1, 0], &[])), f(&a, &padded(&[0, 1], &[])));
        // Lists cannot run together: [1, 23] is not [12, 3].
        let n = |v: &[usize]| Fingerprint::new().numbers(v).value();
        assert_ne!(n(&[1, 23]), n(&[12, 3]));
    }
}
