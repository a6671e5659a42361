//! Setting up the combined exchange: who leads each node, where each
//! message sits in the areas, what the leader relays.
//!
//! Point to point, and only with the ranks a rank deals with anyway:
//!
//! 1. every rank tells the partners it has on other nodes the leader of
//!    its node (the node's lowest rank) and learns theirs;
//! 2. every rank lays out its outbox — messages within the node first, then
//!    those to other nodes grouped by the destination's leader and ordered
//!    by destination rank — creates its area and reports to its leader what
//!    lies where ([`Report`]);
//! 3. the leader lays out its inbox — per source node, the messages to its
//!    node's ranks ordered by (source rank, destination rank), which is the
//!    order the source node's leader concatenates its node's outboxes in —
//!    creates its area, and answers each rank with every area of the node
//!    and where each of its receives is read;
//! 4. every rank maps the other areas of its node and checks what it was
//!    told against its own plan.
//!
//! Every rank takes part whatever happens on the way; one that fails
//! (no shared memory, a mapping refused) says so in its verdict, which the
//! ranks agree on afterwards.

use super::area::{Area, PeerArea};
use crate::exec::messages::{LEADER_BACK, LEADER_FWD, REPLY, REPORT, REPORT_LEN};
use dist_array::SharedStorage;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::Node;
use std::collections::BTreeMap;

/// Where a receive is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum From {
    /// The outbox of the node's rank `peers[peer]`, at element `at`.
    Peer { peer: usize, at: usize },
    /// The node leader's inbox, at element `at`.
    Inbox { at: usize },
}

/// One segment of a message the leader relays: `len` elements at `at` of the
/// outbox of `source` (`None`: the leader's own; else an index into the
/// node's peers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Segment {
    pub source: Option<usize>,
    pub at: usize,
    pub len: usize,
}

/// A message between two nodes, as the sending leader relays it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NodeSend {
    /// The receiving node's leader.
    pub leader: usize,
    /// Its segments, in order.
    pub segments: Vec<Segment>,
    /// Elements in all.
    pub len: usize,
}

/// A message between two nodes, as the receiving leader takes it: from
/// `leader`, `len` elements into its inbox at `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NodeRecv {
    pub leader: usize,
    pub at: usize,
    pub len: usize,
}

/// What a leader relays.
#[derive(Debug, Default)]
pub(super) struct Relay {
    pub sends: Vec<NodeSend>,
    pub recvs: Vec<NodeRecv>,
}

/// A rank's part of the combined exchange once set up.
pub(super) struct Staging {
    /// This rank's area.
    pub area: Area,
    /// Per send: where it is packed in the outbox.
    pub out_at: Vec<usize>,
    /// Per receive: where it is read.
    pub recv_from: Vec<From>,
    /// The node's other ranks' areas, in rank order.
    pub peers: Vec<PeerArea>,
    /// The leader's index in `peers`, `None` on the leader.
    pub leader: Option<usize>,
    /// The leader's relay (empty elsewhere).
    pub relay: Relay,
    /// On a leader: every node's leader, increasing (empty elsewhere).
    pub leaders: Vec<usize>,
}

/// What a rank tells its leader: its area, its outbox's segments for other
/// nodes, its receives from other nodes, its messages within the node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Report {
    area: Option<SharedStorage>,
    /// (destination leader, at, len), in outbox order.
    segments: Vec<(usize, usize, usize)>,
    /// (source rank, source leader, len).
    far_recvs: Vec<(usize, usize, usize)>,
    /// (destination rank, at, len).
    near_sends: Vec<(usize, usize, usize)>,
}

/// Words of an area's description: present, pid, fd, id, bytes, dev, ino.
const DESC: usize = 7;

/// A message as the set-up sees it: its partner and its elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Link {
    pub peer: usize,
    pub len: usize,
}

