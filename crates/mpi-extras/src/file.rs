//! MPI-IO: files opened collectively over a communicator and written or
//! read at explicit offsets, whole boxes of an array through a file view,
//! or a distributed array through `MPI_Type_create_darray` ([`Darray`]: the
//! way a C programmer describes a block-cyclic array to MPI-IO, which
//! `redist io --baseline mpiio` measures against).
//!
//! rsmpi 0.8 wraps no `MPI_File_*` call, so they live here. A file's error handler returns
//! errors (`MPI_ERRORS_RETURN`, the standard's default for files, set
//! again on every file opened here): a full disk or a missing file comes
//! back as [`MpiError::Mpi`] with MPI's description, never an abort.
//! Every call that is collective says so; callers agree on the outcome
//! (one all-reduce) before going on, since a call may fail on one rank and
//! succeed on another.
//!
//! ```
//! use mpi::topology::Communicator;
//! use mpi_extras::file::{Access, MpiFile};
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let path = std::env::temp_dir().join(format!("mpi-io-doc-{}", std::process::id()));
//! let mut f = MpiFile::open(&world, &path, Access::Create).unwrap();
//! f.write_at_all(3, b"abc").unwrap();
//! f.close().unwrap();
//! let mut f = MpiFile::open(&world, &path, Access::Read).unwrap();
//! let mut back = [0u8; 4];
//! f.read_at_all(2, &mut back).unwrap();
//! assert_eq!(&back, b"\0abc");
//! assert_eq!(f.size().unwrap(), 6);
//! f.close().unwrap();
//! std::fs::remove_file(&path).unwrap();
//! ```

use crate::buffers::{addr, addr_mut};
use crate::datatype::Datatype;
use crate::error::{check, MpiError};
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::Equivalence;
use redist_plan::coords::Order;
use std::ffi::CString;
use std::os::raw::c_int;
use std::path::Path;

/// How a file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Write only, created when missing (an existing file keeps its bytes
    /// until written over or cut with [`MpiFile::set_size`]).
    Create,
    /// Read and write an existing file.
    Update,
    /// Read only.
    Read,
}

impl Access {
    fn mode(self) -> c_int {
        let mode = match self {
            Access::Create => ffi::MPI_MODE_CREATE | ffi::MPI_MODE_WRONLY,
            Access::Update => ffi::MPI_MODE_RDWR,
            Access::Read => ffi::MPI_MODE_RDONLY,
        };
        // The MPI_MODE_* constants are small flags.
        c_int::try_from(mode).unwrap_or(0)
    }
}

/// A box of an n-dimensional array stored in a file: the array's shape and
/// storage order, where its first element lies, and the box (origin and
/// extent per dimension). The box's bytes are held contiguously in
/// memory, in the same order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBox {
    /// Byte offset of the array's first element in the file.
    pub data_offset: u64,
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The array's storage order in the file (C or Fortran).
    pub order: Order,
    /// First index of the box.
    pub origin: Vec<usize>,
    /// Extent of the box per dimension.
    pub extent: Vec<usize>,
    /// Bytes per element.
    pub element_bytes: usize,
}

/// A box seen as MPI-IO sees it: the byte offset of its first element,
/// the length of its contiguous runs, and per outer level (slowest first)
/// a count and the byte stride between its members. Dimensions the box
/// covers whole, from the fastest up, are folded into the runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxRuns {
    /// Byte offset of the box's first element.
    pub start: u64,
    /// Bytes of one contiguous run.
    pub run_bytes: u64,
    /// `(count, stride in bytes)` per outer level, slowest first.
    pub levels: Vec<(u64, u64)>,
}

impl FileBox {
    /// The box's bytes.
    pub fn bytes(&self) -> Option<u64> {
        (self.extent.iter()).try_fold(self.element_bytes as u64, |acc, &e| {
            acc.checked_mul(e as u64)
        })
    }

    /// Whether the box is one contiguous range of the file.
    pub fn is_contiguous(&self) -> bool {
        self.runs()
            .is_ok_and(|r| r.levels.iter().all(|&(c, _)| c <= 1))
    }

