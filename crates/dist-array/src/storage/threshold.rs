//! Which local parts go in shared memory: those of at least a threshold of
//! bytes, a constant that a process may replace from its environment.

/// Local parts of at least this many bytes are put in shared memory, so
/// that the node's other ranks copy straight from them: a redistribution
/// between two ranks of one node then costs a third of what messages do at
/// every size measured (4 KiB to 512 KiB a rank: 2.0 against 7.4 µs at
/// 4 KiB, 8.8 against 28 µs at 256 KiB). But a part in shared memory costs
/// an open file and ~0.7 µs per KiB to make (its pages are the system's
/// shared memory: 60 µs at 64 KiB, 190 µs at 256 KiB, where the heap gives
/// them in a few µs), so that a new one pays from about ten
/// redistributions on — parts made again at a size freed before take the
/// freed file (`storage/pool.rs`) and cost only its zeroing. Smaller
/// parts, often temporaries, stay on the heap (`DistArray::into_shared`
/// moves one there). A process may set another threshold in the
/// environment ([`SHARED_MIN_BYTES_VAR`], [`shared_min_bytes`]).
pub const SHARED_MIN_BYTES: usize = 64 << 10;

/// The environment variable that replaces [`SHARED_MIN_BYTES`] for a
/// process: a number of bytes, with an optional binary suffix (`4K`,
/// `2M`, `1G`), or `never` to keep every part on the heap (redistributions
/// then move everything as messages, as across nodes). Freed files below
/// [`SHARED_MIN_BYTES`] are not kept for reuse: with a lower threshold,
/// each new small part pays for its file (tens of µs).
pub const SHARED_MIN_BYTES_VAR: &str = "NDCYCLIC_SHARED_MIN_BYTES";

/// Local parts of at least this many bytes go in shared memory:
/// [`SHARED_MIN_BYTES`], unless [`SHARED_MIN_BYTES_VAR`] says otherwise
/// (`usize::MAX` for `never`). Read once per process; a value that cannot
/// be read is reported once on standard error and the default kept.
///
/// Every rank may have its own: a redistribution copies straight from the
/// sources that are shared and sends the others as messages.
///
/// ```
/// let min = dist_array::storage::shared_min_bytes();
/// assert!(min >= 1);
/// ```
pub fn shared_min_bytes() -> usize {
    static MIN: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MIN.get_or_init(|| {
        // Set but empty counts as not set, as shells make it easy to do.
        let told = std::env::var(SHARED_MIN_BYTES_VAR)
            .ok()
            .filter(|v| !v.trim().is_empty());
        match told.as_deref().map(parse_threshold) {
            None => SHARED_MIN_BYTES,
            Some(Ok(min)) => min,
            Some(Err(why)) => {
                eprintln!(
                    "ndcyclic: {SHARED_MIN_BYTES_VAR}={:?} ignored: {why}; \
                     local parts from {SHARED_MIN_BYTES} bytes go in shared memory",
                    told.unwrap_or_default()
                );
                SHARED_MIN_BYTES
            }
        }
    })
}

/// Reads a threshold as [`SHARED_MIN_BYTES_VAR`] takes it: bytes with an
/// optional `K`, `M` or `G` suffix (powers of 1024, `KiB`-style spellings
/// too), or `never`. At least 1: an empty part needs no storage at all.
fn parse_threshold(text: &str) -> Result<usize, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("never") {
        return Ok(usize::MAX);
    }
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits);
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("unknown unit {suffix:?}; expected K, M or G")),
    };
    let n: usize = number
        .parse()
        .map_err(|_| "expected a number of bytes such as 65536, 64K or 1M, or never".to_string())?;
    n.checked_mul(1 << shift)
        .map(|b| b.max(1))
        .ok_or_else(|| format!("{t} bytes do not fit in usize"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::Storage;

    #[test]
    fn thresholds_are_read_with_their_units() {
        assert_eq!(parse_threshold("65536"), Ok(65536));
        assert_eq!(parse_threshold(" 4K "), Ok(4096));
        assert_eq!(parse_threshold("4kib"), Ok(4096));
        assert_eq!(parse_threshold("2M"), Ok(2 << 20));
        assert_eq!(parse_threshold("1 GiB"), Ok(1 << 30));
        assert_eq!(parse_threshold("NEVER"), Ok(usize::MAX));
        assert_eq!(parse_threshold("0"), Ok(1));
        for bad in ["", "K", "-4K", "4T", "1.5M", "64 kilobytes"] {
            assert!(parse_threshold(bad).is_err(), "{bad:?} taken");
        }
        assert!(parse_threshold(&format!("{}G", usize::MAX))
            .unwrap_err()
            .contains("usize"));
    }

    /// Set in a child of [`the_environment_sets_the_threshold`]: it prints
    /// what it sees instead of starting children.
    const CHILD: &str = "NDCYCLIC_SHARED_THRESHOLD_CHILD";

    /// What a child of this test binary reports with `value` as
    /// [`SHARED_MIN_BYTES_VAR`] (the threshold is read once per process),
    /// and its standard error.
    fn child(value: &str) -> (String, String) {
        let out = std::process::Command::new(std::env::current_exe().expect("this test binary"))
            .args([
                "--exact",
                "storage::threshold::tests::the_environment_sets_the_threshold",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .env(SHARED_MIN_BYTES_VAR, value)
            .output()
            .expect("a child test process");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "child with {value:?}:\n{stdout}\n{stderr}"
        );
        let line = stdout
            .lines()
            .find_map(|l| l.find("min=").map(|at| &l[at..]))
            .unwrap_or_else(|| panic!("no report from the child with {value:?}:\n{stdout}"));
        (line.to_string(), stderr)
    }

    #[test]
    fn the_environment_sets_the_threshold() {
        if std::env::var_os(CHILD).is_some() {
            let shared = |bytes: usize| {
                let s: Storage<u8> = Storage::zeros(bytes, true).expect("memory");
                s.shared().is_some()
            };
            let (small, large) = (shared(8 << 10), shared(1 << 20));
            println!("min={} 8K={small} 1M={large}", shared_min_bytes());
            return;
        }
        assert_eq!(child("4K").0, "min=4096 8K=true 1M=true");
        assert_eq!(child("2M").0, format!("min={} 8K=false 1M=false", 2 << 20));
        let never = child("never").0;
        assert_eq!(never, format!("min={} 8K=false 1M=false", usize::MAX));
        // A value that cannot be read: the default, and one message saying so.
        let (line, stderr) = child("lots");
        assert_eq!(line, format!("min={SHARED_MIN_BYTES} 8K=false 1M=true"));
        let named = stderr.matches(SHARED_MIN_BYTES_VAR).count();
        assert_eq!(named, 1, "one message naming the variable:\n{stderr}");
        assert!(stderr.contains("expected"), "{stderr}");
    }
}
