//! A rank's staging area in the node's shared memory, and the node
//! peers' areas mapped read-only.
//!
//! An area is one shared-memory file ([`SharedBytes`]) laid out as
//!
//! ```text
//! [ control: one cache line per word ][ outbox: T × out ][ inbox: T × inbox ]
//! ```
//!
//! The owner packs its messages into its outbox and (a node's leader)
//! receives the messages from other nodes into its inbox; the node's other
//! ranks read both through read-only mappings. Who may touch what when is
//! ordered by the control words, each an execution number that only the
//! owner writes ([`Word`]): a reader loads it and waits until it reaches
//! the execution it needs. Loads are relaxed atomic loads of one register
//! width followed by an acquire fence — the kind of atomic access that is
//! sound on read-only memory — and the owner stores with release ordering
//! after the data it announces.
//!
//! A reader that has to wait spins a little, then sleeps on the word
//! (Linux `futex`, keyed by the shared file, so the owner's and the
//! readers' mappings name the same word), and the owner wakes the sleepers
//! after each store: ranks that wait leave the node's cores to the ranks
//! that work.

use dist_array::{ReadMapping, SharedBytes, SharedStorage};
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// Bytes of one control word's cache line.
pub(super) const LINE: usize = 64;
/// Control words, one per line: the [`Word`]s and the sizes.
const WORDS: usize = 8;
/// Bytes before the outbox.
const HEADER: usize = WORDS * LINE;
/// The line holding the outbox and inbox sizes (in elements) and the
/// element size, written once before the area is shown to anyone.
const SIZES: usize = 7;

/// A control word of an area: the number of the last execution for which
/// its owner has done what the word names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Word {
    /// Its outbox holds the execution's packed messages.
    Packed = 0,
    /// It has read everything it needed from the node's other areas (they
    /// may be written again).
    Done = 1,
    /// Its inbox holds the execution's messages from other nodes (leaders
    /// only).
    Inbox = 2,
    /// Its verdict on its arrays for the execution is in
    /// [`Word::VerdictValue`].
    Verdict = 3,
    /// Its verdict: 0 when its arrays were fine (see the exchange).
    VerdictValue = 4,
    /// The verdict of every rank, agreed, is in [`Word::GlobalValue`]
    /// (leaders only).
    Global = 5,
    /// The agreed verdict: 0 when every rank's arrays were fine.
    GlobalValue = 6,
}

/// This rank's area, written by it alone.
pub(crate) struct Area {
    mem: SharedBytes,
    out: usize,
    inbox: usize,
    elem: usize,
}

impl Area {
    /// An area with room for `out` and `inbox` elements of `elem` bytes
    /// (alignment at most one cache line), or `None` if the system gives
    /// no shared memory.
    pub fn new(out: usize, inbox: usize, elem: usize) -> Option<Area> {
        let (_, _, bytes) = layout(out, inbox, elem)?;
        let mut mem = SharedBytes::zeros(bytes)?;
        let sizes = mem.as_mut_ptr().wrapping_add(SIZES * LINE).cast::<u64>();
        for (k, v) in [out, inbox, elem].into_iter().enumerate() {
            // SAFETY: the sizes line lies inside the fresh mapping, which
            // nobody else has seen yet; page alignment aligns the u64s.
            unsafe { sizes.add(k).write(v as u64) };
        }
        Some(Area {
            mem,
            out,
            inbox,
            elem,
        })
    }

    /// How the node's other ranks map it.
    pub fn info(&self) -> SharedStorage {
        self.mem.info()
    }

    /// Announces `value` in `w`, after everything written before, and
    /// wakes the readers sleeping on it.
    pub fn store(&mut self, w: Word, value: u64) {
        Control::of(&mut self.mem).store(w, value);
    }