    /// The box as runs of bytes ([`BoxRuns`]).
    ///
    /// ```
    /// use redist_plan::coords::Order;
    /// use mpi_extras::file::FileBox;
    /// // Rows 1..3, columns 2..5 of a 4 x 6 array of 8-byte elements after a 128-byte header.
    /// let b = FileBox { data_offset: 128, shape: vec![4, 6], order: Order::RowMajor,
    ///                   origin: vec![1, 2], extent: vec![2, 3], element_bytes: 8 };
    /// let runs = b.runs().unwrap();
    /// assert_eq!((runs.start, runs.run_bytes, runs.levels), (128 + 8 * 8, 24, vec![(2, 48)]));
    /// ```
    ///
    /// # Errors
    ///
    /// [`MpiError::InvalidArgument`] when the box does not lie inside
    /// the array or the lists differ in length; [`MpiError::Limit`] when
    /// an offset overflows 64 bits.
    pub fn runs(&self) -> Result<BoxRuns, MpiError> {
        let k = self.shape.len();
        let inside = self.origin.len() == k
            && self.extent.len() == k
            && (0..k).all(|d| {
                (self.origin[d].checked_add(self.extent[d])).is_some_and(|end| end <= self.shape[d])
            });
        if !inside {
            return Err(MpiError::InvalidArgument {
                what: "file box",
                value: format!(
                    "origin {:?}, extent {:?} in an array of shape {:?}",
                    self.origin, self.extent, self.shape
                ),
                expected: "a box inside the array, one entry per dimension".to_string(),
            });
        }
        let overflow = || MpiError::Limit {
            what: "a file offset in bytes",
            value: u128::MAX,
            limit: u128::from(u64::MAX),
        };
        // Dimensions from the slowest to the fastest in the file.
        let dims: Vec<usize> = match self.order {
            Order::RowMajor => (0..k).collect(),
            Order::ColumnMajor => (0..k).rev().collect(),
        };
        let mut strides = vec![0u64; k];
        let mut stride = self.element_bytes as u64;
        for &d in dims.iter().rev() {
            strides[d] = stride;
            stride = stride
                .checked_mul(self.shape[d] as u64)
                .ok_or_else(overflow)?;
        }
        let mut start = self.data_offset;
        for (&o, &stride) in self.origin.iter().zip(&strides) {
            let o = (o as u64).checked_mul(stride);
            start = o.and_then(|o| start.checked_add(o)).ok_or_else(overflow)?;
        }
        // Fold the fastest dimensions into the run while the box covers
        // them whole; the first one it does not cover ends the run.
        let mut run = self.element_bytes as u64;
        let mut outer = dims.len();
        while outer > 0 {
            let d = dims[outer - 1];
            run = run
                .checked_mul(self.extent[d] as u64)
                .ok_or_else(overflow)?;
            outer -= 1;
            if self.extent[d] != self.shape[d] {
                break;
            }
        }
        let levels = dims[..outer]
            .iter()
            .map(|&d| (self.extent[d] as u64, strides[d]))
            .collect();
        Ok(BoxRuns {
            start,
            run_bytes: run,
            levels,
        })
    }
}

/// A file opened over a communicator, closed on drop (collectively: drop
/// it on every rank, or call [`close`](Self::close) on every rank).
pub struct MpiFile {
    raw: ffi::MPI_File,
}

/// A committed datatype, freed on drop.
struct Type(ffi::MPI_Datatype);

impl Type {
    fn commit(mut raw: ffi::MPI_Datatype, call: &'static str) -> Result<Type, MpiError> {
        // SAFETY: `raw` was just created by the caller's MPI call.
        check(unsafe { ffi::MPI_Type_commit(&mut raw) }, call)?;
        Ok(Type(raw))
    }
}

impl Drop for Type {
    fn drop(&mut self) {
        // SAFETY: a datatype this rank created and committed; freeing it
        // does not affect operations that already used it.
        unsafe {
            ffi::MPI_Type_free(&mut self.0);
        }
    }
}

fn byte_type() -> ffi::MPI_Datatype {
    u8::equivalent_datatype().as_raw()
}

fn offset(bytes: u64) -> Result<ffi::MPI_Offset, MpiError> {
    ffi::MPI_Offset::try_from(bytes).map_err(|_| MpiError::Limit {
        what: "a file offset in bytes",
        value: u128::from(bytes),
        limit: ffi::MPI_Offset::MAX as u128,
    })
}

