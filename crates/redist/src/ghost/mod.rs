//! Ghost-cell updates for stencil solvers: refreshing the ghost layers of
//! an array ([`DistArray::with_ghosts`]) from its neighbours' interiors,
//! planned once and executed every step.
//!
//! The update is a redistribution with fixed messages between fixed ranks.
//! What each rank sends and receives is planned without MPI
//! ([`redist_plan::ghost`]: boxes of padded storage, O(faces), never
//! O(cells)); this module moves them:
//!
//! - between ranks of one node, the reader copies its ghosts straight out
//!   of the owner's storage (shared memory, mapped once per array), one
//!   pass and no message but a note and a word back;
//! - between nodes, or where storage is not shared, one message per pair
//!   of neighbours, packed box by box, over persistent requests made once;
//! - within the rank (a periodic axis of grid extent 1, or ghosts that wrap
//!   back to it), a copy inside its own storage.
//!
//! [`GhostUpdate::update`] is [`begin`](GhostUpdate::begin) and
//! [`Flight::finish`]: between them the interior may be read (a solver
//! computes the cells whose stencil needs no ghost) but neither the
//! interior nor the ghosts written, nor the ghosts read. Ghosts beyond the
//! ends of a non-periodic axis are never written: they hold the boundary
//! condition the caller puts there.
//!
//! ```
//! use dist_array::{DistArray, Layout};
//! use mpi::topology::Communicator;
//! use procgrid::ProcGrid;
//! use redist::ghost::{Corners, GhostSpec, GhostUpdate};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let universe = procgrid::init()?;
//!     let world = universe.world();
//!     let p = world.size() as usize;
//!     let grid = ProcGrid::new(&world, &[p, 1])?;
//!     let layout = Layout::parse(&[4 * p, 5], &format!("block,block@{p}x1"))?;
//!     let a = DistArray::from_fn(&grid, layout, |g| (10 * g[0] + g[1]) as f64)?;
//!     let mut a = a.with_ghosts(&[1, 1])?;
//!     let spec = GhostSpec::new(&[1, 1], &[true, true], Corners::Box);
//!     let mut ghosts = GhostUpdate::new(&a, &spec)?; // planned once
//!     ghosts.update(&mut a)?; // executed every step
//!     // The ghost before the first row is the last row (periodic).
//!     let me = world.rank() as usize;
//!     let above = (4 * me + 4 * p - 1) % (4 * p);
//!     assert_eq!(a.padded()[[0, 1]], (10 * above) as f64);
//!     // Overlap: the interior may be read while ghosts move.
//!     let flight = ghosts.begin(&mut a)?;
//!     let interior_sum: f64 = flight.local().sum();
//!     flight.finish()?;
//!     assert_eq!(interior_sum, a.local().sum());
//!     Ok(())
//! }
//! ```

mod flight;
mod peers;
mod protocol;
mod wires;

pub use flight::Flight;
pub use redist_plan::ghost::{cell_source, Corners, GhostSpec};

use crate::error::RedistError;
use crate::exec::agree::{agree, Fingerprint};
use dist_array::{DistArray, DistError, Element, Layout};
use mpi::topology::Communicator;
use peers::PeerMaps;
use procgrid::Node;
use protocol::{Note, READ, SEND_DATA};
use redist_plan::coords::Order;
use redist_plan::ghost::{padded_strides, BoxCopy, RankGhosts};
use std::marker::PhantomData;
use std::mem::size_of;
use std::path::PathBuf;
use wires::{Arrival, Wires};