/// Sets up this rank's part for messages `sends` and `recvs` of elements
/// of `elem` bytes aligned to `align` on `node`, with the verdict whether
/// it can take part. Collective over `comm` (point to point, see the
/// module).
pub(super) fn set_up(
    comm: &SimpleCommunicator,
    node: &Node,
    sends: &[Link],
    recvs: &[Link],
    elem: usize,
    align: usize,
) -> (Option<Staging>, bool) {
    let me = usize::try_from(comm.rank()).unwrap_or(0);
    let ranks = node.ranks();
    let leader = ranks.first().copied().unwrap_or(me);
    let far = |t: &Link| !node.contains(t.peer);
    let (send_leaders, recv_leaders) = partner_leaders(comm, leader, sends, recvs, &far);
    let (out_at, segments, out_len) = outbox(sends, &send_leaders);
    let aligned = elem > 0 && align <= super::area::LINE;
    let own_area = (me != leader)
        .then(|| Area::new(out_len, 0, elem))
        .flatten();
    let report = Report {
        area: own_area.as_ref().map(Area::info),
        segments,
        far_recvs: (recvs.iter().zip(&recv_leaders))
            .filter_map(|(t, l)| l.map(|l| (t.peer, l, t.len)))
            .collect(),
        near_sends: (sends.iter().zip(&out_at))
            .filter(|(t, _)| !far(t))
            .map(|(t, &at)| (t.peer, at, t.len))
            .collect(),
    };
    let (area, reply, relay) = if me == leader {
        lead(comm, ranks, report, out_len, elem)
    } else {
        let reply = follow(comm, leader, &report, ranks.len(), recvs, &recv_leaders);
        (own_area, reply, Relay::default())
    };
    let leaders = all_leaders(comm, me == leader);
    let Some(area) = area.filter(|_| aligned) else {
        return (None, false);
    };
    let own_inbox = relay.recvs.last().map_or(0, |n| n.at + n.len);
    let staged = map_peers(ranks, me, &reply, elem)
        .and_then(|peers| {
            let recv_from =
                read_places(ranks, me, &reply, recvs, &recv_leaders, &peers, own_inbox)?;
            Some((peers, recv_from))
        })
        .filter(|(peers, _)| relay_fits(&relay, peers, out_len));
    match staged {
        Some((peers, recv_from)) => {
            let leader_at = (me != leader).then_some(0);
            (
                Some(Staging {
                    area,
                    out_at,
                    recv_from,
                    peers,
                    leader: leader_at,
                    relay,
                    leaders,
                }),
                true,
            )
        }
        None => (None, false),
    }
}

/// On a leader, every node's leader, increasing; elsewhere nothing. One
/// all-gather of a byte per rank over `comm`, which every rank joins.
fn all_leaders(comm: &SimpleCommunicator, leads: bool) -> Vec<usize> {
    let size = usize::try_from(comm.size()).unwrap_or(0);
    let mut flags = vec![0u8; size];
    procgrid::waits::all_gather_into(comm, &u8::from(leads), &mut flags[..]);
    if !leads {
        return Vec::new();
    }
    (flags.iter().enumerate())
        .filter(|&(_, &f)| f == 1)
        .map(|(r, _)| r)
        .collect()
}

/// Per send and per receive, the leader of its partner's node when that is
/// another node (`None` within the node), learnt from the partners.
fn partner_leaders(
    comm: &SimpleCommunicator,
    leader: usize,
    sends: &[Link],
    recvs: &[Link],
    far: &dyn Fn(&Link) -> bool,
) -> (Vec<Option<usize>>, Vec<Option<usize>>) {
    let mine = [leader as u64];
    let mut send_got = vec![[u64::MAX]; sends.len()];
    let mut recv_got = vec![[u64::MAX]; recvs.len()];
    mpi::request::scope(|scope| {
        let rank = |peer: usize| comm.process_at_rank(i32::try_from(peer).unwrap_or(i32::MAX));
        let mut requests = Vec::new();
        for (t, got) in sends.iter().zip(&mut send_got).filter(|(t, _)| far(t)) {
            requests.push(rank(t.peer).immediate_receive_into_with_tag(
                scope,
                &mut got[..],
                LEADER_BACK,
            ));
            requests.push(rank(t.peer).immediate_send_with_tag(scope, &mine[..], LEADER_FWD));
        }
        for (t, got) in recvs.iter().zip(&mut recv_got).filter(|(t, _)| far(t)) {
            requests.push(rank(t.peer).immediate_receive_into_with_tag(
                scope,
                &mut got[..],
                LEADER_FWD,
            ));
            requests.push(rank(t.peer).immediate_send_with_tag(scope, &mine[..], LEADER_BACK));
        }
        requests.into_iter().for_each(procgrid::waits::complete);
    });
    let leaders = |list: &[Link], got: Vec<[u64; 1]>| {
        (list.iter().zip(got))
            .map(|(t, [l])| far(t).then(|| usize::try_from(l).unwrap_or(usize::MAX)))
            .collect()
    };
    (leaders(sends, send_got), leaders(recvs, recv_got))
}