fn int(n: u64, what: &'static str) -> Result<c_int, MpiError> {
    c_int::try_from(n).map_err(|_| MpiError::Limit {
        what,
        value: u128::from(n),
        limit: c_int::MAX as u128,
    })
}

fn aint(n: u64) -> Result<ffi::MPI_Aint, MpiError> {
    ffi::MPI_Aint::try_from(n).map_err(|_| MpiError::Limit {
        what: "a datatype stride in bytes",
        value: u128::from(n),
        limit: ffi::MPI_Aint::MAX as u128,
    })
}

fn path_text(path: &Path) -> Result<CString, MpiError> {
    let text = path.to_str().ok_or_else(|| MpiError::InvalidArgument {
        what: "file path",
        value: path.display().to_string(),
        expected: "a path in UTF-8".to_string(),
    })?;
    CString::new(text).map_err(|_| MpiError::InvalidArgument {
        what: "file path",
        value: text.to_string(),
        expected: "a path without NUL bytes".to_string(),
    })
}

/// `Err` unless the call (`code`) succeeded and moved all of `count`
/// bytes: a write cut short by a file size limit, or a read past the end
/// of the file, can return success with fewer bytes (Open MPI's OMPIO
/// does), and a short write would leave a file with a hole.
fn complete(
    code: c_int,
    st: &ffi::MPI_Status,
    count: c_int,
    call: &'static str,
) -> Result<(), MpiError> {
    check(code, call)?;
    let mut moved: c_int = 0;
    // SAFETY: a status MPI filled in, and an int to receive the count.
    let code = unsafe { ffi::MPI_Get_count(st, byte_type(), &mut moved) };
    check(code, "MPI_Get_count")?;
    if moved == count {
        return Ok(());
    }
    Err(MpiError::Mpi {
        call,
        code: 0,
        message: format!(
            "moved {moved} of {count} bytes (a file size limit, a full disk, or a file \
             shorter than expected)"
        ),
    })
}

fn status() -> ffi::MPI_Status {
    // SAFETY: MPI_Status is a plain C struct; all zeros is a valid value
    // for MPI to overwrite.
    unsafe { std::mem::zeroed() }
}

impl MpiFile {
    /// Opens `path` over `comm`. Collective over `comm`: every rank passes
    /// the same path and access.
    ///
    /// # Errors
    ///
    /// [`MpiError::InvalidArgument`] for a path that is not UTF-8 or
    /// holds a NUL byte (before any MPI call); [`MpiError::Mpi`] when
    /// MPI cannot open the file (missing, no permission, ...) on this
    /// rank.
    pub fn open(
        comm: &SimpleCommunicator,
        path: &Path,
        access: Access,
    ) -> Result<MpiFile, MpiError> {
        let name = path_text(path)?;
        // SAFETY: reads a constant of the MPI library.
        let mut raw = unsafe { ffi::RSMPI_FILE_NULL };
        // SAFETY: `name` is a NUL-terminated string that outlives the
        // call; `raw` receives the handle.
        let code = unsafe {
            ffi::MPI_File_open(
                comm.as_raw(),
                name.as_ptr(),
                access.mode(),
                ffi::RSMPI_INFO_NULL,
                &mut raw,
            )
        };
        check(code, "MPI_File_open")?;
        let file = MpiFile { raw };
        // SAFETY: a file this rank has open; errors are returned, as the
        // standard's default for files is, whatever the program set.
        let code = unsafe { ffi::MPI_File_set_errhandler(file.raw, ffi::RSMPI_ERRORS_RETURN) };
        check(code, "MPI_File_set_errhandler")?;
        Ok(file)
    }

    /// The file's size in bytes. Not collective.
    ///
    /// # Errors
    ///
    /// [`MpiError::Mpi`] when MPI cannot tell.
    pub fn size(&self) -> Result<u64, MpiError> {
        let mut size: ffi::MPI_Offset = 0;
        // SAFETY: an open file; `size` receives the value.
        let code = unsafe { ffi::MPI_File_get_size(self.raw, &mut size) };
        check(code, "MPI_File_get_size")?;
        Ok(u64::try_from(size).unwrap_or(0))
    }

