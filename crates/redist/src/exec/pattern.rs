//! The access pattern's yardstick: the runs a redistribution moves, copied
//! by one plain loop per rank from its own source part and its node's
//! peers' parts, mapped read-only, into its target part — no programs, no
//! MPI, no agreement, no buffers. What node-direct copies could cost at
//! best on the machine that runs them, whatever its memory system does
//! with runs of that length. `redist run --baseline pattern` times it next
//! to the redistribution, in the same run.
//!
//! Unlike everything an execution holds, the list of runs grows with the
//! extent (one entry per contiguous run): it is a yardstick, built once
//! per measurement, and refuses lists beyond [`MAX_RUN_BYTES_PER_TARGET_BYTE`]
//! times the target part.

use super::agree::agree;
use super::node_direct::{probe_storage, storage_entry, ProbeEntry};
use super::redistribution::Redistribution;
use crate::error::RedistError;
use dist_array::{DistArray, Element, ReadMapping};
use mpi::topology::{Communicator, SimpleCommunicator};
use redist_plan::program::MessageProgram;
use std::marker::PhantomData;

/// The list of runs may take at most this many bytes per byte of the
/// rank's target part (plus 16 MiB): runs of one `f64` take 3.
pub const MAX_RUN_BYTES_PER_TARGET_BYTE: usize = 4;

/// One run: `len` elements from offset `from` of source `source` (0: the
/// rank's own part, `i + 1`: its `i`-th mapped peer) to offset `to` of the
/// target part.
#[derive(Debug, Clone, Copy)]
struct Run {
    from: usize,
    to: usize,
    len: u32,
    source: u32,
}

/// A rank's runs of a redistribution, in target order, with the mappings
/// of the peers' source parts they read.
///
/// ```
/// use dist_array::{DistArray, Layout};
/// use procgrid::ProcGrid;
/// use redist::{Options, PatternBaseline, Redistribution};
/// use mpi::topology::Communicator;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let grid = ProcGrid::new(&world, &[p]).unwrap();
/// // 512 KiB: parts above the shared-memory threshold (64 KiB by default).
/// let n = 1 << 16;
/// let from = Layout::parse(&[n], &format!("cyclic(5)@{p}")).unwrap();
/// let to = Layout::parse(&[n], &format!("cyclic(8)@{p}")).unwrap();
/// let r = Redistribution::<f64>::new(&grid, &from, &grid, &to, Options::default()).unwrap();
/// let a = DistArray::from_fn(&grid, from, |g| g[0] as f64).unwrap();
/// let mut b = DistArray::<f64>::zeros(&grid, to.clone()).unwrap();
/// // Refused (on every rank alike) where a source part is private or a
/// // peer lives on another node.
/// if let Ok(pattern) = PatternBaseline::new(&r, &a) {
///     assert!(pattern.runs() > 0);
///     pattern.run(&a, &mut b).unwrap();
///     let c = DistArray::from_fn(&grid, to, |g| g[0] as f64).unwrap();
///     assert_eq!(b.local_slice(), c.local_slice());
/// }
/// ```
pub struct PatternBaseline<T> {
    /// The peers' source parts, by the order of the rank's receives.
    peers: Vec<ReadMapping>,
    /// Every run, sorted by target offset.
    runs: Vec<Run>,
    /// Elements of the rank's own source and target parts.
    source_len: usize,
    target_len: usize,
    _elements: PhantomData<T>,
}

impl<T: Element> PatternBaseline<T> {
    /// The runs `r` moves on this rank, from the source parts of the
    /// arrays laid out as `src` (this rank's own, and its peers' mapped
    /// read-only). Collective over `r`'s communicator: one all-gather of
    /// where every rank's source part lives, one all-reduce of the
    /// verdicts.
    ///
    /// The peers' parts are read with no synchronisation: every rank keeps
    /// its source unchanged while the baseline runs (as `redist run` does).
    ///
    /// # Errors
    ///
    /// On every rank alike (the lowest refusing rank's own error, the
    /// others [`RedistError::OtherRank`]):
    /// - [`RedistError::InvalidArgument`] when `src`'s local storage is
    ///   not the size `r`'s source layout and padding give this rank, when a rank's
    ///   source part is private (not in shared memory:
    ///   `NDCYCLIC_SHARED_MIN_BYTES=never`, or below its threshold), when
    ///   a rank receives from a peer on another node, or when a peer's
    ///   part cannot be mapped here;
    /// - [`RedistError::Limit`] when the list of runs would exceed
    ///   [`MAX_RUN_BYTES_PER_TARGET_BYTE`] times the target part.
    pub fn new(r: &Redistribution<T>, src: &DistArray<T>) -> Result<Self, RedistError> {
        let comm: &SimpleCommunicator = r.source_grid.communicator();
        let size = usize::try_from(comm.size()).unwrap_or(0);
        let own = src.shared_storage();
        let mut flat = vec![0u64; 7 * size];
        procgrid::waits::all_gather_into(comm, &storage_entry(own.as_ref())[..], &mut flat[..]);
        let all: Vec<ProbeEntry> = (flat.chunks_exact(7))
            .map(|c| c.try_into().unwrap_or([0; 7]))
            .collect();
        let local = Self::build(r, src, &all);
        agree(comm, local, 0, "the pattern baseline")
    }