/// How a ghost update may move its cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GhostOptions {
    /// Whether ranks of one node may read each other's storage directly
    /// (where it is shared memory). Off, every pair exchanges messages.
    /// On, a wisdom file's measured choice may still turn it off
    /// ([`node_direct`]).
    pub node_direct: bool,
    /// A wisdom file to read the measured choice of this update from
    /// (written by [`tune_ghosts`](crate::tune::tune_ghosts) or `redist
    /// tune ghosts --wisdom F`); `None` (the default): the file
    /// `NDCYCLIC_WISDOM` names, if set; an empty path: none. A file that
    /// is missing, unreadable, corrupt or holds no entry for this update
    /// and machine is never an error: the update reads shared storage
    /// where it can, with the same warning on every rank
    /// ([`GhostUpdate::warnings`]).
    pub wisdom: Option<PathBuf>,
}

impl Default for GhostOptions {
    /// Node-direct reads where storage is shared; the environment's
    /// wisdom file.
    fn default() -> GhostOptions {
        GhostOptions {
            node_direct: true,
            wisdom: None,
        }
    }
}

/// Whether an update reads its node's shared storage: where the options
/// allow it (`asked`) and a measurement (`measured`, from a wisdom file)
/// did not find messages faster. Pure.
///
/// ```
/// use redist::ghost::node_direct;
/// assert!(node_direct(true, None));
/// assert!(!node_direct(true, Some(false)));
/// assert!(!node_direct(false, Some(true)));
/// ```
pub fn node_direct(asked: bool, measured: Option<bool>) -> bool {
    asked && measured.unwrap_or(true)
}

/// How this rank's last update moved its ghosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GhostCopies {
    /// Receives read straight from the owner's storage.
    pub read: usize,
    /// Receives that came as messages.
    pub messages: usize,
    /// Sends whose reader read this rank's storage instead.
    pub lent: usize,
    /// Boxes copied within this rank's own storage.
    pub own: usize,
}

/// A ghost update planned for arrays of one layout and ghost widths:
/// built once (collective), executed on any array of that layout and those
/// widths, as often as wanted ([`update`](Self::update)).
pub struct GhostUpdate<T: Element> {
    /// The persistent messages (first: dropped before anything they use).
    wires: Wires,
    maps: PeerMaps,
    part: RankGhosts,
    layout: Layout,
    spec: GhostSpec,
    copy: BoxCopy,
    /// Strides of this rank's padded storage, and of each owner's.
    strides: Vec<usize>,
    owner_strides: Vec<Vec<usize>>,
    node_direct: bool,
    /// The storage an update was begun on (address, length), if any.
    begun: Option<(usize, usize)>,
    last: GhostCopies,
    /// What the wisdom file could not give (the same on every rank).
    warnings: Vec<String>,
    _elements: PhantomData<T>,
}

impl<T: Element> GhostUpdate<T> {
    /// The update `spec` of arrays laid out as `array` is, with its ghost
    /// widths. Collective over the array's grid communicator; every rank
    /// gets the same verdict.
    ///
    /// # Errors
    ///
    /// - [`RedistError::InvalidArgument`] when the spec's widths are not
    ///   the array's ghost widths;
    /// - [`RedistError::Plan`] when the spec does not fit the layout (see
    ///   [`GhostSpec::check`]: one width and flag per axis, widths within
    ///   the extents, one block per rank on every axis with ghosts);
    /// - [`RedistError::Limit`] when a message exceeds `i32::MAX` bytes;
    /// - [`RedistError::Disagreement`] when ranks passed different layouts,
    ///   specs or options, and [`RedistError::OtherRank`] when another
    ///   rank's arguments were refused.
    pub fn new(array: &DistArray<T>, spec: &GhostSpec) -> Result<GhostUpdate<T>, RedistError> {
        GhostUpdate::with_options(array, spec, GhostOptions::default())
    }

