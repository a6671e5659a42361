//! `ndcyclic.Redistribution`: a redistribution planned once over an mpi4py
//! communicator and executed many times, on arrays of any element type.

use crate::array::{AnyArray, PyDistArray};
use crate::comm::{context, Shared};
use crate::dtype::{each, per_type, with_type, wrap_impls, DType, Wrap};
use crate::errors::{agree, agreed, unify, Failure, Fingerprint, Kind};
use crate::held::Held;
use crate::layout::PyLayout;
use dist_array::{DistArray, Element, Layout};
use num_complex::Complex;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use redist::{Options, Redistribution, Remap, Scalar, Strategy, Update, Window};
use std::collections::HashMap;
use std::time::Instant;

per_type!(
    /// A redistribution of any element type.
    AnyPlan,
    Redistribution
);
wrap_impls!(AnyPlan, Redistribution);

/// A value carried into a closure that runs on this same thread while the
/// GIL is released (`Python::allow_threads` runs its closure on the calling
/// thread; it asks for `Send` only because it cannot know that).
pub struct SameThread<T>(pub T);

// SAFETY: the value never leaves the thread that made it: the closure it is
// moved into runs on that thread, before `allow_threads` returns.
unsafe impl<T> Send for SameThread<T> {}

/// α and β as a type's own scalars.
trait FromComplex: Sized {
    fn from_complex(z: Complex<f64>, what: &str) -> Result<Self, Failure>;
}

fn real(z: Complex<f64>, what: &str) -> Result<f64, Failure> {
    if z.im == 0.0 {
        Ok(z.re)
    } else {
        Err(Failure::type_error(format!(
            "{what} = {z} is complex, but the arrays are real"
        )))
    }
}

impl FromComplex for f32 {
    #[allow(
        clippy::cast_possible_truncation,
        reason = "α and β of f32 arrays are f32"
    )]
    fn from_complex(z: Complex<f64>, what: &str) -> Result<f32, Failure> {
        real(z, what).map(|x| x as f32)
    }
}
impl FromComplex for f64 {
    fn from_complex(z: Complex<f64>, what: &str) -> Result<f64, Failure> {
        real(z, what)
    }
}
impl FromComplex for Complex<f32> {
    #[allow(
        clippy::cast_possible_truncation,
        reason = "α and β of complex64 arrays are complex64"
    )]
    fn from_complex(z: Complex<f64>, _: &str) -> Result<Complex<f32>, Failure> {
        Ok(Complex::new(z.re as f32, z.im as f32))
    }
}
impl FromComplex for Complex<f64> {
    fn from_complex(z: Complex<f64>, _: &str) -> Result<Complex<f64>, Failure> {
        Ok(z)
    }
}

/// What a redistribution was asked for, kept to build it for each element
/// type it meets.
struct Request {
    source: Layout,
    target: Layout,
    options: Options,
    window: Option<Window>,
    permute: Option<Vec<usize>>,
    update: Option<Update<Complex<f64>>>,
}

/// Times of the executions so far.
#[derive(Default)]
struct Timings {
    calls: u64,
    total_s: f64,
    min_s: f64,
    last_s: f64,
    /// The last [`KEPT`] times, for the median.
    recent: Vec<f64>,
}

const KEPT: usize = 101;

impl Timings {
    fn add(&mut self, s: f64) {
        self.min_s = if self.calls == 0 {
            s
        } else {
            self.min_s.min(s)
        };
        self.calls += 1;
        self.total_s += s;
        self.last_s = s;
        if self.recent.len() == KEPT {
            self.recent.remove(0);
        }
        self.recent.push(s);
    }

    fn median_s(&self) -> f64 {
        let mut v = self.recent.clone();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    }
}

