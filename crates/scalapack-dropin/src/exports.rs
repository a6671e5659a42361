//! The C and Fortran entry points: ScaLAPACK's names and signatures, and
//! the same under the prefix `ndcyclic_`. Each catches panics (a panic
//! must not unwind into C: the job is aborted with a message instead),
//! traces itself under `NDCYCLIC_SCALAPACK_TRACE`, and reports errors on
//! stderr; a case this library hands over goes to ScaLAPACK's routine of
//! the same name.

use crate::args::{MatrixArg, Positions};
use crate::blacs::other_definition;
use crate::error::DropinError;
use crate::routines::{gemr2d, update, Formula, Op, Operand, Outcome, SizeArg};
use crate::trace::trace;
use num_complex::Complex;
use std::ffi::{c_void, CStr};
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;

/// Runs `f` for entry point `name`: traced, panics turned into an abort,
/// errors (other than arguments, which `pxerbla` reported) printed.
fn guard(name: &str, f: impl FnOnce() -> Result<Outcome, DropinError>) -> Outcome {
    trace(name);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(DropinError::Argument { .. })) => Outcome::Done,
        Ok(Err(e)) => {
            eprintln!("ndcyclic_scalapack: {name}: {e}");
            Outcome::Done
        }
        Err(_) => {
            eprintln!("ndcyclic_scalapack: {name} panicked; aborting the job");
            mpi_extras::process::abort_world(1);
            Outcome::Done
        }
    }
}

/// Descriptor `desc` (9 integers) of a call.
///
/// # Safety
///
/// `desc` points to 9 readable integers.
unsafe fn descriptor(desc: *const c_int) -> [c_int; 9] {
    let mut d = [0; 9];
    // SAFETY: the caller's contract.
    d.copy_from_slice(unsafe { std::slice::from_raw_parts(desc, 9) });
    d
}

/// Descriptor `desc` of a PBLAS call (`p?tran*`, `p?geadd`), which may
/// also be PBLAS's 11-integer `BLOCK_CYCLIC_2D_INB` (DTYPE 2: DTYPE, CTXT,
/// M, N, IMB, INB, MB, NB, RSRC, CSRC, LLD). One whose first blocks are
/// whole blocks (IMB = MB, INB = NB) and whose source process is one
/// process (RSRC, CSRC ≥ 0) is the dense block-cyclic descriptor of the
/// same matrix, and is read as that; any other keeps DTYPE 2, which the
/// checks refuse (the call then goes to ScaLAPACK's routine).
///
/// # Safety
///
/// `desc` points to 9 readable integers, 11 when its first is 2.
unsafe fn pblas_descriptor(desc: *const c_int) -> [c_int; 9] {
    // SAFETY: the caller's contract.
    if unsafe { *desc } != 2 {
        // SAFETY: the caller's contract.
        return unsafe { descriptor(desc) };
    }
    let mut d = [0; 11];
    // SAFETY: the caller's contract: 11 integers for DTYPE 2.
    d.copy_from_slice(unsafe { std::slice::from_raw_parts(desc, 11) });
    let [_, ctxt, m, n, imb, inb, mb, nb, rsrc, csrc, lld] = d;
    let dtype = if imb == mb && inb == nb && rsrc >= 0 && csrc >= 0 {
        1
    } else {
        2
    };
    [dtype, ctxt, m, n, mb, nb, rsrc, csrc, lld]
}

/// The matrix operand at `ptr` with descriptor `desc` and origin `(i, j)`,
/// its arguments at positions `at` (`i`, `j`, descriptor).
///
/// # Safety
///
/// As [`descriptor`].
unsafe fn operand<T>(
    ptr: *mut T,
    i: c_int,
    j: c_int,
    desc: [c_int; 9],
    at: [i32; 3],
) -> Operand<T> {
    Operand {
        ptr,
        arg: MatrixArg { desc, i, j },
        at: Positions {
            i: at[0],
            j: at[1],
            desc: at[2],
        },
    }
}

