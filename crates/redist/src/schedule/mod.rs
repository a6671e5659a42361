//! Contention-free communication schedules.
//!
//! A redistribution moves a set of [`Message`]s, each from one source rank to
//! one target rank. Sending them all at once creates hot spots: a rank that
//! many others send to becomes the bottleneck while the rest wait. A
//! [`Schedule`] splits the messages into *steps* such that in every step each
//! rank sends at most one message and receives at most one — every step is a
//! matching in the bipartite communication graph (senders on one side,
//! receivers on the other, one edge per message).
//!
//! The fewest steps any schedule can have is the largest number of messages
//! one rank sends or receives, the maximum degree of that graph
//! ([`max_degree`]); König's edge-colouring theorem says this bound is always
//! reached. Two builders reach it:
//!
//! - [`minimal`] colours the edges in input order with the alternating-path
//!   recolouring from the proof of König's theorem;
//! - [`greedy`] colours the longest messages first and packs them into the
//!   same steps, aiming at a lower total [`cost`](Schedule::cost) — the sum
//!   over steps of the longest message in the step, which is what a
//!   step-by-step exchange pays when every step waits for its slowest
//!   transfer (the cost model of Desprez, Dongarra, Petitet, Randriamaro and
//!   Robert, "Scheduling block-cyclic array redistribution", seed 002).
//!
//! For the special case of enlarging the block size, CYCLIC(r) → CYCLIC(K·r)
//! on the same P processes, [`expansion`] gives the closed-form schedule of
//! Walker and Otto ("Redistribution of block-cyclic data distributions using
//! MPI", 1996, seed 001, §2.2.2–2.2.3): K steps, each a permutation of the
//! processes, with both the send side and the receive side computable in
//! O(1) per entry and no graph at all.
//!
//! ```
//! use redist::schedule::{greedy, max_degree, minimal, Message};
//! let m = |from, to, len| Message { from, to, len };
//! // Rank 0 sends to 1 and 2; rank 1 sends to 2; rank 2 keeps its own data.
//! let messages = [m(0, 1, 10), m(0, 2, 3), m(1, 2, 8), m(2, 2, 99)];
//! assert_eq!(max_degree(&messages), 2);
//! let plain = minimal(&messages);
//! let packed = greedy(&messages);
//! for s in [&plain, &packed] {
//!     s.check(&messages).unwrap();
//!     assert_eq!(s.len(), 2);
//! }
//! // Greedy puts the two long messages (10 and 8) into the same step.
//! assert_eq!(packed.cost(&messages), 10 + 3);
//! ```

use crate::RedistError;
use std::collections::HashSet;

// ---------------------------------------------------------------------------
// Messages and schedules
// ---------------------------------------------------------------------------

/// One message of a redistribution: `len` elements from source rank `from`
/// to target rank `to`.
///
/// A message with `from == to` is a local copy and is never scheduled; nor is
/// a message with `len == 0`, which has nothing to send.
///
/// ```
/// use redist::schedule::Message;
/// assert!(Message { from: 0, to: 1, len: 4 }.is_scheduled());
/// assert!(!Message { from: 2, to: 2, len: 4 }.is_scheduled());
/// assert!(!Message { from: 0, to: 1, len: 0 }.is_scheduled());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Message {
    /// Rank that sends the message.
    pub from: usize,
    /// Rank that receives the message.
    pub to: usize,
    /// Number of elements in the message.
    pub len: usize,
}

impl Message {
    /// Whether the message goes through a step of a schedule: it moves data
    /// (`len > 0`) between two different ranks (`from != to`).
    pub fn is_scheduled(&self) -> bool {
        self.from != self.to && self.len > 0
    }
}

/// A split of a message set into steps, each a matching: in every step each
/// rank sends at most one message and receives at most one.
///
/// A step is a list of indices into the message slice the schedule was built
/// from, in increasing order for the schedules built here. Local copies
/// (`from == to`) and empty messages never appear.
///
/// ```
/// use redist::schedule::{minimal, Message};
/// // A ring shift: every rank sends to the next one, all in a single step.
/// let ring: Vec<Message> = (0..4).map(|r| Message { from: r, to: (r + 1) % 4, len: 5 }).collect();
/// let s = minimal(&ring);
/// assert_eq!(s.steps(), &[vec![0, 1, 2, 3]]);
/// assert_eq!(s.cost(&ring), 5);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Schedule {
    steps: Vec<Vec<usize>>,
}

impl Schedule {
    /// A schedule with the given steps, as lists of message indices. Nothing
    /// is checked here; use [`check`](Self::check) to validate it against the
    /// messages.
    ///
    /// ```
    /// use redist::schedule::{Message, Schedule};
    /// let messages = [Message { from: 0, to: 1, len: 2 }, Message { from: 1, to: 0, len: 3 }];
    /// let s = Schedule::from_steps(vec![vec![0, 1]]);
    /// assert!(s.check(&messages).is_ok());
    /// ```
    pub fn from_steps(steps: Vec<Vec<usize>>) -> Self {
        Schedule { steps }
    }

    /// The steps, each a list of indices into the message slice.
    pub fn steps(&self) -> &[Vec<usize>] {
        &self.steps
    }

    /// The number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether the schedule has no step (nothing to send).
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The cost of the schedule: the sum over steps of the length of the
    /// longest message in the step (seed 002's total cost, with one unit of
    /// time per element and start-up costs left out). Indices out of range
    /// of `messages` count as empty; [`check`](Self::check) reports them.
    ///
    /// ```
    /// use redist::schedule::{Message, Schedule};
    /// let m = |from, to, len| Message { from, to, len };
    /// let messages = [m(0, 1, 10), m(1, 0, 2), m(0, 2, 7)];
    /// let s = Schedule::from_steps(vec![vec![0, 1], vec![2]]);
    /// assert_eq!(s.cost(&messages), 10 + 7);
    /// ```
    pub fn cost(&self, messages: &[Message]) -> usize {
        self.steps.iter().fold(0usize, |total, step| {
            let longest = step
                .iter()
                .filter_map(|&i| messages.get(i))
                .map(|m| m.len)
                .max()
                .unwrap_or(0);
            total.saturating_add(longest)
        })
    }

    /// Checks the schedule against the messages it was built from: every
    /// index is in range, every step is a matching (no rank sends twice or
    /// receives twice in one step), no local copy (`from == to`) appears,
    /// every message with `from != to` and `len > 0` appears exactly once,
    /// and no message appears twice. (Empty messages between different ranks
    /// may appear once, but need not.)
    ///
    /// Returns a description of the first violation found.
    ///
    /// ```
    /// use redist::schedule::{Message, Schedule};
    /// let m = |from, to, len| Message { from, to, len };
    /// let messages = [m(0, 1, 1), m(0, 2, 1)];
    /// // Rank 0 cannot send both messages in the same step.
    /// let bad = Schedule::from_steps(vec![vec![0, 1]]);
    /// assert!(bad.check(&messages).is_err());
    /// let good = Schedule::from_steps(vec![vec![0], vec![1]]);
    /// assert!(good.check(&messages).is_ok());
    /// ```
    pub fn check(&self, messages: &[Message]) -> Result<(), String> {
        let mut seen = vec![false; messages.len()];
        for (s, step) in self.steps.iter().enumerate() {
            let mut senders = HashSet::with_capacity(step.len());
            let mut receivers = HashSet::with_capacity(step.len());
            for &i in step {
                let Some(m) = messages.get(i) else {
                    return Err(format!(
                        "step {s}: message index {i} out of range (there are {} messages)",
                        messages.len()
                    ));
                };
                if m.from == m.to {
                    return Err(format!(
                        "step {s}: message {i} is a local copy on rank {}",
                        m.from
                    ));
                }
                if std::mem::replace(&mut seen[i], true) {
                    return Err(format!("step {s}: message {i} is scheduled twice"));
                }
                if !senders.insert(m.from) {
                    return Err(format!(
                        "step {s}: rank {} sends more than one message",
                        m.from
                    ));
                }
                if !receivers.insert(m.to) {
                    return Err(format!(
                        "step {s}: rank {} receives more than one message",
                        m.to
                    ));
                }
            }
        }
        match messages
            .iter()
            .zip(&seen)
            .position(|(m, &seen)| m.is_scheduled() && !seen)
        {
            Some(i) => Err(format!(
                "message {i} ({} -> {}, {} elements) is in no step",
                messages[i].from, messages[i].to, messages[i].len
            )),
            None => Ok(()),
        }
    }
}