/// A redistribution between two layouts over an mpi4py communicator: planned
/// once (collective), executed many times on arrays laid out as
/// ``source``, into arrays laid out as :attr:`target_layout`.
///
/// ``strategy`` is how messages travel (``"auto"``, ``"alltoallv"``,
/// ``"scheduled"``, ``"async"``, ``"combined"``); ``remap`` may relabel the
/// target's ranks so more data stays put (``"none"``, ``"closed-form"``,
/// ``"optimal"``; then make targets from :attr:`target_layout`).
/// ``window=(source_origin, target_origin, shape)`` moves only that
/// sub-array (``execute`` leaves the rest of the target as it was);
/// ``permute`` permutes the axes (``[1, 0]`` transposes: source dimension
/// ``d`` becomes target dimension ``permute[d]``). ``alpha``, ``beta`` and
/// ``conjugate`` make every execution an update ``b = beta*b +
/// alpha*op(a)`` (floating-point and complex arrays). The engine's knobs:
/// ``node_direct`` (copy straight between the shared memory of a node's
/// ranks, default on), ``streaming`` (non-temporal stores: ``"auto"``,
/// ``"always"``, ``"never"`` or a byte threshold), ``max_message_elements``
/// (split longer messages). ``dtype`` plans for
/// that element type now; without it, each element type is planned at its
/// first execution. Every rank must pass the same arguments; a failure
/// raises the same exception on every rank.
///
/// Example (any number of ranks)::
///
///     >>> import numpy as np, ndcyclic
///     >>> from mpi4py import MPI
///     >>> comm = MPI.COMM_WORLD
///     >>> p = comm.size
///     >>> rows = ndcyclic.Layout((8, 6), f"block,*@{p}x1")
///     >>> blocks = ndcyclic.Layout((8, 6), f"cyclic(2),cyclic(2)@{p}x1")
///     >>> r = ndcyclic.Redistribution(comm, rows, blocks)
///     >>> a = ndcyclic.from_function(comm, rows, lambda i, j: 10 * i + j)
///     >>> b = r.execute(a)                      # a new array laid out as blocks
///     >>> r.execute(a, b)                       # into an existing one, no allocation
///     >>> whole = b.gather()
///     >>> comm.rank != 0 or bool((whole == np.fromfunction(lambda i, j: 10 * i + j, (8, 6))).all())
///     True
#[pyclass(name = "Redistribution", module = "ndcyclic")]
pub struct PyRedistribution {
    request: Request,
    /// What the whole redistribution keeps and moves: `(elements kept on
    /// their rank, elements moved, messages)`, learnt (one all-reduce) when
    /// the first plan was built, so that `report` is local.
    totals: Option<(usize, usize, usize)>,
    plans: Held<HashMap<DType, AnyPlan>>,
    context: Shared,
    comm: PyObject,
    timings: Timings,
}

fn parse<T>(s: &str) -> Result<T, Failure>
where
    T: std::str::FromStr,
    Failure: From<T::Err>,
{
    s.parse::<T>().map_err(Failure::from)
}

/// The arguments of ``Redistribution(...)`` as Python passed them.
struct Asked<'a, 'py> {
    source: &'a PyLayout,
    target: &'a PyLayout,
    dtype: Option<&'a Bound<'py, PyAny>>,
    strategy: &'a str,
    remap: &'a str,
    window: Option<(Vec<usize>, Vec<usize>, Vec<usize>)>,
    permute: Option<Vec<usize>>,
    alpha: Option<Complex<f64>>,
    beta: Option<Complex<f64>>,
    conjugate: bool,
    node_direct: bool,
    streaming: &'a str,
    max_message_elements: Option<usize>,
    wisdom: Option<std::path::PathBuf>,
}

impl Asked<'_, '_> {
    /// What the arguments ask for, and the dtype to plan for now, checked
    /// on this rank for a communicator of `ranks` ranks (local: the ranks
    /// agree next).
    fn request(&self, ranks: usize) -> Result<(Request, Option<DType>), Failure> {
        let strategy: Strategy = parse(self.strategy)?;
        let remap: Remap = parse(self.remap)?;
        let window = match &self.window {
            None => None,
            Some((s, t, n)) => Some(Window::new(s, t, n).map_err(Failure::from)?),
        };
        let update = self.update();
        let options = self.options(strategy, remap, update.is_some())?;
        let dtype = self.dtype.map(DType::from_py).transpose()?;
        self.check_layouts(window.is_some(), ranks)?;
        let request = Request {
            source: self.source.layout.clone(),
            target: self.target.layout.clone(),
            options,
            window,
            permute: self.permute.clone(),
            update,
        };
        Ok((request, dtype))
    }

    /// The update ``alpha``, ``beta`` and ``conjugate`` ask for, if any
    /// (α 1 and β 0 where not given).
    fn update(&self) -> Option<Update<Complex<f64>>> {
        (self.alpha.is_some() || self.beta.is_some() || self.conjugate).then(|| Update {
            alpha: self.alpha.unwrap_or(Complex::new(1.0, 0.0)),
            beta: self.beta.unwrap_or(Complex::new(0.0, 0.0)),
            conjugate: self.conjugate,
        })
    }

    /// The engine's options: `strategy`, `remap`, whether executions
    /// update, and the knobs as asked.
    fn options(&self, strategy: Strategy, remap: Remap, updates: bool) -> Result<Options, Failure> {
        let defaults = Options::default();
        Ok(Options {
            strategy,
            remap,
            updates,
            node_direct: self.node_direct,
            streaming: parse(self.streaming)?,
            max_message_elements: (self.max_message_elements)
                .unwrap_or(defaults.max_message_elements),
            wisdom: self.wisdom.clone(),
            ..defaults
        })
    }

    /// Checks that the layouts have one shape (unless `windowed` or
    /// permuted) and fit in a communicator of `ranks` ranks.
    fn check_layouts(&self, windowed: bool, ranks: usize) -> Result<(), Failure> {
        let (s, t) = (&self.source.layout, &self.target.layout);
        if !windowed && self.permute.is_none() && s.shape() != t.shape() {
            return Err(Failure::value(format!(
                "the source's shape {:?} is not the target's {:?}; expected the same shape \
                 (or a window, or a permutation)",
                s.shape(),
                t.shape()
            )));
        }
        for l in [s, t] {
            if l.ranks() > ranks {
                return Err(Failure::value(format!(
                    "layout {l} needs {} ranks, but the communicator has {}",
                    l.ranks(),
                    ranks
                )));
            }
        }
        Ok(())
    }