/// A C `p?gemr2d`.
type CGemr2d<T> = unsafe extern "C" fn(
    c_int,
    c_int,
    *mut T,
    c_int,
    c_int,
    *const c_int,
    *mut T,
    c_int,
    c_int,
    *const c_int,
    c_int,
);

/// The names of a `p?gemr2d` entry point.
#[derive(Clone, Copy)]
struct Gemr2dNames {
    /// The routine, as ScaLAPACK reports it (`PDGEMR2D`).
    routine: &'static str,
    /// The entry point's own name, for traces and errors.
    entry: &'static str,
    /// ScaLAPACK's C routine to hand over to (`Cpdgemr2d`).
    scalapack: &'static CStr,
}

/// A matrix argument of a C call: the local part at `ptr`, the
/// sub-matrix's first row `i` and column `j` (1-based), the descriptor at
/// `desc`.
#[derive(Clone, Copy)]
struct CMatrix<T> {
    /// The caller's local part.
    ptr: *mut T,
    /// First row of the sub-matrix.
    i: c_int,
    /// First column of the sub-matrix.
    j: c_int,
    /// The descriptor (9 integers).
    desc: *const c_int,
}

/// `p?gemr2d` with C arguments, handing over to ScaLAPACK's routine
/// (`names.scalapack`) when ndcyclic does not take the case.
///
/// # Safety
///
/// ScaLAPACK's contract for `Cp?gemr2d`.
unsafe fn c_gemr2d<T: dist_array::Element>(
    names: Gemr2dNames,
    m: c_int,
    n: c_int,
    a: CMatrix<T>,
    b: CMatrix<T>,
    ictxt: c_int,
) {
    let Gemr2dNames {
        routine,
        entry,
        scalapack: name,
    } = names;
    let outcome = guard(entry, || {
        // SAFETY: the caller's contract: descriptors of 9 integers.
        let (a_op, b_op) = unsafe {
            (
                operand(a.ptr, a.i, a.j, descriptor(a.desc), [4, 5, 6]),
                operand(b.ptr, b.i, b.j, descriptor(b.desc), [8, 9, 10]),
            )
        };
        gemr2d(routine, m, n, a_op, b_op, ictxt)
    });
    if outcome == Outcome::HandOver {
        trace(&format!("{routine} handed over to ScaLAPACK"));
        match other_definition(name) {
            Some(theirs) => {
                // SAFETY: ScaLAPACK's routine of the same signature.
                let theirs: CGemr2d<T> =
                    unsafe { std::mem::transmute::<*mut c_void, CGemr2d<T>>(theirs) };
                // SAFETY: the caller's arguments, unchanged.
                unsafe {
                    theirs(
                        m, n, a.ptr, a.i, a.j, a.desc, b.ptr, b.i, b.j, b.desc, ictxt,
                    )
                };
            }
            None => eprintln!(
                "ndcyclic_scalapack: {routine}: grids on processes other than the context's first \
                 are handed to ScaLAPACK's {}, which is not in the process",
                name.to_str().unwrap_or("?")
            ),
        }
    }
}

