//! Faults a rank injects on purpose, for tests: the one place the engine
//! asks whether to fail.
//!
//! At the first question the process reads `NDCYCLIC_FAULTS` (a
//! comma-separated list of [`Fault`] names) once; a test program changes
//! its faults later with [`inject`]. Asking costs one atomic load, so the
//! exchanges ask freely.
//!
//! ```
//! use redist::faults::{inject, injected, Fault};
//! inject(&[Fault::Map]);
//! assert!(injected(Fault::Map) && !injected(Fault::ExchangePanic));
//! inject(&[]);
//! assert!(!injected(Fault::Map));
//! ```

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Once;

/// A way to make this rank fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Mapping other ranks' storage (node-direct copies, staging areas of
    /// `combined`) is refused, as a full file table or a security policy
    /// would refuse it (`map`).
    Map,
    /// The next exchange panics (`exchange-panic`).
    ExchangePanic,
}

impl Fault {
    /// Every fault.
    const ALL: [Fault; 2] = [Fault::Map, Fault::ExchangePanic];

    /// Its name in `NDCYCLIC_FAULTS`.
    fn name(self) -> &'static str {
        match self {
            Fault::Map => "map",
            Fault::ExchangePanic => "exchange-panic",
        }
    }

    /// Its bit in [`FAULTS`].
    fn bit(self) -> u8 {
        match self {
            Fault::Map => 1,
            Fault::ExchangePanic => 2,
        }
    }
}

/// The faults injected, one bit each.
static FAULTS: AtomicU8 = AtomicU8::new(0);

/// Reads `NDCYCLIC_FAULTS`, once per process, into [`FAULTS`].
static FROM_ENVIRONMENT: Once = Once::new();

/// The faults `list` (comma-separated names) names, as bits.
fn bits_of(list: &str) -> u8 {
    let named = |f: &Fault| list.split(',').any(|n| n.trim() == f.name());
    Fault::ALL
        .iter()
        .filter(|f| named(f))
        .fold(0, |b, f| b | f.bit())
}

/// Makes this rank fail in the ways `faults` names from now on, and in no
/// other (`&[]`: in none), whatever `NDCYCLIC_FAULTS` said.
pub fn inject(faults: &[Fault]) {
    FROM_ENVIRONMENT.call_once(|| {});
    let bits = faults.iter().fold(0, |b, f| b | f.bit());
    FAULTS.store(bits, Ordering::Relaxed);
}

/// Whether this rank is to fail as `fault` says.
pub fn injected(fault: Fault) -> bool {
    FROM_ENVIRONMENT.call_once(|| {
        let listed = std::env::var("NDCYCLIC_FAULTS").map_or(0, |v| bits_of(&v));
        FAULTS.store(listed, Ordering::Relaxed);
    });
    FAULTS.load(Ordering::Relaxed) & fault.bit() != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_from_a_list() {
        assert_eq!(bits_of("map"), Fault::Map.bit());
        assert_eq!(bits_of(" exchange-panic , map"), 3);
        assert_eq!(bits_of("mapping,panic"), 0);
        assert_eq!(bits_of(""), 0);
    }
}