    /// What every rank must have asked alike: the layouts, the arguments
    /// as given, and the dtype this rank found (`None` when its checks
    /// failed).
    fn fingerprint(&self, dtype: Option<Option<DType>>) -> Fingerprint {
        let asked = format!(
            "{} {} {:?} {:?} {:?} {:?} {} {} {} {:?} {:?}",
            self.strategy,
            self.remap,
            self.window,
            self.permute,
            self.alpha,
            self.beta,
            self.conjugate,
            self.node_direct,
            self.streaming,
            self.max_message_elements,
            self.wisdom
        );
        Fingerprint::default()
            .text(&self.source.layout.to_string())
            .text(&self.target.layout.to_string())
            .text(&asked)
            .text(&format!("{dtype:?}"))
    }
}

impl PyRedistribution {
    /// Builds the plan for `dtype` (collective; ranks agreed on `dtype`).
    fn build(&self, dtype: DType) -> Result<AnyPlan, Failure> {
        let r = &self.request;
        let ctx = &self.context;
        let sg = ctx.grid(r.source.grid_extents())?;
        let tg = ctx.grid(r.target.grid_extents())?;
        if r.update.is_some() && !dtype.scales() {
            return Err(Failure::type_error(format!(
                "alpha, beta and conjugate need floating-point or complex arrays, not {}",
                dtype.name()
            )));
        }
        fn one<T: Element>(
            r: &Request,
            sg: &procgrid::ProcGrid,
            tg: &procgrid::ProcGrid,
        ) -> Result<AnyPlan, Failure>
        where
            AnyPlan: Wrap<Redistribution<T>>,
        {
            let plan = match (&r.permute, &r.window) {
                (Some(p), w) => Redistribution::<T>::with_permutation(
                    sg,
                    &r.source,
                    tg,
                    &r.target,
                    p,
                    w.as_ref(),
                    r.options.clone(),
                ),
                (None, Some(w)) => Redistribution::<T>::with_window(
                    sg,
                    &r.source,
                    tg,
                    &r.target,
                    w,
                    r.options.clone(),
                ),
                (None, None) => {
                    Redistribution::<T>::new(sg, &r.source, tg, &r.target, r.options.clone())
                }
            };
            plan.map(AnyPlan::wrap).map_err(Failure::from)
        }
        let built = with_type!(dtype, T => one::<T>(r, &sg, &tg));
        unify(ctx.comm(), built, "Redistribution")
    }

    /// The plan for `dtype`, built on first use.
    fn plan(&mut self, dtype: DType) -> Result<&mut AnyPlan, Failure> {
        if !self.plans.contains_key(&dtype) {
            let p = self.build(dtype)?;
            if self.totals.is_none() {
                self.totals = Some(each!(AnyPlan, &p, x, T => x.totals()));
            }
            self.plans.insert(dtype, p);
        }
        self.plans
            .get_mut(&dtype)
            .ok_or_else(|| Failure::new(Kind::Runtime, "internal: a plan went missing"))
    }

    /// A plan built (for any type) — the first, for figures that do not
    /// depend on the type; f64's built if none is.
    fn any_plan(&mut self) -> Result<&mut AnyPlan, Failure> {
        let t = self.plans.keys().next().copied().unwrap_or(DType::F64);
        let t = if self.plans.is_empty() && self.request.update.is_some() {
            DType::F64
        } else {
            t
        };
        self.plan(t)
    }
}

/// Executes `plan` from `a` into `b`, the GIL released.
fn run<T: MaybeScalar>(
    py: Python<'_>,
    plan: &mut Redistribution<T>,
    a: &DistArray<T>,
    b: &mut DistArray<T>,
    update: Option<Update<Complex<f64>>>,
    checked_here: bool,
) -> Result<(), Failure> {
    let work = SameThread((plan, a, b));
    py.allow_threads(move || {
        let SameThread((plan, a, b)) = work;
        match update {
            // The arrays' layouts were checked and agreed with the rest: the
            // engine need not agree again (one all-reduce per call, not two).
            None if checked_here => plan.execute_into_unchecked(a, b).map_err(Failure::from),
            None => plan.execute_into(a, b).map_err(Failure::from),
            Some(u) => T::update(plan, a, b, u),
        }
    })
}

/// Element types, with updates where they have the arithmetic.
trait MaybeScalar: Element + Sized {
    fn update(
        plan: &mut Redistribution<Self>,
        a: &DistArray<Self>,
        b: &mut DistArray<Self>,
        u: Update<Complex<f64>>,
    ) -> Result<(), Failure>;
}

