//! When copies into target storage stream: the bytes a rank must write for
//! [`Streaming`] to pick non-temporal stores, from the size of the node's
//! last-level cache.

use crate::tuning::{CACHE_FALLBACK_BYTES, STREAM_AUTO_MIN_BYTES};
use crate::Streaming;

/// Bytes of target a rank must write for its copies to stream under
/// `streaming` (`usize::MAX`: never), `ranks_on_node` ranks sharing a
/// last-level cache of `cache` bytes.
pub(crate) fn threshold(streaming: Streaming, cache: Option<usize>, ranks_on_node: usize) -> usize {
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

/// Bytes of the largest cache of CPU 0 as Linux describes it
/// (`/sys/devices/system/cpu/cpu0/cache/index*/size`), `None` where it
/// does not. (glibc's `sysconf(_SC_LEVEL3_CACHE_SIZE)` is not used: under
/// KVM on the development machine it reports 320 MiB for a 32 MiB cache.)
pub(crate) fn last_level_cache() -> Option<usize> {
    // Read once per process: sysfs costs tens of microseconds a build.
    static SIZE: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| {
        let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
        dir.filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
            .filter_map(|e| std::fs::read_to_string(e.path().join("size")).ok())
            .filter_map(|s| cache_size(&s))
            .max()
    })
}

/// A cache size as sysfs writes it: `32768K`, `1M`, `512` (bytes).
fn cache_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let n: usize = digits.parse().ok()?;
    let scale = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale).filter(|&b| b > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes_are_read_with_their_unit() {
        assert_eq!(cache_size("32768K\n"), Some(32 << 20));
        assert_eq!(cache_size("2M"), Some(2 << 20));
        assert_eq!(cache_size("512"), Some(512));
        assert_eq!(cache_size("1G"), Some(1 << 30));
        assert_eq!(cache_size(""), None);
        assert_eq!(cache_size("0K"), None);
        assert_eq!(cache_size("12Q"), None);
        assert_eq!(cache_size("K"), None);
    }

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