/// The largest number of scheduled messages (those with `from != to` and
/// `len > 0`) that one rank sends or receives: the maximum degree of the
/// bipartite communication graph. No schedule has fewer steps, and by
/// König's edge-colouring theorem some schedule has exactly this many;
/// [`minimal`] and [`greedy`] both do.
///
/// ```
/// use redist::schedule::{max_degree, Message};
/// let m = |from, to| Message { from, to, len: 1 };
/// // Rank 3 receives three messages; the self message on rank 0 does not count.
/// assert_eq!(max_degree(&[m(0, 3), m(1, 3), m(2, 3), m(0, 1), m(0, 0)]), 3);
/// assert_eq!(max_degree(&[]), 0);
/// ```
pub fn max_degree(messages: &[Message]) -> usize {
    let longest_run = |mut ranks: Vec<usize>| {
        ranks.sort_unstable();
        ranks
            .chunk_by(|a, b| a == b)
            .map(<[usize]>::len)
            .max()
            .unwrap_or(0)
    };
    let scheduled = || messages.iter().filter(|m| m.is_scheduled());
    let senders = longest_run(scheduled().map(|m| m.from).collect());
    let receivers = longest_run(scheduled().map(|m| m.to).collect());
    senders.max(receivers)
}

/// A schedule with the fewest possible steps, [`max_degree`], found by
/// colouring the edges of the bipartite communication graph.
///
/// Messages are coloured in input order. A message from `u` to `v` takes
/// the lowest colour (step) free at both `u` and `v`, if there is one below
/// the maximum degree. Otherwise let `a` be the lowest colour free at `u`
/// and `b` the lowest free at `v` (both exist, as neither end has all its
/// messages coloured yet); `a` is then used at `v`. The path that starts at
/// `v` with its `a` edge and alternates `a`, `b`, `a`, ... is recoloured
/// (`a` ↔ `b`); it cannot reach `u`, which has no edge of colour `a`, so
/// afterwards `a` is free at both ends and the message takes it. (The
/// mirror image — the path from `u` starting with its `b` edge — frees `b`
/// instead; both are walked in step and the shorter one is recoloured.)
/// This is the constructive proof of König's edge-colouring theorem for
/// bipartite graphs; it never needs a colour beyond the maximum degree. The
/// result depends only on the input, so every rank computes the same
/// schedule.
///
/// Each rank keeps a table from colour to message — a direct array with a
/// bit set of used colours for ranks of high degree, a short sorted list for
/// the others — so a lookup along an alternating path is O(1) or O(log d).
/// An all-to-all on 1000 ranks (10⁶ messages) takes well under a second.
///
/// Local copies and empty messages are left out; duplicates of the same
/// `(from, to)` pair are scheduled as separate messages.
///
/// ```
/// use redist::schedule::{max_degree, minimal, Message};
/// // All-to-all on 4 ranks: 12 messages in 3 steps.
/// let mut messages = Vec::new();
/// for from in 0..4 {
///     for to in 0..4 {
///         messages.push(Message { from, to, len: 1 });
///     }
/// }
/// let s = minimal(&messages);
/// assert_eq!(s.len(), 3);
/// assert_eq!(s.len(), max_degree(&messages));
/// s.check(&messages).unwrap();
/// ```
pub fn minimal(messages: &[Message]) -> Schedule {
    colour_edges(messages, Strategy::InputOrder, Representation::Auto)
}

/// A schedule with the fewest possible steps, [`max_degree`], that tries to
/// keep the total [`cost`](Schedule::cost) — the sum over steps of the
/// longest message — low.
///
/// The heuristic: the colouring of [`minimal`], with the messages taken
/// longest first (ties in input order) instead of in input order. Each
/// message takes the lowest colour free at both its sender and its
/// receiver, so the long messages crowd into the first steps, side by side,
/// and the later steps hold only short ones: a step's longest message is
/// rarely much longer than the rest of the step. When no colour below the
/// maximum degree is free at both ends, the alternating-path recolouring of
/// [`minimal`] makes one free, which keeps the number of steps minimal (and
/// may move earlier, longer messages between two steps).
///
/// Seed 002 (Desprez et al.) calls the cost-driven strategy "greedy" and
/// implements it by picking a maximum-weight matching at every step, which
/// needs a matching solver and may use more steps than the maximum degree.
/// This version keeps the minimal step count and runs in the same time as
/// [`minimal`] plus a sort. It is a heuristic: on random message sets its
/// cost is at most that of [`minimal`] in the large majority of cases, not
/// in all.
///
/// ```
/// use redist::schedule::{greedy, minimal, Message};
/// let m = |from, to, len| Message { from, to, len };
/// // Rank 1 receives a short and a long message and sends a long one.
/// let messages = [m(2, 1, 1), m(0, 1, 100), m(1, 2, 100)];
/// let s = greedy(&messages);
/// s.check(&messages).unwrap();
/// // The two long messages share the first step.
/// assert_eq!(s.steps(), &[vec![1, 2], vec![0]]);
/// assert_eq!(s.cost(&messages), 100 + 1);
/// // In input order, the short message takes step 0 and pairs with one
/// // long message, leaving the other long one alone in step 1.
/// assert_eq!(minimal(&messages).cost(&messages), 100 + 100);
/// ```
pub fn greedy(messages: &[Message]) -> Schedule {
    colour_edges(messages, Strategy::LongestFirst, Representation::Auto)
}

// ---------------------------------------------------------------------------
// Bipartite edge colouring
// ---------------------------------------------------------------------------

/// Marks an unused slot of a dense colour table.
const FREE: usize = usize::MAX;

/// The order in which edges are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    /// Input order.
    InputOrder,
    /// Longest first, ties in input order.
    LongestFirst,
}

/// How a rank's colour table is stored. `Auto` picks per rank; the forced
/// variants exist so that the tests cover both stores on every input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Representation {
    Auto,
    #[cfg(test)]
    Dense,
    #[cfg(test)]
    Sparse,
}

/// Colour → edge map of one vertex (one rank on one side of the graph).
/// Colours lie in `0..max_degree`.
enum ColourTable {
    /// One slot per colour (`FREE` when unused), a bit set of used colours
    /// for fast "lowest free colour" scans, and `low`, below which every
    /// colour is used (where the scans start). For vertices whose degree is
    /// a sizeable fraction of the maximum degree.
    Dense {
        edge: Vec<usize>,
        used: Vec<u64>,
        low: usize,
    },
    /// `(colour, edge)` pairs sorted by colour, at most the vertex degree of
    /// them. For vertices of low degree, so that a star-shaped graph with a
    /// million leaves does not need a million tables of a million slots.
    Sparse { entries: Vec<(usize, usize)> },
}

impl ColourTable {
    fn new(degree: usize, colours: usize, representation: Representation) -> Self {
        let dense = match representation {
            Representation::Auto => degree.saturating_mul(4) >= colours,
            #[cfg(test)]
            Representation::Dense => true,
            #[cfg(test)]
            Representation::Sparse => false,
        };
        if dense {
            ColourTable::Dense {
                edge: vec![FREE; colours],
                used: vec![0; colours.div_ceil(64)],
                low: 0,
            }
        } else {
            ColourTable::Sparse {
                entries: Vec::with_capacity(degree),
            }
        }
    }

    /// The edge coloured `colour` at this vertex, if any.
    fn get(&self, colour: usize) -> Option<usize> {
        match self {
            ColourTable::Dense { edge, .. } => edge.get(colour).copied().filter(|&e| e != FREE),
            ColourTable::Sparse { entries } => entries
                .binary_search_by_key(&colour, |&(c, _)| c)
                .ok()
                .map(|i| entries[i].1),
        }
    }

    /// Records `edge` under `colour`, which must be free here.
    fn set(&mut self, colour: usize, edge_id: usize) {
        match self {
            ColourTable::Dense { edge, used, low } => {
                edge[colour] = edge_id;
                used[colour / 64] |= 1 << (colour % 64);
                if colour == *low {
                    *low += 1;
                }
            }
            ColourTable::Sparse { entries } => insert_sorted(entries, colour, edge_id),
        }
    }

