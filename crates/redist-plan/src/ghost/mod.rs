//! Ghost layers for stencil solvers, planned without MPI: which cells of
//! which rank's padded storage fill which ghost cells of which other rank's.
//!
//! A rank's local part, padded by `w_d` ghost layers on both sides of axis
//! `d`, needs before each sweep the `w_d` global indices just before and
//! just after its block on each axis, from the ranks that own them
//! (wrapped round where the axis is periodic; beyond the edge of a
//! non-periodic axis the ghosts are the caller's boundary, never
//! written). Each rank holds one block per axis, so along one axis the
//! padded index range of a rank is a few *segments* — its interior, and
//! ghost runs each owned by one coordinate (`axis.rs`); a ghost box is a
//! product of one segment per axis with at least one ghost segment (exactly
//! one for faces only, [`Corners::Star`]). Grouped by the rank that owns
//! them, a rank's boxes are its receives; the same boxes seen from the
//! owner are its sends (`rank.rs`). Both sides list a pair's boxes in the
//! same order from the same function, so a message's bytes need no
//! description. What a rank builds costs O(its neighbours × boxes), never
//! O(cells): a 1024³ array plans as a 256³ one does.
//!
//! - [`spec`]: [`GhostSpec`] — widths, periodic axes, [`Corners`] — and
//!   which layouts can have ghosts;
//! - [`rank`]: [`RankGhosts`], one rank's receives, sends and own copies,
//!   as [`GhostMessage`]s of [`GhostBox`]es;
//! - [`copy`]: copying boxes between padded storages, into a buffer and
//!   out of it, run by run along the fastest axis;
//! - [`source`]: which global index a padded cell holds after an update,
//!   cell by cell, for checks ([`cell_source`]).

mod axis;
pub mod copy;
pub mod rank;
pub mod source;
pub mod spec;
#[cfg(test)]
mod tests;

pub use copy::{padded_strides, BoxCopy};
pub use rank::{padded_shape, GhostBox, GhostMessage, RankGhosts};
pub use source::cell_source;
pub use spec::{Corners, GhostSpec};