/// The C and Fortran `p?gemr2d` entry points of one element type, each
/// calling [`c_gemr2d`] itself: an entry point of this library that called
/// another exported one could reach ScaLAPACK's instead, when ScaLAPACK is
/// loaded first and interposes the name.
macro_rules! gemr2d_entries {
    ($t:ty, $routine:literal, $c:ident, $f:ident, $pc:ident, $pf:ident) => {
        gemr2d_entries!(@c $t, $routine, $c, $c, concat!("ScaLAPACK's `C", $routine, "` (C arguments)."));
        gemr2d_entries!(@c $t, $routine, $pc, $c, concat!("`C", $routine, "` under ndcyclic's prefix."));
        gemr2d_entries!(@f $t, $routine, $f, $c, concat!("ScaLAPACK's `", $routine, "_` (Fortran arguments, by reference)."));
        gemr2d_entries!(@f $t, $routine, $pf, $c, concat!("`", $routine, "_` under ndcyclic's prefix."));
    };
    (@c $t:ty, $routine:literal, $entry:ident, $c:ident, $doc:expr) => {
        #[doc = $doc]
        ///
        /// # Safety
        ///
        /// ScaLAPACK's contract: descriptors of 9 integers, local parts as
        /// they describe, collective over the processes of `ictxt`.
        #[no_mangle]
        pub unsafe extern "C" fn $entry(
            m: c_int,
            n: c_int,
            a: *mut $t,
            ia: c_int,
            ja: c_int,
            desca: *const c_int,
            b: *mut $t,
            ib: c_int,
            jb: c_int,
            descb: *const c_int,
            ictxt: c_int,
        ) {
            let names = Gemr2dNames {
                routine: upper($routine),
                entry: stringify!($entry),
                scalapack: c_name(stringify!($c)),
            };
            let a = CMatrix { ptr: a, i: ia, j: ja, desc: desca };
            let b = CMatrix { ptr: b, i: ib, j: jb, desc: descb };
            // SAFETY: the caller's contract.
            unsafe { c_gemr2d::<$t>(names, m, n, a, b, ictxt) }
        }
    };
    (@f $t:ty, $routine:literal, $entry:ident, $c:ident, $doc:expr) => {
        #[doc = $doc]
        ///
        /// # Safety
        ///
        /// As the C entry point, every argument a valid pointer.
        #[no_mangle]
        pub unsafe extern "C" fn $entry(
            m: *const c_int,
            n: *const c_int,
            a: *mut $t,
            ia: *const c_int,
            ja: *const c_int,
            desca: *const c_int,
            b: *mut $t,
            ib: *const c_int,
            jb: *const c_int,
            descb: *const c_int,
            ictxt: *const c_int,
        ) {
            let names = Gemr2dNames {
                routine: upper($routine),
                entry: stringify!($entry),
                scalapack: c_name(stringify!($c)),
            };
            // SAFETY: the caller's contract: valid pointers.
            unsafe {
                let a = CMatrix { ptr: a, i: *ia, j: *ja, desc: desca };
                let b = CMatrix { ptr: b, i: *ib, j: *jb, desc: descb };
                c_gemr2d::<$t>(names, *m, *n, a, b, *ictxt)
            }
        }
    };
}

/// A routine's name as `CStr`, from a Rust identifier.
fn c_name(name: &'static str) -> &'static CStr {
    // Leaked once per name: a handful of short strings.
    static NAMES: std::sync::Mutex<Vec<&'static CStr>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = names.iter().find(|c| c.to_bytes() == name.as_bytes()) {
        return found;
    }
    let owned = std::ffi::CString::new(name).unwrap_or_default();
    let leaked: &'static CStr = Box::leak(owned.into_boxed_c_str());
    names.push(leaked);
    leaked
}

/// A routine's name in capitals, as ScaLAPACK reports it (`PDGEMR2D`).
fn upper(name: &'static str) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let up = name.to_ascii_uppercase();
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = names.iter().find(|n| **n == up) {
        return found;
    }
    let leaked: &'static str = Box::leak(up.into_boxed_str());
    names.push(leaked);
    leaked
}

gemr2d_entries!(
    f32,
    "psgemr2d",
    Cpsgemr2d,
    psgemr2d_,
    ndcyclic_Cpsgemr2d,
    ndcyclic_psgemr2d_
);
gemr2d_entries!(
    f64,
    "pdgemr2d",
    Cpdgemr2d,
    pdgemr2d_,
    ndcyclic_Cpdgemr2d,
    ndcyclic_pdgemr2d_
);
gemr2d_entries!(
    Complex<f32>,
    "pcgemr2d",
    Cpcgemr2d,
    pcgemr2d_,
    ndcyclic_Cpcgemr2d,
    ndcyclic_pcgemr2d_
);
gemr2d_entries!(
    Complex<f64>,
    "pzgemr2d",
    Cpzgemr2d,
    pzgemr2d_,
    ndcyclic_Cpzgemr2d,
    ndcyclic_pzgemr2d_
);
gemr2d_entries!(
    i32,
    "pigemr2d",
    Cpigemr2d,
    pigemr2d_,
    ndcyclic_Cpigemr2d,
    ndcyclic_pigemr2d_
);