    /// This rank's part of [`new`](Self::new), with every rank's source
    /// part described in `all`.
    fn build(
        r: &Redistribution<T>,
        src: &DistArray<T>,
        all: &[ProbeEntry],
    ) -> Result<Self, RedistError> {
        let plan = r.rank_plan();
        let me = plan.rank();
        let refused = |value: String, expected: &str| RedistError::InvalidArgument {
            what: "pattern baseline",
            value,
            expected: expected.to_string(),
        };
        // The storages' lengths, ghosts included.
        let padding = &r.padding;
        let source_len = padding.source_len(plan.source(), me).unwrap_or(0);
        let target_len = padding.target_len(r.target_layout(), me).unwrap_or(0);
        if src.local_slice().len() != source_len {
            return Err(refused(
                format!("a source part of {} elements", src.local_slice().len()),
                &format!("{source_len} elements, as the redistribution's source layout says"),
            ));
        }
        let node = r.source_grid.node();
        let elem = std::mem::size_of::<T>();
        let recvs = r.messages.recvs();
        let mut peers = Vec::with_capacity(recvs.len());
        for t in recvs {
            if !node.contains(t.peer) {
                return Err(refused(
                    format!("rank {me} receiving from rank {} on another node", t.peer),
                    "every rank's peers on its node: the yardstick reads their parts in memory",
                ));
            }
            let Some(storage) = probe_storage(&all[t.peer]) else {
                return Err(refused(
                    format!("rank {}'s source part in private memory", t.peer),
                    "source parts in shared memory (NDCYCLIC_SHARED_MIN_BYTES at most their size)",
                ));
            };
            let want = padding.source_len(plan.source(), t.peer).unwrap_or(0) * elem;
            let map = (storage.bytes == want)
                .then(|| storage.map_read_only())
                .ok_or_else(|| {
                    std::io::Error::other(format!("{} bytes, not {want}", storage.bytes))
                })
                .flatten()
                .map_err(|e| {
                    refused(
                        format!("rank {}'s source part, which cannot be mapped: {e}", t.peer),
                        "a part this process may map read-only",
                    )
                })?;
            peers.push(map);
        }
        let sources = r.messages.local().into_iter().chain(recvs);
        let runs = runs_of(sources, r.messages.local().is_some(), target_len * elem)?;
        Ok(PatternBaseline {
            peers,
            runs,
            source_len,
            target_len,
            _elements: PhantomData,
        })
    }

    /// Runs in the list: contiguous runs moved per copy, joined where
    /// adjacent on both sides.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// One copy of every run, in target order, from `src`'s local part and
    /// the peers' mapped parts into `dst`'s. Local to the rank: no
    /// communication.
    ///
    /// # Errors
    ///
    /// [`RedistError::InvalidArgument`] when `src`'s or `dst`'s local
    /// part is not the size of the parts the baseline was built for.
    pub fn run(&self, src: &DistArray<T>, dst: &mut DistArray<T>) -> Result<(), RedistError> {
        let (own, out) = (src.local_slice(), dst.local_slice_mut());
        if own.len() != self.source_len || out.len() != self.target_len {
            return Err(RedistError::InvalidArgument {
                what: "pattern baseline's parts",
                value: format!("{} and {} elements", own.len(), out.len()),
                expected: format!(
                    "{} and {} elements, the parts it was built for",
                    self.source_len, self.target_len
                ),
            });
        }
        let mut sources: Vec<&[T]> = Vec::with_capacity(self.peers.len() + 1);
        sources.push(own);
        // SAFETY: a peer's part holds `T`s (its source array's elements,
        // its size checked in `build`), and its owner keeps it unchanged
        // while the baseline runs (the contract of `new`).
        sources.extend(self.peers.iter().map(|m| unsafe { m.slice::<T>() }));
        for run in &self.runs {
            let len = run.len as usize;
            let from = &sources[run.source as usize][run.from..run.from + len];
            out[run.to..run.to + len].copy_from_slice(from);
        }
        Ok(())
    }
}