    /// Sets the file's size to `bytes`, cutting or extending it.
    /// Collective: every rank passes the same size.
    ///
    /// # Errors
    ///
    /// [`MpiError::Mpi`] when the file system refuses;
    /// [`MpiError::Limit`] for a size beyond `MPI_Offset`.
    pub fn set_size(&mut self, bytes: u64) -> Result<(), MpiError> {
        let size = offset(bytes)?;
        // SAFETY: an open file.
        let code = unsafe { ffi::MPI_File_set_size(self.raw, size) };
        check(code, "MPI_File_set_size")
    }

    /// Writes `data` at byte `at`, this rank alone (not collective).
    ///
    /// # Errors
    ///
    /// [`MpiError::Mpi`] when the write fails (a full disk, ...);
    /// [`MpiError::Limit`] for more than `i32::MAX` bytes.
    pub fn write_at(&mut self, at: u64, data: &[u8]) -> Result<(), MpiError> {
        let (at, count) = (offset(at)?, int(data.len() as u64, "bytes in one write")?);
        let mut st = status();
        // SAFETY: `data` holds `count` bytes and outlives the blocking call.
        let code = unsafe {
            ffi::MPI_File_write_at(self.raw, at, addr(data).cast(), count, byte_type(), &mut st)
        };
        complete(code, &st, count, "MPI_File_write_at")
    }

    /// Writes `data` at byte `at`. Collective: every rank calls, each with
    /// its own range (empty where it writes nothing).
    ///
    /// # Errors
    ///
    /// As [`write_at`](Self::write_at).
    pub fn write_at_all(&mut self, at: u64, data: &[u8]) -> Result<(), MpiError> {
        let (at, count) = (offset(at)?, int(data.len() as u64, "bytes in one write")?);
        let mut st = status();
        // SAFETY: `data` holds `count` bytes and outlives the blocking call.
        let code = unsafe {
            ffi::MPI_File_write_at_all(self.raw, at, addr(data).cast(), count, byte_type(), &mut st)
        };
        complete(code, &st, count, "MPI_File_write_at_all")
    }

    /// Reads `data.len()` bytes from byte `at`. Collective, as
    /// [`write_at_all`](Self::write_at_all). Bytes past the end of the file
    /// are not read: callers check the size first.
    ///
    /// # Errors
    ///
    /// [`MpiError::Mpi`] when the read fails; [`MpiError::Limit`] for
    /// more than `i32::MAX` bytes.
    pub fn read_at_all(&mut self, at: u64, data: &mut [u8]) -> Result<(), MpiError> {
        let (at, count) = (offset(at)?, int(data.len() as u64, "bytes in one read")?);
        let mut st = status();
        // SAFETY: `data` holds `count` writable bytes and outlives the
        // blocking call.
        let code = unsafe {
            ffi::MPI_File_read_at_all(
                self.raw,
                at,
                addr_mut(data).cast(),
                count,
                byte_type(),
                &mut st,
            )
        };
        complete(code, &st, count, "MPI_File_read_at_all")
    }

    /// Writes a box of an array that is one contiguous range of the file
    /// (`data`: its bytes) with one `MPI_File_write_at`, this rank alone
    /// (not collective: ranks without a box call nothing).
    ///
    /// # Errors
    ///
    /// [`MpiError::InvalidArgument`] when `data` is not the box's size,
    /// the box lies outside the array or is not contiguous in the file; as
    /// [`write_at`](Self::write_at) otherwise.
    pub fn write_box(&mut self, region: &FileBox, data: &[u8]) -> Result<(), MpiError> {
        let at = contiguous_start(region, data.len())?;
        self.write_at(at, data)
    }

    /// Reads a box that is one contiguous range of the file into `data`
    /// with one `MPI_File_read_at`, this rank alone.
    ///
    /// # Errors
    ///
    /// As [`write_box`](Self::write_box), with MPI's read errors.
    pub fn read_box(&mut self, region: &FileBox, data: &mut [u8]) -> Result<(), MpiError> {
        let at = contiguous_start(region, data.len())?;
        let (at, count) = (offset(at)?, int(data.len() as u64, "bytes in one read")?);
        let mut st = status();
        // SAFETY: `data` holds `count` writable bytes and outlives the
        // blocking call.
        let code = unsafe {
            ffi::MPI_File_read_at(
                self.raw,
                at,
                addr_mut(data).cast(),
                count,
                byte_type(),
                &mut st,
            )
        };
        complete(code, &st, count, "MPI_File_read_at")
    }