/// The outbox: per send its place, the segments for other nodes (destination
/// leader, at, len) and the elements in all. Messages within the node come
/// first, in plan order; then those to other nodes, grouped by the
/// destination's leader and ordered by destination rank.
fn outbox(
    sends: &[Link],
    leaders: &[Option<usize>],
) -> (Vec<usize>, Vec<(usize, usize, usize)>, usize) {
    let mut at = vec![0; sends.len()];
    let mut next = 0;
    for (i, t) in sends.iter().enumerate() {
        if leaders[i].is_none() {
            at[i] = next;
            next += t.len;
        }
    }
    let mut far: Vec<(usize, usize, usize)> = (sends.iter().enumerate())
        .filter_map(|(i, t)| leaders[i].map(|l| (l, t.peer, i)))
        .collect();
    far.sort_unstable();
    let mut segments: Vec<(usize, usize, usize)> = Vec::new();
    for (l, _, i) in far {
        at[i] = next;
        match segments.last_mut() {
            Some(s) if s.0 == l => s.2 += sends[i].len,
            _ => segments.push((l, next, sends[i].len)),
        }
        next += sends[i].len;
    }
    (at, segments, next)
}

/// The leader's side of steps 2 and 3: gathers the node's reports, lays
/// out its inbox, makes its area, answers each rank. Returns its area, its
/// own answer and its relay.
fn lead(
    comm: &SimpleCommunicator,
    ranks: &[usize],
    own: Report,
    out_len: usize,
    elem: usize,
) -> (Option<Area>, Vec<u64>, Relay) {
    let mut reports = gather_reports(comm, &ranks[1..]);
    reports.insert(0, own);
    // The inbox: per source node, by (source rank, destination rank).
    let mut incoming: BTreeMap<(usize, usize, usize), usize> = BTreeMap::new();
    for (k, r) in reports.iter().enumerate() {
        for &(src, src_leader, len) in &r.far_recvs {
            incoming.insert((src_leader, src, ranks[k]), len);
        }
    }
    let mut relay = Relay::default();
    let mut inbox_at = BTreeMap::new();
    let mut next = 0;
    for (&(src_leader, src, dst), &len) in &incoming {
        match relay.recvs.last_mut() {
            Some(n) if n.leader == src_leader => n.len += len,
            _ => relay.recvs.push(NodeRecv {
                leader: src_leader,
                at: next,
                len,
            }),
        }
        inbox_at.insert((src, dst), next);
        next += len;
    }
    // The relayed sends: per destination node, the node's outbox segments in
    // rank order.
    let mut by_leader: BTreeMap<usize, NodeSend> = BTreeMap::new();
    for (k, r) in reports.iter().enumerate() {
        for &(l, at, len) in &r.segments {
            let send = by_leader.entry(l).or_insert_with(|| NodeSend {
                leader: l,
                segments: Vec::new(),
                len: 0,
            });
            send.segments.push(Segment {
                source: k.checked_sub(1),
                at,
                len,
            });
            send.len += len;
        }
    }
    relay.sends = by_leader.into_values().collect();
    let area = Area::new(out_len, next, elem);
    let mut areas = Vec::with_capacity(ranks.len() * DESC);
    areas.extend(describe(area.as_ref().map(Area::info)));
    for r in &reports[1..] {
        areas.extend(describe(r.area));
    }
    let answers: Vec<Vec<u64>> = (0..ranks.len())
        .map(|k| answer(&areas, &reports, &inbox_at, ranks, k))
        .collect();
    send_answers(comm, &ranks[1..], &answers[1..]);
    let own = answers.into_iter().next().unwrap_or_default();
    (area, own, relay)
}

