//! Executing a redistribution, in three steps every kind of execution
//! shares: check (each rank its own arrays), agree (one all-reduce of the
//! verdicts and of the figures a batch is moved by, unless the exchange
//! agrees as it goes), run (the exchange, [`Exchange::run`], on a batch of
//! K arrays; a single array is a batch of one).

use super::agree;
use super::arrays::Arrays;
use super::decide::{self, BatchWay};
use super::exchange::{Exchange, Run, EXECUTING};
use super::mixed::{types_fingerprint, words, MixedBatch, Pair};
use super::redistribution::Redistribution;
use crate::error::RedistError;
use dist_array::{DistArray, Element, Layout};
use mpi_extras::process::AbortOnUnwind;
use procgrid::ProcGrid;
use redist_plan::kernel::{Plain, Store};
use redist_plan::update::{Accumulate, Scalar, Scale, Update};

impl<T: Element> Redistribution<T> {
    /// Redistributes `src` into a new array on the target grid and layout.
    /// Collective.
    ///
    /// # Errors
    ///
    /// As [`execute_into`](Self::execute_into); the new array is allocated
    /// before anything is checked. It has the target's ghost layers
    /// ([`Options::padding`](crate::Options::padding)), zero.
    pub fn execute(&mut self, src: &DistArray<T>) -> Result<DistArray<T>, RedistError> {
        let (grid, layout) = (&self.target_grid, self.target.clone());
        let mut dst = match self.padding.target() {
            [] => DistArray::zeros(grid, layout)?,
            widths => DistArray::zeros_with_ghosts(grid, layout, widths)?,
        };
        self.execute_into(src, &mut dst)?;
        Ok(dst)
    }

    /// Redistributes `src` into `dst`, which must be laid out as
    /// [`target_layout`](Self::target_layout). Collective. After the first
    /// call it allocates nothing. Where the arrays have ghost layers (as
    /// the redistribution was planned for: [`Options::padding`](crate::Options::padding)),
    /// it reads `src`'s interior and writes `dst`'s, and leaves every
    /// ghost cell of `dst` as it was.
    ///
    /// Every rank checks its two arrays and the ranks agree on the verdict
    /// (one all-reduce of two integers, a few microseconds between the
    /// ranks of one node): a rank handed a wrong array returns an error,
    /// and so does every other rank, instead of waiting for it.
    ///
    /// # Errors
    ///
    /// - [`DistError::LayoutMismatch`](dist_array::DistError::LayoutMismatch)
    ///   (wrapped in [`RedistError::Dist`]) when `src` is not laid out as
    ///   the plan's source or `dst` as its target, or either lives on grids
    ///   of another communicator;
    /// - [`RedistError::GhostMismatch`] when an array's ghost widths are
    ///   not those the redistribution was planned for;
    /// - [`RedistError::OtherRank`] when this rank's arrays are fine but
    ///   another rank's are not;
    /// - [`RedistError::Mpi`] when MPI reports an error (only with an error
    ///   handler that returns errors; the library's communicators abort).
    pub fn execute_into(
        &mut self,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
    ) -> Result<(), RedistError> {
        self.execute_with(src, dst, true, Plain)
    }

    /// Like [`execute_into`](Self::execute_into), without the ranks
    /// agreeing on the arrays: for loops that execute the same
    /// redistribution on arrays built from its layouts, where that
    /// all-reduce is worth saving (it costs a collective: on a node with
    /// more ranks than cores, milliseconds). A rank handed a wrong array
    /// still returns an error, but alone: the others then wait for it.
    ///
    /// # Errors
    ///
    /// As [`execute_into`](Self::execute_into), except
    /// [`RedistError::OtherRank`] (which the `combined` strategy, whose
    /// exchange agrees as it goes, still returns).
    pub fn execute_into_unchecked(
        &mut self,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
    ) -> Result<(), RedistError> {
        self.execute_with(src, dst, false, Plain)
    }

