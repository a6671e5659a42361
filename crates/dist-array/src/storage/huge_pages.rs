//! Asking for transparent huge pages where the system allows them.
//!
//! A rank's local part is tens of megabytes that a redistribution reads and
//! writes in runs a few hundred bytes long, from two or more parts at once:
//! in 4 KiB pages that is a translation miss every few runs. In 2 MiB pages
//! the translations of a whole part fit in the TLB. Linux gives them to
//! memory that asks (`madvise(MADV_HUGEPAGE)`) when
//! `/sys/kernel/mm/transparent_hugepage/enabled` (heap memory) or
//! `.../shmem_enabled` (shared-memory files) is `madvise`/`advise` — or to
//! all memory when it is `always` — and to none when it is `never`. So
//! asking costs nothing where the system says no. Measured gains are in
//! `docs/TUNING.md` (`HUGE_PAGE_MIN_BYTES`).

/// The smallest part that asks for huge pages: one huge page of x86-64.
/// Smaller parts cannot hold a whole aligned huge page.
pub const HUGE_PAGE_MIN_BYTES: usize = 2 << 20;

/// Asks for huge pages on the whole 2 MiB-aligned pages inside `bytes`
/// bytes at `ptr`, before they are first touched (pages already present
/// keep their size until the kernel collapses them). A hint: errors are
/// ignored, as is memory too small to hold one aligned huge page.
pub(crate) fn advise(ptr: *const u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        let start = (ptr as usize).next_multiple_of(HUGE_PAGE_MIN_BYTES);
        let end = (ptr as usize + bytes) / HUGE_PAGE_MIN_BYTES * HUGE_PAGE_MIN_BYTES;
        if end > start {
            // SAFETY: advice on whole pages of a mapping this process
            // holds; `MADV_HUGEPAGE` changes how pages are backed, never
            // their contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The `VmFlags` line of the mapping of `/proc/self/smaps` that holds
    /// address `at`.
    fn vm_flags(at: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = range.split_once('-') {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    inside = (a..b).contains(&at);
                    continue;
                }
            }
            if inside {
                if let Some(flags) = line.strip_prefix("VmFlags:") {
                    return Some(flags.to_string());
                }
            }
        }
        None
    }

    #[test]
    fn large_parts_ask_for_huge_pages_small_ones_do_not() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            return; // a kernel without transparent huge pages: nothing to ask
        }
        let asked =
            |at: usize| vm_flags(at).is_some_and(|f| f.split_whitespace().any(|x| x == "hg"));
        // Shared storage, as the owner maps it and as a reader does.
        let mut b = crate::storage::SharedBytes::zeros(6 << 20).expect("shared memory");
        let owner = b.as_mut_ptr() as usize;
        assert!(asked(owner + (4 << 20)), "{:?}", vm_flags(owner));
        let m = b.info().map_read_only().expect("mapped");
        assert!(
            asked(m.as_ptr() as usize + (4 << 20)),
            "{:?}",
            vm_flags(m.as_ptr() as usize)
        );
        // Heap storage, before its zeros touch it.
        let heap = crate::storage::Storage::<f64>::zeros(1 << 20, false).expect("heap");
        let at = heap.as_slice().as_ptr() as usize + (4 << 20);
        assert!(asked(at), "{:?}", vm_flags(at));
        // Memory too small to hold an aligned huge page is left alone.
        let small = vec![1u8; 64 << 10];
        advise(small.as_ptr(), small.len());
        advise(std::ptr::null(), 0);
    }
}
