//! Facts of the machine this rank runs on, read once per process: its
//! cores, the ranks that share its node, the size of its last-level cache.
//! The planning crate takes them as arguments ([`Machine`]); this is the
//! one place the engine reads them.

use redist_plan::part::Machine;
use std::sync::OnceLock;

/// This rank's machine: the cores the process may use, the ranks the
/// launcher put on this node and the node's last-level cache.
pub fn this_machine() -> Machine {
    // Cores are asked once per process: the answer reads cgroup files
    // (~50 µs).
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    Machine {
        cores,
        ranks_on_node: procgrid::ranks_on_node(),
        cache_bytes: last_level_cache(),
    }
}

/// Bytes of the largest cache of CPU 0 as Linux describes it
/// (`/sys/devices/system/cpu/cpu0/cache/index*/size`), `None` where it
/// does not. (glibc's `sysconf(_SC_LEVEL3_CACHE_SIZE)` is not used: under
/// KVM on the development machine it reports 320 MiB for a 32 MiB cache.)
fn last_level_cache() -> Option<usize> {
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
}