    /// An execution of one array storing through `store`, the ranks
    /// agreeing on their arrays first when `agree` is set (or as the
    /// exchange goes, where it agrees itself).
    fn execute_with<S: Store<T>>(
        &mut self,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        agree: bool,
        store: S,
    ) -> Result<(), RedistError> {
        self.executing();
        let verdict = self.check_arrays(src, dst);
        let verdict = self.agreed(verdict, agree)?;
        let arrays = Arrays {
            sources: &[src],
            targets: &mut [dst],
        };
        let way = BatchWay::OneByOne;
        self.run(arrays, verdict, Run { store, way })
    }

    /// Redistributes the arrays `srcs` into `dsts` (the `k`-th source into
    /// the `k`-th target), all laid out as this redistribution's source and
    /// target, agreeing once on every array. Where latency costs (small
    /// shares, or node-direct copies of shared sources), one exchange moves
    /// them all, each message between two ranks carrying every array's
    /// share; where each array's messages are long (from
    /// [`BATCH_ALONE_BYTES`](crate::tuning::BATCH_ALONE_BYTES) per array),
    /// the arrays go one by one through this redistribution's exchange.
    /// Collective: every rank passes the same number of arrays.
    ///
    /// ```
    /// use dist_array::{DistArray, Layout};
    /// use procgrid::ProcGrid;
    /// use redist::{Options, Redistribution};
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let p = world.size() as usize;
    /// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
    /// let from = Layout::parse(&[8, 6], &format!("block,*@{p}x1")).unwrap();
    /// let to = Layout::parse(&[8, 6], &format!("cyclic(2),cyclic(3)@{p}x1")).unwrap();
    /// let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, Options::default()).unwrap();
    /// let u = DistArray::from_fn(&grid, from.clone(), |g| g[0] as f64).unwrap();
    /// let v = DistArray::from_fn(&grid, from.clone(), |g| g[1] as f64).unwrap();
    /// let mut bu = DistArray::zeros(&grid, to.clone()).unwrap();
    /// let mut bv = DistArray::zeros(&grid, to.clone()).unwrap();
    /// r.execute_batch_into(&[&u, &v], &mut [&mut bu, &mut bv]).unwrap();
    /// assert_eq!(bu.gather(0).unwrap(), u.gather(0).unwrap());
    /// assert_eq!(bv.gather(0).unwrap(), v.gather(0).unwrap());
    /// ```
    ///
    /// # Errors
    ///
    /// As [`execute_into`](Self::execute_into) for each pair of arrays, and
    /// [`RedistError::InvalidArgument`] when `srcs` and `dsts` differ in
    /// length, or a rank would exchange more than 2^31-1 elements in one
    /// `MPI_Alltoallv`; [`RedistError::Disagreement`] when ranks pass
    /// different numbers of arrays.
    pub fn execute_batch_into(
        &mut self,
        srcs: &[&DistArray<T>],
        dsts: &mut [&mut DistArray<T>],
    ) -> Result<(), RedistError> {
        self.executing();
        let k = srcs.len();
        // With the verdict, the largest bytes a rank moves per array and
        // whether some rank's source is private: the ranks choose the same
        // way of moving the batch from them.
        let verdict = (self.check_batch(srcs, dsts)).map(|()| ((), self.batch_figures(srcs)));
        let comm = self.source_grid.communicator();
        let ((), [per_array, private]) = agree::agree_with(comm, verdict, k as u64 + 1, EXECUTING)?;
        if k == 0 {
            return Ok(());
        }
        let per_array = usize::try_from(per_array).unwrap_or(usize::MAX);
        let way = decide::batch_way(&self.settled, per_array, private != 0, k);
        let arrays = Arrays {
            sources: srcs,
            targets: dsts,
        };
        self.run(arrays, Ok(()), Run { store: Plain, way })
    }