fn scaled<T: Scalar + FromComplex>(
    plan: &mut Redistribution<T>,
    a: &DistArray<T>,
    b: &mut DistArray<T>,
    asked: Update<Complex<f64>>,
) -> Result<(), Failure> {
    let update = Update {
        alpha: T::from_complex(asked.alpha, "alpha")?,
        beta: T::from_complex(asked.beta, "beta")?,
        conjugate: asked.conjugate,
    };
    plan.execute_update_into(a, b, update)
        .map_err(Failure::from)
}

macro_rules! scalar_update {
    ($($t:ty),*) => {$(
        impl MaybeScalar for $t {
            fn update(plan: &mut Redistribution<Self>, a: &DistArray<Self>, b: &mut DistArray<Self>, u: Update<Complex<f64>>) -> Result<(), Failure> {
                scaled(plan, a, b, u)
            }
        }
    )*};
}
scalar_update!(f32, f64, Complex<f32>, Complex<f64>);

macro_rules! no_update {
    ($($t:ty),*) => {$(
        impl MaybeScalar for $t {
            fn update(_: &mut Redistribution<Self>, _: &DistArray<Self>, _: &mut DistArray<Self>, _: Update<Complex<f64>>) -> Result<(), Failure> {
                Err(Failure::type_error("alpha, beta and conjugate need floating-point or complex arrays"))
            }
        }
    )*};
}
no_update!(i32, i64, u8, u32, u64);

/// `a`'s and `b`'s arrays as the same variant, or `None`.
fn pair<'a>(a: &'a AnyArray, b: &'a mut AnyArray) -> Option<(&'a AnyArray, &'a mut AnyArray)> {
    (a.dtype() == b.dtype()).then_some((a, b))
}

