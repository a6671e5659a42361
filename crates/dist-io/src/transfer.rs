//! Moving an array to or from a file, round by round: one redistribution
//! between the array and the round's ranges on the aggregators, and one
//! call per aggregator that writes or reads its range.
//!
//! The file side is a [`Store`], which each format makes: `.npy` through
//! MPI-IO (`raw_file.rs`), HDF5 through its own hyperslab calls. The
//! array side is an [`AnySide`], the array with its element type erased,
//! so that formats are not generic. Every step ends agreed (`agree`), so
//! an error on any rank stops every rank at the same round with the same
//! error.

use crate::agree::agree;
use crate::element::ElementType;
use crate::error::IoError;
use crate::file_info::FileInfo;
use crate::options::{IoOptions, MAX_STAGING_BYTES};
use crate::rounds::{RegionBox, Round, Rounds};
use dist_array::{DistArray, Element, Layout};
use mpi::topology::Communicator;
use mpi_extras::file::FileBox;
use procgrid::{Order, ProcGrid};
use redist::{Padding, Redistribution, Remap, Window};
use std::time::Instant;

/// The file side of a transfer: the file's array, written or read one box
/// per aggregator and round. Every rank calls each round, with its box or
/// `None`. `contiguous` says (alike on every rank) whether every box of the
/// round is one range of the file: MPI-IO then writes or reads each box by
/// one independent call on its rank (ranks with `None` do nothing);
/// otherwise through a collective call over a file view.
pub(crate) trait Store {
    /// Writes `data`, the bytes of `file_box` in the file's order.
    fn write(
        &mut self,
        file_box: Option<&FileBox>,
        data: &[u8],
        contiguous: bool,
    ) -> Result<(), IoError>;
    /// Reads `file_box` into `data`.
    fn read(
        &mut self,
        file_box: Option<&FileBox>,
        data: &mut [u8],
        contiguous: bool,
    ) -> Result<(), IoError>;
}

/// Where a transfer's region lies in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Byte offset of the file's first element (`.npy`: after the header;
    /// HDF5: 0, the dataset's own coordinates).
    pub data_offset: u64,
    /// The file array's shape.
    pub shape: Vec<usize>,
    /// The file's order.
    pub order: Order,
    /// Bytes per element.
    pub element_bytes: usize,
    /// First index of the region in the file's array.
    pub origin: Vec<usize>,
    /// Extent of the region (the array's shape).
    pub extent: Vec<usize>,
}

impl Geometry {
    /// The file box of `region_box`, a box relative to the region.
    fn file_box(&self, region_box: RegionBox) -> FileBox {
        let RegionBox { origin, extent } = region_box;
        FileBox {
            data_offset: self.data_offset,
            shape: self.shape.clone(),
            order: self.order,
            origin: origin
                .iter()
                .zip(&self.origin)
                .map(|(a, b)| a + b)
                .collect(),
            extent,
            element_bytes: self.element_bytes,
        }
    }

    /// Whether every aggregator's box of a round split along `axis` is one
    /// range of the file: the region covers every faster dimension whole.
    fn contiguous_boxes(&self, axis: usize) -> bool {
        let k = self.shape.len();
        let faster: Vec<usize> = match self.order {
            Order::RowMajor => (axis + 1..k).collect(),
            Order::ColumnMajor => (0..axis).collect(),
        };
        faster.iter().all(|&d| self.extent[d] == self.shape[d])
    }
}

/// Where a file's array lies: after `data_offset` bytes, of `shape`, in
/// `order`.
pub(crate) struct FileArray<'b> {
    pub data_offset: u64,
    pub shape: &'b [usize],
    pub order: Order,
}

impl FileArray<'_> {
    /// The array a file's header describes.
    pub fn of(info: &FileInfo) -> FileArray<'_> {
        FileArray {
            data_offset: info.data_offset.unwrap_or(0),
            shape: &info.shape,
            order: info.order,
        }
    }
}

/// What a transfer does to the file
/// ([`FileFormat::run`](crate::file_format::FileFormat::run)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    /// The array saved to a new file (or, for a format holding several
    /// arrays, a new array of it) that replaces the old one only when
    /// every rank succeeded ([`save`](crate::save::save)).
    Save,
    /// The array written into the window of the existing file's array
    /// that the transfer names, in place
    /// ([`save_window`](crate::save::save_window)).
    SaveWindow,
    /// The window of the file's array that the transfer names loaded into
    /// the array (every load).
    LoadWindow,
}