    /// This rank's figures for choosing how a batch moves: the bytes it
    /// sends or receives per array (the larger), and 1 when one of its
    /// sources is private (node-direct copies cannot read it).
    fn batch_figures(&self, srcs: &[&DistArray<T>]) -> [u64; 2] {
        let per_array = self.messages.send_total.max(self.messages.recv_total);
        let bytes = per_array.saturating_mul(std::mem::size_of::<T>());
        let private = srcs.iter().any(|s| s.shared_storage().is_none());
        [u64::try_from(bytes).unwrap_or(u64::MAX), u64::from(private)]
    }

    /// Redistributes every pair of `batch` — arrays of any element types,
    /// each pair laid out as this redistribution's source and target — in
    /// one exchange: each message between two ranks carries every array's
    /// share (in groups of about
    /// [`BATCH_GROUP_BYTES`](crate::tuning::BATCH_GROUP_BYTES) when the
    /// arrays are large), and the kept elements are copied
    /// straight. The plan counts elements, so the redistribution's own
    /// element type `T` does not restrict the batch's. Collective: every
    /// rank passes the same number of pairs with the same element types in
    /// the same order. The example is at [`MixedBatch`].
    ///
    /// Arrays of one type are better moved by
    /// [`execute_batch_into`](Self::execute_batch_into), which also copies
    /// straight from the sender's storage within a node.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Dist`] (a layout mismatch) when a pair's arrays are
    ///   not laid out as this redistribution's source and target, and
    ///   [`RedistError::GhostMismatch`] when their ghost widths are not
    ///   those it was planned for;
    /// - [`RedistError::InvalidArgument`] when one array's shares of a rank's
    ///   messages exceed what one `MPI_Alltoallv` can count;
    /// - [`RedistError::Disagreement`] when ranks pass different numbers of
    ///   pairs or element types; [`RedistError::OtherRank`] when another
    ///   rank's batch was wrong; [`RedistError::Mpi`] as an execution's.
    pub fn execute_mixed_batch(&mut self, batch: &mut MixedBatch<'_>) -> Result<(), RedistError> {
        self.executing();
        let pairs = &mut batch.pairs;
        let most = self.messages.send_total.max(self.messages.recv_total);
        let verdict = self.check_mixed(pairs).map(|()| ((), [most as u64]));
        let comm = self.source_grid.communicator();
        let fingerprint = types_fingerprint(pairs);
        let ((), [per_array]) = agree::agree_with(comm, verdict, fingerprint, EXECUTING)?;
        if pairs.is_empty() {
            return Ok(());
        }
        if !self.figures.messages {
            for p in pairs.iter_mut() {
                p.copy_kept(&self.messages);
            }
            return Ok(());
        }
        let _guard = AbortOnUnwind::new(comm, "redist: a panic during an exchange");
        let per_array = usize::try_from(per_array).unwrap_or(usize::MAX);
        (self.exchange).run_mixed(&self.messages, comm, pairs, per_array)
    }

    /// Counts an execution; at the second, lists the lines of this rank's
    /// small messages once, so that they are copied from the list instead
    /// of walked (a redistribution executed once never pays for the
    /// listing). Local: ranks may list at different executions.
    fn executing(&mut self) {
        if self.executions == 1 {
            self.messages.program.list_small();
        }
        self.executions = self.executions.saturating_add(1);
    }

    /// The verdict the exchange is handed: this rank's own where the
    /// exchange agrees as it goes (and anything moves), else — after the
    /// ranks agreed on their verdicts, when `agree` is set — `Ok`.
    ///
    /// # Errors
    ///
    /// This rank's error, or [`RedistError::OtherRank`] when another
    /// rank's arrays were wrong.
    fn agreed(
        &self,
        verdict: Result<(), RedistError>,
        agree: bool,
    ) -> Result<Result<(), RedistError>, RedistError> {
        if self.figures.messages && self.exchange.agrees_as_it_goes() {
            return Ok(verdict);
        }
        if agree {
            agree::agree(self.source_grid.communicator(), verdict, 0, EXECUTING)?;
        } else {
            verdict?;
        }
        Ok(Ok(()))
    }