#[pymethods]
impl PyRedistribution {
    #[new]
    #[pyo3(signature = (comm, source, target, *, dtype = None, strategy = "auto", remap = "none",
                        window = None, permute = None, alpha = None, beta = None, conjugate = false,
                        node_direct = true, streaming = "auto", max_message_elements = None,
                        wisdom = None))]
    #[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn new(
        comm: &Bound<'_, PyAny>,
        source: &PyLayout,
        target: &PyLayout,
        dtype: Option<&Bound<'_, PyAny>>,
        strategy: &str,
        remap: &str,
        window: Option<(Vec<usize>, Vec<usize>, Vec<usize>)>,
        permute: Option<Vec<usize>>,
        alpha: Option<Complex<f64>>,
        beta: Option<Complex<f64>>,
        conjugate: bool,
        node_direct: bool,
        streaming: &str,
        max_message_elements: Option<usize>,
        wisdom: Option<std::path::PathBuf>,
    ) -> PyResult<PyRedistribution> {
        let ctx = context(comm)?;
        let asked = Asked {
            source,
            target,
            dtype,
            strategy,
            remap,
            window,
            permute,
            alpha,
            beta,
            conjugate,
            node_direct,
            streaming,
            max_message_elements,
            wisdom,
        };
        let checked = asked.request(ctx.size());
        let fp = asked.fingerprint(checked.as_ref().ok().map(|c| c.1));
        let (request, dtype) = agreed(ctx.comm(), checked, fp, "Redistribution")?;
        let mut r = PyRedistribution {
            request,
            totals: None,
            plans: Held::new(HashMap::new()),
            context: ctx,
            comm: comm.clone().unbind(),
            timings: Timings::default(),
        };
        if let Some(t) = dtype {
            r.plan(t)?;
        }
        Ok(r)
    }

    /// Redistributes ``a`` into ``b`` when given (an array laid out as
    /// :attr:`target_layout`, of ``a``'s dtype; with a window, only the
    /// window's elements change), else into a new array, which it returns.
    /// The GIL is released while the data moves. Collective.
    #[pyo3(signature = (a, b = None))]
    fn execute(
        &mut self,
        py: Python<'_>,
        a: &Bound<'_, PyDistArray>,
        b: Option<&Bound<'_, PyDistArray>>,
    ) -> PyResult<PyObject> {
        if let Some(b) = b {
            self.execute_pairs(py, std::slice::from_ref(a), std::slice::from_ref(b))?;
            return Ok(py.None());
        }
        let made = self.new_target(py, a)?;
        let made = Bound::new(py, made)?;
        self.execute_pairs(py, std::slice::from_ref(a), std::slice::from_ref(&made))?;
        Ok(made.into_any().unbind())
    }

    /// Redistributes each array of ``sources`` into the array at the same
    /// place of ``targets`` (all of one dtype), as one exchange: one message
    /// per pair of ranks for the whole batch. Collective.
    fn execute_batch(
        &mut self,
        py: Python<'_>,
        sources: &Bound<'_, PyList>,
        targets: &Bound<'_, PyList>,
    ) -> PyResult<()> {
        fn grab<'py>(l: &Bound<'py, PyList>) -> Result<Vec<Bound<'py, PyDistArray>>, Failure> {
            l.iter()
                .map(|x| {
                    x.downcast_into::<PyDistArray>().map_err(|_| {
                        Failure::type_error("execute_batch takes lists of ndcyclic.DistArray")
                    })
                })
                .collect()
        }
        let comm = self.context.comm();
        let (s, t) = match (grab(sources), grab(targets)) {
            (Ok(s), Ok(t)) => (s, t),
            (Err(e), _) | (_, Err(e)) => {
                agree(
                    comm,
                    Err(e),
                    Fingerprint::default(),
                    "Redistribution.execute_batch",
                )?;
                unreachable!("agree fails when a rank fails")
            }
        };
        Ok(self.execute_pairs(py, &s, &t)?)
    }

    /// Measures every admissible way of this redistribution (exchanges,
    /// packed or typed messages, node-direct copies, thresholds near
    /// ``auto``'s) on ``a`` into ``b``, ``warmups`` untimed and ``reps``
    /// timed executions each, beside ``auto``'s own choice, the slowest
    /// rank's median counting; later executions of ``a``'s dtype run the
    /// fastest. ``a`` and ``b`` may be lists of arrays (one dtype): each
    /// way is then timed on whole batches (:meth:`execute_batch`), as a job
    /// that moves its arrays in batches runs it. With ``wisdom``, adds it
    /// to that wisdom file, where later jobs find it (the ``wisdom``
    /// keyword, or ``NDCYCLIC_WISDOM``). Returns a dict: ``best`` and
    /// ``best_ms``, ``auto`` and ``auto_ms``, ``tried`` (``(choice, ms)``
    /// pairs), ``executions``, ``seconds`` (what measuring cost). Whole
    /// arrays only: no window, permutation, update or remapping. ``b`` is
    /// overwritten. Collective.
    #[pyo3(signature = (a, b, *, warmups = 3, reps = 5, wisdom = None))]
    fn tune<'py>(
        &mut self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        warmups: usize,
        reps: usize,
        wisdom: Option<std::path::PathBuf>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let r = &self.request;
        let plain = r.window.is_none()
            && r.permute.is_none()
            && r.update.is_none()
            && r.options.remap == Remap::None;
        let arrays = arrays_of(a).and_then(|s| arrays_of(b).map(|t| (s, t)));
        let verdict = match (plain, &arrays) {
            (false, _) => Err(Failure::value(
                "tune measures whole-array redistributions: expected no window, permute, \
                 alpha, beta, conjugate or remap",
            )),
            (true, Err(e)) => Err(e.clone()),
            (true, Ok(((s, _), (t, _)))) if s.len() != t.len() || s.is_empty() => Err(
                Failure::value("tune takes as many targets as sources, at least one"),
            ),
            (true, Ok(_)) => Ok(()),
        };
        let fp = Fingerprint::default().text(&format!("{warmups} {reps} {wisdom:?}"));
        agree(self.context.comm(), verdict, fp, "Redistribution.tune")?;
        let Ok(((srcs, batch), (dsts, _))) = arrays else {
            unreachable!("agree fails when a rank fails")
        };
        // The arrays checked and agreed, as by execute.
        self.execute_pairs(py, &srcs, &dsts)?;
        let ctx = self.context.clone();
        let sg = ctx.grid(self.request.source.grid_extents())?;
        let tg = ctx.grid(self.request.target.grid_extents())?;
        let settings = redist::tune::TuneSettings {
            warmups,
            reps,
            wisdom,
            progress: false,
        };
        let (source, target) = (&self.request.source, &self.request.target);
        let options = self.request.options.clone();
        let sa: Vec<PyRef<'_, PyDistArray>> = srcs.iter().map(|x| x.borrow()).collect();
        let mut tb: Vec<PyRefMut<'_, PyDistArray>> = dsts.iter().map(|x| x.borrow_mut()).collect();
        let dtype = sa[0].dtype();
        macro_rules! go {
            ($($v:ident),*) => {
                match &*sa[0].array {
                    $(AnyArray::$v(_) => {
                        let xs: Vec<_> = (sa.iter())
                            .filter_map(|p| match &*p.array { AnyArray::$v(x) => Some(x), _ => None })
                            .collect();
                        let mut ys: Vec<_> = (tb.iter_mut())
                            .filter_map(|p| match &mut *p.array { AnyArray::$v(y) => Some(y), _ => None })
                            .collect();
                        let work = SameThread((&mut ys, &xs, &sg, &tg, &options, &settings));
                        let tuned = py.allow_threads(move || {
                            let SameThread((ys, xs, sg, tg, options, settings)) = work;
                            if batch {
                                redist::tune::tune_batch(sg, source, tg, target, options, xs, ys, settings)
                            } else {
                                redist::tune::tune(sg, source, tg, target, options, xs[0], ys[0], settings)
                            }
                        });
                        let kept = tuned.and_then(|t| {
                            let o = Options { measured: Some(t.best.choice), ..options.clone() };
                            Redistribution::new(&sg, source, &tg, target, o).map(|p| (t, AnyPlan::$v(p)))
                        });
                        kept.map_err(Failure::from)
                    })*
                }
            };
        }
        let done = go!(F32, F64, C64, C128, I32, I64, U8, U32, U64);
        let (tuned, plan) = unify(ctx.comm(), done, "Redistribution.tune")?;
        self.plans.insert(dtype, plan);
        let d = PyDict::new(py);
        d.set_item("best", tuned.best.choice.to_string())?;
        d.set_item("best_ms", tuned.best.seconds * 1e3)?;
        d.set_item("auto", tuned.auto.choice.to_string())?;
        d.set_item("auto_ms", tuned.auto.seconds * 1e3)?;
        let tried: Vec<(String, f64)> = (tuned.tried.iter())
            .map(|t| (t.choice.to_string(), t.seconds * 1e3))
            .collect();
        d.set_item("tried", tried)?;
        d.set_item("executions", tuned.executions)?;
        d.set_item("seconds", tuned.seconds)?;
        Ok(d)
    }

    /// The target layout: ``target`` as given, or with its ranks relabelled
    /// by ``remap`` (then, when nothing was planned yet, it plans for
    /// float64 first: collective).
    #[getter]
    fn target_layout(&mut self) -> PyResult<PyLayout> {
        if self.request.options.remap == Remap::None {
            return Ok(PyLayout {
                layout: self.request.target.clone(),
            });
        }
        let plan = self.any_plan()?;
        Ok(PyLayout {
            layout: each!(AnyPlan, &*plan, p, T => p.target_layout().clone()),
        })
    }

    /// The source layout.
    #[getter]
    fn source_layout(&self) -> PyLayout {
        PyLayout {
            layout: self.request.source.clone(),
        }
    }

    /// The plan's figures and the times of the executions so far, as a dict
    /// with the keys of ``redist run --json`` that apply: ``strategy``,
    /// ``elements`` (moved by the whole redistribution), ``elements_kept_local``,
    /// ``elements_moved``, ``messages``, ``max_partners``, this rank's
    /// ``elements_sent``/``elements_received``/``elements_kept`` and
    /// ``program_bytes``, ``calls``, ``ms_median``, ``ms_min``, ``ms_last``
    /// (this rank's wall-clock time of ``execute``, Python included) and
    /// ``gb_per_s`` (all elements' bytes per median time). Local: call it
    /// on any rank alone. Before anything is planned (no ``dtype`` given,
    /// no execution yet) it holds only ``source``, ``target``, ``dtype``
    /// and ``calls``.
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let dtype = self.plans.keys().next().copied().unwrap_or(DType::F64);
        d.set_item("source", self.request.source.to_string())?;
        d.set_item("dtype", dtype.name())?;
        d.set_item("target", self.request.target.to_string())?;
        let Some(plan) = self.plans.values().next() else {
            // Nothing planned yet (no dtype given, no execution): no figures.
            d.set_item("calls", 0)?;
            return Ok(d);
        };
        each!(AnyPlan, plan, p, T => {
            d.set_item("target", p.target_layout().to_string())?;
            d.set_item("strategy", p.strategy().to_string())?;
            d.set_item("max_partners", p.max_degree())?;
            d.set_item("elements_sent", p.elements_sent())?;
            d.set_item("elements_received", p.elements_received())?;
            d.set_item("elements_kept", p.elements_kept())?;
            d.set_item("program_bytes", p.program_bytes())?;
            d.set_item("measured_choice", p.measured().map(|m| m.to_string()))?;
            d.set_item("tries_routes", p.tries_routes())?;
            d.set_item("warnings", p.warnings().to_vec())?;
        });
        let (kept, moved, messages) = self.totals.unwrap_or_default();
        d.set_item("messages", messages)?;
        d.set_item("elements", kept + moved)?;
        d.set_item("elements_kept_local", kept)?;
        d.set_item("elements_moved", moved)?;
        let t = &self.timings;
        let median = t.median_s();
        d.set_item("calls", t.calls)?;
        d.set_item("ms_median", median * 1e3)?;
        d.set_item("ms_min", t.min_s * 1e3)?;
        d.set_item("ms_last", t.last_s * 1e3)?;
        #[allow(clippy::cast_precision_loss, reason = "a rate")]
        let bytes = ((kept + moved) * dtype.size()) as f64;
        d.set_item(
            "gb_per_s",
            if median > 0.0 {
                bytes / median / 1e9
            } else {
                0.0
            },
        )?;
        Ok(d)
    }

    /// The mpi4py communicator it was planned over.
    #[getter(comm)]
    fn get_comm(&self, py: Python<'_>) -> PyObject {
        self.comm.clone_ref(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "Redistribution({} -> {}, strategy={})",
            self.request.source, self.request.target, self.request.options.strategy
        )
    }
}