    /// The outbox and the inbox, as `T`s, for writing.
    ///
    /// # Panics
    ///
    /// When `T` is not the element the area was made for (a bug).
    pub fn boxes<T: bytemuck::Pod>(&mut self) -> (&mut [T], &mut [T]) {
        let (_, out, inbox) = self.split();
        (out, inbox)
    }

    /// The control words, the outbox and the inbox, to announce while the
    /// boxes are lent out.
    ///
    /// # Panics
    ///
    /// When `T` is not the element the area was made for (a bug).
    pub fn split<T: bytemuck::Pod>(&mut self) -> (Control<'_>, &mut [T], &mut [T]) {
        assert_eq!(std::mem::size_of::<T>(), self.elem, "an area's element");
        let (out_at, in_at, _) =
            layout(self.out, self.inbox, self.elem).expect("the layout it was made with");
        let base = self.mem.as_mut_ptr();
        // SAFETY: both ranges lie inside the mapping, do not overlap each
        // other or the control lines (which `Control` alone touches), and
        // start at multiples of a cache line (aligned for `T`, checked by
        // `layout`); the `&mut self` borrow keeps them exclusive on this
        // rank. Readers on other ranks read them only between the
        // announcements that the control words order (see the exchange).
        unsafe {
            (
                Control::of(&mut self.mem),
                std::slice::from_raw_parts_mut(base.add(out_at).cast(), self.out),
                std::slice::from_raw_parts_mut(base.add(in_at).cast(), self.inbox),
            )
        }
    }
}

/// The control words of this rank's area, lent out with its boxes.
pub(crate) struct Control<'a> {
    base: *mut u8,
    _area: std::marker::PhantomData<&'a SharedBytes>,
}

impl Control<'_> {
    fn of(mem: &mut SharedBytes) -> Control<'_> {
        Control {
            base: mem.as_mut_ptr(),
            _area: std::marker::PhantomData,
        }
    }

    /// Announces `value` in `w`, after everything written before, and
    /// wakes the readers sleeping on it.
    pub fn store(&self, w: Word, value: u64) {
        let ptr = self.base.wrapping_add(w as usize * LINE);
        // SAFETY: an aligned u64 of the header, inside the mapping, which
        // outlives `self`; the control lines are only ever accessed
        // atomically, and never through the boxes.
        let word = unsafe { AtomicU64::from_ptr(ptr.cast()) };
        word.store(value, Ordering::Release);
        sleep::wake(ptr.cast_const());
    }
}

/// Another rank's area, mapped read-only.
pub(crate) struct PeerArea {
    map: ReadMapping,
    out: usize,
    inbox: usize,
    elem: usize,
}

impl PeerArea {
    /// Maps the area `s` describes and reads its sizes, checking that the
    /// mapping holds them and that its element has `elem` bytes.
    ///
    /// # Errors
    ///
    /// The errors of [`SharedStorage::map_read_only`], and
    /// [`InvalidData`](std::io::ErrorKind::InvalidData) when the sizes do not
    /// fit the mapping or name another element size.
    pub fn map(s: &SharedStorage, elem: usize) -> std::io::Result<PeerArea> {
        let invalid = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
        if s.bytes < HEADER {
            return Err(invalid("a staging area smaller than its header"));
        }
        let map = s.map_read_only()?;
        let size = |k: usize| {
            let ptr = map.as_ptr().wrapping_add(SIZES * LINE + 8 * k);
            // SAFETY: inside the header, which the mapping holds (checked
            // above), written once before the area was described to us.
            usize::try_from(unsafe { read_word(ptr) }).unwrap_or(usize::MAX)
        };
        let (out, inbox, e) = (size(0), size(1), size(2));
        if e != elem {
            return Err(invalid("a staging area for elements of another size"));
        }
        match layout(out, inbox, elem) {
            Some((_, _, bytes)) if bytes <= map.bytes() => Ok(PeerArea {
                map,
                out,
                inbox,
                elem,
            }),
            _ => Err(invalid("a staging area's sizes do not fit its mapping")),
        }
    }

