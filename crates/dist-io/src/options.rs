//! What a save or a load may be told: the file's format, which ranks
//! write, how much memory a rank may spare, whether to sync.

use crate::error::IoError;
use procgrid::Order;
use std::path::Path;

/// A file format.
///
/// Each format is a module of its own, listed in the registry of formats,
/// which also gives the methods [`Format::from_name`] and [`Format::name`]
/// (`registry.rs`; `docs/io.md`, "Adding a file format").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Format {
    /// NumPy's `.npy`: a small header, then the array's bytes.
    Npy,
    /// HDF5: a dataset at a path inside the file (feature `hdf5`).
    Hdf5 {
        /// The dataset's path in the file, such as `data` or `/run/3/u`.
        dataset: String,
    },
    /// The test's throwaway format (`toy_format.rs`): a format added by
    /// its module and one line of the registry.
    #[cfg(test)]
    Toy,
}

/// The dataset name HDF5 files get when none is given.
pub const DEFAULT_DATASET: &str = "data";

/// Which ranks write to (and read from) the file.
///
/// Each round of a save gathers a contiguous range of the file on every
/// aggregator (a redistribution), and each aggregator writes its range with
/// one call; a load reads the ranges and redistributes them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Aggregators {
    /// The default: one rank per node when the ranks span several nodes
    /// (what parallel file systems serve best, and ROMIO's default),
    /// every rank when they all share one node (a local file system
    /// reads in parallel, and the copying spreads over the cores:
    /// measured on 2 ranks, reads took 0.65x and writes 0.9x the time of
    /// one aggregator).
    #[default]
    Auto,
    /// The first `k` ranks of every node (all of a node's ranks when it
    /// has fewer).
    PerNode(usize),
    /// `n` ranks in all (at most every rank), spread over the nodes in
    /// turn: the first rank of every node, then the second, ...
    Count(usize),
    /// These ranks of the array's communicator, in this order.
    Ranks(Vec<usize>),
}

/// The staging budget when none is given: 64 MiB per aggregator.
pub const DEFAULT_STAGING_BYTES: usize = 64 << 20;

/// The largest staging budget: one MPI-IO call moves at most this many
/// bytes (MPI counts are 32-bit).
pub const MAX_STAGING_BYTES: usize = 1 << 30;

/// Options of a save or a load.
///
/// ```
/// use dist_io::{Aggregators, IoOptions};
/// let o = IoOptions::default().aggregators(Aggregators::Count(4)).staging_bytes(16 << 20).sync(true);
/// assert_eq!(o.staging_bytes, 16 << 20);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct IoOptions {
    /// The file's format; `None`: from the file's name on saving
    /// ([`Format::from_name`]), from its first bytes on loading.
    pub format: Option<Format>,
    /// Which ranks write and read.
    pub aggregators: Aggregators,
    /// The memory a rank may spare for a save or a load, beyond its local
    /// part (default 64 MiB, at most [`MAX_STAGING_BYTES`]): half holds the
    /// aggregator's staging buffer (the bytes of the file it holds at once),
    /// half is left for what the exchange reads of the node's other ranks
    /// through their shared memory, whose pages count in this process's
    /// resident memory while it reads them. Larger arrays go in rounds, so
    /// a save or a load never needs a second copy of the array.
    pub staging_bytes: usize,
    /// Whether a save flushes the file to storage (`MPI_File_sync`) before
    /// renaming it.
    pub sync: bool,
    /// Local storage order of arrays [`load`](crate::load()) makes: `None`
    /// keeps the file's (C order files load row-major, Fortran order files
    /// column-major).
    pub storage: Option<Order>,
    /// Options of the redistributions between the array and the file's
    /// ranges. Their `remap` and `padding` are the transfer's own (none,
    /// and the array's ghost layers: a file holds the interior only).
    pub redistribution: redist::Options,
    /// Whether rank 0 prints progress on stderr during long transfers (a
    /// line at most every 2 s from the third second; may differ between
    /// ranks: only rank 0's counts).
    pub progress: bool,
}

impl Default for IoOptions {
    fn default() -> Self {
        IoOptions {
            format: None,
            aggregators: Aggregators::default(),
            staging_bytes: DEFAULT_STAGING_BYTES,
            sync: false,
            storage: None,
            redistribution: redist::Options::default(),
            progress: false,
        }
    }
}

impl IoOptions {
    /// The same options with this format.
    pub fn format(mut self, format: Format) -> IoOptions {
        self.format = Some(format);
        self
    }

    /// The same options with these aggregators.
    pub fn aggregators(mut self, aggregators: Aggregators) -> IoOptions {
        self.aggregators = aggregators;
        self
    }

    /// The same options with this staging budget per aggregator.
    pub fn staging_bytes(mut self, bytes: usize) -> IoOptions {
        self.staging_bytes = bytes;
        self
    }

    /// The same options, syncing saves or not.
    pub fn sync(mut self, sync: bool) -> IoOptions {
        self.sync = sync;
        self
    }

    /// The same options with loaded arrays stored in `order`.
    pub fn storage(mut self, order: Order) -> IoOptions {
        self.storage = Some(order);
        self
    }

    /// The same options, printing progress on long transfers or not.
    pub fn progress(mut self, progress: bool) -> IoOptions {
        self.progress = progress;
        self
    }

    /// Bytes of the file one aggregator holds at once: half the staging
    /// budget ([`staging_bytes`](Self::staging_bytes)).
    pub(crate) fn staging_buffer_bytes(&self) -> usize {
        (self.staging_bytes / 2).max(1)
    }

    /// The options every rank must pass alike, as text for the ranks'
    /// fingerprint: all but [`progress`](Self::progress), which only rank 0
    /// acts on.
    pub(crate) fn agreed_text(&self) -> String {
        format!(
            "{:?}",
            IoOptions {
                progress: false,
                ..self.clone()
            }
        )
    }

    /// Checks the values no file is needed to judge.
    pub(crate) fn check(&self) -> Result<(), IoError> {
        if self.staging_bytes == 0 || self.staging_bytes > MAX_STAGING_BYTES {
            return Err(IoError::invalid(
                "staging budget",
                self.staging_bytes,
                format!("1 to {MAX_STAGING_BYTES} bytes"),
            ));
        }
        match &self.aggregators {
            Aggregators::PerNode(0) | Aggregators::Count(0) => Err(IoError::invalid(
                "aggregator count",
                0,
                "at least one aggregator",
            )),
            Aggregators::Ranks(r) if r.is_empty() => Err(IoError::invalid(
                "aggregator ranks",
                "[]",
                "at least one rank",
            )),
            _ => Ok(()),
        }
    }

    /// The format of `path` for saving.
    pub(crate) fn format_for(&self, path: &Path) -> Format {
        self.format
            .clone()
            .unwrap_or_else(|| Format::from_name(path))
    }
}