    /// Writes a box of an array (`data`: its bytes, contiguous in the
    /// array's order) through a file view of its runs and one
    /// `MPI_File_write_all` (ROMIO gathers the runs of every rank). `None`
    /// writes nothing. Collective: every rank calls.
    ///
    /// # Errors
    ///
    /// [`MpiError::InvalidArgument`] when `data` is not the box's size
    /// or the box lies outside the array; as
    /// [`write_at_all`](Self::write_at_all) otherwise.
    pub fn write_box_all(&mut self, region: Option<&FileBox>, data: &[u8]) -> Result<(), MpiError> {
        let runs = box_runs(region, data.len())?;
        self.with_view(runs.as_ref(), |raw, count| {
            let mut st = status();
            // SAFETY: `data` holds `count` bytes (checked against the box)
            // and outlives the blocking call.
            let code = unsafe {
                ffi::MPI_File_write_all(raw, addr(data).cast(), count, byte_type(), &mut st)
            };
            complete(code, &st, count, "MPI_File_write_all")
        })
    }

    /// Reads a box of an array into `data`, as
    /// [`write_box_all`](Self::write_box_all) writes one. Collective.
    ///
    /// # Errors
    ///
    /// As [`write_box_all`](Self::write_box_all).
    pub fn read_box_all(
        &mut self,
        region: Option<&FileBox>,
        data: &mut [u8],
    ) -> Result<(), MpiError> {
        let runs = box_runs(region, data.len())?;
        self.with_view(runs.as_ref(), |raw, count| {
            let mut st = status();
            // SAFETY: `data` holds `count` writable bytes (checked against
            // the box) and outlives the blocking call.
            let code = unsafe {
                ffi::MPI_File_read_all(raw, addr_mut(data).cast(), count, byte_type(), &mut st)
            };
            complete(code, &st, count, "MPI_File_read_all")
        })
    }

    /// Sets a view of `runs` (or of nothing), runs `f` with the handle and
    /// the byte count, then sets the plain byte view back, also when `f`
    /// failed. Collective.
    fn with_view(
        &mut self,
        runs: Option<&BoxRuns>,
        f: impl FnOnce(ffi::MPI_File, c_int) -> Result<(), MpiError>,
    ) -> Result<(), MpiError> {
        let (disp, filetype, count) = match runs {
            Some(r) => {
                let ty = runs_type(r)?;
                let total = (r.levels.iter()).fold(r.run_bytes, |acc, &(c, _)| acc * c);
                (offset(r.start)?, Some(ty), int(total, "bytes of a box")?)
            }
            None => (0, None, 0),
        };
        let ft = filetype.as_ref().map_or_else(byte_type, |t| t.0);
        self.set_view(disp, ft)?;
        let done = f(self.raw, count);
        let reset = self.set_view(0, byte_type());
        done.and(reset)
    }

    fn set_view(
        &mut self,
        disp: ffi::MPI_Offset,
        filetype: ffi::MPI_Datatype,
    ) -> Result<(), MpiError> {
        // SAFETY: an open file, committed datatypes, a NUL-terminated
        // representation name.
        let code = unsafe {
            ffi::MPI_File_set_view(
                self.raw,
                disp,
                byte_type(),
                filetype,
                c"native".as_ptr(),
                ffi::RSMPI_INFO_NULL,
            )
        };
        check(code, "MPI_File_set_view")
    }