    /// Exchanges colours `a` and `b` at this vertex: the edge coloured `a`
    /// (if any) becomes coloured `b` and vice versa.
    fn swap_colours(&mut self, a: usize, b: usize) {
        match self {
            ColourTable::Dense { edge, used, low } => {
                edge.swap(a, b);
                for c in [a, b] {
                    let bit = 1u64 << (c % 64);
                    if edge[c] == FREE {
                        used[c / 64] &= !bit;
                        *low = (*low).min(c);
                    } else {
                        used[c / 64] |= bit;
                    }
                }
            }
            ColourTable::Sparse { entries } => {
                let find = |entries: &[(usize, usize)], c| {
                    entries.binary_search_by_key(&c, |&(c, _)| c).ok()
                };
                match (find(entries, a), find(entries, b)) {
                    (Some(i), Some(j)) => {
                        let (ei, ej) = (entries[i].1, entries[j].1);
                        entries[i].1 = ej;
                        entries[j].1 = ei;
                    }
                    (Some(i), None) => {
                        let (_, e) = entries.remove(i);
                        insert_sorted(entries, b, e);
                    }
                    (None, Some(j)) => {
                        let (_, e) = entries.remove(j);
                        insert_sorted(entries, a, e);
                    }
                    (None, None) => {}
                }
            }
        }
    }

    /// The lowest colour `>= from` that is free here. The answer may be at
    /// or beyond the number of colours, meaning "none below it".
    fn next_free(&self, from: usize) -> usize {
        match self {
            ColourTable::Dense { used, low, .. } => {
                let from = from.max(*low);
                let mut w = from / 64;
                let Some(&first) = used.get(w) else {
                    return from;
                };
                let mut free = !first & (u64::MAX << (from % 64));
                loop {
                    if free != 0 {
                        return w * 64 + free.trailing_zeros() as usize;
                    }
                    w += 1;
                    match used.get(w) {
                        Some(&word) => free = !word,
                        None => return w * 64,
                    }
                }
            }
            ColourTable::Sparse { entries } => {
                let mut i = entries.partition_point(|&(c, _)| c < from);
                let mut colour = from;
                while i < entries.len() && entries[i].0 == colour {
                    colour += 1;
                    i += 1;
                }
                colour
            }
        }
    }
}

/// Inserts `(colour, edge)` into a list sorted by colour.
fn insert_sorted(entries: &mut Vec<(usize, usize)>, colour: usize, edge: usize) {
    let at = entries.partition_point(|&(c, _)| c < colour);
    entries.insert(at, (colour, edge));
}

/// The lowest colour below `colours` that is free at both `x` and `y`.
fn lowest_common_free(x: &ColourTable, y: &ColourTable, colours: usize) -> Option<usize> {
    if let (
        ColourTable::Dense {
            used: ux, low: lx, ..
        },
        ColourTable::Dense {
            used: uy, low: ly, ..
        },
    ) = (x, y)
    {
        let start = lx.max(ly) / 64;
        return ux
            .iter()
            .zip(uy)
            .enumerate()
            .skip(start)
            .find_map(|(w, (a, b))| {
                let free = !(a | b);
                (free != 0).then(|| w * 64 + free.trailing_zeros() as usize)
            })
            .filter(|&c| c < colours);
    }
    // Leapfrog: each round skips at least one colour used at one of the ends,
    // so it ends after at most deg(x) + deg(y) + 1 rounds.
    let mut colour = 0;
    loop {
        let at_x = x.next_free(colour);
        if at_x >= colours {
            return None;
        }
        let at_y = y.next_free(at_x);
        if at_y == at_x {
            return Some(at_x);
        }
        colour = at_y;
    }
}

/// Colours the edges of the bipartite communication graph of `messages`
/// with `max_degree` colours and returns the colour classes as steps.
fn colour_edges(
    messages: &[Message],
    strategy: Strategy,
    representation: Representation,
) -> Schedule {
    // Edges are the scheduled messages; `message_of[e]` is the index of edge
    // `e` in `messages`. Ranks are renumbered densely per side so that huge
    // rank numbers cost nothing.
    let message_of: Vec<usize> = (0..messages.len())
        .filter(|&i| messages[i].is_scheduled())
        .collect();
    if message_of.is_empty() {
        return Schedule::default();
    }
    let dense_ids = |rank: fn(&Message) -> usize| {
        let mut ranks: Vec<usize> = message_of.iter().map(|&i| rank(&messages[i])).collect();
        ranks.sort_unstable();
        ranks.dedup();
        let ids: Vec<usize> = message_of
            .iter()
            .map(|&i| ranks.partition_point(|&r| r < rank(&messages[i])))
            .collect();
        (ranks.len(), ids)
    };
    let (senders, sender_of) = dense_ids(|m| m.from);
    let (receivers, receiver_of) = dense_ids(|m| m.to);

    let mut sender_degree = vec![0usize; senders];
    let mut receiver_degree = vec![0usize; receivers];
    for e in 0..message_of.len() {
        sender_degree[sender_of[e]] += 1;
        receiver_degree[receiver_of[e]] += 1;
    }
    let colours = sender_degree
        .iter()
        .chain(&receiver_degree)
        .copied()
        .max()
        .unwrap_or(0);
    let tables = |degrees: &[usize]| -> Vec<ColourTable> {
        degrees
            .iter()
            .map(|&d| ColourTable::new(d, colours, representation))
            .collect()
    };
    let at_sender = tables(&sender_degree);
    let at_receiver = tables(&receiver_degree);

    let mut order: Vec<usize> = (0..message_of.len()).collect();
    if strategy == Strategy::LongestFirst {
        // Stable: equal lengths keep input order, so the result is determined.
        order.sort_by(|&e, &f| {
            messages[message_of[f]]
                .len
                .cmp(&messages[message_of[e]].len)
        });
    }

    let mut graph = Colouring {
        sender_of,
        receiver_of,
        at_sender,
        at_receiver,
        colour_of: vec![FREE; message_of.len()],
        path: Vec::new(),
        other_path: Vec::new(),
    };
    for e in order {
        graph.colour(e, colours);
    }

    let mut steps = vec![Vec::new(); colours];
    for (e, &c) in graph.colour_of.iter().enumerate() {
        steps[c].push(message_of[e]);
    }
    Schedule { steps }
}

/// A partial proper edge colouring of the bipartite graph, edge by edge.
struct Colouring {
    /// Sender vertex of each edge.
    sender_of: Vec<usize>,
    /// Receiver vertex of each edge.
    receiver_of: Vec<usize>,
    /// Colour tables of the senders.
    at_sender: Vec<ColourTable>,
    /// Colour tables of the receivers.
    at_receiver: Vec<ColourTable>,
    /// Colour of each edge, `FREE` while uncoloured.
    colour_of: Vec<usize>,
    /// Scratch space for the two candidate alternating paths.
    path: Vec<usize>,
    /// See `path`.
    other_path: Vec<usize>,
}

impl Colouring {
    /// Colours edge `e` with one of `colours` colours, recolouring others if
    /// needed; `colours` must be at least the maximum degree.
    fn colour(&mut self, e: usize, colours: usize) {
        let (u, v) = (self.sender_of[e], self.receiver_of[e]);
        let colour = match lowest_common_free(&self.at_sender[u], &self.at_receiver[v], colours) {
            Some(c) => c,
            None => {
                // Both are below `colours`, as u and v each have fewer than
                // their degree edges coloured so far. With no colour free at
                // both ends, a is used at v and b at u.
                let a = self.at_sender[u].next_free(0);
                let b = self.at_receiver[v].next_free(0);
                self.free_at_both(u, v, a, b)
            }
        };
        self.at_sender[u].set(colour, e);
        self.at_receiver[v].set(colour, e);
        self.colour_of[e] = colour;
    }

