//! The plan cache: ScaLAPACK programs call the same redistribution many
//! times with the same arguments, and each call after the first reuses the
//! redistribution (and its arrays) built the first time. Bounded: at most
//! `NDCYCLIC_PLAN_CACHE` plans per process (default 16), the least recently
//! used going first; a context's plans go when it is released
//! (`blacs_gridexit`, `blacs_exit`, [`release`]). What MPI owns inside a
//! plan is let go without calls to MPI once MPI is finalized.

use std::any::Any;
use std::cell::RefCell;
use std::mem::ManuallyDrop;
use std::os::raw::c_int;

/// Plans kept when `NDCYCLIC_PLAN_CACHE` does not say.
pub const DEFAULT_CAPACITY: usize = 16;

/// A map of at most `capacity` entries that forgets the least recently used
/// first. Linear: caches here hold a few dozen entries.
#[derive(Debug)]
pub struct Lru<K, V> {
    capacity: usize,
    /// Least recently used first.
    entries: Vec<(K, V)>,
}

impl<K: PartialEq, V> Lru<K, V> {
    /// An empty cache of `capacity` entries (0 keeps nothing).
    pub fn new(capacity: usize) -> Lru<K, V> {
        Lru {
            capacity,
            entries: Vec::new(),
        }
    }

    /// The value of `key`, now the most recently used.
    pub fn get(&mut self, key: &K) -> Option<&mut V> {
        let at = self.entries.iter().position(|(k, _)| k == key)?;
        let entry = self.entries.remove(at);
        self.entries.push(entry);
        self.entries.last_mut().map(|(_, v)| v)
    }

    /// Keeps `value` under `key` as the most recently used, forgetting the
    /// least recently used entry when full; returns the value it holds
    /// now (None with capacity 0).
    pub fn insert(&mut self, key: K, value: V) -> Option<&mut V> {
        if self.capacity == 0 {
            return None;
        }
        self.entries.retain(|(k, _)| k != &key);
        if self.entries.len() == self.capacity {
            self.entries.remove(0);
        }
        self.entries.push((key, value));
        self.entries.last_mut().map(|(_, v)| v)
    }

    /// Removes the entry of `key` and gives its value.
    pub fn take(&mut self, key: &K) -> Option<V> {
        let at = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(at).1)
    }

    /// Forgets every entry whose key `drop` selects.
    pub fn remove_where(&mut self, mut drop: impl FnMut(&K) -> bool) {
        self.entries.retain(|(k, _)| !drop(k));
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Whether MPI has been finalized (after which nothing may call it).
pub fn mpi_finalized() -> bool {
    mpi_extras::process::finalized()
}

/// A value holding MPI objects, dropped normally while MPI runs and
/// leaked once it is finalized (freeing a communicator then is an error).
pub struct Held<T>(ManuallyDrop<T>);

impl<T> Held<T> {
    /// Holds `value`.
    pub fn new(value: T) -> Held<T> {
        Held(ManuallyDrop::new(value))
    }
}

impl<T> Held<T> {
    /// The value, to be dropped (or held again) by the caller.
    pub fn into_inner(self) -> T {
        let mut held = std::mem::ManuallyDrop::new(self);
        // SAFETY: `held` is never dropped, so the value is taken once.
        unsafe { ManuallyDrop::take(&mut held.0) }
    }
}

impl<T> std::ops::Deref for Held<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Held<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> Drop for Held<T> {
    fn drop(&mut self) {
        if !mpi_finalized() {
            // SAFETY: dropped once, here, and never used again.
            unsafe { ManuallyDrop::drop(&mut self.0) };
        }
    }
}

/// What identifies a plan: the routine and element type, the contexts it
/// involves, and every argument of every rank that shapes it (all ranks
/// hold the same key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// The routine, with its element type (`"pdgemr2d"`).
    pub routine: &'static str,
    /// The BLACS contexts the call names.
    pub contexts: Vec<c_int>,
    /// The arguments, as the ranks exchanged them.
    pub arguments: Vec<c_int>,
}

thread_local! {
    static PLANS: RefCell<Lru<Key, Held<Box<dyn Any>>>> = RefCell::new(Lru::new(capacity()));
}

/// The cache's capacity: `NDCYCLIC_PLAN_CACHE`, else [`DEFAULT_CAPACITY`].
fn capacity() -> usize {
    std::env::var("NDCYCLIC_PLAN_CACHE")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_CAPACITY)
}

/// Runs `f` on the plan of `key`, built by `build` when the cache does not
/// hold it; the plan is kept afterwards (if the cache keeps anything).
///
/// # Errors
///
/// What `build` or `f` return.
pub fn with_plan<P: 'static, R, E>(
    key: Key,
    build: impl FnOnce() -> Result<P, E>,
    f: impl FnOnce(&mut P) -> Result<R, E>,
) -> Result<R, E> {
    // The plan leaves the cache while `f` runs: `f` calls MPI, and a
    // nested call must find the cache free.
    let taken = PLANS.with(|plans| plans.borrow_mut().take(&key));
    let mut plan: Box<P> = match taken.map(Held::into_inner).map(|b| b.downcast::<P>()) {
        Some(Ok(plan)) => plan,
        _ => Box::new(build()?),
    };
    let result = f(&mut plan);
    PLANS.with(|plans| {
        let plan: Box<dyn Any> = plan;
        plans.borrow_mut().insert(key, Held::new(plan));
    });
    result
}

/// Forgets the plans that name context `ictxt` (every plan for -1).
pub fn release(ictxt: c_int) {
    PLANS.with(|plans| {
        plans
            .borrow_mut()
            .remove_where(|k| ictxt == -1 || k.contexts.contains(&ictxt));
    });
}

/// Plans held by this thread.
pub fn plans_held() -> usize {
    PLANS.with(|plans| plans.borrow().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recently_used_goes_first() {
        let mut lru = Lru::new(3);
        for k in 0..3 {
            lru.insert(k, k * 10);
        }
        assert_eq!(lru.get(&0), Some(&mut 0));
        lru.insert(3, 30); // 1 is now the least recent
        assert!(lru.get(&1).is_none());
        assert_eq!(lru.len(), 3);
        lru.insert(2, 21); // replaces, keeps the size
        assert_eq!(lru.get(&2), Some(&mut 21));
        assert_eq!(lru.len(), 3);
        lru.remove_where(|&k| k % 2 == 0);
        assert_eq!(lru.len(), 1);
        assert_eq!(lru.take(&3), Some(30));
        assert!(lru.is_empty());
        let mut none: Lru<i32, i32> = Lru::new(0);
        assert!(none.insert(1, 1).is_none());
        assert!(none.is_empty());
    }
}