    /// The exchange of checked `arrays`: none at all where nothing crosses
    /// ranks (every rank learnt it when the ranks agreed), just each
    /// array's kept elements copied.
    fn run<S: Store<T>>(
        &mut self,
        mut arrays: Arrays<'_, '_, T>,
        verdict: Result<(), RedistError>,
        run: Run<S>,
    ) -> Result<(), RedistError> {
        if !self.figures.messages {
            verdict?;
            for (src, dst) in arrays.pairs() {
                let out = dst.local_slice_mut();
                self.messages.copy_local(src.local_slice(), out, run.store);
            }
            return Ok(());
        }
        let comm = self.source_grid.communicator();
        let _guard = AbortOnUnwind::new(comm, "redist: a panic during an exchange");
        if crate::faults::injected(crate::faults::Fault::ExchangePanic) {
            panic!("a panic injected into an exchange (Fault::ExchangePanic)");
        }
        (self.exchange).run(&self.messages, comm, arrays, verdict, run)
    }

    /// What is wrong with `src` and `dst` on this rank.
    fn check_arrays(&self, src: &DistArray<T>, dst: &DistArray<T>) -> Result<(), RedistError> {
        self.check_sides([(src.layout(), src.grid()), (dst.layout(), dst.grid())])?;
        self.check_ghosts([src.ghost_widths(), dst.ghost_widths()])
    }

    /// Whether a source and a target with ghost widths `widths` are stored
    /// as this redistribution was planned for.
    fn check_ghosts(&self, [source, target]: [&[usize]; 2]) -> Result<(), RedistError> {
        let p = &self.padding;
        let sides = [
            ("source", p.source(), source, p.source_is(source)),
            ("target", p.target(), target, p.target_is(target)),
        ];
        for (side, planned, got, fits) in sides {
            if !fits {
                return Err(RedistError::GhostMismatch {
                    side,
                    planned: planned.to_vec(),
                    got: got.to_vec(),
                });
            }
        }
        Ok(())
    }

    /// Whether a source and a target laid out and placed as `sides` are
    /// this redistribution's (of any element type).
    fn check_sides(&self, sides: [(&Layout, &ProcGrid); 2]) -> Result<(), RedistError> {
        let ours = [
            (self.plan.source(), &self.source_grid),
            (&self.target, &self.target_grid),
        ];
        for ((layout, grid), (want, want_grid)) in sides.into_iter().zip(ours) {
            if layout != want || !grid.shares_communicator(want_grid) {
                return Err(dist_array::DistError::LayoutMismatch {
                    left: layout.to_string(),
                    right: want.to_string(),
                }
                .into());
            }
        }
        Ok(())
    }

    /// What is wrong with a batch on this rank: lengths, each pair of
    /// arrays, counts too large for one `MPI_Alltoallv`.
    fn check_batch(
        &self,
        srcs: &[&DistArray<T>],
        dsts: &[&mut DistArray<T>],
    ) -> Result<(), RedistError> {
        if srcs.len() != dsts.len() {
            return Err(RedistError::InvalidArgument {
                what: "batch",
                value: format!("{} sources and {} targets", srcs.len(), dsts.len()),
                expected: "one target per source".to_string(),
            });
        }
        for (src, dst) in srcs.iter().zip(dsts) {
            self.check_arrays(src, dst)?;
        }
        let k = srcs.len();
        let m = &self.messages;
        let fits = |n: usize| n.checked_mul(k).is_some_and(|x| x <= i32::MAX as usize);
        if !fits(m.send_total) || !fits(m.recv_total) {
            return Err(RedistError::InvalidArgument {
                what: "batch",
                value: format!("{k} arrays"),
                expected: "fewer arrays: a rank would exchange more than 2^31-1 elements in one \
                           MPI_Alltoallv"
                    .to_string(),
            });
        }
        Ok(())
    }

