//! How much memory a rank of `redist run` needs and how much it may have.
//!
//! `redist run` allocates its arrays only after comparing, on every rank,
//! [`bytes_for`] its local parts and buffers with [`available_per_rank`]:
//! Linux's `MemAvailable` (from `/proc/meminfo`, [`mem_available`]) shared
//! equally among the job's ranks on the node ([`procgrid::ranks_on_node`]),
//! and never more than one process can allocate at all ([`ALLOCATION_LIMIT`]).
//! The ranks agree on the verdict (see `check_memory` in `measure/setup.rs`),
//! so an array that cannot fit is refused with an error instead of a failed
//! allocation (an abort) or the kernel's out-of-memory killer.

use std::fs;

/// The most bytes one allocation can have in Rust (`isize::MAX`): a larger
/// local part cannot be allocated whatever the machine.
pub const ALLOCATION_LIMIT: u64 = i64::MAX as u64;

/// `MemAvailable` of a `/proc/meminfo` text, in bytes; `None` when the line
/// is missing or malformed (old kernels, other systems).
pub fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let mut words = line.split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    let unit = match words.next() {
        None => 1,
        Some(u) if u.eq_ignore_ascii_case("kB") => 1024,
        Some(_) => return None,
    };
    value.checked_mul(unit)
}

/// `available` bytes shared equally among `ranks` ranks of one node (at
/// least one), capped at [`ALLOCATION_LIMIT`].
pub fn share(available: u64, ranks: usize) -> u64 {
    let ranks = u64::try_from(ranks.max(1)).unwrap_or(u64::MAX);
    (available / ranks).min(ALLOCATION_LIMIT)
}

/// The bytes this rank may use: its [`share`] of `MemAvailable` among the
/// job's ranks on this node, or [`ALLOCATION_LIMIT`] when `/proc/meminfo`
/// cannot be read. Not collective: ranks must agree on what they do with it.
pub fn available_per_rank() -> u64 {
    fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_available(&text))
        .map_or(ALLOCATION_LIMIT, |bytes| {
            share(bytes, procgrid::ranks_on_node())
        })
}

/// Bytes of `counts` buffers of `elem`-byte elements, saturating at
/// `u64::MAX` (which no machine has) instead of overflowing.
pub fn bytes_for(elem: usize, counts: &[usize]) -> u64 {
    let elem = u128::try_from(elem).unwrap_or(u128::MAX);
    let total = counts.iter().fold(0u128, |acc, &n| {
        let n = u128::try_from(n).unwrap_or(u128::MAX);
        acc.saturating_add(n.saturating_mul(elem))
    });
    u64::try_from(total).unwrap_or(u64::MAX)
}

/// `bytes` with a binary unit for people: `1536` → `1.5 KiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The head of a real `/proc/meminfo` (this machine's, 24 GB).
    const MEMINFO: &str = "MemTotal:       24684084 kB\n\
                           MemFree:        23012784 kB\n\
                           MemAvailable:   23278536 kB\n\
                           Buffers:            6648 kB\n\
                           Cached:           564912 kB\n";

    #[test]
    fn mem_available_reads_the_line_in_bytes() {
        assert_eq!(mem_available(MEMINFO), Some(23_278_536 * 1024));
        assert_eq!(mem_available("MemAvailable: 7 kB"), Some(7168));
        assert_eq!(mem_available("MemAvailable: 7"), Some(7));
    }

    #[test]
    fn mem_available_missing_or_malformed() {
        assert_eq!(mem_available(""), None);
        assert_eq!(mem_available("MemTotal: 100 kB\nMemFree: 50 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots kB"), None);
        assert_eq!(mem_available("MemAvailable: 100 MB"), None);
        assert_eq!(mem_available("MemAvailable:"), None);
        // A value that overflows in bytes.
        assert_eq!(mem_available("MemAvailable: 18446744073709551615 kB"), None);
        // The line must start with the key.
        assert_eq!(mem_available("XMemAvailable: 100 kB"), None);
    }

    #[test]
    fn shares_among_the_ranks_of_a_node() {
        let available = mem_available(MEMINFO).unwrap();
        assert_eq!(share(available, 1), available);
        assert_eq!(share(available, 4), available / 4);
        assert_eq!(share(available, 0), available);
        assert_eq!(share(u64::MAX, 1), ALLOCATION_LIMIT);
        assert_eq!(share(u64::MAX, 2), u64::MAX / 2);
    }

    #[test]
    fn available_per_rank_is_positive_and_capped() {
        let a = available_per_rank();
        assert!(a > 0 && a <= ALLOCATION_LIMIT, "{a}");
    }

    #[test]
    fn bytes_saturate() {
        assert_eq!(bytes_for(8, &[10, 5]), 120);
        assert_eq!(bytes_for(1, &[]), 0);
        assert_eq!(bytes_for(8, &[usize::MAX]), u64::MAX);
        assert_eq!(bytes_for(16, &[1 << 62, 1 << 62]), u64::MAX);
        assert_eq!(bytes_for(1, &[usize::MAX, usize::MAX]), u64::MAX);
    }

    #[test]
    fn human_units() {
        assert_eq!(human(0), "0 B");
        assert_eq!(human(1023), "1023 B");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(2_000_000_000_000), "1.8 TiB");
        assert_eq!(human(u64::MAX), "16.0 EiB");
    }
}