    /// [`new`](Self::new) with `options`.
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_options(
        array: &DistArray<T>,
        spec: &GhostSpec,
        options: GhostOptions,
    ) -> Result<GhostUpdate<T>, RedistError> {
        let comm = array.grid().communicator();
        let layout = array.layout().clone();
        let rank = usize::try_from(comm.rank()).unwrap_or(0);
        let mut fingerprint = Fingerprint::new();
        fingerprint
            .layout(&layout)
            .numbers(spec.widths())
            .numbers(
                &spec
                    .periodic()
                    .iter()
                    .map(|&p| usize::from(p))
                    .collect::<Vec<_>>(),
            )
            .text(&spec.corners().to_string())
            .number(size_of::<T>() as u64)
            .number(u64::from(options.node_direct));
        let local = plan(array, spec, rank);
        let part = agree(comm, local, fingerprint.value(), "ghost update")?;
        let (measured, warnings) = match options.node_direct {
            true => crate::tune::recall_ghosts(array, spec, options.wisdom.as_deref()),
            false => (None, Vec::new()),
        };
        let asked = node_direct(options.node_direct, measured);
        let node = Node::of(comm);
        let wires = Wires::new(comm, &part, &node, asked, size_of::<T>())?;
        let order = layout.storage();
        let owner_strides = (part.recvs().iter())
            .map(|m| padded_strides(&m.peer_padded, order))
            .collect();
        Ok(GhostUpdate {
            maps: PeerMaps::new(part.recvs().len()),
            strides: padded_strides(part.padded(), order),
            owner_strides,
            copy: BoxCopy::new(order),
            node_direct: asked && wires.any_near(),
            wires,
            part,
            layout,
            spec: spec.clone(),
            begun: None,
            last: GhostCopies::default(),
            warnings,
            _elements: PhantomData,
        })
    }

    /// Refreshes `array`'s ghosts: [`begin`](Self::begin), then
    /// [`Flight::finish`]. Collective over the ranks that share ghosts
    /// (with the agreement, over the grid's communicator).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start) and [`finish`](Self::finish).
    pub fn update(&mut self, array: &mut DistArray<T>) -> Result<(), RedistError> {
        self.start(array)?;
        self.finish(array)
    }

    /// Like [`update`](Self::update), without the ranks agreeing on the
    /// array: for loops that update arrays made for this update, where the
    /// all-reduce is worth saving (a collective: microseconds on one node,
    /// far more where ranks outnumber cores). A rank handed a wrong array
    /// still returns an error, but alone: its neighbours then wait for it.
    ///
    /// # Errors
    ///
    /// As [`update`](Self::update), except [`RedistError::OtherRank`].
    pub fn update_unchecked(&mut self, array: &mut DistArray<T>) -> Result<(), RedistError> {
        self.start_with(array, false)?;
        self.finish(array)
    }