    /// Makes `a` or `b` free at both sender `u` and receiver `v`, given `a`
    /// free at `u` but used at `v`, and `b` free at `v` but used at `u`;
    /// returns the colour made free.
    ///
    /// Two recolourings work. The path that starts at `v` with its `a` edge
    /// and alternates `a`, `b`, `a`, ... (v —a— sender —b— receiver —a— ...)
    /// is simple, since `b` is free at `v` and so `v` is an end of its a/b
    /// component (a path or an even cycle); it avoids `u`, as senders are
    /// entered only along `a` edges and `a` is free at `u`. Swapping `a` and
    /// `b` on it frees `a` at `v` and keeps it free at `u`. Symmetrically,
    /// swapping on the path from `u` that starts with its `b` edge frees `b`
    /// at both. Both paths are walked in step and the first to end is
    /// flipped, which costs at most twice the shorter one.
    fn free_at_both(&mut self, u: usize, v: usize, a: usize, b: usize) -> usize {
        let mut from_v = std::mem::take(&mut self.path);
        let mut from_u = std::mem::take(&mut self.other_path);
        from_v.clear();
        from_u.clear();
        let mut walk_v = Walk {
            vertex: v,
            on_receiver_side: true,
            want: a,
        };
        let mut walk_u = Walk {
            vertex: u,
            on_receiver_side: false,
            want: b,
        };
        let (path, start, colour) = loop {
            if !self.advance(&mut walk_v, a, b, &mut from_v) {
                break (&from_v, (v, true), a);
            }
            if !self.advance(&mut walk_u, a, b, &mut from_u) {
                break (&from_u, (u, false), b);
            }
        };
        self.flip(path, start, a, b);
        self.path = from_v;
        self.other_path = from_u;
        colour
    }

    /// Moves `walk` one edge along its alternating path, recording the edge
    /// in `path`; false when the path has ended.
    fn advance(&self, walk: &mut Walk, a: usize, b: usize, path: &mut Vec<usize>) -> bool {
        let table = if walk.on_receiver_side {
            &self.at_receiver[walk.vertex]
        } else {
            &self.at_sender[walk.vertex]
        };
        let Some(f) = table.get(walk.want) else {
            return false;
        };
        path.push(f);
        walk.vertex = if walk.on_receiver_side {
            self.sender_of[f]
        } else {
            self.receiver_of[f]
        };
        walk.on_receiver_side = !walk.on_receiver_side;
        walk.want = if walk.want == a { b } else { a };
        true
    }

    /// Swaps colours `a` and `b` on the edges of `path` and at each of its
    /// vertices: `start` (a vertex and whether it is a receiver), then the
    /// far end of each edge in turn.
    fn flip(&mut self, path: &[usize], start: (usize, bool), a: usize, b: usize) {
        let (vertex, mut on_receiver_side) = start;
        if on_receiver_side {
            self.at_receiver[vertex].swap_colours(a, b);
        } else {
            self.at_sender[vertex].swap_colours(a, b);
        }
        for &f in path {
            on_receiver_side = !on_receiver_side;
            if on_receiver_side {
                self.at_receiver[self.receiver_of[f]].swap_colours(a, b);
            } else {
                self.at_sender[self.sender_of[f]].swap_colours(a, b);
            }
            self.colour_of[f] = if self.colour_of[f] == a { b } else { a };
        }
    }
}

/// A position on an alternating path: the vertex reached, its side, and
/// the colour of the edge to follow next.
struct Walk {
    vertex: usize,
    on_receiver_side: bool,
    want: usize,
}

// ---------------------------------------------------------------------------
// Closed-form schedule for CYCLIC(r) -> CYCLIC(K r)
// ---------------------------------------------------------------------------

/// The closed-form schedule of Walker and Otto (1996, seed 001, §2.2.2–2.2.3)
/// for enlarging the block size of a block-cyclic distribution by a factor
/// K on P processes: CYCLIC(r) → CYCLIC(K·r).
///
/// Number the blocks of size r globally. Block B lives on process
/// `p = B mod P` as local block `b = B / P`, and after the change it lives on
/// process `q = (B / K) mod P` in slot `t = B mod K` of its larger block
/// (eq. 3). The pattern repeats every P·K blocks (a *superblock*), so one
/// superblock, `0 <= B < P·K`, describes all of it (eq. 4): each process
/// sends K blocks, one per step, and receives K blocks, one per step.
///
/// The schedule has K steps. In step k, process p sends block `B(k,p)` to
/// `q(k,p)`, and process q receives block `C(k,q)` from `p(k,q)`. Every step
/// is a permutation of the processes — each sends exactly one block and
/// receives exactly one — for every P and K, so there are neither hot spots
/// nor waiting. Some pairs of a step are local (`q(k,p) == p`).
///
/// ```
/// use redist::schedule::expansion;
/// // P = 4 processes, block size grows by K = 3 (the paper's Fig. 6).
/// let s = expansion(4, 3)?;
/// assert_eq!(s.step_count(), 3);
/// let e = s.send(0, 1).unwrap();
/// // In step 0 process 1 sends global block 9 (its local block 2) to process 3 ...
/// assert_eq!((e.block, e.local_block, e.destination), (9, 2, 3));
/// // ... and process 3 receives it in step 0, into slot 0.
/// let r = s.receive(0, 3).unwrap();
/// assert_eq!((r.block, r.source, r.slot), (9, 1, 0));
/// # Ok::<(), redist::RedistError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExpansionSchedule {
    /// P, the number of processes.
    processes: usize,
    /// K, the factor by which the block size grows.
    factor: usize,
    /// g = gcd(P, K).
    gcd: usize,
    /// P' = P / g.
    reduced_processes: usize,
    /// K' = K / g.
    reduced_factor: usize,
    /// The inverse of K' modulo P' (0 when P' = 1).
    factor_inverse: usize,
}

/// What one process sends in one step of an [`ExpansionSchedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SendEntry {
    /// B(k,p): the global index of the block sent, within the first
    /// superblock (`0 <= block < P·K`).
    pub block: usize,
    /// q(k,p) = (B / K) mod P: the process it goes to.
    pub destination: usize,
    /// b(k,p) = B / P: its local index on the sender, within the superblock.
    pub local_block: usize,
}

/// What one process receives in one step of an [`ExpansionSchedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReceiveEntry {
    /// C(k,q): the global index of the block received, within the first
    /// superblock (`0 <= block < P·K`).
    pub block: usize,
    /// p(k,q) = C mod P: the process it comes from.
    pub source: usize,
    /// t(k,q) = C mod K: the slot of the receiver's larger block it goes to.
    pub slot: usize,
}

/// The closed-form schedule for CYCLIC(r) → CYCLIC(`factor`·r) on
/// `processes` processes (Walker and Otto 1996, seed 001); see
/// [`ExpansionSchedule`].
///
/// # Errors
///
/// [`RedistError::InvalidArgument`] if `processes` or `factor` is zero, or if
/// `processes · factor` does not fit in `usize`.
///
/// ```
/// use redist::schedule::expansion;
/// let s = expansion(16, 12)?;
/// assert_eq!(s.gcd(), 4);
/// assert_eq!(s.send(1, 0).unwrap().block, 144);
/// assert!(expansion(0, 3).is_err());
/// # Ok::<(), redist::RedistError>(())
/// ```
pub fn expansion(processes: usize, factor: usize) -> Result<ExpansionSchedule, RedistError> {
    let positive = |what, value: usize| {
        if value == 0 {
            Err(RedistError::InvalidArgument {
                what,
                value: value.to_string(),
                expected: "a positive integer".to_string(),
            })
        } else {
            Ok(())
        }
    };
    positive("process count", processes)?;
    positive("block-size factor", factor)?;
    if processes.checked_mul(factor).is_none() {
        return Err(RedistError::InvalidArgument {
            what: "process count and block-size factor",
            value: format!("{processes} x {factor}"),
            expected: "a product that fits in usize".to_string(),
        });
    }
    let (gcd, _, _) = extended_gcd(processes as i128, factor as i128);
    let gcd = gcd as usize;
    let (reduced_processes, reduced_factor) = (processes / gcd, factor / gcd);
    // x with x·K' + y·P' = 1; then x is the inverse of K' modulo P'.
    let (_, x, _) = extended_gcd(reduced_factor as i128, reduced_processes as i128);
    let factor_inverse = x.rem_euclid(reduced_processes as i128) as usize;
    Ok(ExpansionSchedule {
        processes,
        factor,
        gcd,
        reduced_processes,
        reduced_factor,
        factor_inverse,
    })
}

/// `(g, x, y)` with `g = gcd(a, b) = x·a + y·b`, for `a, b >= 0`.
fn extended_gcd(a: i128, b: i128) -> (i128, i128, i128) {
    let (mut r0, mut r1) = (a, b);
    let (mut x0, mut x1) = (1, 0);
    let (mut y0, mut y1) = (0, 1);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (x0, x1) = (x1, x0 - q * x1);
        (y0, y1) = (y1, y0 - q * y1);
    }
    (r0, x0, y0)
}

