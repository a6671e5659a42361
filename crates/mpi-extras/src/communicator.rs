//! What rsmpi 0.8 cannot do with a communicator: set or read its error
//! handler, compare two raw handles, take one from Fortran (as mpi4py hands
//! it over), keep a Rust value in one of its attributes ([`Attribute`]),
//! and MPI's own choice of balanced grid extents ([`dims_create`]).

use mpi::ffi;
use mpi::raw::AsRaw;
use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};

/// A communicator's raw C handle (`MPI_Comm`), as other C libraries (BLACS,
/// mpi4py) hand it over.
pub type RawComm = ffi::MPI_Comm;

/// A communicator's Fortran handle (`MPI_Fint`, an `int` in MPICH and in
/// Open MPI, whose bindings do not name the type).
pub type FortranComm = c_int;

/// Makes every MPI error on `comm` abort the job with MPI's message
/// (`MPI_ERRORS_ARE_FATAL`): a duplicate inherits its parent's error
/// handler, and with `MPI_ERRORS_RETURN` a failed call would pass
/// unnoticed on one rank while the others wait.
pub fn set_errors_are_fatal<C: AsRaw<Raw = ffi::MPI_Comm>>(comm: &C) {
    // SAFETY: a live communicator; MPI_ERRORS_ARE_FATAL is a predefined
    // handler that needs no freeing. The call cannot fail on a valid
    // communicator, and would abort under the handler it installs.
    unsafe { ffi::MPI_Comm_set_errhandler(comm.as_raw(), ffi::RSMPI_ERRORS_ARE_FATAL) };
}

/// Makes MPI errors on `comm` come back as return codes
/// (`MPI_ERRORS_RETURN`), as a user may set on their own communicator.
pub fn set_errors_return<C: AsRaw<Raw = ffi::MPI_Comm>>(comm: &C) {
    // SAFETY: as for `set_errors_are_fatal`.
    unsafe { ffi::MPI_Comm_set_errhandler(comm.as_raw(), ffi::RSMPI_ERRORS_RETURN) };
}

/// Whether `comm`'s errors abort the job (`MPI_ERRORS_ARE_FATAL`), come back
/// (`MPI_ERRORS_RETURN`: `Some(false)`), or `None` for any other handler.
pub fn errors_are_fatal<C: AsRaw<Raw = ffi::MPI_Comm>>(comm: &C) -> Option<bool> {
    let mut h = std::mem::MaybeUninit::<ffi::MPI_Errhandler>::uninit();
    // SAFETY: a live communicator and a valid out-pointer, which MPI fills.
    let h = unsafe {
        ffi::MPI_Comm_get_errhandler(comm.as_raw(), h.as_mut_ptr());
        h.assume_init()
    };
    // SAFETY: reading MPI's constants.
    let (fatal, ret) = unsafe { (ffi::RSMPI_ERRORS_ARE_FATAL, ffi::RSMPI_ERRORS_RETURN) };
    if h == fatal {
        Some(true)
    } else if h == ret {
        Some(false)
    } else {
        None
    }
}

/// Whether two communicators hold the same processes in the same order
/// (`MPI_Comm_compare` says identical or congruent).
///
/// # Safety
///
/// Both must be live communicators.
pub unsafe fn congruent(a: RawComm, b: RawComm) -> bool {
    let mut result: c_int = 0;
    // SAFETY: the caller's contract, and a valid out-pointer.
    unsafe { ffi::MPI_Comm_compare(a, b, &mut result) };
    // SAFETY: reading MPI's constants.
    let (ident, congruent) = unsafe { (ffi::RSMPI_IDENT, ffi::RSMPI_CONGRUENT) };
    result == ident || result == congruent
}

/// The C handle of the communicator Fortran knows as `handle`, or `None`
/// for `MPI_COMM_NULL`.
///
/// # Safety
///
/// `handle` must be a Fortran handle MPI gave out (mpi4py's `py2f()`).
pub unsafe fn from_fortran(handle: FortranComm) -> Option<RawComm> {
    // SAFETY: the caller's contract.
    let raw = unsafe { ffi::RSMPI_Comm_f2c(handle) };
    // SAFETY: reading MPI's constant.
    (raw != unsafe { ffi::RSMPI_COMM_NULL }).then_some(raw)
}

/// The copy function of a key whose attribute is not copied to duplicates
/// (what `MPI_COMM_NULL_COPY_FN` does). MPICH takes a null pointer for it;
/// Open MPI refuses one (`MPI_ERR_ARG`), so the function is real.
pub(crate) unsafe extern "C" fn not_copied(
    _comm: ffi::MPI_Comm,
    _keyval: c_int,
    _extra: *mut c_void,
    _value_in: *mut c_void,
    _value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: MPI hands a valid pointer to the flag it reads back.
    unsafe { *flag = 0 };
    0
}