    /// Like [`begin`](Self::begin), without the ranks agreeing on the
    /// array (see [`update_unchecked`](Self::update_unchecked)).
    ///
    /// # Errors
    ///
    /// As [`begin`](Self::begin), except [`RedistError::OtherRank`].
    pub fn begin_unchecked<'a>(
        &'a mut self,
        array: &'a mut DistArray<T>,
    ) -> Result<Flight<'a, T>, RedistError> {
        self.start_with(array, false)?;
        Ok(Flight::new(self, array))
    }

    /// Starts refreshing `array`'s ghosts and hands back the update in
    /// flight, through which the array's interior can be read while the
    /// ghosts move; [`Flight::finish`] completes it (dropping the flight
    /// completes it too, ignoring errors).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn begin<'a>(
        &'a mut self,
        array: &'a mut DistArray<T>,
    ) -> Result<Flight<'a, T>, RedistError> {
        self.start(array)?;
        Ok(Flight::new(self, array))
    }

    /// Starts refreshing `array`'s ghosts: checks the array, agrees on the
    /// verdict with every rank (one small all-reduce), sends this rank's
    /// faces or notes, and copies the ghosts it holds itself. Until [`finish`](Self::finish) on the same array,
    /// the array's interior may be read, not written. The split pair for
    /// callers that cannot hold a [`Flight`] (the Python binding).
    ///
    /// # Errors
    ///
    /// - [`RedistError::Dist`] ([`DistError::LayoutMismatch`]) when `array`
    ///   is not laid out as planned, [`RedistError::InvalidArgument`] when
    ///   its ghost widths are not the planned ones or an update is already
    ///   in flight;
    /// - [`RedistError::OtherRank`] when another rank's array was refused;
    /// - [`RedistError::Mpi`] when MPI reports an error.
    pub fn start(&mut self, array: &mut DistArray<T>) -> Result<(), RedistError> {
        self.start_with(array, true)
    }

    /// Like [`start`](Self::start), without the ranks agreeing on the
    /// array (see [`update_unchecked`](Self::update_unchecked)).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start), except [`RedistError::OtherRank`].
    pub fn start_unchecked(&mut self, array: &mut DistArray<T>) -> Result<(), RedistError> {
        self.start_with(array, false)
    }

    /// [`start`](Self::start), agreeing on the array or not.
    fn start_with(&mut self, array: &mut DistArray<T>, agreed: bool) -> Result<(), RedistError> {
        let verdict = self.check(array);
        if agreed {
            agree(self.wires.set.communicator(), verdict, 0, "ghost update")?;
        } else {
            verdict?;
        }
        let storage = array.local_slice();
        for w in &self.wires.recvs {
            let first = w.near.map_or(w.data, |(note, _)| note);
            self.wires.set.start(first)?;
        }
        let lend = array.shared_storage().filter(|_| self.node_direct);
        self.last = GhostCopies::default();
        for (j, w) in self.wires.sends.iter().enumerate() {
            if let Some((note, done)) = w.near {
                let said = lend.map_or(Note::Message, Note::Shared);
                self.wires.set.words_mut(note)?[..7].copy_from_slice(&said.words());
                self.wires.set.start(note)?;
                if lend.is_some() {
                    self.wires.set.start(done)?;
                    self.last.lent += 1;
                    continue;
                }
            }
            let buf = cells_mut::<T>(self.wires.set.bytes_mut(w.data)?)?;
            self.copy
                .pack(&self.part.sends()[j].boxes, storage, &self.strides, buf);
            self.wires.set.start(w.data)?;
        }
        // The ghosts this rank holds itself, while the others travel: they
        // read only its interior, final now, so they are fresh when `start`
        // returns (a solver may use them before `finish`: `local_axes`).
        let storage = array.local_slice_mut();
        for b in self.part.own() {
            self.copy.copy_within(b, storage, &self.strides);
        }
        self.last.own = self.part.own().len();
        self.begun = Some((storage.as_ptr() as usize, storage.len()));
        Ok(())
    }

    /// Per axis, whether every ghost of this rank along it comes from the
    /// rank itself (a periodic axis of grid extent 1): those are written by
    /// [`start`](Self::start), before it returns, so between `begin` and
    /// `finish` a stencil may read them and only the cells near the other
    /// axes' ghosts need wait.
    pub fn local_axes(&self) -> Vec<bool> {
        let n = self.layout.ndim();
        let widths = self.spec.widths();
        let padded = self.part.padded();
        let mut local = vec![true; n];
        for b in self.part.recvs().iter().flat_map(|m| &m.boxes) {
            for d in 0..n {
                let interior = widths[d]..padded[d].saturating_sub(widths[d]);
                local[d] &= interior.contains(&b.dst[d]);
            }
        }
        local
    }

    /// Completes the update [`start`](Self::start) began on `array`: reads
    /// or receives the ghosts other ranks hold,
    /// and answers the readers of its storage. When it returns, every
    /// ghost is fresh and the array may be written again.
    ///
    /// # Errors
    ///
    /// - [`RedistError::InvalidArgument`] when no update is in flight, or
    ///   `array` is not the array it was started on (the update is then
    ///   completed without touching `array`, so no rank waits);
    /// - [`RedistError::Mpi`] when MPI reports an error.
    pub fn finish(&mut self, array: &mut DistArray<T>) -> Result<(), RedistError> {
        let Some(begun) = self.begun.take() else {
            return Err(RedistError::InvalidArgument {
                what: "ghost update",
                value: "finish without start".to_string(),
                expected: "start (or begin) first".to_string(),
            });
        };
        let storage = array.local_slice_mut();
        if begun != (storage.as_ptr() as usize, storage.len()) {
            self.complete(None)?;
            return Err(RedistError::InvalidArgument {
                what: "array to finish a ghost update on",
                value: "another array than the one it was started on".to_string(),
                expected: "the array passed to start".to_string(),
            });
        }
        self.complete(Some(storage))
    }

    /// Runs the rest of the protocol: own copies, then every arrival until
    /// nothing is in flight. Without a storage (the wrong array was
    /// handed in), answers and drains without copying.
    fn complete(&mut self, mut storage: Option<&mut [T]>) -> Result<(), RedistError> {
        while let Some(arrival) = self.wires.next()? {
            match arrival {
                Arrival::Note(k) => self.on_note(k, storage.as_deref_mut())?,
                Arrival::Data(k) => {
                    let w = self.wires.recvs[k];
                    if let Some(s) = storage.as_deref_mut() {
                        let buf = cells::<T>(self.wires.set.bytes(w.data)?)?;
                        self.copy
                            .unpack(&self.part.recvs()[k].boxes, buf, s, &self.strides);
                    }
                    self.last.messages += 1;
                }
                Arrival::Done(j) => {
                    let w = self.wires.sends[j];
                    let (_, done) = w.near.unwrap_or((w.data, w.data));
                    if self.wires.set.words(done)?[0] == SEND_DATA {
                        // The reader could not map this storage: its
                        // interior is still as it was, send it.
                        if let Some(s) = storage.as_deref() {
                            let buf = cells_mut::<T>(self.wires.set.bytes_mut(w.data)?)?;
                            self.copy
                                .pack(&self.part.sends()[j].boxes, s, &self.strides, buf);
                        }
                        self.wires.set.start(w.data)?;
                        self.last.lent -= 1;
                    }
                }
                Arrival::Sent => {}
            }
        }
        Ok(())
    }

    /// Owner `k`'s note arrived: read its storage where it is shared (and
    /// answer), else take its boxes as a message. Without a storage (the
    /// wrong array at `finish`), answer as if read.
    fn on_note(&mut self, k: usize, storage: Option<&mut [T]>) -> Result<(), RedistError> {
        let elem = size_of::<T>();
        let w = self.wires.recvs[k];
        let (note, done) = w.near.unwrap_or((w.data, w.data));
        let Note::Shared(owner) = Note::of(self.wires.set.words(note)?) else {
            self.wires.set.start(w.data)?;
            return Ok(());
        };
        let m = &self.part.recvs()[k];
        let bytes = m.peer_padded.iter().product::<usize>() * elem;
        let read = match storage {
            Some(s) => match self.maps.get(k, &owner, bytes) {
                Ok(map) => {
                    // SAFETY: the mapping holds `bytes` bytes of the owner's
                    // elements (checked against the plan), page-aligned, and
                    // stays mapped while `map` lives; any bit pattern is a
                    // `T` (`Pod`), and the owner does not write its interior
                    // until this rank's word.
                    let theirs = unsafe {
                        std::slice::from_raw_parts(map.as_ptr().cast::<T>(), bytes / elem)
                    };
                    for b in &m.boxes {
                        self.copy
                            .copy(b, theirs, &self.owner_strides[k], s, &self.strides);
                    }
                    true
                }
                Err(_) => false,
            },
            None => true,
        };
        self.wires.set.words_mut(done)?[0] = if read { READ } else { SEND_DATA };
        self.wires.set.start(done)?;
        if read {
            self.last.read += 1;
        } else {
            self.wires.set.start(w.data)?;
        }
        Ok(())
    }

    /// This rank's verdict on `array`, alone (not collective): laid out as
    /// planned, with the planned widths, no update in flight. What
    /// [`start`](Self::start) agrees on; a caller that agrees on its own
    /// checks anyway (the Python binding) folds it into its verdict and
    /// starts unchecked.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start), but never [`RedistError::OtherRank`].
    pub fn check(&self, array: &DistArray<T>) -> Result<(), RedistError> {
        if self.begun.is_some() {
            return Err(RedistError::InvalidArgument {
                what: "ghost update",
                value: "start while an update is in flight".to_string(),
                expected: "finish before the next start".to_string(),
            });
        }
        if array.layout() != &self.layout {
            return Err(DistError::LayoutMismatch {
                left: array.layout().to_string(),
                right: self.layout.to_string(),
            }
            .into());
        }
        if array.ghost_widths() != self.spec.widths() {
            return Err(widths_refused(array.ghost_widths(), self.spec.widths()));
        }
        Ok(())
    }

    /// The layout the update was planned for.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// What the update fills.
    pub fn spec(&self) -> &GhostSpec {
        &self.spec
    }

    /// This rank's part of the plan: its receives, sends and own boxes.
    pub fn part(&self) -> &RankGhosts {
        &self.part
    }

    /// Bytes of ghosts this rank's update fills.
    pub fn ghost_bytes(&self) -> usize {
        self.part.ghost_cells() * size_of::<T>()
    }

    /// Bytes this rank's plan holds (boxes and messages, not buffers): it
    /// grows with neighbours and boxes, never with cells.
    pub fn plan_bytes(&self) -> usize {
        self.part.heap_bytes()
    }

    /// How the last update moved this rank's ghosts.
    pub fn copies(&self) -> GhostCopies {
        self.last
    }

    /// Whether this rank reads its node's peers' storage (where shared):
    /// the options allowed it, no measurement found messages faster, and
    /// the rank has a neighbour on its node.
    pub fn reads_shared(&self) -> bool {
        self.node_direct
    }

    /// What the wisdom file could not give this update (missing, corrupt,
    /// measured elsewhere…), the same on every rank; empty when no file
    /// was named or it held this update's choice.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Mappings of owners' storage made so far (once per owner's array).
    pub fn mappings_made(&self) -> usize {
        self.maps.made
    }

    /// The storage order of the arrays.
    pub fn order(&self) -> Order {
        self.layout.storage()
    }
}