impl ExpansionSchedule {
    /// P, the number of processes.
    pub fn processes(&self) -> usize {
        self.processes
    }

    /// K, the factor by which the block size grows.
    pub fn factor(&self) -> usize {
        self.factor
    }

    /// g = gcd(P, K): the side of the permutation blocks the schedule is
    /// made of.
    pub fn gcd(&self) -> usize {
        self.gcd
    }

    /// The number of steps, K.
    pub fn step_count(&self) -> usize {
        self.factor
    }

    /// The block of the *reduced system* (P' = P/g processes, factor
    /// K' = K/g, which are coprime) sent in reduced step `k'` by reduced
    /// process `p'`: the unique `B'` in `0..P'·K'` with
    /// `B' = q'·K' + k' = b'·P' + p'` (seed 001, eq. 7). Walker and Otto
    /// solve it with the extended Euclid algorithm, `x·K' + y·P' = 1`,
    /// `q' = λx + P'z`, `λ = p' − k'`; reducing modulo P' gives
    /// `q' = (p' − k')·x mod P'` directly.
    fn reduced_block(&self, k1: usize, p1: usize) -> usize {
        let pp = self.reduced_processes;
        let lambda = (p1 % pp + pp - k1 % pp) % pp;
        let q1 = (lambda as u128 * self.factor_inverse as u128 % pp as u128) as usize;
        q1 * self.reduced_factor + k1
    }

    /// What process `process` sends in step `step`, or `None` if
    /// `step >= K` or `process >= P`.
    ///
    /// With `g = gcd(P,K)`, `k = g·k' + γ` and `p = g·p' + α`, the block is
    /// `B(k,p) = g·B'(k',p') + P·K'·β + α` (seed 001, eq. 8) with
    /// `β = (α − γ) mod g` (eqs. 9–10, the layout of Fig. 7(a)): each entry
    /// of the reduced schedule grows into a g×g permutation block. The paper
    /// prints the result for P = 16, K = 12 in Fig. 8.
    ///
    /// ```
    /// use redist::schedule::expansion;
    /// let s = expansion(16, 12)?;
    /// let e = s.send(4, 1).unwrap();
    /// assert_eq!((e.block, e.destination, e.local_block), (65, 5, 4));
    /// assert_eq!(s.send(12, 0), None);
    /// # Ok::<(), redist::RedistError>(())
    /// ```
    pub fn send(&self, step: usize, process: usize) -> Option<SendEntry> {
        if step >= self.factor || process >= self.processes {
            return None;
        }
        let g = self.gcd;
        let (k1, gamma) = (step / g, step % g);
        let (p1, alpha) = (process / g, process % g);
        let beta = (alpha + g - gamma) % g;
        let block =
            g * self.reduced_block(k1, p1) + self.processes * self.reduced_factor * beta + alpha;
        Some(SendEntry {
            block,
            destination: (block / self.factor) % self.processes,
            local_block: block / self.processes,
        })
    }

    /// What process `process` receives in step `step`, or `None` if
    /// `step >= K` or `process >= P`.
    ///
    /// `C(k,q) = K·q + g·⌊k/g⌋ + ((⌊q/P'⌋ + k mod g) mod g)`. This is eq. 11
    /// of seed 001 as stated in its Appendix B (the printed eq. 11 is
    /// garbled: `q|k/q|` there should read `g⌊k/g⌋`). It follows from the
    /// send side: writing `q = β·P' + q'`, the block that reaches q in step
    /// k is `K·q + g·k' + α` with `α = (β + γ) mod g`, i.e. `C(k,q) = B(k,p)`
    /// for the one p with `q(k,p) = q` (compatibility, eq. 12). The tests
    /// check this against the inverse of [`send`](Self::send) for many P
    /// and K, and against the paper's Fig. 9.
    ///
    /// ```
    /// use redist::schedule::expansion;
    /// let s = expansion(16, 12)?;
    /// let r = s.receive(1, 12).unwrap();
    /// assert_eq!((r.block, r.source, r.slot), (144, 0, 0));
    /// // Compatibility: the source sends exactly this block in this step.
    /// assert_eq!(s.send(1, r.source).unwrap().block, r.block);
    /// # Ok::<(), redist::RedistError>(())
    /// ```
    pub fn receive(&self, step: usize, process: usize) -> Option<ReceiveEntry> {
        if step >= self.factor || process >= self.processes {
            return None;
        }
        let g = self.gcd;
        let alpha = (process / self.reduced_processes + step % g) % g;
        let block = self.factor * process + g * (step / g) + alpha;
        Some(ReceiveEntry {
            block,
            source: block % self.processes,
            slot: block % self.factor,
        })
    }

