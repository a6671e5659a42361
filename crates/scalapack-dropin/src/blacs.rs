//! The BLACS routines this library calls, found in the process at run time
//! (ScaLAPACK carries them): the library itself links no ScaLAPACK, so the
//! same build serves programs linked against any ScaLAPACK built on the
//! same MPI, and a program without ScaLAPACK gets an error, not a failed
//! load.

use crate::error::DropinError;
use crate::trace::trace;
use mpi_extras::communicator::RawComm as MPI_Comm;
use std::ffi::{c_void, CStr};
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;

/// `Cblacs_get`'s `what` asking for the system handle of the
/// communicator of a context's processes (BLACS's `SGET_BLACSCONTXT`).
const SGET_BLACSCONTXT: c_int = 10;

type GridInfo = unsafe extern "C" fn(c_int, *mut c_int, *mut c_int, *mut c_int, *mut c_int);
type Get = unsafe extern "C" fn(c_int, c_int, *mut c_int);
type ToComm = unsafe extern "C" fn(c_int) -> MPI_Comm;
type Xerbla = unsafe extern "C" fn(*const c_int, *const c_char, *const c_int, usize);

/// The BLACS routines, resolved once.
pub struct Blacs {
    gridinfo: GridInfo,
    get: Get,
    to_comm: ToComm,
    xerbla: Option<Xerbla>,
}

/// Where a process sits in a context's grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridInfoOf {
    /// Process rows and columns of the grid.
    pub shape: (c_int, c_int),
    /// This process's row and column, or `(-1, -1)` outside the grid.
    pub me: (c_int, c_int),
}

/// The address of `name` in the process (the first definition in load
/// order), or null.
fn lookup(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// The BLACS of the process.
///
/// # Errors
///
/// [`DropinError::NoBlacs`] when a routine is missing.
pub fn blacs() -> Result<&'static Blacs, DropinError> {
    static BLACS: OnceLock<Result<Blacs, &'static str>> = OnceLock::new();
    let found = BLACS.get_or_init(|| {
        let need = |name: &'static CStr| {
            let p = lookup(name);
            if p.is_null() {
                Err(name.to_str().unwrap_or("?"))
            } else {
                Ok(p)
            }
        };
        let gridinfo = need(c"Cblacs_gridinfo")?;
        let get = need(c"Cblacs_get")?;
        let to_comm = need(c"Cblacs2sys_handle")?;
        let xerbla = lookup(c"pxerbla_");
        // SAFETY: the symbols are the BLACS routines of these C
        // signatures (ScaLAPACK's, 32-bit integers).
        unsafe {
            Ok(Blacs {
                gridinfo: std::mem::transmute::<*mut c_void, GridInfo>(gridinfo),
                get: std::mem::transmute::<*mut c_void, Get>(get),
                to_comm: std::mem::transmute::<*mut c_void, ToComm>(to_comm),
                xerbla: (!xerbla.is_null())
                    .then(|| std::mem::transmute::<*mut c_void, Xerbla>(xerbla)),
            })
        }
    });
    found.as_ref().map_err(|&name| DropinError::NoBlacs(name))
}

impl Blacs {
    /// The grid of context `ictxt` and this process's place in it.
    pub fn gridinfo(&self, ictxt: c_int) -> GridInfoOf {
        let (mut p, mut q, mut i, mut j) = (0, 0, -1, -1);
        // SAFETY: four valid out-pointers; BLACS checks the handle.
        unsafe { (self.gridinfo)(ictxt, &mut p, &mut q, &mut i, &mut j) };
        let inside = i >= 0 && j >= 0 && i < p && j < q;
        GridInfoOf {
            shape: (p, q),
            me: if inside { (i, j) } else { (-1, -1) },
        }
    }

    /// The MPI communicator of the processes of context `ictxt` (BLACS's
    /// own: not to be freed).
    pub fn communicator(&self, ictxt: c_int) -> MPI_Comm {
        let mut handle = 0;
        // SAFETY: a valid out-pointer; `what` is BLACS's SGET_BLACSCONTXT.
        unsafe { (self.get)(ictxt, SGET_BLACSCONTXT, &mut handle) };
        // SAFETY: a system handle BLACS just gave.
        unsafe { (self.to_comm)(handle) }
    }

    /// Reports a bad argument as ScaLAPACK does: `pxerbla` with the
    /// routine's name and the argument's position (on stderr when the
    /// process has no `pxerbla`).
    pub fn report(&self, ictxt: c_int, routine: &str, position: i32, what: &str) {
        match self.xerbla {
            Some(xerbla) => {
                // Fortran strings: the length passed after the arguments.
                let name = routine.as_bytes();
                // SAFETY: valid pointers for the call; `name` is read for
                // its length only.
                unsafe { xerbla(&ictxt, name.as_ptr().cast(), &position, name.len()) };
            }
            None => {
                eprintln!("On entry to {routine} parameter number {position} had an illegal value")
            }
        }
        trace(&format!("{routine}: {what}"));
    }
}

/// The base address of the object (executable or shared library) that
/// holds address `p`, or null.
fn object_of(p: *const c_void) -> *mut c_void {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the address and fills `info`.
    let found = unsafe { libc::dladdr(p, &mut info) };
    if found == 0 {
        std::ptr::null_mut()
    } else {
        info.dli_fbase
    }
}

/// A definition of `name` in another object than this library: the next
/// one after it in the process's load order, else the first one. That is
/// ScaLAPACK's routine of that name, to hand a call over to. (Objects are
/// compared, not addresses: inside this library, the address of one of its
/// exported routines may be the interposing definition of an object loaded
/// earlier.)
pub fn other_definition(name: &CStr) -> Option<*mut c_void> {
    /// An address inside this library that nothing can interpose.
    fn here() {}
    let this = object_of(here as *const c_void);
    // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name.
    let next = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    [next, lookup(name)]
        .into_iter()
        .find(|p| !p.is_null() && object_of(p.cast_const()) != this)
}