    /// Writes this rank's local part of the array `darray` describes,
    /// described to MPI-IO by `MPI_Type_create_darray` and one
    /// `MPI_File_write_all` (ROMIO's two-phase I/O does the exchange): the
    /// way a C programmer writes a block-cyclic array. `data` is the local
    /// part's bytes in the array's storage order, which is also the
    /// file's. Collective. A yardstick, not a path of the library.
    ///
    /// # Errors
    ///
    /// [`MpiError::InvalidArgument`] when `darray`'s lists differ in
    /// length; [`MpiError::Limit`] for extents above `i32::MAX`;
    /// [`MpiError::Mpi`] when a call fails.
    pub fn write_darray_all(
        &mut self,
        data_offset: u64,
        darray: &Darray,
        data: &[u8],
    ) -> Result<(), MpiError> {
        let ty = darray.file_type()?;
        let count = int(data.len() as u64, "bytes of a local part")?;
        self.set_view(offset(data_offset)?, ty.0)?;
        let mut st = status();
        // SAFETY: `data` holds `count` bytes, this rank's part of the darray.
        let code = unsafe {
            ffi::MPI_File_write_all(self.raw, addr(data).cast(), count, byte_type(), &mut st)
        };
        let reset = self.set_view(0, byte_type());
        complete(code, &st, count, "MPI_File_write_all").and(reset)
    }

    /// Reads this rank's local part as [`write_darray_all`](Self::write_darray_all)
    /// writes it. Collective.
    ///
    /// # Errors
    ///
    /// As [`write_darray_all`](Self::write_darray_all).
    pub fn read_darray_all(
        &mut self,
        data_offset: u64,
        darray: &Darray,
        data: &mut [u8],
    ) -> Result<(), MpiError> {
        let ty = darray.file_type()?;
        let count = int(data.len() as u64, "bytes of a local part")?;
        self.set_view(offset(data_offset)?, ty.0)?;
        let mut st = status();
        // SAFETY: `data` holds `count` writable bytes, this rank's part.
        let code = unsafe {
            ffi::MPI_File_read_all(self.raw, addr_mut(data).cast(), count, byte_type(), &mut st)
        };
        let reset = self.set_view(0, byte_type());
        complete(code, &st, count, "MPI_File_read_all").and(reset)
    }

    /// Flushes what this file wrote to storage (`MPI_File_sync`).
    /// Collective.
    ///
    /// # Errors
    ///
    /// [`MpiError::Mpi`] when the file system reports a failure.
    pub fn sync(&mut self) -> Result<(), MpiError> {
        // SAFETY: an open file.
        check(unsafe { ffi::MPI_File_sync(self.raw) }, "MPI_File_sync")
    }

    /// Closes the file. Collective.
    ///
    /// # Errors
    ///
    /// [`MpiError::Mpi`] when closing fails (a write the file system
    /// deferred may fail here).
    pub fn close(mut self) -> Result<(), MpiError> {
        let code = self.close_raw();
        std::mem::forget(self);
        check(code, "MPI_File_close")
    }

    fn close_raw(&mut self) -> c_int {
        // SAFETY: an open file; MPI sets the handle to MPI_FILE_NULL.
        unsafe { ffi::MPI_File_close(&mut self.raw) }
    }
}

impl Drop for MpiFile {
    fn drop(&mut self) {
        let _ = self.close_raw();
    }
}

/// The runs of `region` after checking that `len` bytes are its size.
fn box_runs(region: Option<&FileBox>, len: usize) -> Result<Option<BoxRuns>, MpiError> {
    let Some(region) = region else {
        return if len == 0 {
            Ok(None)
        } else {
            Err(MpiError::InvalidArgument {
                what: "file box",
                value: format!("no box and {len} bytes"),
                expected: "no bytes where no box is written".to_string(),
            })
        };
    };
    if region.bytes() != Some(len as u64) {
        return Err(MpiError::InvalidArgument {
            what: "file box",
            value: format!("{len} bytes for a box of {:?}", region.extent),
            expected: format!("the box's {:?} bytes", region.bytes()),
        });
    }
    region.runs().map(Some)
}

/// The first byte of `region`, a box of `len` bytes that is one range of
/// the file.
fn contiguous_start(region: &FileBox, len: usize) -> Result<u64, MpiError> {
    let runs = box_runs(Some(region), len)?.ok_or_else(|| MpiError::Internal("a box".into()))?;
    if runs.levels.iter().any(|&(count, _)| count > 1) {
        return Err(MpiError::InvalidArgument {
            what: "file box",
            value: format!("origin {:?}, extent {:?}", region.origin, region.extent),
            expected: "a box that is one contiguous range of the file".to_string(),
        });
    }
    Ok(runs.start)
}