/// `p?tran`-like and `p?geadd` calls with Fortran arguments; whether the
/// call goes to ScaLAPACK's routine instead (`Outcome::HandOver`): bad
/// arguments, a process outside the context, a descriptor this library
/// does not take — PBLAS reports and handles those its own way (through
/// `PB_Cabort`, with its own codes), so its routine gets them, where it is
/// in the process (`handover`).
///
/// # Safety
///
/// PBLAS's contract: valid pointers, descriptors of 9 integers (11 for
/// DTYPE 2).
unsafe fn f_update<T: redist::Scalar>(
    entry: UpdateEntry,
    m: *const c_int,
    n: *const c_int,
    alpha: *const T,
    a: FMatrix<T>,
    beta: *const T,
    c: FMatrix<T>,
) -> Outcome {
    let UpdateEntry {
        routine,
        entry: name,
        op,
        first,
        handover,
    } = entry;
    guard(name, || {
        // SAFETY: the caller's contract.
        unsafe {
            let p = |k: i32| first + k;
            let desca = pblas_descriptor(a.desc);
            let a_op = operand(a.ptr, *a.i, *a.j, desca, [p(4), p(5), p(6)]);
            let c_op = operand(
                c.ptr,
                *c.i,
                *c.j,
                pblas_descriptor(c.desc),
                [p(9), p(10), p(11)],
            );
            let size = |v: *const c_int, position| SizeArg {
                value: *v,
                position,
            };
            let formula = Formula {
                op,
                alpha: *alpha,
                beta: *beta,
            };
            update(
                routine,
                handover,
                size(m, p(1)),
                size(n, p(2)),
                formula,
                a_op,
                c_op,
            )
        }
    })
}

/// An update entry point (`p?tran*_`, `p?geadd_`) as [`f_update`] needs
/// it.
#[derive(Clone, Copy)]
struct UpdateEntry {
    /// The routine, as ScaLAPACK reports it (`PDTRAN`).
    routine: &'static str,
    /// The entry point's own name, for traces and errors.
    entry: &'static str,
    /// `op` of the update.
    op: Op,
    /// The position before `M` in the argument list: 0, or 1 where
    /// `TRANS` comes first.
    first: i32,
    /// Whether ScaLAPACK's routine is in the process to hand over to.
    handover: bool,
}

/// A matrix argument of a Fortran call, everything by reference: the
/// local part at `ptr`, the sub-matrix's first row `i` and column `j`
/// (1-based), the descriptor at `desc`.
#[derive(Clone, Copy)]
struct FMatrix<T> {
    /// The caller's local part (only read for `A`).
    ptr: *mut T,
    /// First row of the sub-matrix.
    i: *const c_int,
    /// First column of the sub-matrix.
    j: *const c_int,
    /// The descriptor (9 integers, or 11 for DTYPE 2).
    desc: *const c_int,
}

/// ScaLAPACK's routine `name` ([`other_definition`]), looked up once it
/// is found and kept in `found` (as an address: a pointer is not `Sync`);
/// while it is not found, looked up again on each call (a library loaded
/// later may bring it). Each entry point keeps its own.
fn found_once(found: &OnceLock<usize>, name: &CStr) -> Option<*mut c_void> {
    if let Some(&at) = found.get() {
        return Some(at as *mut c_void);
    }
    let at = other_definition(name)?;
    Some(*found.get_or_init(|| at as usize) as *mut c_void)
}

/// A Fortran `p?tran*`.
type FTran<T> = unsafe extern "C" fn(
    *const c_int,
    *const c_int,
    *const T,
    *const T,
    *const c_int,
    *const c_int,
    *const c_int,
    *const T,
    *mut T,
    *const c_int,
    *const c_int,
    *const c_int,
);