    /// Elements in its outbox.
    pub fn out_len(&self) -> usize {
        self.out
    }

    /// Elements in its inbox.
    pub fn inbox_len(&self) -> usize {
        self.inbox
    }

    /// The value of `w`, with everything its owner wrote before storing it
    /// visible.
    pub fn load(&self, w: Word) -> u64 {
        // SAFETY: an aligned u64 in the mapped header (checked when mapped).
        let v = unsafe { read_word(self.word_ptr(w)) };
        fence(Ordering::Acquire);
        v
    }

    /// Waits until `w` is at least `e`, and returns it (see [`wait_until`]).
    pub fn wait_for(&self, w: Word, e: u64) -> u64 {
        let ptr = self.word_ptr(w);
        wait_until(ptr, || {
            let v = self.load(w);
            (v >= e).then_some(v)
        })
    }

    fn word_ptr(&self, w: Word) -> *const u8 {
        self.map.as_ptr().wrapping_add(w as usize * LINE)
    }

    /// Its outbox and inbox as `T`s.
    ///
    /// # Safety
    ///
    /// The owner does not write what is read while the slices live: the
    /// caller has seen the control word announcing them and the owner waits
    /// for this rank's [`Word::Done`] before writing again.
    pub unsafe fn boxes<T: bytemuck::Pod>(&self) -> (&[T], &[T]) {
        assert_eq!(std::mem::size_of::<T>(), self.elem, "an area's element");
        let (out_at, in_at, _) =
            layout(self.out, self.inbox, self.elem).expect("checked when mapped");
        let base = self.map.as_ptr();
        // SAFETY: inside the mapping (checked when mapped), aligned (cache
        // lines), and the caller's contract.
        unsafe {
            (
                std::slice::from_raw_parts(base.add(out_at).cast(), self.out),
                std::slice::from_raw_parts(base.add(in_at).cast(), self.inbox),
            )
        }
    }
}

/// A relaxed atomic load of the word at `ptr`: of one register width, the
/// kind of atomic access that is sound on read-only memory.
///
/// # Safety
///
/// `ptr` is 8-byte aligned and readable while the call lasts, and the word
/// is only ever written atomically.
unsafe fn read_word(ptr: *const u8) -> u64 {
    // SAFETY: the caller's contract; `AtomicU64` has the layout of a u64,
    // and a shared reference to it only loads.
    unsafe { &*ptr.cast::<AtomicU64>() }.load(Ordering::Relaxed)
}

/// Where an area's outbox and inbox start, and its size, in bytes; `None`
/// when the sizes overflow.
fn layout(out: usize, inbox: usize, elem: usize) -> Option<(usize, usize, usize)> {
    let round = |b: usize| b.checked_next_multiple_of(LINE);
    let out_bytes = round(out.checked_mul(elem)?)?;
    let in_bytes = round(inbox.checked_mul(elem)?)?;
    let in_at = HEADER.checked_add(out_bytes)?;
    Some((HEADER, in_at, in_at.checked_add(in_bytes)?))
}

/// Waits until `ready()` gives a value, and returns it: spins briefly
/// (not at all where ranks outnumber cores), then sleeps on the word at
/// `word` until its owner stores to it (a millisecond at most, in case a
/// wake-up is missed), checking again each time.
pub(crate) fn wait_until<V>(word: *const u8, mut ready: impl FnMut() -> Option<V>) -> V {
    let spins = if procgrid::waits::oversubscribed() {
        0
    } else {
        SPINS
    };
    for _ in 0..spins {
        if let Some(v) = ready() {
            return v;
        }
        std::hint::spin_loop();
    }
    loop {
        // The word's low half as it was before the check: if the owner
        // stores after the check, the sleep returns at once.
        // SAFETY: `word` is an aligned, readable control word.
        let before = unsafe { read_word(word) };
        if let Some(v) = ready() {
            return v;
        }
        sleep::wait(word, before);
    }
}