/// The array of a transfer, and so which way the bytes go.
pub(crate) enum Side<'a, T> {
    /// Saving this array to the file.
    Save(&'a DistArray<T>),
    /// Loading the file into this array.
    Load(&'a mut DistArray<T>),
}

impl<T: Element> Side<'_, T> {
    fn array(&self) -> &DistArray<T> {
        match self {
            Side::Save(a) => a,
            Side::Load(a) => a,
        }
    }
}

/// The array of a transfer, its element type erased: what a format reads
/// of it, and the rounds that move it ([`Transfer::run`]).
pub(crate) trait AnySide {
    /// The array's grid.
    fn grid(&self) -> &ProcGrid;
    /// The array's layout.
    fn layout(&self) -> &Layout;
    /// The array's element type.
    fn element(&self) -> ElementType;
    /// Whether the array is saved to the file (else loaded from it).
    fn saving(&self) -> bool;
    /// Moves the whole region between the array and the file through
    /// `store`, as `transfer` says. Collective.
    fn run_rounds(&mut self, transfer: &Transfer<'_>, store: &mut dyn Store)
        -> Result<(), IoError>;
}

impl<T: Element> AnySide for Side<'_, T> {
    fn grid(&self) -> &ProcGrid {
        self.array().grid()
    }

    fn layout(&self) -> &Layout {
        self.array().layout()
    }

    fn element(&self) -> ElementType {
        ElementType::of::<T>()
    }

    fn saving(&self) -> bool {
        matches!(self, Side::Save(_))
    }

    fn run_rounds(
        &mut self,
        transfer: &Transfer<'_>,
        store: &mut dyn Store,
    ) -> Result<(), IoError> {
        let side = match self {
            Side::Save(a) => Side::Save(&**a),
            Side::Load(a) => Side::Load(&mut **a),
        };
        transfer.run_typed(side, store)
    }
}

/// A transfer between one array and a region of a file.
pub(crate) struct Transfer<'a> {
    pub geometry: Geometry,
    pub options: &'a IoOptions,
    /// The aggregators, in the order they take the rounds' blocks.
    pub aggregators: Vec<usize>,
    /// What the progress lines and errors call the operation.
    pub what: String,
}