/// The file type of a box's runs: a run of bytes, then one hvector per
/// outer level, from the fastest up.
fn runs_type(runs: &BoxRuns) -> Result<Type, MpiError> {
    let len = int(runs.run_bytes, "bytes of a contiguous run")?;
    let mut raw = byte_type();
    // SAFETY: MPI_BYTE is predefined; `raw` receives the new type.
    let code = unsafe { ffi::MPI_Type_contiguous(len, byte_type(), &mut raw) };
    check(code, "MPI_Type_contiguous")?;
    let mut inner = Type::commit(raw, "MPI_Type_commit")?;
    for &(count, stride) in runs.levels.iter().rev() {
        let (count, stride) = (int(count, "a box extent")?, aint(stride)?);
        let mut raw = byte_type();
        // SAFETY: `inner` is committed and outlives the call (a type built
        // from it may outlive it: MPI keeps what it needs).
        let code = unsafe { ffi::MPI_Type_create_hvector(count, 1, stride, inner.0, &mut raw) };
        check(code, "MPI_Type_create_hvector")?;
        inner = Type::commit(raw, "MPI_Type_commit")?;
    }
    Ok(inner)
}

/// How one dimension of a [`Darray`] is distributed over its grid
/// extent, with first blocks on grid coordinate 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DarrayDist {
    /// One block per process (`MPI_DISTRIBUTE_BLOCK`, default size).
    Block,
    /// Blocks of `block` indices dealt round (`MPI_DISTRIBUTE_CYCLIC`).
    Cyclic {
        /// The block size.
        block: usize,
    },
    /// Not distributed (`MPI_DISTRIBUTE_NONE`).
    Collapsed,
}

/// A distributed array as `MPI_Type_create_darray` describes one: the
/// part of rank `rank` of `ranks`, numbered row-major over a grid of
/// `grid` extents, of a `shape` array of `element_bytes`-byte elements
/// stored in `order`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Darray {
    /// The array's extents.
    pub shape: Vec<usize>,
    /// Per dimension, its distribution.
    pub dists: Vec<DarrayDist>,
    /// The grid's extents.
    pub grid: Vec<usize>,
    /// The number of ranks (the grid's product).
    pub ranks: usize,
    /// The rank whose part this is.
    pub rank: usize,
    /// Bytes per element.
    pub element_bytes: usize,
    /// The storage order of the array (and of the file).
    pub order: Order,
}

