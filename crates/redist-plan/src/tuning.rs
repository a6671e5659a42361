//! Every threshold the copies decide by — how copy programs are shaped,
//! how transposing tiles are cut, when stores stream — in one place, each
//! with what it trades. The values were chosen by measuring on the
//! development machine (2 cores, MPICH 4.0.2); `docs/TUNING.md` says, for
//! each, what was measured, on which cases, and the command that measures it
//! again on another machine. The thresholds of the exchange (how messages
//! travel) are the engine's (`redist_plan::tuning`).
//!
//! ```
//! use redist_plan::tuning;
//! // Tiles of transposing copies are 512 bytes along a row.
//! assert_eq!(tuning::TILE_BYTES, 512);
//! ```

// Copies done together.

/// Bytes of data per unit of parallel work inside one copy (a rank with
/// cores to itself runs units on several threads): smaller units balance
/// the threads better; larger ones cost less scheduling.
pub const UNIT_BYTES: usize = 1 << 21;

// Copy programs.

/// Lines a rank's copy programs may list once, over all its messages, so
/// that small messages are copied from the list instead of walking their
/// programs (walking costs ~10 ns a line, as much as copying a line of
/// short stretches): more lists more messages; each listed line holds
/// 88 bytes.
pub const LISTED_LINES: usize = 2048;

/// Lines one message may have to be listed: above it, walking costs little
/// next to copying.
pub const LISTED_MESSAGE_LINES: usize = 512;

/// Average stretch length, in elements, below which a period of a
/// dimension is copied through a table of per-element offsets instead of
/// stretch by stretch: tables cost a lookup per element but no branch per
/// stretch.
pub const SHORT_STRETCH: usize = 8;

/// Longest period, in elements of one message along one dimension, kept
/// as an offset table: longer tables stop fitting in the first-level cache
/// next to the data they move, and cost memory per message.
pub const OFFSETS_MAX: usize = 1 << 16;

/// Bytes of one row of the square tiles in which copies that transpose
/// (the target's axes permuted) move two dimensions at once: a tile's rows
/// must fill whole cache lines on both sides, and a tile must stay in the
/// first-level cache while it is copied.
pub const TILE_BYTES: usize = 512;

/// Bytes of the target's rows a transposing tile of 8-byte elements, copied
/// 8 × 8 or 4 × 4 in vector registers, writes at a time (the tile is [`TILE_BYTES`]
/// along the source's rows).
pub const TILE_WRITE_BYTES: usize = 128;

/// [`TILE_BYTES`] for copies that update the target (`β·target +
/// α·op(source)`) element by element (where no vector instructions do it):
/// they read the target as well, a third stream that must fit in the same
/// cache.
pub const UPDATE_TILE_BYTES: usize = 128;

// Streaming (non-temporal) stores into target storage.

/// Shortest stretch, in bytes, written with non-temporal stores when a copy
/// streams: shorter ones would write partial cache lines, which memory
/// takes as slowly as a line read and written back.
pub const STREAM_MIN_STRETCH_BYTES: usize = 64;

/// How far ahead, in bytes read, a merged copy of several messages into
/// one target
/// ([`MessageProgram::copy_merged_with`](crate::program::MessageProgram::copy_merged_with))
/// asks for its lines' sources to be fetched: each line is asked for once,
/// about this many bytes of copying before it runs.
pub const PREFETCH_BYTES: usize = 4 << 10;

/// Shortest average source run, in bytes, of a copy straight from source to
/// target storage that streams (unpacking from a buffer always may):
/// reading runs with gaps between them while streaming the writes is slower
/// than ordinary stores.
pub const STREAM_MIN_SOURCE_RUN_BYTES: usize = 64 << 10;

/// The smallest target, in bytes, that `Streaming::Auto` streams, however
/// many ranks share the cache: below it a target stays in cache anyway.
pub const STREAM_AUTO_MIN_BYTES: usize = 1 << 20;

/// Last-level cache assumed where the machine does not say (sysfs): what
/// `Streaming::Auto` divides among the node's ranks.
pub const CACHE_FALLBACK_BYTES: usize = 32 << 20;
