//! The ghost update's messages between two ranks, and what they say.
//!
//! Per execution and pair (owner `o` of some of reader `r`'s ghosts):
//!
//! | when | who → whom | tag | what |
//! |---|---|---|---|
//! | `o` starts, `r` on its node | o → r | [`NOTE`] | `o`'s storage, shared or not ([`Note`]) |
//! | `o` starts, not lending | o → r | [`DATA`] | the boxes, packed |
//! | `r` read `o`'s storage | r → o | [`DONE`] | [`READ`], or [`SEND_DATA`] when it could not map it |
//! | `o` hears [`SEND_DATA`] | o → r | [`DATA`] | the boxes, packed |
//!
//! A pair on two nodes exchanges [`DATA`] only. An owner that lent its
//! storage waits for the reader's [`DONE`] before its update returns, so
//! its interior is not written while read. Messages of one kind between
//! one pair never overtake each other (MPI's order), so executions that
//! follow each other match up without sequence numbers.

use dist_array::SharedStorage;
use mpi::Tag;

/// A note: where an owner's storage can be mapped, or that it cannot.
pub(super) const NOTE: Tag = 1;
/// The packed boxes of one message.
pub(super) const DATA: Tag = 2;
/// A reader's word that it is done with an owner's storage.
pub(super) const DONE: Tag = 3;

/// Bytes of a note.
pub(super) const NOTE_BYTES: usize = 8 * 7;
/// Bytes of a reader's word.
pub(super) const DONE_BYTES: usize = 8;

/// The reader has read what it needed from the owner's storage.
pub(super) const READ: u64 = 1;
/// The reader could not map the owner's storage: send the boxes.
pub(super) const SEND_DATA: u64 = 2;

/// What a note says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Note {
    /// Read the owner's storage there.
    Shared(SharedStorage),
    /// The boxes come as a message.
    Message,
}

impl Note {
    /// The words of the note.
    pub fn words(self) -> [u64; 7] {
        match self {
            Note::Message => [0; 7],
            Note::Shared(s) => [
                1,
                u64::from(s.pid),
                u64::from(s.fd.unsigned_abs()),
                s.id,
                s.bytes as u64,
                s.dev,
                s.ino,
            ],
        }
    }

    /// The note of `words`; anything malformed reads as a message.
    pub fn of(words: &[u64]) -> Note {
        let field = |i: usize| words.get(i).copied().unwrap_or(0);
        let (Ok(pid), Ok(fd), Ok(bytes)) = (
            u32::try_from(field(1)),
            i32::try_from(field(2)),
            usize::try_from(field(4)),
        ) else {
            return Note::Message;
        };
        if field(0) != 1 {
            return Note::Message;
        }
        Note::Shared(SharedStorage {
            pid,
            fd,
            id: field(3),
            bytes,
            dev: field(5),
            ino: field(6),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_round_trip() {
        let s = SharedStorage {
            pid: 4242,
            fd: 17,
            id: 9,
            bytes: 1 << 40,
            dev: 3,
            ino: 77,
        };
        assert_eq!(Note::of(&Note::Shared(s).words()), Note::Shared(s));
        assert_eq!(Note::of(&Note::Message.words()), Note::Message);
        assert_eq!(Note::of(&[1, u64::MAX, 0, 0, 0, 0, 0]), Note::Message);
        assert_eq!(Note::Message.words().len() * 8, NOTE_BYTES);
    }
}