impl<'a> Transfer<'a> {
    /// The transfer of `array` to or from the window at `origin` of the
    /// file's array `file` (the window has `array`'s shape), with the
    /// aggregators `options` names. Collective (they are resolved and
    /// agreed on).
    pub fn new<T: Element>(
        array: &DistArray<T>,
        file: FileArray<'_>,
        origin: &[usize],
        options: &'a IoOptions,
        what: String,
    ) -> Result<Transfer<'a>, IoError> {
        let grid = array.grid();
        let chosen = crate::aggregators::resolve(grid, &options.aggregators);
        let aggregators = agree(grid.communicator(), chosen, 0, &what)?;
        Ok(Transfer {
            geometry: Geometry {
                data_offset: file.data_offset,
                shape: file.shape.to_vec(),
                order: file.order,
                element_bytes: std::mem::size_of::<T>(),
                origin: origin.to_vec(),
                extent: array.shape().to_vec(),
            },
            options,
            aggregators,
            what,
        })
    }

    /// Moves the whole region between the array of `side` (of the
    /// region's shape) and the file through `store`. Collective over the
    /// array's communicator.
    pub fn run(&self, side: &mut dyn AnySide, store: &mut dyn Store) -> Result<(), IoError> {
        side.run_rounds(self, store)
    }

    /// [`run`](Self::run) for elements of type `T`.
    fn run_typed<T: Element>(
        &self,
        mut side: Side<'_, T>,
        store: &mut dyn Store,
    ) -> Result<(), IoError> {
        let g = &self.geometry;
        let grid = side.array().grid().clone();
        let comm = grid.communicator();
        let ranks = comm.size() as usize;
        let me = comm.rank() as usize;
        // Straight between local storage and the file only where the
        // storage is the local part: ghost cells are never the file's.
        let direct = direct_axis(side.array().layout(), g).filter(|_| !side.array().has_ghosts());
        if let Some(axis) = direct {
            return self.run_direct(side, store, axis);
        }
        let rounds = Rounds::new(
            &g.extent,
            g.order,
            g.element_bytes,
            self.aggregators.len(),
            self.options.staging_buffer_bytes(),
        );
        if rounds.is_empty() {
            return Ok(());
        }
        let axis = rounds.axis();
        let mut extents = vec![1; g.extent.len()];
        extents[axis] = ranks;
        let staging_grid = ProcGrid::builder(&extents).build_sharing(&grid)?;
        let rank_map = self.rank_map(ranks);
        let position = self.aggregators.iter().position(|&a| a == me);
        let contiguous = g.contiguous_boxes(axis);
        // The array's ghost layers are its storage's: the redistributions
        // read (or write) its interior, and the staging arrays have none.
        let widths = side.array().ghost_widths();
        let padding = match side {
            Side::Save(_) => Padding::new(widths, &[]),
            Side::Load(_) => Padding::new(&[], widths),
        };
        let options = redist::Options {
            remap: Remap::None,
            padding,
            ..self.options.redistribution.clone()
        };
        let mut staging: Option<DistArray<T>> = None;
        let count = rounds.len();
        let mut progress = Progress::new(self.options.progress && me == 0);
        for (i, round) in rounds.iter().enumerate() {
            let layout = Layout::new(&round.extent, &round.spec(ranks))?
                .with_rank_map(rank_map.clone())?
                .with_storage(g.order);
            let stage = staging_for(&mut staging, &staging_grid, layout)?;
            let file_box = position
                .and_then(|q| round.aggregator_box(q))
                .map(|b| g.file_box(b));
            progress.tick(&self.what, i, count, &round, g.element_bytes);
            let io = RoundIo {
                store: &mut *store,
                file_box: file_box.as_ref(),
                contiguous,
            };
            self.move_round(&mut side, stage, &staging_grid, &round, io, &options)?;
        }
        if let Some(s) = staging {
            crate::staging::keep(s);
        }
        Ok(())
    }

    /// One round: the array redistributed into `stage` (the round's
    /// ranges on the aggregators, on `staging_grid`) and written, or
    /// `stage` read and redistributed into the array. Collective; each
    /// step agreed.
    fn move_round<T: Element>(
        &self,
        side: &mut Side<'_, T>,
        stage: &mut DistArray<T>,
        staging_grid: &ProcGrid,
        round: &Round,
        io: RoundIo<'_>,
        options: &redist::Options,
    ) -> Result<(), IoError> {
        let comm = staging_grid.communicator();
        let k = self.geometry.extent.len();
        match side {
            Side::Save(array) => {
                let window = Window::new(&round.origin, &vec![0; k], &round.extent)?;
                let mut r = Redistribution::<T>::with_window(
                    array.grid(),
                    array.layout(),
                    staging_grid,
                    stage.layout(),
                    &window,
                    options.clone(),
                )?;
                r.execute_into(array, stage)?;
                let bytes: &[u8] = bytemuck::cast_slice(stage.local_slice());
                let done = io.store.write(io.file_box, bytes, io.contiguous);
                agree(comm, done, 0, &self.what)
            }
            Side::Load(array) => {
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(stage.local_slice_mut());
                let done = io.store.read(io.file_box, bytes, io.contiguous);
                agree(comm, done, 0, &self.what)?;
                let window = Window::new(&vec![0; k], &round.origin, &round.extent)?;
                let mut r = Redistribution::<T>::with_window(
                    staging_grid,
                    stage.layout(),
                    array.grid(),
                    array.layout(),
                    &window,
                    options.clone(),
                )?;
                Ok(r.execute_into(stage, array)?)
            }
        }
    }

    /// Moves the array straight between its local parts and the file, each
    /// rank its own range ([`direct_axis`] said every rank holds at most
    /// one contiguous range of the file, split along `axis`): no staging,
    /// no exchange. Ranges above [`MAX_STAGING_BYTES`] go in several calls,
    /// as many on every rank. Collective (one agreement at the end).
    fn run_direct<T: Element>(
        &self,
        mut side: Side<'_, T>,
        store: &mut dyn Store,
        axis: usize,
    ) -> Result<(), IoError> {
        let g = &self.geometry;
        let layout = side.array().layout().clone();
        let map = layout.axis(axis);
        // Bytes of one index of `axis`, every other dimension whole.
        let inner: usize = (g.shape.iter().enumerate())
            .filter(|&(d, _)| d != axis)
            .map(|(_, &n)| n)
            .product::<usize>()
            * g.element_bytes;
        let rows_per_call = (MAX_STAGING_BYTES / inner.max(1)).max(1);
        let calls = map.block().min(map.extent()).div_ceil(rows_per_call);
        let mine = side.array().rank().and_then(|r| {
            let coords = layout.coords_of_rank(r).ok()?;
            let (range, _) = map.blocks(coords[axis]).next()?;
            Some(range)
        });
        let mut done = Ok(());
        for call in 0..calls {
            let rows = mine.as_ref().and_then(|range| {
                let start = range.start + call * rows_per_call;
                (start < range.end).then(|| start..range.end.min(start + rows_per_call))
            });
            let file_box = rows.as_ref().map(|rows| {
                let mut origin = vec![0; g.shape.len()];
                let mut extent = g.shape.clone();
                origin[axis] = rows.start;
                extent[axis] = rows.len();
                g.file_box(RegionBox { origin, extent })
            });
            let local = match (&rows, &mine) {
                (Some(rows), Some(range)) => {
                    (rows.start - range.start) * inner..(rows.end - range.start) * inner
                }
                _ => 0..0,
            };
            let result = match &mut side {
                Side::Save(array) => {
                    let bytes: &[u8] = bytemuck::cast_slice(array.local_slice());
                    store.write(file_box.as_ref(), &bytes[local], true)
                }
                Side::Load(array) => {
                    let bytes: &mut [u8] = bytemuck::cast_slice_mut(array.local_slice_mut());
                    store.read(file_box.as_ref(), &mut bytes[local], true)
                }
            };
            done = done.and(result);
        }
        agree(side.array().grid().communicator(), done, 0, &self.what)
    }

    /// The staging layouts' rank map: the aggregators first, in their
    /// order, then every other rank in increasing order.
    fn rank_map(&self, ranks: usize) -> Vec<usize> {
        let mut taken = vec![false; ranks];
        let mut map = Vec::with_capacity(ranks);
        for &a in &self.aggregators {
            taken[a] = true;
            map.push(a);
        }
        map.extend((0..ranks).filter(|&r| !taken[r]));
        map
    }
}