/// Whether `src` and `dst` are laid out as the plan's source and target.
fn same_layouts(
    src: &PyDistArray,
    dst: &PyDistArray,
    source: &Layout,
    target: &Layout,
) -> Result<(), Failure> {
    for (what, array, want) in [("source", src, source), ("target", dst, target)] {
        if array.layout() != want {
            return Err(Failure::value(format!(
                "the {what} array is laid out as {}, but the Redistribution's {what} is {}",
                array.layout(),
                want
            )));
        }
    }
    Ok(())
}

impl PyRedistribution {
    /// The layout targets of `dtype` must have, where known without planning.
    fn expected_target(&self, dtype: DType) -> Option<Layout> {
        if self.request.options.remap == Remap::None {
            return Some(self.request.target.clone());
        }
        let plan = self.plans.get(&dtype)?;
        Some(each!(AnyPlan, plan, p, T => p.target_layout().clone()))
    }

    /// A new array of the target layout (remapped, if so) of `a`'s dtype,
    /// over the target's grid. Collective.
    fn new_target(
        &mut self,
        py: Python<'_>,
        a: &Bound<'_, PyDistArray>,
    ) -> Result<PyDistArray, Failure> {
        let dtype = a.borrow().dtype();
        let fp = Fingerprint::default().text(dtype.name());
        agree(self.context.comm(), Ok(()), fp, "Redistribution.execute")?;
        let target = {
            let plan = self.plan(dtype)?;
            each!(AnyPlan, &*plan, p, T => p.target_layout().clone())
        };
        let tg = self.context.grid(target.grid_extents())?;
        let made = with_type!(dtype, T => {
            DistArray::<T>::zeros(&tg, target)
                .map(|x| PyDistArray::new(x, self.context.clone(), self.comm.clone_ref(py)))
                .map_err(Failure::from)
        });
        agreed(
            self.context.comm(),
            made,
            Fingerprint::default(),
            "Redistribution.execute",
        )
    }