/// This rank's part of `spec` on `array`'s layout, checked.
fn plan<T: Element>(
    array: &DistArray<T>,
    spec: &GhostSpec,
    rank: usize,
) -> Result<RankGhosts, RedistError> {
    if array.ghost_widths() != spec.widths() {
        return Err(widths_refused(array.ghost_widths(), spec.widths()));
    }
    let part = RankGhosts::new(array.layout(), spec, rank)?;
    for m in part.recvs().iter().chain(part.sends()) {
        mpi_extras::count(m.cells * size_of::<T>(), "bytes of one ghost message")?;
    }
    Ok(part)
}

fn widths_refused(got: &[usize], planned: &[usize]) -> RedistError {
    RedistError::InvalidArgument {
        what: "array's ghost widths",
        value: format!("{got:?}"),
        expected: format!("the update's widths {planned:?} (DistArray::with_ghosts)"),
    }
}

/// `bytes` as elements (a message buffer is 8-byte aligned).
fn cells<T: Element>(bytes: &[u8]) -> Result<&[T], RedistError> {
    bytemuck::try_cast_slice(bytes)
        .map_err(|e| RedistError::Internal(format!("message buffer: {e}")))
}

/// `bytes` as elements, writable.
fn cells_mut<T: Element>(bytes: &mut [u8]) -> Result<&mut [T], RedistError> {
    bytemuck::try_cast_slice_mut(bytes)
        .map_err(|e| RedistError::Internal(format!("message buffer: {e}")))
}
