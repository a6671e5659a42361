//! Shared-memory files whose arrays were freed, kept for the next array of
//! the same size.
//!
//! Making a local part in shared memory costs far more than its pages on
//! the heap — here ~0.7 µs per KiB, a page fault each in the system's
//! shared memory, against a few µs for the whole part from the heap — and
//! `Redistribution::execute` makes a new target on every call: a 256²
//! `f64` redistribution between two ranks took 10 µs into a given target
//! and 226 µs into a new one. A freed file of at least
//! [`SHARED_MIN_BYTES`](super::SHARED_MIN_BYTES) (whatever threshold the
//! process set: smaller files are cheap enough to make) and at most
//! [`POOL_MAX_FILE_BYTES`] is kept here, up to [`POOL_MAX_BYTES`] in all
//! (the oldest given back first), and the next part of the same size
//! takes it, zeroed. Kept files stay open: they count against the
//! process's budget of shared files, and are given back when it runs out.

use super::SHARED_MIN_BYTES;
use std::sync::Mutex;

/// Most bytes the pool keeps, over all its files: memory no array uses,
/// held for the next ones.
pub const POOL_MAX_BYTES: usize = 64 << 20;

/// Largest file the pool keeps: larger parts are made rarely enough, or
/// copied long enough, that their making matters less.
pub const POOL_MAX_FILE_BYTES: usize = 16 << 20;

/// A freed file, mapped read-write at `ptr`, `bytes` long.
pub(super) struct Freed {
    pub ptr: *mut u8,
    pub bytes: usize,
    pub fd: i32,
    pub dev: u64,
    pub ino: u64,
}

// SAFETY: a kept file is the pool's alone: nothing reads or writes its
// mapping until `take` hands it to a new owner.
unsafe impl Send for Freed {}

/// The kept files, oldest first.
static POOL: Mutex<Vec<Freed>> = Mutex::new(Vec::new());

/// Keeps `file` for reuse: `Ok` with the oldest kept files to give back to
/// make room for it, or `Err(file)` when the pool does not keep it.
pub(super) fn keep(file: Freed) -> Result<Vec<Freed>, Freed> {
    if !(SHARED_MIN_BYTES..=POOL_MAX_FILE_BYTES).contains(&file.bytes) {
        return Err(file);
    }
    let Ok(mut pool) = POOL.lock() else {
        return Err(file);
    };
    let Some(oldest) = evictions(pool.iter().map(|f| f.bytes), file.bytes) else {
        return Err(file);
    };
    let evicted = pool.drain(..oldest).collect();
    pool.push(file);
    Ok(evicted)
}

/// A kept file of exactly `bytes` bytes, if there is one.
pub(super) fn take(bytes: usize) -> Option<Freed> {
    let mut pool = POOL.lock().ok()?;
    let at = pool.iter().rposition(|f| f.bytes == bytes)?;
    Some(pool.remove(at))
}

/// Every kept file, to be given back.
pub(super) fn drain() -> Vec<Freed> {
    POOL.lock()
        .map(|mut pool| std::mem::take(&mut *pool))
        .unwrap_or_default()
}

/// How many of the oldest kept files (of sizes `kept`, oldest first) must
/// go for one of `bytes` to fit within [`POOL_MAX_BYTES`]; `None` if it
/// cannot fit at all.
fn evictions(kept: impl Iterator<Item = usize> + Clone, bytes: usize) -> Option<usize> {
    if bytes > POOL_MAX_BYTES {
        return None;
    }
    let mut held: usize = kept.clone().sum();
    let mut oldest = 0;
    for size in kept {
        if held + bytes <= POOL_MAX_BYTES {
            break;
        }
        held -= size;
        oldest += 1;
    }
    Some(oldest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_files_go_to_make_room() {
        const M: usize = 1 << 20;
        let none: [usize; 0] = [];
        assert_eq!(evictions(none.iter().copied(), 16 * M), Some(0));
        let kept = [16 * M, 16 * M, 16 * M, 8 * M];
        // 56 MiB kept: 8 more fit, 16 more need the oldest gone.
        assert_eq!(evictions(kept.iter().copied(), 8 * M), Some(0));
        assert_eq!(evictions(kept.iter().copied(), 16 * M), Some(1));
        let full = [16 * M; 4];
        assert_eq!(evictions(full.iter().copied(), 16 * M), Some(1));
        assert_eq!(evictions(full.iter().copied(), 40 * M), Some(3));
        assert_eq!(evictions(full.iter().copied(), POOL_MAX_BYTES + 1), None);
    }
}