/// A key under which communicators keep a `T` of ours in an attribute,
/// dropped when MPI deletes the attribute (the communicator freed, or
/// `MPI_Finalize` for `MPI_COMM_WORLD`), and not copied to duplicates.
///
/// ```
/// use mpi::raw::AsRaw;
/// use mpi::topology::Communicator;
/// use mpi_extras::communicator::Attribute;
/// use std::sync::Arc;
///
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let dup = world.duplicate();
/// let key = Attribute::<Arc<String>>::new();
/// let value = Arc::new("kept".to_string());
/// // SAFETY: live communicators of this program.
/// unsafe {
///     assert_eq!(key.get(dup.as_raw()), None);
///     key.set(dup.as_raw(), Arc::clone(&value));
///     assert_eq!(key.get(dup.as_raw()).as_deref().map(String::as_str), Some("kept"));
///     // Not copied to duplicates.
///     assert_eq!(key.get(dup.duplicate().as_raw()), None);
/// }
/// assert_eq!(Arc::strong_count(&value), 2);
/// drop(dup); // MPI_Comm_free deletes the attribute
/// assert_eq!(Arc::strong_count(&value), 1);
/// ```
pub struct Attribute<T> {
    key: c_int,
    _value: PhantomData<fn(T)>,
}

impl<T: Clone + 'static> Attribute<T> {
    /// A new key (`MPI_Comm_create_keyval`); MPI must be running. Made
    /// once per process and kept (a `static` `OnceLock`): MPI frees keys
    /// only at `MPI_Finalize`.
    pub fn new() -> Attribute<T> {
        unsafe extern "C" fn delete<T>(
            _comm: ffi::MPI_Comm,
            _keyval: c_int,
            value: *mut c_void,
            _extra: *mut c_void,
        ) -> c_int {
            if !value.is_null() {
                // SAFETY: the value was made by Box::into_raw in `set`, and
                // MPI deletes each attribute once.
                drop(unsafe { Box::from_raw(value.cast::<T>()) });
            }
            0
        }
        let mut key: c_int = 0;
        // SAFETY: a copy function that copies nothing (the attribute is not
        // copied to duplicates), a delete function of MPI's signature, a
        // valid out-pointer.
        unsafe {
            let copy = Some(not_copied as _);
            ffi::MPI_Comm_create_keyval(copy, Some(delete::<T>), &mut key, std::ptr::null_mut())
        };
        Attribute {
            key,
            _value: PhantomData,
        }
    }

    /// A clone of the value `comm` keeps under this key, if it keeps one.
    ///
    /// # Safety
    ///
    /// `comm` must be a live communicator.
    pub unsafe fn get(&self, comm: RawComm) -> Option<T> {
        let mut value: *mut c_void = std::ptr::null_mut();
        let mut found: c_int = 0;
        // SAFETY: the caller's live communicator, our key, valid
        // out-pointers; MPI stores the attribute's value (a pointer) into
        // `value`.
        unsafe { ffi::MPI_Comm_get_attr(comm, self.key, (&raw mut value).cast(), &mut found) };
        // SAFETY: set by `set` from Box::into_raw, alive while the
        // attribute is.
        (found != 0 && !value.is_null()).then(|| unsafe { &*value.cast::<T>() }.clone())
    }

    /// Keeps `value` in `comm` under this key (dropping a value kept
    /// before, through the delete function).
    ///
    /// # Safety
    ///
    /// `comm` must be a live communicator.
    pub unsafe fn set(&self, comm: RawComm, value: T) {
        let boxed = Box::into_raw(Box::new(value));
        // SAFETY: the caller's live communicator, our key; the value is
        // freed by the key's delete function.
        unsafe { ffi::MPI_Comm_set_attr(comm, self.key, boxed.cast()) };
    }
}

impl<T: Clone + 'static> Default for Attribute<T> {
    fn default() -> Self {
        Attribute::new()
    }
}

/// MPI's balanced extents of a grid of `ranks` over `ndims` dimensions
/// (`MPI_Dims_create` with every extent free), the referee of
/// `procgrid::balanced_extents`.
///
/// ```
/// let _universe = mpi::initialize().unwrap();
/// assert_eq!(mpi_extras::communicator::dims_create(12, 2), Some(vec![4, 3]));
/// ```
pub fn dims_create(ranks: usize, ndims: usize) -> Option<Vec<i32>> {
    let (n, k) = (c_int::try_from(ranks).ok()?, c_int::try_from(ndims).ok()?);
    let mut dims = vec![0; ndims];
    // SAFETY: `dims` holds `ndims` ints, all 0 (free).
    let code = unsafe { ffi::MPI_Dims_create(n, k, dims.as_mut_ptr()) };
    (code == 0).then_some(dims)
}