/// A Fortran `p?geadd` (PBLAS's, written in C: no hidden length of
/// `TRANS`).
type FGeadd<T> = unsafe extern "C" fn(
    *const c_char,
    *const c_int,
    *const c_int,
    *const T,
    *const T,
    *const c_int,
    *const c_int,
    *const c_int,
    *const T,
    *mut T,
    *const c_int,
    *const c_int,
    *const c_int,
);

/// A transpose's entry point and its prefixed twin, both calling
/// [`f_update`] themselves (see [`gemr2d_entries`] for why).
macro_rules! tran_entries {
    ($t:ty, $routine:literal, $op:expr, $f:ident, $pf:ident) => {
        tran_entries!(@one $t, $routine, $op, $f, concat!("PBLAS's `", $routine, "_`: `C := β·C + α·op(A)` with op the (conjugate) transpose."));
        tran_entries!(@one $t, $routine, $op, $pf, concat!("`", $routine, "_` under ndcyclic's prefix."));
    };
    (@one $t:ty, $routine:literal, $op:expr, $entry:ident, $doc:expr) => {
        #[doc = $doc]
        ///
        /// # Safety
        ///
        /// PBLAS's contract: valid pointers, descriptors of 9 integers,
        /// collective over the context's processes.
        #[no_mangle]
        pub unsafe extern "C" fn $entry(
            m: *const c_int,
            n: *const c_int,
            alpha: *const $t,
            a: *const $t,
            ia: *const c_int,
            ja: *const c_int,
            desca: *const c_int,
            beta: *const $t,
            c: *mut $t,
            ic: *const c_int,
            jc: *const c_int,
            descc: *const c_int,
        ) {
            static SCALAPACK: OnceLock<usize> = OnceLock::new();
            let scalapack = found_once(&SCALAPACK, c_name(concat!($routine, "_")));
            let entry = UpdateEntry {
                routine: upper($routine),
                entry: stringify!($entry),
                op: $op,
                first: 0,
                handover: scalapack.is_some(),
            };
            let fa = FMatrix { ptr: a.cast_mut(), i: ia, j: ja, desc: desca };
            let fc = FMatrix { ptr: c, i: ic, j: jc, desc: descc };
            // SAFETY: the caller's contract.
            let outcome = unsafe { f_update::<$t>(entry, m, n, alpha, fa, beta, fc) };
            if let (Outcome::HandOver, Some(f)) = (outcome, scalapack) {
                trace(concat!($routine, "_ handed over to ScaLAPACK"));
                // SAFETY: ScaLAPACK's routine of this signature, the
                // caller's arguments unchanged.
                unsafe {
                    let f = std::mem::transmute::<*mut c_void, FTran<$t>>(f);
                    f(m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc)
                }
            }
        }
    };
}

tran_entries!(f32, "pstran", Op::Transpose, pstran_, ndcyclic_pstran_);
tran_entries!(f64, "pdtran", Op::Transpose, pdtran_, ndcyclic_pdtran_);
tran_entries!(
    Complex<f32>,
    "pctranu",
    Op::Transpose,
    pctranu_,
    ndcyclic_pctranu_
);
tran_entries!(
    Complex<f64>,
    "pztranu",
    Op::Transpose,
    pztranu_,
    ndcyclic_pztranu_
);
tran_entries!(
    Complex<f32>,
    "pctranc",
    Op::ConjugateTranspose,
    pctranc_,
    ndcyclic_pctranc_
);
tran_entries!(
    Complex<f64>,
    "pztranc",
    Op::ConjugateTranspose,
    pztranc_,
    ndcyclic_pztranc_
);

/// `op` of `p?geadd`'s `TRANS`, or None when it is none of N, T, C.
///
/// # Safety
///
/// `trans` points to a readable character.
unsafe fn op_of(trans: *const c_char) -> Option<Op> {
    // SAFETY: the caller's contract.
    match unsafe { *trans } as u8 {
        b'N' | b'n' => Some(Op::Plain),
        b'T' | b't' => Some(Op::Transpose),
        b'C' | b'c' => Some(Op::ConjugateTranspose),
        _ => None,
    }
}