/// Checks of a word before a waiting rank sleeps.
const SPINS: usize = 2000;

/// Sleeping on a control word until its owner stores to it.
#[cfg(target_os = "linux")]
mod sleep {
    /// Sleeps while the low half of the 64-bit word at `word` still holds
    /// the low half of `before`, a millisecond at most.
    pub fn wait(word: *const u8, before: u64) {
        let timeout = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        // SAFETY: `word` is an aligned, mapped u64 (its low half is the
        // futex word on a little-endian machine, the high half otherwise);
        // FUTEX_WAIT only reads it. A shared (not private) futex: the key
        // is the shared file's page, the same in every process mapping it.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                low_half(word),
                libc::FUTEX_WAIT,
                u32::try_from(before & u64::from(u32::MAX)).unwrap_or(0),
                &timeout as *const libc::timespec,
            );
        }
    }

    /// Wakes every rank sleeping on the word at `word`.
    pub fn wake(word: *const u8) {
        // SAFETY: as in `wait`; FUTEX_WAKE does not touch the memory.
        unsafe {
            libc::syscall(libc::SYS_futex, low_half(word), libc::FUTEX_WAKE, i32::MAX);
        }
    }

    /// The 32-bit half of a 64-bit word that holds its low bits.
    fn low_half(word: *const u8) -> *const u32 {
        if cfg!(target_endian = "little") {
            word.cast()
        } else {
            word.wrapping_add(4).cast()
        }
    }
}

/// Elsewhere, waiting yields the core between checks.
#[cfg(not(target_os = "linux"))]
mod sleep {
    pub fn wait(_word: *const u8, _before: u64) {
        std::thread::yield_now();
    }

    pub fn wake(_word: *const u8) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_sees_what_the_owner_announced() {
        let Some(mut area) = Area::new(10, 3, 8) else {
            return; // no shared memory here
        };
        let peer = PeerArea::map(&area.info(), 8).unwrap();
        assert_eq!((peer.out_len(), peer.inbox_len()), (10, 3));
        let (out, inbox) = area.boxes::<f64>();
        out.iter_mut().enumerate().for_each(|(i, x)| *x = i as f64);
        inbox.copy_from_slice(&[7.0, 8.0, 9.0]);
        area.store(Word::Packed, 5);
        assert_eq!(peer.load(Word::Packed), 5);
        assert_eq!(peer.wait_for(Word::Packed, 4), 5);
        assert_eq!(peer.load(Word::Done), 0);
        // SAFETY: the owner does not write while the slices are read.
        let (o, i) = unsafe { peer.boxes::<f64>() };
        assert_eq!(o[9], 9.0);
        assert_eq!(i, &[7.0, 8.0, 9.0]);
    }

    #[test]
    fn a_sleeping_reader_wakes_when_the_owner_stores() {
        let Some(mut area) = Area::new(1, 0, 8) else {
            return;
        };
        let info = area.info();
        let reader = std::thread::spawn(move || {
            let peer = PeerArea::map(&info, 8).unwrap();
            peer.wait_for(Word::Inbox, 3)
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        area.store(Word::Inbox, 2);
        std::thread::sleep(std::time::Duration::from_millis(5));
        area.store(Word::Inbox, 3);
        assert_eq!(reader.join().unwrap(), 3);
    }

    #[test]
    fn a_peer_checks_the_element_size() {
        let Some(area) = Area::new(4, 0, 8) else {
            return;
        };
        assert!(PeerArea::map(&area.info(), 4).is_err());
        assert!(PeerArea::map(&area.info(), 8).is_ok());
    }

    #[test]
    fn boxes_start_on_cache_lines() {
        let (out_at, in_at, bytes) = layout(3, 5, 12).unwrap();
        assert_eq!(out_at, HEADER);
        assert_eq!(in_at, HEADER + 64);
        assert_eq!(bytes, in_at + 64);
        assert!(layout(usize::MAX, 1, 8).is_none());
    }
}
