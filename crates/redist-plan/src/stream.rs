//! When copies into target storage stream: the bytes a rank must write for
//! [`Streaming`] to pick non-temporal stores, from the size of the node's
//! last-level cache (a fact of the [`Machine`](crate::Machine), read by the
//! engine).

use crate::options::Streaming;
use crate::tuning::{CACHE_FALLBACK_BYTES, STREAM_AUTO_MIN_BYTES};

/// Bytes of target a rank must write for its copies to stream under
/// `streaming` (`usize::MAX`: never), `ranks_on_node` ranks sharing a
/// last-level cache of `cache` bytes.
pub fn threshold(streaming: Streaming, cache: Option<usize>, ranks_on_node: usize) -> usize {
    match streaming {
        Streaming::Never => usize::MAX,
        Streaming::Above(n) => n,
        Streaming::Auto => {
            // Source and target of every rank of the node share the cache:
            // a target above half of a rank's share cannot stay in it.
            let share = cache.unwrap_or(CACHE_FALLBACK_BYTES) / (2 * ranks_on_node.max(1));
            share.max(STREAM_AUTO_MIN_BYTES)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_takes_half_of_each_ranks_share_of_the_cache() {
        let mib = 1usize << 20;
        // The development machine: 32 MiB shared by 2 ranks.
        assert_eq!(threshold(Streaming::Auto, Some(32 * mib), 2), 8 * mib);
        assert_eq!(threshold(Streaming::Auto, Some(32 * mib), 1), 16 * mib);
        // Many ranks: never below 1 MiB.
        assert_eq!(threshold(Streaming::Auto, Some(32 * mib), 24), mib);
        assert_eq!(threshold(Streaming::Auto, None, 2), 8 * mib);
        assert_eq!(threshold(Streaming::Auto, Some(32 * mib), 0), 16 * mib);
        assert_eq!(threshold(Streaming::Never, Some(32 * mib), 2), usize::MAX);
        assert_eq!(threshold(Streaming::Above(0), None, 2), 0);
        assert_eq!(threshold(Streaming::Above(5), None, 2), 5);
    }
}