/// The dimension along which every rank of `layout` holds at most one
/// contiguous range of the file, when the transfer can go straight between
/// the local parts and the file: the whole file's array, local parts
/// stored in the file's order, every dimension but one whole on every
/// rank (grid extent 1), every dimension slower than it of extent 1, and
/// at most one block per rank along it (`block`, or `cyclic(b)` with
/// `b` × processes covering the extent). `None` otherwise. The same on
/// every rank: it reads the layout alone.
fn direct_axis(layout: &Layout, g: &Geometry) -> Option<usize> {
    let k = g.shape.len();
    let whole = g.origin.iter().all(|&o| o == 0) && g.extent == g.shape;
    if !whole || layout.storage() != g.order || layout.shape() != g.shape.as_slice() {
        return None;
    }
    let slow_first: Vec<usize> = match g.order {
        Order::RowMajor => (0..k).collect(),
        Order::ColumnMajor => (0..k).rev().collect(),
    };
    let split: Vec<usize> = (0..k).filter(|&d| layout.grid_extents()[d] > 1).collect();
    let axis = match split.as_slice() {
        [] => slow_first[0],
        [d] => *d,
        _ => return None,
    };
    let position = slow_first.iter().position(|&d| d == axis)?;
    let slower_whole = slow_first[..position].iter().all(|&d| g.shape[d] == 1);
    let map = layout.axis(axis);
    let one_block = map.block().saturating_mul(map.procs()) >= map.extent();
    (slower_whole && one_block).then_some(axis)
}

/// Progress lines on rank 0's stderr for transfers longer than a few
/// seconds: at most one every 2 s, from the third second on.
struct Progress {
    on: bool,
    start: Instant,
    last: f64,
}

impl Progress {
    fn new(on: bool) -> Progress {
        Progress {
            on,
            start: Instant::now(),
            last: 0.0,
        }
    }

    /// Says that round `i` of `count` starts.
    fn tick(&mut self, what: &str, i: usize, count: usize, round: &Round, element_bytes: usize) {
        let t = self.start.elapsed().as_secs_f64();
        if !self.on || t < 3.0 || t - self.last < 2.0 {
            return;
        }
        self.last = t;
        let bytes = round.extent.iter().product::<usize>() * element_bytes;
        eprintln!(
            "{what}: round {}/{count} ({:.1} MiB), {t:.0} s",
            i + 1,
            bytes as f64 / f64::from(1 << 20)
        );
    }
}

/// The file side of one round: the store, this rank's box of the file (if
/// it aggregates one) and whether every box of the round is one range.
struct RoundIo<'a> {
    store: &'a mut dyn Store,
    file_box: Option<&'a FileBox>,
    contiguous: bool,
}

/// The staging array of a round of `layout`: the previous round's when its
/// layout is the same, else a new one on `grid` (the old one handed back
/// to be reused, [`crate::staging::keep`]).
fn staging_for<'s, T: Element>(
    staging: &'s mut Option<DistArray<T>>,
    grid: &ProcGrid,
    layout: Layout,
) -> Result<&'s mut DistArray<T>, IoError> {
    let stage = match staging.take() {
        Some(s) if s.layout() == &layout => s,
        Some(s) => {
            crate::staging::keep(s);
            crate::staging::array(grid, layout)?
        }
        None => crate::staging::array(grid, layout)?,
    };
    Ok(staging.insert(stage))
}