/// The runs of `programs` — the local copy first when `local`, then the
/// receives in order — joined where adjacent, sorted by target offset; the
/// local copy reads source 0 (the rank's own part), receive `i` source
/// `i + 1`. Refused beyond the limit for a target of `target_bytes`.
fn runs_of<'a>(
    programs: impl Iterator<Item = &'a MessageProgram>,
    local: bool,
    target_bytes: usize,
) -> Result<Vec<Run>, RedistError> {
    let limit = target_bytes.saturating_mul(MAX_RUN_BYTES_PER_TARGET_BYTE) + (16 << 20);
    let most = limit / std::mem::size_of::<Run>();
    let mut runs: Vec<Run> = Vec::new();
    let mut over = 0usize;
    for (k, p) in programs.enumerate() {
        let source = u32::try_from(if local { k } else { k + 1 }).unwrap_or(u32::MAX);
        p.each_direct_run(|from, to, len| {
            if runs.len() < most {
                let run = Run {
                    from,
                    to,
                    len: 0,
                    source,
                };
                push_run(&mut runs, run, len);
            } else {
                over += 1;
            }
        });
    }
    if over > 0 {
        return Err(RedistError::Limit {
            what: "bytes of the pattern baseline's list of runs",
            value: ((runs.len() + over) * std::mem::size_of::<Run>()) as u128,
            limit: limit as u128,
        });
    }
    runs.sort_unstable_by_key(|r| r.to);
    runs.shrink_to_fit();
    Ok(runs)
}

/// Appends `len` elements at `run` to `runs`: joined to the last run where
/// adjacent on both sides, in pieces of at most `u32::MAX` elements.
fn push_run(runs: &mut Vec<Run>, mut run: Run, mut len: usize) {
    while len > 0 {
        if let Some(last) = runs.last_mut() {
            let room = (u32::MAX - last.len) as usize;
            let (end_from, end_to) = (last.from + last.len as usize, last.to + last.len as usize);
            if last.source == run.source && end_from == run.from && end_to == run.to && room > 0 {
                let n = u32::try_from(len.min(room)).unwrap_or(u32::MAX);
                last.len += n;
                let k = n as usize;
                (run.from, run.to, len) = (run.from + k, run.to + k, len - k);
                continue;
            }
        }
        let n = u32::try_from(len).unwrap_or(u32::MAX);
        runs.push(Run { len: n, ..run });
        let k = n as usize;
        (run.from, run.to, len) = (run.from + k, run.to + k, len - k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(from: usize, to: usize, source: u32) -> Run {
        Run {
            from,
            to,
            len: 0,
            source,
        }
    }

    #[test]
    fn runs_join_where_adjacent_on_both_sides_of_one_source() {
        let mut runs = Vec::new();
        push_run(&mut runs, run(0, 10, 0), 4);
        push_run(&mut runs, run(4, 14, 0), 3); // joins
        push_run(&mut runs, run(7, 18, 0), 2); // a gap in the target
        push_run(&mut runs, run(9, 20, 1), 2); // another source
        let got: Vec<_> = runs
            .iter()
            .map(|r| (r.from, r.to, r.len, r.source))
            .collect();
        assert_eq!(got, [(0, 10, 7, 0), (7, 18, 2, 0), (9, 20, 2, 1)]);
    }

    #[test]
    fn long_runs_are_cut_where_a_length_would_overflow() {
        let mut runs = Vec::new();
        let long = u32::MAX as usize + 5;
        push_run(&mut runs, run(3, 7, 0), long);
        let got: Vec<_> = runs.iter().map(|r| (r.from, r.to, r.len)).collect();
        assert_eq!(
            got,
            [
                (3, 7, u32::MAX),
                (3 + u32::MAX as usize, 7 + u32::MAX as usize, 5)
            ]
        );
        // The next adjacent run joins the last piece.
        push_run(&mut runs, run(3 + long, 7 + long, 0), 1);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1].len, 6);
    }
}
