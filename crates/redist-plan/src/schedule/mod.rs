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
//! reached. [`greedy`] reaches it with the alternating-path recolouring from
//! the proof of König's theorem, colouring the longest messages first and
//! packing them into the same steps, aiming at a lower total
//! [`cost`](Schedule::cost) — the sum over steps of the longest message in
//! the step, which is what a step-by-step exchange pays when every step
//! waits for its slowest transfer (the cost model of Desprez, Dongarra,
//! Petitet, Randriamaro and Robert, "Scheduling block-cyclic array
//! redistribution", seed 002). The tests compare it with the same colouring
//! in input order.
//!
//! For the special case of enlarging the block size, CYCLIC(r) → CYCLIC(K·r)
//! on the same P processes, the tests keep the closed-form schedule of
//! Walker and Otto ("Redistribution of block-cyclic data distributions using
//! MPI", 1996, seed 001, §2.2.2–2.2.3; `expansion.rs`): K steps, each a
//! permutation of the processes, with both the send side and the receive
//! side computable in O(1) per entry and no graph at all. It reproduces the
//! paper's printed schedules and referees the plans' schedules, which never
//! need more steps.
//!
//! ```
//! use redist_plan::schedule::{greedy, max_degree, Message};
//! let m = |from, to, len| Message { from, to, len };
//! // Rank 0 sends to 1 and 2; rank 1 sends to 2; rank 2 keeps its own data.
//! let messages = [m(0, 1, 10), m(0, 2, 3), m(1, 2, 8), m(2, 2, 99)];
//! assert_eq!(max_degree(&messages), 2);
//! let packed = greedy(&messages);
//! packed.check(&messages).unwrap();
//! assert_eq!(packed.len(), 2);
//! // Greedy puts the two long messages (10 and 8) into the same step.
//! assert_eq!(packed.cost(&messages), 10 + 3);
//! ```

mod axis_graph;
mod colouring;
#[cfg(test)]
mod expansion;
mod local;
mod product;

pub use colouring::greedy;
pub use local::{assign_steps, Construction, RankSchedule};

use std::collections::HashSet;

/// One message of a redistribution: `len` elements from source rank `from`
/// to target rank `to`.
///
/// A message with `from == to` is a local copy and is never scheduled; nor is
/// a message with `len == 0`, which has nothing to send.
///
/// ```
/// use redist_plan::schedule::Message;
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
/// use redist_plan::schedule::{greedy, Message};
/// // A ring shift: every rank sends to the next one, all in a single step.
/// let ring: Vec<Message> = (0..4).map(|r| Message { from: r, to: (r + 1) % 4, len: 5 }).collect();
/// let s = greedy(&ring);
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
    /// use redist_plan::schedule::{Message, Schedule};
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
    /// use redist_plan::schedule::{Message, Schedule};
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
    /// ```
    /// use redist_plan::schedule::{Message, Schedule};
    /// let m = |from, to, len| Message { from, to, len };
    /// let messages = [m(0, 1, 1), m(0, 2, 1)];
    /// // Rank 0 cannot send both messages in the same step.
    /// let bad = Schedule::from_steps(vec![vec![0, 1]]);
    /// assert!(bad.check(&messages).is_err());
    /// let good = Schedule::from_steps(vec![vec![0], vec![1]]);
    /// assert!(good.check(&messages).is_ok());
    /// ```
    ///
    /// # Errors
    ///
    /// A description of the first violation found, one of:
    ///
    /// - a message index out of range of `messages`;
    /// - a local copy (`from == to`) in a step;
    /// - a message in two steps, or twice in one;
    /// - a rank that sends, or receives, more than one message in one step;
    /// - a message with `from != to` and `len > 0` in no step.
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
/// [`greedy`]'s does.
///
/// ```
/// use redist_plan::schedule::{max_degree, Message};
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

#[cfg(test)]
mod tests {
    use super::colouring::minimal;
    use super::*;

    pub(super) fn msg(from: usize, to: usize, len: usize) -> Message {
        Message { from, to, len }
    }

    #[test]
    fn both_colourings_take_the_maximum_degree() {
        // Rank 0 sends to 1 and 2; rank 1 sends to 2; rank 2 keeps its own data.
        let messages = [msg(0, 1, 10), msg(0, 2, 3), msg(1, 2, 8), msg(2, 2, 99)];
        assert_eq!(max_degree(&messages), 2);
        let plain = minimal(&messages);
        let packed = greedy(&messages);
        for s in [&plain, &packed] {
            s.check(&messages).unwrap();
            assert_eq!(s.len(), 2);
        }
        // Greedy puts the two long messages (10 and 8) into the same step.
        assert_eq!(packed.cost(&messages), 10 + 3);
    }

    #[test]
    fn a_ring_shift_is_one_step_in_input_order() {
        // A ring shift: every rank sends to the next one, all in a single step.
        let ring: Vec<Message> = (0..4).map(|r| msg(r, (r + 1) % 4, 5)).collect();
        let s = minimal(&ring);
        assert_eq!(s.steps(), &[vec![0, 1, 2, 3]]);
        assert_eq!(s.cost(&ring), 5);
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
}
