//! The control messages of round 1 between ranks of one node: each a kind
//! of `mpi_extras`' control messages with its tag, and what arrived
//! ([`Arrived`]) when `wait_any` reports one.
//!
//! | message | from → to | per | words |
//! |---|---|---|---|
//! | [`NOTE`] | sender → receiver | message | whether and how the source is shared |
//! | [`TARGET_NOTE`] | receiver → sender | message | whether and how the target is lent |
//! | [`ANSWER`] | receiver → sender | message | copied, or send it |
//! | [`WRITTEN`] | sender → receiver | message | written, or send it |

use super::super::messages;
use super::super::node_direct::Note;
use crate::error::RedistError;
use bytemuck::Pod;
use mpi::Tag;
use mpi_extras::requests::{ControlKind, ControlSpace, Requests, CONTROL_WORDS};

/// One kind of control message of the protocol and its tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Control {
    kind: ControlKind,
    tag: Tag,
}

/// The sender's note: whether its source storage is shared, and how to
/// map it.
pub(super) const NOTE: Control = Control {
    kind: ControlKind {
        id: 0,
        words: CONTROL_WORDS,
    },
    tag: messages::NOTE,
};
/// The receiver's answer to a note: it copied the message, or send it.
pub(super) const ANSWER: Control = Control {
    kind: ControlKind { id: 1, words: 1 },
    tag: messages::ANSWER,
};
/// The receiver's note about its target: lent to be written into or not.
pub(super) const TARGET_NOTE: Control = Control {
    kind: ControlKind {
        id: 2,
        words: CONTROL_WORDS,
    },
    tag: messages::TARGET_NOTE,
};
/// The writer's word: written into the target, or send it.
pub(super) const WRITTEN: Control = Control {
    kind: ControlKind { id: 3, words: 1 },
    tag: messages::WRITTEN,
};

/// Room for every control message of an execution with `sends` and
/// `recvs` messages: notes and written words go out per send and come in
/// per receive, target notes and answers the other way.
pub(super) fn spaces(sends: usize, recvs: usize) -> [ControlSpace; 4] {
    let space = |c: Control, outgoing, incoming| ControlSpace {
        kind: c.kind,
        outgoing,
        incoming,
    };
    [
        space(NOTE, sends, recvs),
        space(ANSWER, recvs, sends),
        space(TARGET_NOTE, recvs, sends),
        space(WRITTEN, sends, recvs),
    ]
}

impl Control {
    /// Posts the send of `words` as control message `i` to `peer`.
    pub fn send<T: Pod>(
        self,
        reqs: &mut Requests<'_, '_, T>,
        i: usize,
        words: &[u64],
        peer: usize,
    ) -> Result<(), RedistError> {
        Ok(reqs.isend_control(self.kind, i, words, peer, self.tag)?)
    }

    /// Posts the receive of control message `i` from `peer`.
    pub fn receive<T: Pod>(
        self,
        reqs: &mut Requests<'_, '_, T>,
        i: usize,
        peer: usize,
    ) -> Result<(), RedistError> {
        Ok(reqs.irecv_control(self.kind, i, peer, self.tag)?)
    }

    /// Control message `i` received, as a note (meaningful once arrived).
    pub fn note<T: Pod>(self, reqs: &Requests<'_, '_, T>, i: usize) -> Note {
        let mut note = [0; CONTROL_WORDS];
        let words = reqs.control(self.kind, i);
        note[..words.len()].copy_from_slice(words);
        note
    }

    /// Control message `i` received, as one word (meaningful once
    /// arrived; `u64::MAX`, which asks for the message, where there is
    /// none).
    pub fn word<T: Pod>(self, reqs: &Requests<'_, '_, T>, i: usize) -> u64 {
        reqs.control(self.kind, i)
            .first()
            .copied()
            .unwrap_or(u64::MAX)
    }
}

/// What arrived, by the kind of control message `wait_any` reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arrived {
    /// The note of receive message `i`.
    Note(usize),
    /// The answer to send message `i`.
    Answer(usize),
    /// The note about its target of send message `i`'s receiver.
    TargetNote(usize),
    /// The word of receive message `i`'s writer.
    Written(usize),
}

impl Arrived {
    /// What control message `index` of `kind` is.
    pub fn of(kind: ControlKind, index: usize) -> Result<Arrived, RedistError> {
        Ok(match kind {
            k if k == NOTE.kind => Arrived::Note(index),
            k if k == ANSWER.kind => Arrived::Answer(index),
            k if k == TARGET_NOTE.kind => Arrived::TargetNote(index),
            k if k == WRITTEN.kind => Arrived::Written(index),
            k => {
                return Err(RedistError::Internal(format!(
                    "a control message of unknown kind {k:?}"
                )))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_space_and_is_told_apart() {
        let spaces = spaces(3, 5);
        for (k, s) in spaces.iter().enumerate() {
            assert_eq!(s.kind.id, k);
        }
        assert_eq!((spaces[0].outgoing, spaces[0].incoming), (3, 5));
        assert_eq!((spaces[1].outgoing, spaces[1].incoming), (5, 3));
        let cases = [
            (NOTE, Arrived::Note(4)),
            (ANSWER, Arrived::Answer(4)),
            (TARGET_NOTE, Arrived::TargetNote(4)),
            (WRITTEN, Arrived::Written(4)),
        ];
        for (c, arrived) in cases {
            assert_eq!(Arrived::of(c.kind, 4).unwrap(), arrived);
        }
        let stranger = ControlKind { id: 9, words: 1 };
        assert!(Arrived::of(stranger, 0).is_err());
    }
}