/// `p?geadd_` and its prefixed twin, both calling [`f_update`]
/// themselves (see [`gemr2d_entries`] for why).
macro_rules! geadd_entries {
    ($t:ty, $routine:literal, $f:ident, $pf:ident) => {
        geadd_entries!(@one $t, $routine, $f, concat!("PBLAS's `", $routine, "_`: `C := β·C + α·op(A)`, op per `TRANS` ('N', 'T', 'C')."));
        geadd_entries!(@one $t, $routine, $pf, concat!("`", $routine, "_` under ndcyclic's prefix."));
    };
    (@one $t:ty, $routine:literal, $entry:ident, $doc:expr) => {
        #[doc = $doc]
        ///
        /// # Safety
        ///
        /// PBLAS's contract: valid pointers, descriptors of 9 integers,
        /// collective over the context's processes.
        #[no_mangle]
        pub unsafe extern "C" fn $entry(
            trans: *const c_char,
            m: *const c_int,
            n: *const c_int,
            alpha: *const $t,
            a: *const $t,
            ia: *const c_int,
            ja: *const c_int,
            desca: *const c_int,
            beta: *const $t,
            c: *mut $t,
            ic: *const c_int,
            jc: *const c_int,
            descc: *const c_int,
        ) {
            static SCALAPACK: OnceLock<usize> = OnceLock::new();
            let scalapack = found_once(&SCALAPACK, c_name(concat!($routine, "_")));
            // SAFETY: the caller's contract.
            let outcome = match unsafe { op_of(trans) } {
                Some(op) => {
                    let entry = UpdateEntry {
                        routine: upper($routine),
                        entry: stringify!($entry),
                        op,
                        first: 1,
                        handover: scalapack.is_some(),
                    };
                    let fa = FMatrix { ptr: a.cast_mut(), i: ia, j: ja, desc: desca };
                    let fc = FMatrix { ptr: c, i: ic, j: jc, desc: descc };
                    // SAFETY: the caller's contract.
                    unsafe { f_update::<$t>(entry, m, n, alpha, fa, beta, fc) }
                }
                None if scalapack.is_some() => Outcome::HandOver,
                None => {
                    bad_trans(upper($routine), descc);
                    Outcome::Done
                }
            };
            if let (Outcome::HandOver, Some(f)) = (outcome, scalapack) {
                trace(concat!($routine, "_ handed over to ScaLAPACK"));
                // SAFETY: ScaLAPACK's routine of this signature, the
                // caller's arguments unchanged.
                unsafe {
                    let f = std::mem::transmute::<*mut c_void, FGeadd<$t>>(f);
                    f(trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc)
                }
            }
        }
    };
}

/// Reports a `TRANS` that is none of N, T, C (argument 1) through
/// `pxerbla`, where ScaLAPACK's routine is not in the process.
fn bad_trans(routine: &'static str, descc: *const c_int) {
    if let Ok(blacs) = crate::blacs::blacs() {
        // SAFETY: the caller's descriptor of 9 integers.
        let ictxt = unsafe { *descc.add(1) };
        blacs.report(ictxt, routine, 1, "TRANS must be 'N', 'T' or 'C'");
    }
}

geadd_entries!(f32, "psgeadd", psgeadd_, ndcyclic_psgeadd_);
geadd_entries!(f64, "pdgeadd", pdgeadd_, ndcyclic_pdgeadd_);
geadd_entries!(Complex<f32>, "pcgeadd", pcgeadd_, ndcyclic_pcgeadd_);
geadd_entries!(Complex<f64>, "pzgeadd", pzgeadd_, ndcyclic_pzgeadd_);

/// Releases every cached plan and grid of context `ictxt` (all with -1).
#[no_mangle]
pub extern "C" fn ndcyclic_release_plans(ictxt: c_int) {
    crate::cache::release(ictxt);
    crate::context::release(ictxt);
}