    /// For each of the K steps, the `(source, destination)` pair of every
    /// process, sources in order `0..P`. Each step is a permutation of the
    /// processes; pairs with `source == destination` are local copies.
    ///
    /// ```
    /// use redist::schedule::expansion;
    /// let s = expansion(4, 3)?;
    /// let pairs = s.step_pairs();
    /// assert_eq!(pairs.len(), 3);
    /// assert_eq!(pairs[0], vec![(0, 0), (1, 3), (2, 2), (3, 1)]);
    /// # Ok::<(), redist::RedistError>(())
    /// ```
    pub fn step_pairs(&self) -> Vec<Vec<(usize, usize)>> {
        (0..self.factor)
            .map(|k| {
                (0..self.processes)
                    .filter_map(|p| self.send(k, p).map(|e| (p, e.destination)))
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    fn msg(from: usize, to: usize, len: usize) -> Message {
        Message { from, to, len }
    }

    /// A message set on `1 + n % 12` ranks from raw quickcheck data: at most
    /// one message per ordered pair, some local copies and some empty ones.
    fn message_set(n: u8, raw: &[(u8, u8, u8)]) -> Vec<Message> {
        let n = 1 + usize::from(n) % 12;
        let mut pairs = HashSet::new();
        raw.iter()
            .map(|&(a, b, len)| {
                msg(
                    usize::from(a) % n,
                    usize::from(b) % n,
                    usize::from(len) % 40,
                )
            })
            .filter(|m| pairs.insert((m.from, m.to)))
            .collect()
    }

    /// A small deterministic generator (xorshift64*) for the statistics tests.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Random messages on `ranks` ranks: each ordered pair present with
    /// probability `percent`%, lengths 1..=100.
    fn random_set(rng: &mut Rng, ranks: usize, percent: usize) -> Vec<Message> {
        let mut v = Vec::new();
        for from in 0..ranks {
            for to in 0..ranks {
                if rng.below(100) < percent {
                    v.push(msg(from, to, 1 + rng.below(100)));
                }
            }
        }
        v
    }

    fn all_to_all(ranks: usize) -> Vec<Message> {
        (0..ranks * ranks)
            .map(|i| msg(i / ranks, i % ranks, 1 + (i * 7919) % 13))
            .collect()
    }

    fn assert_valid(messages: &[Message]) {
        let degree = max_degree(messages);
        for s in [minimal(messages), greedy(messages)] {
            assert_eq!(s.check(messages), Ok(()));
            assert_eq!(s.len(), degree);
            assert!(s.steps().iter().all(|step| !step.is_empty()));
        }
    }

    #[test]
    fn empty_input_gives_no_step() {
        for s in [minimal(&[]), greedy(&[])] {
            assert!(s.is_empty());
            assert_eq!(s.len(), 0);
            assert_eq!(s.cost(&[]), 0);
            assert_eq!(s.check(&[]), Ok(()));
        }
        // Local copies and empty messages are not scheduled either.
        let only_local = [msg(0, 0, 5), msg(3, 3, 1), msg(1, 2, 0)];
        assert_eq!(max_degree(&only_local), 0);
        assert!(minimal(&only_local).is_empty());
        assert!(greedy(&only_local).is_empty());
    }

    #[test]
    fn all_to_all_takes_ranks_minus_one_steps() {
        for ranks in 1..=16 {
            let messages = all_to_all(ranks);
            assert_eq!(max_degree(&messages), ranks.saturating_sub(1));
            assert_valid(&messages);
        }
    }

    #[test]
    fn ring_shift_takes_one_step() {
        for ranks in 2..=9 {
            for shift in 1..ranks {
                let ring: Vec<Message> = (0..ranks)
                    .map(|r| msg(r, (r + shift) % ranks, 3 + r))
                    .collect();
                for s in [minimal(&ring), greedy(&ring)] {
                    assert_eq!(s.steps(), &[(0..ranks).collect::<Vec<_>>()]);
                    assert_eq!(s.cost(&ring), 2 + ranks);
                }
            }
        }
    }

    #[test]
    fn recolours_the_shorter_alternating_path() {
        // 0→5 takes step 0; 2→6 step 0 and 2→1 step 1. Then 0→1 finds only
        // step 1 free at rank 0 and only step 0 free at rank 1. Of the two
        // alternating paths, 0→5 (from rank 0) is shorter than 2→1, 2→6
        // (from rank 1), so 0→5 moves to step 1 and 0→1 takes step 0.
        let messages = [msg(0, 5, 1), msg(2, 6, 1), msg(2, 1, 1), msg(0, 1, 1)];
        let s = minimal(&messages);
        assert_eq!(s.steps(), &[vec![1, 3], vec![0, 2]]);
        assert_eq!(s.check(&messages), Ok(()));
        for forced in [Representation::Dense, Representation::Sparse] {
            assert_eq!(colour_edges(&messages, Strategy::InputOrder, forced), s);
        }
        // Lengthen the path from rank 0 by 7→5 and 7→8: now the path from
        // rank 1 is flipped (2→1 to step 0, 2→6 to step 1) and 0→1 takes
        // step 1.
        let messages = [
            msg(0, 5, 1),
            msg(7, 8, 1),
            msg(7, 5, 1),
            msg(2, 6, 1),
            msg(2, 1, 1),
            msg(0, 1, 1),
        ];
        let s = minimal(&messages);
        assert_eq!(s.steps(), &[vec![0, 1, 4], vec![2, 3, 5]]);
        assert_eq!(s.check(&messages), Ok(()));
        for forced in [Representation::Dense, Representation::Sparse] {
            assert_eq!(colour_edges(&messages, Strategy::InputOrder, forced), s);
        }
    }

    #[test]
    fn repeated_pairs_and_huge_ranks_are_scheduled() {
        let big = usize::MAX - 1;
        let messages = [
            msg(big, 0, 4),
            msg(big, 0, 4),
            msg(0, big, 1),
            msg(7, 0, 2),
            msg(big, 7, 9),
            msg(big, big, 9),
        ];
        assert_eq!(max_degree(&messages), 3);
        assert_valid(&messages);
    }

    #[test]
    fn star_uses_sparse_tables_and_stays_minimal() {
        // One rank sends to 3000 others and receives from them; the leaves
        // have degree 2 out of 3000 and get sparse colour tables.
        let leaves = 3000;
        let mut messages: Vec<Message> = (1..=leaves).map(|r| msg(0, r, r % 17 + 1)).collect();
        messages.extend((1..=leaves).map(|r| msg(r, 0, r % 5 + 1)));
        messages.extend((1..leaves).map(|r| msg(r, r + 1, 1)));
        assert_eq!(max_degree(&messages), leaves);
        assert_valid(&messages);
    }

    #[test]
    fn check_reports_each_kind_of_violation() {
        let messages = [
            msg(0, 1, 1),
            msg(0, 2, 1),
            msg(2, 1, 1),
            msg(3, 3, 1),
            msg(4, 5, 0),
        ];
        let check = |steps: Vec<Vec<usize>>| Schedule::from_steps(steps).check(&messages);
        assert_eq!(
            check(vec![vec![0, 2], vec![1]]),
            Err("step 0: rank 1 receives more than one message".into())
        );
        assert_eq!(check(vec![vec![0], vec![1, 2]]), Ok(()));
        assert_eq!(check(vec![vec![0], vec![1, 2], vec![4]]), Ok(()));
        assert!(check(vec![vec![0, 1], vec![2]])
            .unwrap_err()
            .contains("sends more than one"));
        assert!(check(vec![vec![0], vec![1]])
            .unwrap_err()
            .contains("message 2"));
        assert!(check(vec![vec![0], vec![1, 2], vec![3]])
            .unwrap_err()
            .contains("local copy"));
        assert!(check(vec![vec![0], vec![1, 2], vec![0]])
            .unwrap_err()
            .contains("twice"));
        assert!(check(vec![vec![0], vec![1, 2, 9]])
            .unwrap_err()
            .contains("out of range"));
        assert_eq!(Schedule::from_steps(vec![vec![9]]).cost(&messages), 0);
    }

    #[test]
    fn forced_table_stores_agree_on_a_larger_graph() {
        let mut rng = Rng(0x5eed);
        let messages = random_set(&mut rng, 40, 30);
        for strategy in [Strategy::InputOrder, Strategy::LongestFirst] {
            let auto = colour_edges(&messages, strategy, Representation::Auto);
            assert_eq!(auto.check(&messages), Ok(()));
            assert_eq!(auto.len(), max_degree(&messages));
            for forced in [Representation::Dense, Representation::Sparse] {
                assert_eq!(colour_edges(&messages, strategy, forced), auto);
            }
        }
    }

    #[test]
    fn greedy_beats_minimal_on_fixed_cases() {
        // Input order pairs the short 2→1 with the long 1→2 and leaves the
        // long 0→1 alone; longest first pairs the two long ones.
        let messages = [msg(2, 1, 1), msg(0, 1, 10), msg(1, 2, 10)];
        assert_eq!(minimal(&messages).cost(&messages), 20);
        assert_eq!(greedy(&messages).cost(&messages), 11);
        // A tie: both reach 100 + 50 + 1.
        let messages = [
            msg(0, 3, 1),
            msg(0, 1, 100),
            msg(2, 1, 1),
            msg(2, 3, 100),
            msg(4, 1, 50),
        ];
        assert_eq!(minimal(&messages).cost(&messages), 151);
        assert_eq!(greedy(&messages).cost(&messages), 151);
        // Seeded random graphs: greedy is never worse on these.
        for seed in 1..=20u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let ranks = 4 + rng.below(12);
            let percent = 20 + rng.below(60);
            let messages = random_set(&mut rng, ranks, percent);
            let (g, m) = (greedy(&messages), minimal(&messages));
            assert_eq!(g.len(), m.len());
            assert!(g.cost(&messages) <= m.cost(&messages), "seed {seed}");
        }
    }

    #[test]
    fn greedy_is_rarely_worse_than_minimal() {
        let (mut better, mut equal, mut worse) = (0, 0, 0);
        let (mut greedy_total, mut minimal_total) = (0, 0);
        for seed in 1..=400u64 {
            let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
            let ranks = 2 + rng.below(15);
            let percent = 10 + rng.below(90);
            let messages = random_set(&mut rng, ranks, percent);
            let (g, m) = (
                greedy(&messages).cost(&messages),
                minimal(&messages).cost(&messages),
            );
            match g.cmp(&m) {
                std::cmp::Ordering::Less => better += 1,
                std::cmp::Ordering::Equal => equal += 1,
                std::cmp::Ordering::Greater => worse += 1,
            }
            greedy_total += g;
            minimal_total += m;
        }
        eprintln!("greedy vs minimal over 400 graphs: better {better}, equal {equal}, worse {worse}; total cost {greedy_total} vs {minimal_total}");
        assert!(
            worse * 10 <= better + equal + worse,
            "{better} {equal} {worse}"
        );
        assert!(greedy_total < minimal_total);
    }

    quickcheck! {
        fn random_sets_get_minimal_valid_schedules(n: u8, raw: Vec<(u8, u8, u8)>) -> bool {
            let messages = message_set(n, &raw);
            let degree = max_degree(&messages);
            [minimal(&messages), greedy(&messages)]
                .iter()
                .all(|s| s.check(&messages).is_ok() && s.len() == degree)
        }

        fn table_stores_do_not_change_the_result(n: u8, raw: Vec<(u8, u8, u8)>) -> bool {
            let messages = message_set(n, &raw);
            [Strategy::InputOrder, Strategy::LongestFirst].into_iter().all(|strategy| {
                let auto = colour_edges(&messages, strategy, Representation::Auto);
                [Representation::Dense, Representation::Sparse]
                    .into_iter()
                    .all(|r| colour_edges(&messages, strategy, r) == auto)
            })
        }

        fn multigraphs_are_scheduled_too(n: u8, raw: Vec<(u8, u8, u8)>) -> bool {
            // No de-duplication: repeated pairs are separate messages.
            let n = 1 + usize::from(n) % 6;
            let messages: Vec<Message> = raw
                .iter()
                .map(|&(a, b, l)| msg(usize::from(a) % n, usize::from(b) % n, usize::from(l)))
                .collect();
            let degree = max_degree(&messages);
            [minimal(&messages), greedy(&messages)]
                .iter()
                .all(|s| s.check(&messages).is_ok() && s.len() == degree)
        }
    }

    // -- Closed-form expansion schedule --------------------------------------

    /// Seed 001, Fig. 6: P' = 4, K' = 3 (rows: step, columns: process).
    const FIG6_BLOCK: [[usize; 4]; 3] = [[0, 9, 6, 3], [4, 1, 10, 7], [8, 5, 2, 11]];
    const FIG6_PROCESS: [[usize; 4]; 3] = [[0, 3, 2, 1], [1, 0, 3, 2], [2, 1, 0, 3]];
    const FIG6_LOCAL: [[usize; 4]; 3] = [[0, 2, 1, 0], [1, 0, 2, 1], [2, 1, 0, 2]];

    // Seed 001, Fig. 8 (send side) and Fig. 9 (receive side): P = 16, K = 12.
    const FIG8_BLOCK: [[usize; 16]; 12] = [
        [
            0, 49, 98, 147, 36, 85, 134, 183, 24, 73, 122, 171, 12, 61, 110, 159,
        ],
        [
            144, 1, 50, 99, 180, 37, 86, 135, 168, 25, 74, 123, 156, 13, 62, 111,
        ],
        [
            96, 145, 2, 51, 132, 181, 38, 87, 120, 169, 26, 75, 108, 157, 14, 63,
        ],
        [
            48, 97, 146, 3, 84, 133, 182, 39, 72, 121, 170, 27, 60, 109, 158, 15,
        ],
        [
            16, 65, 114, 163, 4, 53, 102, 151, 40, 89, 138, 187, 28, 77, 126, 175,
        ],
        [
            160, 17, 66, 115, 148, 5, 54, 103, 184, 41, 90, 139, 172, 29, 78, 127,
        ],
        [
            112, 161, 18, 67, 100, 149, 6, 55, 136, 185, 42, 91, 124, 173, 30, 79,
        ],
        [
            64, 113, 162, 19, 52, 101, 150, 7, 88, 137, 186, 43, 76, 125, 174, 31,
        ],
        [
            32, 81, 130, 179, 20, 69, 118, 167, 8, 57, 106, 155, 44, 93, 142, 191,
        ],
        [
            176, 33, 82, 131, 164, 21, 70, 119, 152, 9, 58, 107, 188, 45, 94, 143,
        ],
        [
            128, 177, 34, 83, 116, 165, 22, 71, 104, 153, 10, 59, 140, 189, 46, 95,
        ],
        [
            80, 129, 178, 35, 68, 117, 166, 23, 56, 105, 154, 11, 92, 141, 190, 47,
        ],
    ];
    const FIG8_PROCESS: [[usize; 16]; 12] = [
        [0, 4, 8, 12, 3, 7, 11, 15, 2, 6, 10, 14, 1, 5, 9, 13],
        [12, 0, 4, 8, 15, 3, 7, 11, 14, 2, 6, 10, 13, 1, 5, 9],
        [8, 12, 0, 4, 11, 15, 3, 7, 10, 14, 2, 6, 9, 13, 1, 5],
        [4, 8, 12, 0, 7, 11, 15, 3, 6, 10, 14, 2, 5, 9, 13, 1],
        [1, 5, 9, 13, 0, 4, 8, 12, 3, 7, 11, 15, 2, 6, 10, 14],
        [13, 1, 5, 9, 12, 0, 4, 8, 15, 3, 7, 11, 14, 2, 6, 10],
        [9, 13, 1, 5, 8, 12, 0, 4, 11, 15, 3, 7, 10, 14, 2, 6],
        [5, 9, 13, 1, 4, 8, 12, 0, 7, 11, 15, 3, 6, 10, 14, 2],
        [2, 6, 10, 14, 1, 5, 9, 13, 0, 4, 8, 12, 3, 7, 11, 15],
        [14, 2, 6, 10, 13, 1, 5, 9, 12, 0, 4, 8, 15, 3, 7, 11],
        [10, 14, 2, 6, 9, 13, 1, 5, 8, 12, 0, 4, 11, 15, 3, 7],
        [6, 10, 14, 2, 5, 9, 13, 1, 4, 8, 12, 0, 7, 11, 15, 3],
    ];
    const FIG8_LOCAL: [[usize; 16]; 12] = [
        [0, 3, 6, 9, 2, 5, 8, 11, 1, 4, 7, 10, 0, 3, 6, 9],
        [9, 0, 3, 6, 11, 2, 5, 8, 10, 1, 4, 7, 9, 0, 3, 6],
        [6, 9, 0, 3, 8, 11, 2, 5, 7, 10, 1, 4, 6, 9, 0, 3],
        [3, 6, 9, 0, 5, 8, 11, 2, 4, 7, 10, 1, 3, 6, 9, 0],
        [1, 4, 7, 10, 0, 3, 6, 9, 2, 5, 8, 11, 1, 4, 7, 10],
        [10, 1, 4, 7, 9, 0, 3, 6, 11, 2, 5, 8, 10, 1, 4, 7],
        [7, 10, 1, 4, 6, 9, 0, 3, 8, 11, 2, 5, 7, 10, 1, 4],
        [4, 7, 10, 1, 3, 6, 9, 0, 5, 8, 11, 2, 4, 7, 10, 1],
        [2, 5, 8, 11, 1, 4, 7, 10, 0, 3, 6, 9, 2, 5, 8, 11],
        [11, 2, 5, 8, 10, 1, 4, 7, 9, 0, 3, 6, 11, 2, 5, 8],
        [8, 11, 2, 5, 7, 10, 1, 4, 6, 9, 0, 3, 8, 11, 2, 5],
        [5, 8, 11, 2, 4, 7, 10, 1, 3, 6, 9, 0, 5, 8, 11, 2],
    ];
    const FIG9_BLOCK: [[usize; 16]; 12] = [
        [
            0, 12, 24, 36, 49, 61, 73, 85, 98, 110, 122, 134, 147, 159, 171, 183,
        ],
        [
            1, 13, 25, 37, 50, 62, 74, 86, 99, 111, 123, 135, 144, 156, 168, 180,
        ],
        [
            2, 14, 26, 38, 51, 63, 75, 87, 96, 108, 120, 132, 145, 157, 169, 181,
        ],
        [
            3, 15, 27, 39, 48, 60, 72, 84, 97, 109, 121, 133, 146, 158, 170, 182,
        ],
        [
            4, 16, 28, 40, 53, 65, 77, 89, 102, 114, 126, 138, 151, 163, 175, 187,
        ],
        [
            5, 17, 29, 41, 54, 66, 78, 90, 103, 115, 127, 139, 148, 160, 172, 184,
        ],
        [
            6, 18, 30, 42, 55, 67, 79, 91, 100, 112, 124, 136, 149, 161, 173, 185,
        ],
        [
            7, 19, 31, 43, 52, 64, 76, 88, 101, 113, 125, 137, 150, 162, 174, 186,
        ],
        [
            8, 20, 32, 44, 57, 69, 81, 93, 106, 118, 130, 142, 155, 167, 179, 191,
        ],
        [
            9, 21, 33, 45, 58, 70, 82, 94, 107, 119, 131, 143, 152, 164, 176, 188,
        ],
        [
            10, 22, 34, 46, 59, 71, 83, 95, 104, 116, 128, 140, 153, 165, 177, 189,
        ],
        [
            11, 23, 35, 47, 56, 68, 80, 92, 105, 117, 129, 141, 154, 166, 178, 190,
        ],
    ];
    const FIG9_SOURCE: [[usize; 16]; 12] = [
        [0, 12, 8, 4, 1, 13, 9, 5, 2, 14, 10, 6, 3, 15, 11, 7],
        [1, 13, 9, 5, 2, 14, 10, 6, 3, 15, 11, 7, 0, 12, 8, 4],
        [2, 14, 10, 6, 3, 15, 11, 7, 0, 12, 8, 4, 1, 13, 9, 5],
        [3, 15, 11, 7, 0, 12, 8, 4, 1, 13, 9, 5, 2, 14, 10, 6],
        [4, 0, 12, 8, 5, 1, 13, 9, 6, 2, 14, 10, 7, 3, 15, 11],
        [5, 1, 13, 9, 6, 2, 14, 10, 7, 3, 15, 11, 4, 0, 12, 8],
        [6, 2, 14, 10, 7, 3, 15, 11, 4, 0, 12, 8, 5, 1, 13, 9],
        [7, 3, 15, 11, 4, 0, 12, 8, 5, 1, 13, 9, 6, 2, 14, 10],
        [8, 4, 0, 12, 9, 5, 1, 13, 10, 6, 2, 14, 11, 7, 3, 15],
        [9, 5, 1, 13, 10, 6, 2, 14, 11, 7, 3, 15, 8, 4, 0, 12],
        [10, 6, 2, 14, 11, 7, 3, 15, 8, 4, 0, 12, 9, 5, 1, 13],
        [11, 7, 3, 15, 8, 4, 0, 12, 9, 5, 1, 13, 10, 6, 2, 14],
    ];
    const FIG9_SLOT: [[usize; 16]; 12] = [
        [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3],
        [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 0, 0, 0, 0],
        [2, 2, 2, 2, 3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1],
        [3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2],
        [4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7],
        [5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 4, 4, 4, 4],
        [6, 6, 6, 6, 7, 7, 7, 7, 4, 4, 4, 4, 5, 5, 5, 5],
        [7, 7, 7, 7, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6],
        [8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11],
        [9, 9, 9, 9, 10, 10, 10, 10, 11, 11, 11, 11, 8, 8, 8, 8],
        [10, 10, 10, 10, 11, 11, 11, 11, 8, 8, 8, 8, 9, 9, 9, 9],
        [11, 11, 11, 11, 8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10],
    ];

    #[test]
    fn reproduces_figure_6() {
        let s = expansion(4, 3).unwrap();
        for k in 0..3 {
            for p in 0..4 {
                let e = s.send(k, p).unwrap();
                assert_eq!(e.block, FIG6_BLOCK[k][p], "B({k},{p})");
                assert_eq!(e.destination, FIG6_PROCESS[k][p], "q({k},{p})");
                assert_eq!(e.local_block, FIG6_LOCAL[k][p], "b({k},{p})");
            }
        }
    }

    #[test]
    fn reproduces_figures_8_and_9() {
        let s = expansion(16, 12).unwrap();
        assert_eq!(
            (s.processes(), s.factor(), s.gcd(), s.step_count()),
            (16, 12, 4, 12)
        );
        for k in 0..12 {
            for p in 0..16 {
                let e = s.send(k, p).unwrap();
                assert_eq!(e.block, FIG8_BLOCK[k][p], "B({k},{p})");
                assert_eq!(e.destination, FIG8_PROCESS[k][p], "q({k},{p})");
                assert_eq!(e.local_block, FIG8_LOCAL[k][p], "b({k},{p})");
                let r = s.receive(k, p).unwrap();
                assert_eq!(r.block, FIG9_BLOCK[k][p], "C({k},{p})");
                assert_eq!(r.source, FIG9_SOURCE[k][p], "p({k},{p})");
                assert_eq!(r.slot, FIG9_SLOT[k][p], "t({k},{p})");
            }
        }
    }

    #[test]
    fn rejects_invalid_parameters() {
        for (p, k) in [(0, 3), (4, 0), (0, 0), (usize::MAX, 2)] {
            assert!(
                matches!(expansion(p, k), Err(RedistError::InvalidArgument { .. })),
                "{p} {k}"
            );
        }
        let s = expansion(1, 1).unwrap();
        assert_eq!(s.step_pairs(), vec![vec![(0, 0)]]);
        assert_eq!(s.send(1, 0), None);
        assert_eq!(s.receive(0, 1), None);
    }

    /// Every property of the expansion schedule for one (P, K), checked
    /// against brute force over one superblock.
    fn expansion_holds(processes: usize, factor: usize) -> Result<(), String> {
        let s = expansion(processes, factor).map_err(|e| e.to_string())?;
        let pk = processes * factor;
        // Receive schedule derived from the send side: in each step, the
        // block that reaches q is the one whose destination is q.
        let mut derived = vec![vec![None; processes]; factor];
        for (k, row) in derived.iter_mut().enumerate() {
            for p in 0..processes {
                let e = s.send(k, p).ok_or("send out of range")?;
                if e.block >= pk || e.block % processes != p {
                    return Err(format!("B({k},{p}) = {} is not a block of p", e.block));
                }
                if e.local_block != e.block / processes || e.destination != e.block / factor {
                    return Err(format!("b or q wrong at ({k},{p})"));
                }
                // Permutation condition 1: destinations of a step are distinct.
                if row[e.destination].replace(e.block).is_some() {
                    return Err(format!(
                        "step {k}: process {} receives twice",
                        e.destination
                    ));
                }
            }
        }
        for (k, row) in derived.iter().enumerate() {
            for (q, &block) in row.iter().enumerate() {
                let r = s.receive(k, q).ok_or("receive out of range")?;
                // The closed form agrees with the inverse of the send side,
                // which is the compatibility condition eq. 12 both ways.
                if Some(r.block) != block {
                    return Err(format!("C({k},{q}) = {} but derived {block:?}", r.block));
                }
                if r.block / factor != q
                    || r.source != r.block % processes
                    || r.slot != r.block % factor
                {
                    return Err(format!("p or t wrong at ({k},{q})"));
                }
                if s.send(k, r.source).map(|e| e.block) != Some(r.block) {
                    return Err(format!("eq. 12 fails at ({k},{q})"));
                }
            }
        }
        // Permutation condition 2: column p holds each of p's blocks
        // b·P + p, b in 0..K, exactly once — so its destinations are exactly
        // the brute-force destinations ((b·P + p) / K) mod P with multiplicity.
        for p in 0..processes {
            let mut sent: Vec<usize> = (0..factor)
                .filter_map(|k| s.send(k, p).map(|e| e.block))
                .collect();
            sent.sort_unstable();
            let expected: Vec<usize> = (0..factor).map(|b| b * processes + p).collect();
            if sent != expected {
                return Err(format!("process {p} sends {sent:?}, expected {expected:?}"));
            }
            let mut dest: Vec<usize> = (0..factor)
                .filter_map(|k| s.send(k, p).map(|e| e.destination))
                .collect();
            let mut brute: Vec<usize> = (0..factor)
                .map(|b| ((b * processes + p) / factor) % processes)
                .collect();
            dest.sort_unstable();
            brute.sort_unstable();
            if dest != brute {
                return Err(format!(
                    "process {p}: destinations {dest:?}, expected {brute:?}"
                ));
            }
        }
        // Every slot of every receiver is filled exactly once.
        for q in 0..processes {
            let mut slots: Vec<usize> = (0..factor)
                .filter_map(|k| s.receive(k, q).map(|r| r.slot))
                .collect();
            slots.sort_unstable();
            if slots != (0..factor).collect::<Vec<_>>() {
                return Err(format!("process {q} fills slots {slots:?}"));
            }
        }
        // step_pairs lists the send side.
        let pairs = s.step_pairs();
        if pairs.len() != factor
            || pairs.iter().enumerate().any(|(k, step)| {
                step.len() != processes
                    || step.iter().enumerate().any(|(p, &(from, to))| {
                        from != p || Some(to) != s.send(k, p).map(|e| e.destination)
                    })
            })
        {
            return Err("step_pairs disagrees with send".into());
        }
        Ok(())
    }

    #[test]
    fn expansion_holds_for_all_small_cases() {
        for processes in 1..=24 {
            for factor in 1..=24 {
                assert_eq!(
                    expansion_holds(processes, factor),
                    Ok(()),
                    "P={processes} K={factor}"
                );
            }
        }
    }

    quickcheck! {
        fn expansion_holds_for_random_cases(p: u16, k: u16, common: u8) -> bool {
            // A shared factor makes large gcds likely.
            let c = 1 + usize::from(common) % 8;
            let processes = c * (1 + usize::from(p) % 40);
            let factor = c * (1 + usize::from(k) % 40);
            expansion_holds(processes, factor).is_ok()
        }
    }
}