/// The answer to the node's `k`-th rank: every area of the node, then per
/// message it receives from the node (source, at, len), then per message
/// from other nodes (source, at in the inbox), each list by source rank.
fn answer(
    areas: &[u64],
    reports: &[Report],
    inbox_at: &BTreeMap<(usize, usize), usize>,
    ranks: &[usize],
    k: usize,
) -> Vec<u64> {
    let dst = ranks[k];
    let mut words = areas.to_vec();
    let mut near: Vec<(usize, usize, usize)> = (reports.iter().enumerate())
        .flat_map(|(j, r)| {
            (r.near_sends.iter())
                .filter(move |s| s.0 == dst)
                .map(move |&(_, at, len)| (ranks[j], at, len))
        })
        .collect();
    near.sort_unstable();
    for (src, at, len) in near {
        words.extend([src as u64, at as u64, len as u64]);
    }
    let mut far: Vec<(usize, usize)> = reports[k]
        .far_recvs
        .iter()
        .map(|&(src, _, _)| {
            (
                src,
                inbox_at.get(&(src, dst)).copied().unwrap_or(usize::MAX),
            )
        })
        .collect();
    far.sort_unstable();
    for (src, at) in far {
        words.extend([src as u64, at as u64]);
    }
    words
}

/// A rank's side of steps 2 and 3: its report to the leader, the answer.
fn follow(
    comm: &SimpleCommunicator,
    leader: usize,
    report: &Report,
    node_ranks: usize,
    recvs: &[Link],
    recv_leaders: &[Option<usize>],
) -> Vec<u64> {
    let words = encode(report);
    let len = [words.len() as u64];
    let far = recv_leaders.iter().filter(|l| l.is_some()).count();
    let near = recvs.len() - far;
    let mut reply = vec![0u64; node_ranks * DESC + 3 * near + 2 * far];
    let to = comm.process_at_rank(i32::try_from(leader).unwrap_or(i32::MAX));
    mpi::request::scope(|scope| {
        let requests = [
            to.immediate_send_with_tag(scope, &len[..], REPORT_LEN),
            to.immediate_send_with_tag(scope, &words[..], REPORT),
        ];
        let answer = to.immediate_receive_into_with_tag(scope, &mut reply[..], REPLY);
        requests.into_iter().for_each(procgrid::waits::complete);
        procgrid::waits::complete(answer);
    });
    reply
}

/// The reports of `ranks`, in order. Waits as
/// [`procgrid::waits::complete`] does.
fn gather_reports(comm: &SimpleCommunicator, ranks: &[usize]) -> Vec<Report> {
    let rank = |r: usize| comm.process_at_rank(i32::try_from(r).unwrap_or(i32::MAX));
    let mut lens = vec![[0u64]; ranks.len()];
    mpi::request::scope(|scope| {
        let requests: Vec<_> = (lens.iter_mut().zip(ranks))
            .map(|(l, &r)| rank(r).immediate_receive_into_with_tag(scope, &mut l[..], REPORT_LEN))
            .collect();
        requests.into_iter().for_each(procgrid::waits::complete);
    });
    let mut words: Vec<Vec<u64>> = (lens.iter())
        .map(|[n]| vec![0u64; usize::try_from(*n).unwrap_or(0).min(1 << 30)])
        .collect();
    mpi::request::scope(|scope| {
        let requests: Vec<_> = (words.iter_mut().zip(ranks))
            .map(|(w, &r)| rank(r).immediate_receive_into_with_tag(scope, &mut w[..], REPORT))
            .collect();
        requests.into_iter().for_each(procgrid::waits::complete);
    });
    words.iter().map(|w| decode(w)).collect()
}

/// Sends each of `ranks` its answer.
fn send_answers(comm: &SimpleCommunicator, ranks: &[usize], answers: &[Vec<u64>]) {
    let rank = |r: usize| comm.process_at_rank(i32::try_from(r).unwrap_or(i32::MAX));
    mpi::request::scope(|scope| {
        let requests: Vec<_> = (answers.iter().zip(ranks))
            .map(|(a, &r)| rank(r).immediate_send_with_tag(scope, &a[..], REPLY))
            .collect();
        requests.into_iter().for_each(procgrid::waits::complete);
    });
}