/// A BLACS routine taking one integer (`Cblacs_gridexit`, `Cblacs_exit`).
type CIntFn = unsafe extern "C" fn(c_int);
/// A Fortran BLACS routine taking one integer by reference.
type FIntFn = unsafe extern "C" fn(*const c_int);

/// Releases what this library keeps of `ictxt` (all with -1), then calls
/// the BLACS's routine `name` through `call`.
fn release_then(name: &'static CStr, ictxt: c_int, call: impl FnOnce(*mut c_void)) {
    ndcyclic_release_plans(ictxt);
    match other_definition(name) {
        Some(theirs) => call(theirs),
        None => eprintln!(
            "ndcyclic_scalapack: {} not found in the process",
            name.to_str().unwrap_or("?")
        ),
    }
}

/// BLACS's `Cblacs_gridexit`, releasing the context's plans first.
#[no_mangle]
pub extern "C" fn Cblacs_gridexit(ictxt: c_int) {
    release_then(c"Cblacs_gridexit", ictxt, |theirs| {
        // SAFETY: the BLACS routine of that name and signature.
        unsafe { std::mem::transmute::<*mut c_void, CIntFn>(theirs)(ictxt) }
    });
}

/// BLACS's `Cblacs_exit`, releasing every plan first.
#[no_mangle]
pub extern "C" fn Cblacs_exit(cont: c_int) {
    release_then(c"Cblacs_exit", -1, |theirs| {
        // SAFETY: the BLACS routine of that name and signature.
        unsafe { std::mem::transmute::<*mut c_void, CIntFn>(theirs)(cont) }
    });
}

/// BLACS's `blacs_gridexit_`, releasing the context's plans first.
///
/// # Safety
///
/// `ictxt` points to a readable integer.
#[no_mangle]
pub unsafe extern "C" fn blacs_gridexit_(ictxt: *const c_int) {
    // SAFETY: the caller's contract.
    let context = unsafe { *ictxt };
    release_then(c"blacs_gridexit_", context, |theirs| {
        // SAFETY: the BLACS routine of that name and signature.
        unsafe { std::mem::transmute::<*mut c_void, FIntFn>(theirs)(ictxt) }
    });
}

/// BLACS's `blacs_exit_`, releasing every plan first.
///
/// # Safety
///
/// `cont` points to a readable integer.
#[no_mangle]
pub unsafe extern "C" fn blacs_exit_(cont: *const c_int) {
    release_then(c"blacs_exit_", -1, |theirs| {
        // SAFETY: the BLACS routine of that name and signature.
        unsafe { std::mem::transmute::<*mut c_void, FIntFn>(theirs)(cont) }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PBLAS's 11-integer descriptors are read as the dense block-cyclic
    /// descriptor of the same matrix where their first blocks are whole
    /// and their source processes single; else they keep DTYPE 2.
    #[test]
    fn pblas_descriptors_of_both_types() {
        let dense: [c_int; 9] = [1, 7, 31, 29, 4, 5, 1, 0, 40];
        // SAFETY: 9 readable integers.
        assert_eq!(unsafe { pblas_descriptor(dense.as_ptr()) }, dense);
        let whole: [c_int; 11] = [2, 7, 31, 29, 4, 5, 4, 5, 1, 0, 40];
        // SAFETY: 11 readable integers, DTYPE 2.
        assert_eq!(unsafe { pblas_descriptor(whole.as_ptr()) }, dense);
        for other in [
            [2, 7, 31, 29, 3, 5, 4, 5, 1, 0, 40],  // IMB ≠ MB
            [2, 7, 31, 29, 4, 2, 4, 5, 1, 0, 40],  // INB ≠ NB
            [2, 7, 31, 29, 4, 5, 4, 5, -1, 0, 40], // replicated rows
            [2, 7, 31, 29, 4, 5, 4, 5, 1, -1, 40], // replicated columns
        ] {
            // SAFETY: 11 readable integers, DTYPE 2.
            let read = unsafe { pblas_descriptor(other.as_ptr()) };
            assert_eq!(read[0], 2, "{other:?} is not taken as dense");
        }
    }
}