impl Darray {
    /// The committed `MPI_Type_create_darray` of this part.
    fn file_type(&self) -> Result<Type, MpiError> {
        let k = self.shape.len();
        if self.dists.len() != k || self.grid.len() != k {
            return Err(MpiError::InvalidArgument {
                what: "darray",
                value: format!("{self:?}"),
                expected: "one distribution and one grid extent per dimension".to_string(),
            });
        }
        let mut gsizes = Vec::with_capacity(k);
        let mut distribs = Vec::with_capacity(k);
        let mut dargs = Vec::with_capacity(k);
        let mut psizes = Vec::with_capacity(k);
        for d in 0..k {
            gsizes.push(int(self.shape[d] as u64, "an array extent")?);
            psizes.push(int(self.grid[d] as u64, "a grid extent")?);
            let (how, arg) = match self.dists[d] {
                DarrayDist::Block => (ffi::MPI_DISTRIBUTE_BLOCK, ffi::MPI_DISTRIBUTE_DFLT_DARG),
                DarrayDist::Cyclic { block } => (
                    ffi::MPI_DISTRIBUTE_CYCLIC,
                    int(block as u64, "a block size")?,
                ),
                DarrayDist::Collapsed => (ffi::MPI_DISTRIBUTE_NONE, ffi::MPI_DISTRIBUTE_DFLT_DARG),
            };
            distribs.push(c_int::try_from(how).unwrap_or(0));
            dargs.push(arg);
        }
        let order = match self.order {
            Order::RowMajor => ffi::MPI_ORDER_C,
            Order::ColumnMajor => ffi::MPI_ORDER_FORTRAN,
        };
        let element = Datatype::element(self.element_bytes)?;
        let (size, rank) = (
            int(self.ranks as u64, "a rank count")?,
            int(self.rank as u64, "a rank")?,
        );
        let ndims = int(k as u64, "a dimension count")?;
        let mut raw = byte_type();
        // SAFETY: every list holds `k` entries and outlives the call; the
        // element datatype is committed.
        let code = unsafe {
            ffi::MPI_Type_create_darray(
                size,
                rank,
                ndims,
                gsizes.as_ptr(),
                distribs.as_ptr(),
                dargs.as_ptr(),
                psizes.as_ptr(),
                c_int::try_from(order).unwrap_or(0),
                element.raw(),
                &mut raw,
            )
        };
        check(code, "MPI_Type_create_darray")?;
        Type::commit(raw, "MPI_Type_commit")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(shape: &[usize], order: Order, origin: &[usize], extent: &[usize]) -> FileBox {
        FileBox {
            data_offset: 64,
            shape: shape.to_vec(),
            order,
            origin: origin.to_vec(),
            extent: extent.to_vec(),
            element_bytes: 4,
        }
    }

    /// Every byte offset of a box, element by element: the oracle.
    fn offsets(b: &FileBox) -> Vec<u64> {
        let k = b.shape.len();
        let mut out = Vec::new();
        let total: usize = b.extent.iter().product();
        for i in 0..total {
            // The i-th element of the box in the file's order.
            let mut idx = vec![0; k];
            let mut rest = i;
            let dims: Vec<usize> = match b.order {
                Order::RowMajor => (0..k).rev().collect(),
                Order::ColumnMajor => (0..k).collect(),
            };
            for &d in &dims {
                idx[d] = b.origin[d] + rest % b.extent[d];
                rest /= b.extent[d];
            }
            let mut lin = 0u64;
            for &d in dims.iter().rev() {
                lin = lin * b.shape[d] as u64 + idx[d] as u64;
            }
            for byte in 0..b.element_bytes as u64 {
                out.push(b.data_offset + lin * b.element_bytes as u64 + byte);
            }
        }
        out
    }

    fn expand(r: &BoxRuns) -> Vec<u64> {
        let mut starts = vec![r.start];
        for &(count, stride) in &r.levels {
            starts = starts
                .iter()
                .flat_map(|&s| (0..count).map(move |c| s + c * stride))
                .collect();
        }
        starts.iter().flat_map(|&s| s..s + r.run_bytes).collect()
    }

    #[test]
    fn box_runs_are_the_boxes_bytes() {
        let cases = [
            (vec![4, 6], vec![1, 2], vec![2, 3]),
            (vec![4, 6], vec![1, 0], vec![2, 6]),
            (vec![4, 6], vec![0, 0], vec![4, 6]),
            (vec![3, 4, 5], vec![1, 0, 2], vec![1, 4, 3]),
            (vec![3, 4, 5], vec![0, 1, 0], vec![3, 2, 5]),
            (vec![3, 4, 5], vec![2, 3, 4], vec![1, 1, 1]),
            (vec![7], vec![2], vec![5]),
        ];
        for (shape, origin, extent) in cases {
            for order in [Order::RowMajor, Order::ColumnMajor] {
                let b = region(&shape, order, &origin, &extent);
                let runs = b.runs().unwrap();
                assert_eq!(expand(&runs), offsets(&b), "{b:?}");
                let single = offsets(&b).windows(2).all(|w| w[1] == w[0] + 1);
                assert_eq!(b.is_contiguous(), single, "{b:?}");
            }
        }
    }

    #[test]
    fn boxes_outside_the_array_are_refused() {
        assert!(region(&[4, 6], Order::RowMajor, &[3, 0], &[2, 6])
            .runs()
            .is_err());
        assert!(region(&[4, 6], Order::RowMajor, &[0], &[2]).runs().is_err());
        assert!(region(&[4, 6], Order::RowMajor, &[usize::MAX, 0], &[2, 6])
            .runs()
            .is_err());
        assert!(box_runs(None, 3).is_err());
        assert!(box_runs(
            Some(&region(&[4, 6], Order::RowMajor, &[0, 0], &[1, 6])),
            23
        )
        .is_err());
    }
}