/// Maps the areas the answer describes, every one but this rank's (none
/// where the [`Fault::Map`](crate::faults::Fault::Map) fault is injected, as a full file table or a security
/// policy would).
fn map_peers(ranks: &[usize], me: usize, reply: &[u64], elem: usize) -> Option<Vec<PeerArea>> {
    if ranks.len() > 1 && crate::faults::injected(crate::faults::Fault::Map) {
        return None;
    }
    (ranks.iter().enumerate())
        .filter(|&(_, &r)| r != me)
        .map(|(k, _)| {
            let desc = reply.get(k * DESC..(k + 1) * DESC)?;
            let s = undescribe(desc)?;
            PeerArea::map(&s, elem).ok()
        })
        .collect()
}

/// Per receive, where it is read, from the answer (with the receives and
/// their partners' leaders), checked against the plan and the mapped
/// areas; `own_inbox` is the leader's own inbox length.
fn read_places(
    ranks: &[usize],
    me: usize,
    reply: &[u64],
    recvs: &[Link],
    recv_leaders: &[Option<usize>],
    peers: &[PeerArea],
    own_inbox: usize,
) -> Option<Vec<From>> {
    let peer_index = |r: usize| -> Option<usize> {
        let k = ranks.binary_search(&r).ok()?;
        let mine = ranks.binary_search(&me).ok()?;
        Some(if k > mine { k - 1 } else { k })
    };
    let leader = if ranks.first() == Some(&me) {
        None
    } else {
        Some(0)
    };
    let far = recv_leaders.iter().filter(|l| l.is_some()).count();
    let near = recvs.len() - far;
    let words = reply.get(ranks.len() * DESC..)?;
    let (near_words, far_words) = words.split_at(3 * near);
    let mut near_at = BTreeMap::new();
    for w in near_words.chunks_exact(3) {
        near_at.insert(
            usize::try_from(w[0]).ok()?,
            (to_usize(w[1])?, to_usize(w[2])?),
        );
    }
    let mut far_at = BTreeMap::new();
    for w in far_words.chunks_exact(2) {
        far_at.insert(usize::try_from(w[0]).ok()?, to_usize(w[1])?);
    }
    let inbox_len = match leader {
        Some(l) => peers.get(l)?.inbox_len(),
        None => own_inbox,
    };
    (recvs.iter().zip(recv_leaders))
        .map(|(t, l)| match l {
            None => {
                let &(at, len) = near_at.get(&t.peer)?;
                let peer = peer_index(t.peer)?;
                let fits = at.checked_add(len)? <= peers.get(peer)?.out_len();
                (len == t.len && fits).then_some(From::Peer { peer, at })
            }
            Some(_) => {
                let &at = far_at.get(&t.peer)?;
                (at.checked_add(t.len)? <= inbox_len).then_some(From::Inbox { at })
            }
        })
        .collect()
}

/// Whether every segment the leader relays lies inside its source's outbox.
fn relay_fits(relay: &Relay, peers: &[PeerArea], own_out: usize) -> bool {
    relay.sends.iter().flat_map(|s| &s.segments).all(|s| {
        let out = match s.source {
            None => Some(own_out),
            Some(p) => peers.get(p).map(PeerArea::out_len),
        };
        out.is_some_and(|out| s.at.checked_add(s.len).is_some_and(|e| e <= out))
    })
}

fn to_usize(w: u64) -> Option<usize> {
    usize::try_from(w).ok()
}

/// An area's description as words.
fn describe(s: Option<SharedStorage>) -> [u64; DESC] {
    match s {
        Some(s) => [
            1,
            u64::from(s.pid),
            u64::try_from(s.fd).unwrap_or(u64::MAX),
            s.id,
            s.bytes as u64,
            s.dev,
            s.ino,
        ],
        None => [0; DESC],
    }
}

