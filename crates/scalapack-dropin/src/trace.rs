//! The library's trace under `NDCYCLIC_SCALAPACK_TRACE`: a line on stderr
//! for every entry point called, every call handed over to ScaLAPACK and
//! every bad argument reported.

use std::io::Write;

/// Under `NDCYCLIC_SCALAPACK_TRACE`, `line` on stderr after
/// `ndcyclic_scalapack: `, in one write (so that ranks' lines do not
/// interleave).
pub(crate) fn trace(line: &str) {
    if std::env::var_os("NDCYCLIC_SCALAPACK_TRACE").is_some() {
        let text = format!("ndcyclic_scalapack: {line}\n");
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
}