    /// What is wrong with a mixed batch on this rank: each pair's layouts
    /// and grids, shares too large for one `MPI_Alltoallv`.
    fn check_mixed(&self, pairs: &[Box<dyn Pair + '_>]) -> Result<(), RedistError> {
        let m = &self.messages;
        for p in pairs {
            self.check_sides(p.sides())?;
            self.check_ghosts(p.ghost_widths())?;
            // Each message's share rounds up to a whole word.
            let most = words(m.send_total.max(m.recv_total), p.size())
                + m.sends().len().max(m.recvs().len());
            if most > i32::MAX as usize {
                return Err(RedistError::InvalidArgument {
                    what: "mixed batch",
                    value: format!(
                        "an array of {} ({} bytes per element)",
                        p.type_name(),
                        p.size()
                    ),
                    expected: "arrays whose shares of one rank's messages fit 2^31-1 words of 8 \
                               bytes (one MPI_Alltoallv)"
                        .to_string(),
                });
            }
        }
        Ok(())
    }
}

impl<T: Scalar> Redistribution<T> {
    /// Updates `dst` with `src` redistributed: `dst := β·dst + α·op(src)`,
    /// op the complex conjugate where `update.conjugate` is set ([`Update`]),
    /// computed in the copies that write the target — no pass of its own.
    /// With β = 0 the target is not read (NaNs there are overwritten). With
    /// [`with_permutation`](Self::with_permutation) and `[1, 0]` this is
    /// ScaLAPACK's `p?tran` / `p?geadd` (`C := β·C + α·Aᵀ`). The
    /// redistribution must be built with [`Options::updates`](crate::Options::updates), so that
    /// every message reaches the target through this rank's own copies.
    /// Collective, as [`execute_into`](Self::execute_into).
    ///
    /// ```
    /// use dist_array::{DistArray, Layout};
    /// use procgrid::ProcGrid;
    /// use redist::{Options, Redistribution, Update};
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let p = world.size() as usize;
    /// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
    /// let a = Layout::parse(&[4, 6], &format!("cyclic(2),*@{p}x1")).unwrap();
    /// let c = Layout::parse(&[6, 4], &format!("block,*@{p}x1")).unwrap();
    /// let options = Options { updates: true, ..Options::default() };
    /// let mut r = Redistribution::<f64>::with_permutation(&grid, &a, &grid, &c, &[1, 0], None, options)
    ///     .unwrap();
    /// let src = DistArray::from_fn(&grid, a, |g| (10 * g[0] + g[1]) as f64).unwrap();
    /// let mut dst = DistArray::from_fn(&grid, c, |_| 1.0).unwrap();
    /// r.execute_update_into(&src, &mut dst, Update::new(2.0, 3.0)).unwrap(); // C := 3·C + 2·Aᵀ
    /// if let Some(all) = dst.gather(0).unwrap() {
    ///     assert_eq!(all[[5, 3]], 3.0 + 2.0 * 35.0); // A[3, 5]
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`execute_into`](Self::execute_into), and
    /// [`RedistError::InvalidArgument`] (on every rank alike) when the
    /// redistribution was built without [`Options::updates`](crate::Options::updates).
    pub fn execute_update_into(
        &mut self,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        update: Update<T>,
    ) -> Result<(), RedistError> {
        if !self.updates {
            return Err(RedistError::InvalidArgument {
                what: "update",
                value: format!("{update:?}"),
                expected: "a redistribution built with Options::updates (messages received \
                           into buffers, never straight into the target)"
                    .to_string(),
            });
        }
        let Update {
            alpha,
            beta,
            conjugate,
        } = update;
        if update.is_plain() {
            self.execute_with(src, dst, true, Plain)
        } else if beta == T::zero() {
            self.execute_with(src, dst, true, Scale { alpha, conjugate })
        } else {
            let store = Accumulate {
                alpha,
                beta,
                conjugate,
            };
            self.execute_with(src, dst, true, store)
        }
    }
}