/// The area words describe, if any (`None` for a corrupt description).
fn undescribe(w: &[u64]) -> Option<SharedStorage> {
    (w.len() == DESC && w[0] == 1).then_some(())?;
    Some(SharedStorage {
        pid: u32::try_from(w[1]).ok()?,
        fd: i32::try_from(w[2]).ok()?,
        id: w[3],
        bytes: usize::try_from(w[4]).ok()?,
        dev: w[5],
        ino: w[6],
    })
}

/// A report as words: the area, then each list with its length.
fn encode(r: &Report) -> Vec<u64> {
    let mut w = describe(r.area).to_vec();
    for list in [&r.segments, &r.far_recvs, &r.near_sends] {
        w.push(list.len() as u64);
        for &(a, b, c) in list {
            w.extend([a as u64, b as u64, c as u64]);
        }
    }
    w
}

/// A report from words; what cannot be read is left out (the checks of
/// the answers then fail).
fn decode(w: &[u64]) -> Report {
    let mut r = Report {
        area: w.get(..DESC).and_then(undescribe),
        ..Report::default()
    };
    let mut at = DESC;
    for list in [&mut r.segments, &mut r.far_recvs, &mut r.near_sends] {
        let n = w.get(at).and_then(|&n| to_usize(n)).unwrap_or(0);
        at += 1;
        for k in 0..n {
            let e = |j: usize| w.get(at + 3 * k + j).and_then(|&x| to_usize(x));
            if let (Some(a), Some(b), Some(c)) = (e(0), e(1), e(2)) {
                list.push((a, b, c));
            }
        }
        at += 3 * n;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip() {
        let r = Report {
            area: Some(SharedStorage {
                pid: 7,
                fd: 3,
                id: 9,
                bytes: 4096,
                dev: 1,
                ino: 2,
            }),
            segments: vec![(4, 10, 5), (6, 15, 1)],
            far_recvs: vec![(5, 4, 8)],
            near_sends: vec![],
        };
        assert_eq!(decode(&encode(&r)), r);
        assert_eq!(decode(&encode(&Report::default())), Report::default());
        // Words cut short lose what is missing, and nothing more.
        let cut = decode(&encode(&r)[..DESC + 4]);
        assert_eq!(cut.segments, vec![(4, 10, 5)]);
    }

    #[test]
    fn the_outbox_groups_other_nodes_by_leader_then_rank() {
        let link = |peer, len| Link { peer, len };
        // Ranks 1 (this node), 7 and 5 (node of leader 4), 9 (leader 8), 2
        // (this node).
        let sends = [link(1, 3), link(7, 2), link(9, 4), link(5, 1), link(2, 6)];
        let leaders = [None, Some(4), Some(8), Some(4), None];
        let (at, segments, len) = outbox(&sends, &leaders);
        // Within the node first (1, then 2), then 5 and 7, then 9.
        assert_eq!(at, vec![0, 10, 12, 9, 3]);
        assert_eq!(segments, vec![(4, 9, 3), (8, 12, 4)]);
        assert_eq!(len, 16);
    }

    #[test]
    fn answers_place_every_receive() {
        // A node of ranks 2 and 3; rank 2 receives 4 elements from rank 3
        // (within the node) and 5 from rank 6 (node of leader 6); rank 3
        // receives 2 from rank 7 and 1 from rank 6.
        let ranks = [2, 3];
        let reports = [
            Report {
                far_recvs: vec![(6, 6, 5)],
                ..Report::default()
            },
            Report {
                far_recvs: vec![(7, 6, 2), (6, 6, 1)],
                near_sends: vec![(2, 0, 4)],
                ..Report::default()
            },
        ];
        // The inbox from node 6 by (source, destination): (6,2), (6,3), (7,3).
        let inbox_at = BTreeMap::from([((6, 2), 0), ((6, 3), 5), ((7, 3), 6)]);
        let areas = vec![0u64; 2 * DESC];
        let a2 = answer(&areas, &reports, &inbox_at, &ranks, 0);
        assert_eq!(&a2[2 * DESC..], &[3, 0, 4, 6, 0]);
        let a3 = answer(&areas, &reports, &inbox_at, &ranks, 1);
        assert_eq!(&a3[2 * DESC..], &[6, 5, 7, 6]);
    }
}