    /// Executes each pair (collective): checks agreed, then one exchange
    /// (or one batch).
    fn execute_pairs(
        &mut self,
        py: Python<'_>,
        srcs: &[Bound<'_, PyDistArray>],
        dsts: &[Bound<'_, PyDistArray>],
    ) -> Result<(), Failure> {
        let ctx = self.context.clone();
        let comm = ctx.comm();
        let mut pairs = Pairs::default();
        let checks = self.check_pairs(srcs, dsts, &mut pairs);
        let fp = Fingerprint::default()
            .number(srcs.len() as u64)
            .number(u64::from(pairs.checked_here))
            .text(pairs.dtype.map(|d| d.name()).unwrap_or(""));
        agree(comm, checks, fp, "Redistribution.execute")?;
        let Some(dtype) = pairs.dtype else {
            return Ok(());
        };
        let update = self.request.update;
        let start = Instant::now();
        let plan = self.plan(dtype)?;
        let result = dispatch_pairs(py, plan, &mut pairs, update)
            .or_else(|e| unify(comm, Err(e), "Redistribution.execute"));
        self.timings.add(start.elapsed().as_secs_f64());
        result
    }

    /// Borrows the pairs of `srcs` and `dsts` into `pairs` and checks them,
    /// up to the first failure, which it returns (local: the ranks agree
    /// next); `pairs` then holds the dtype and the pairs so far.
    fn check_pairs<'py>(
        &self,
        srcs: &[Bound<'py, PyDistArray>],
        dsts: &[Bound<'py, PyDistArray>],
        pairs: &mut Pairs<'py>,
    ) -> Result<(), Failure> {
        if srcs.len() != dsts.len() {
            return Err(Failure::value(format!(
                "{} sources but {} targets: expected one target per source",
                srcs.len(),
                dsts.len()
            )));
        }
        for (s, t) in srcs.iter().zip(dsts) {
            let (Ok(sr), Ok(tr)) = (s.try_borrow(), t.try_borrow_mut()) else {
                return Err(Failure::value(
                    "a target is also a source, or is in use: expected distinct target arrays",
                ));
            };
            self.check_pair(&sr, &tr, pairs)?;
            pairs.dtype = Some(sr.dtype());
            pairs.srcs.push(sr);
            pairs.dsts.push(tr);
        }
        match pairs.dtype {
            Some(d) if self.request.update.is_some() && !d.scales() => {
                Err(Failure::type_error(format!(
                    "alpha, beta and conjugate need floating-point or complex arrays, not {}",
                    d.name()
                )))
            }
            _ => Ok(()),
        }
    }

    /// Checks one pair against the plan and the pairs before it: made on
    /// the plan's communicator, of their dtype, laid out as the plan's
    /// source and target where those are known without planning (then
    /// `pairs.checked_here`).
    fn check_pair(
        &self,
        src: &PyDistArray,
        dst: &PyDistArray,
        pairs: &mut Pairs<'_>,
    ) -> Result<(), Failure> {
        let ours = |x: &PyDistArray| std::sync::Arc::ptr_eq(&x.context, &self.context);
        if !ours(src) || !ours(dst) {
            return Err(Failure::value(
                "an array was made on another communicator than the \
                 Redistribution's; expected arrays made on the same mpi4py \
                 communicator as the plan",
            ));
        }
        let (ts, tt) = (src.dtype(), dst.dtype());
        if ts != tt || pairs.dtype.is_some_and(|d| d != ts) {
            return Err(Failure::type_error(format!(
                "the arrays' dtypes differ ({} and {}); expected one dtype for \
                 sources and targets",
                ts.name(),
                tt.name()
            )));
        }
        if let Some(want) = self.expected_target(ts) {
            same_layouts(src, dst, &self.request.source, &want)?;
            pairs.checked_here = true;
        }
        Ok(())
    }
}

/// The pairs of one execution, borrowed and checked on this rank.
#[derive(Default)]
struct Pairs<'py> {
    /// The sources.
    srcs: Vec<PyRef<'py, PyDistArray>>,
    /// The targets, one per source.
    dsts: Vec<PyRefMut<'py, PyDistArray>>,
    /// Their dtype (`None` before the first pair).
    dtype: Option<DType>,
    /// Whether their layouts were checked here, so that the engine need
    /// not check them again.
    checked_here: bool,
}

/// Executes the checked `pairs` with `plan`: one exchange, or one batch.
fn dispatch_pairs(
    py: Python<'_>,
    plan: &mut AnyPlan,
    pairs: &mut Pairs<'_>,
    update: Option<Update<Complex<f64>>>,
) -> Result<(), Failure> {
    if pairs.srcs.len() == 1 {
        let (sa, ta) = (&*pairs.srcs[0].array, &mut *pairs.dsts[0].array);
        match pair(sa, ta) {
            None => Err(Failure::new(Kind::Runtime, "internal: dtypes changed")),
            Some((sa, ta)) => dispatch_one(py, plan, sa, ta, update, pairs.checked_here),
        }
    } else {
        dispatch_batch(py, plan, &pairs.srcs, &mut pairs.dsts, update)
    }
}

/// One pair, of the plan's type.
fn dispatch_one(
    py: Python<'_>,
    plan: &mut AnyPlan,
    a: &AnyArray,
    b: &mut AnyArray,
    update: Option<Update<Complex<f64>>>,
    checked_here: bool,
) -> Result<(), Failure> {
    macro_rules! go {
        ($($v:ident),*) => {
            match (plan, a, b) {
                $((AnyPlan::$v(p), AnyArray::$v(x), AnyArray::$v(y)) => run(py, p, x, y, update, checked_here),)*
                _ => Err(Failure::new(Kind::Runtime, "internal: the plan's dtype is not the arrays'")),
            }
        };
    }
    go!(F32, F64, C64, C128, I32, I64, U8, U32, U64)
}

/// A batch, of the plan's type: one exchange (updates go one by one).
fn dispatch_batch(
    py: Python<'_>,
    plan: &mut AnyPlan,
    srcs: &[PyRef<'_, PyDistArray>],
    dsts: &mut [PyRefMut<'_, PyDistArray>],
    update: Option<Update<Complex<f64>>>,
) -> Result<(), Failure> {
    if update.is_some() {
        for (s, t) in srcs.iter().zip(dsts.iter_mut()) {
            dispatch_one(py, plan, &s.array, &mut t.array, update, false)?;
        }
        return Ok(());
    }
    macro_rules! go {
        ($($v:ident),*) => {
            match plan {
                $(AnyPlan::$v(p) => {
                    let xs: Vec<_> = srcs.iter().filter_map(|s| match &*s.array { AnyArray::$v(x) => Some(x), _ => None }).collect();
                    let mut ys: Vec<_> = dsts.iter_mut().filter_map(|t| match &mut *t.array { AnyArray::$v(y) => Some(y), _ => None }).collect();
                    if xs.len() != srcs.len() || ys.len() != srcs.len() {
                        return Err(Failure::new(Kind::Runtime, "internal: the plan's dtype is not the arrays'"));
                    }
                    let work = SameThread((p, xs, &mut ys));
                    py.allow_threads(move || {
                        let SameThread((p, xs, ys)) = work;
                        p.execute_batch_into(&xs, ys).map_err(Failure::from)
                    })
                })*
            }
        };
    }
    go!(F32, F64, C64, C128, I32, I64, U8, U32, U64)
}

/// The arrays `x` names: one `DistArray` (not a batch), or a list of them
/// (a batch).
fn arrays_of<'py>(x: &Bound<'py, PyAny>) -> Result<(Vec<Bound<'py, PyDistArray>>, bool), Failure> {
    if let Ok(a) = x.downcast::<PyDistArray>() {
        return Ok((vec![a.clone()], false));
    }
    let list = x
        .downcast::<PyList>()
        .map_err(|_| Failure::type_error("tune takes ndcyclic.DistArray or lists of them"))?;
    let arrays = (list.iter())
        .map(|a| {
            a.downcast_into::<PyDistArray>()
                .map_err(|_| Failure::type_error("tune takes ndcyclic.DistArray or lists of them"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((arrays, true))
}
