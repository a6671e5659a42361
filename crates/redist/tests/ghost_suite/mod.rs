//! Ghost updates under MPI: random layouts (one block per rank on every
//! axis with ghosts), grids, widths, periodic axes, corners, 1 to 4 axes
//! and element types, every padded cell checked against the value of its
//! global index (and ghosts no one should write, still the sentinel);
//! begin and finish with work between them; two arrays alternating;
//! node-direct reads and messages; errors on one rank seen on all.
#![allow(
    clippy::cast_possible_truncation,
    reason = "test values are small or wrap on purpose"
)]

use dist_array::{Complex, Dist, DistArray, Element, Layout, LayoutSpec};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{all_indices, ensure, MpiTest, TestResult};
use procgrid::ProcGrid;
use redist::ghost::{Corners, GhostOptions, GhostSpec, GhostUpdate};
use redist_plan::ghost::cell_source;

use crate::common::{random_extents, shuffled, Lcg};

/// A random layout of `shape` on `grid` with one block per rank along the
/// axes where `widths` has ghosts (any distribution elsewhere), random
/// first processes, rank map and storage order.
fn ghost_layout(rng: &mut Lcg, shape: &[usize], grid: &[usize], widths: &[usize]) -> Layout {
    let dists: Vec<Dist> = (grid.iter().zip(shape).zip(widths))
        .map(|((&p, &n), &w)| {
            let first = rng.below(p);
            let least = n.div_ceil(p).max(1);
            match rng.below(4) {
                0 if p == 1 => Dist::Collapsed,
                1 if w == 0 => Dist::cyclic(rng.below(3) + 1).starting_at(first),
                0 | 1 => Dist::block().starting_at(first),
                _ => Dist::cyclic(least + rng.below(2)).starting_at(first),
            }
        })
        .collect();
    let l = Layout::new(shape, &LayoutSpec::new(dists, grid.to_vec()).unwrap()).unwrap();
    shuffled(rng, l)
}

/// What padded cell `p` of this rank's part holds after an update whose
/// interior values are `value`: `None` where no update writes (beyond a
/// non-periodic end, corners of a star, an empty part).
fn expected_at<T: Element>(
    a: &DistArray<T>,
    spec: &GhostSpec,
    p: &[usize],
    value: &impl Fn(&[usize]) -> T,
) -> Option<T> {
    cell_source(a.layout(), spec, a.rank()?, p).map(|g| value(&g))
}

/// Every padded cell of `a` as [`expected_at`] says, else `sentinel`.
fn check_ghosts<T>(
    a: &DistArray<T>,
    spec: &GhostSpec,
    value: impl Fn(&[usize]) -> T,
    sentinel: T,
    what: &str,
) -> TestResult
where
    T: Element + PartialEq + std::fmt::Debug,
{
    let padded = a.padded();
    for p in all_indices(padded.shape()) {
        let want = expected_at(a, spec, &p, &value).unwrap_or(sentinel);
        let got = padded[&p[..]];
        ensure!(
            got == want,
            "{what}: {} cell {p:?} holds {got:?}, expected {want:?}",
            a.layout()
        );
    }
    Ok(())
}

/// An array of `layout` with `widths` whose interior holds `value` and
/// whose ghosts hold `sentinel`.
fn ghosted<T: Element>(
    grid: &ProcGrid,
    layout: &Layout,
    widths: &[usize],
    value: impl Fn(&[usize]) -> T + Sync + Send,
    sentinel: T,
    shared: bool,
) -> Result<DistArray<T>, String> {
    let a = DistArray::from_fn(grid, layout.clone(), value).map_err(|e| e.to_string())?;
    let a = if shared { a.into_shared() } else { a };
    let plain = a.clone();
    let mut a = a.with_ghosts(widths).map_err(|e| e.to_string())?;
    a.padded_mut().fill(sentinel);
    a.local_mut().assign(&plain.local());
    Ok(a)
}

/// One random case of element type `T`: two updates (the interior changed
/// between them), each checked.
#[allow(clippy::too_many_arguments, reason = "one test case's parameters")]
fn one_case<T>(
    world: &SimpleCommunicator,
    rng: &mut Lcg,
    value: fn(&[usize], usize) -> T,
    sentinel: T,
) -> TestResult
where
    T: Element + PartialEq + std::fmt::Debug,
{
    let n = world.size() as usize;
    let ndim = rng.below(4) + 1;
    let extents = random_extents(rng, n, ndim);
    let max = [40, 12, 7, 5][ndim - 1];
    let shape: Vec<usize> = (0..ndim).map(|_| rng.below(max) + 1).collect();
    let widths: Vec<usize> = shape.iter().map(|&s| rng.below(s.min(3) + 1)).collect();
    let layout = ghost_layout(rng, &shape, &extents, &widths);
    let periodic: Vec<bool> = (0..ndim).map(|_| rng.below(2) == 0).collect();
    let corners = [Corners::Box, Corners::Star][rng.below(2)];
    let spec = GhostSpec::new(&widths, &periodic, corners);
    let options = GhostOptions {
        node_direct: rng.below(3) != 0,
        wisdom: Some(std::path::PathBuf::new()),
    };
    let shared = rng.below(2) == 0;
    let what = format!("{layout} {spec:?} {options:?} shared {shared}");
    let grid = ProcGrid::new(world, &extents).map_err(|e| e.to_string())?;
    let mut a = ghosted(&grid, &layout, &widths, |g| value(g, 0), sentinel, shared)?;
    let mut update =
        GhostUpdate::with_options(&a, &spec, options).map_err(|e| format!("{what}: {e}"))?;
    update.update(&mut a).map_err(|e| format!("{what}: {e}"))?;
    check_ghosts(&a, &spec, |g| value(g, 0), sentinel, &what)?;
    // Again, with new interior values: the same plan, new cells.
    let fresh =
        DistArray::from_fn(&grid, layout.clone(), |g| value(g, 1)).map_err(|e| e.to_string())?;
    a.local_mut().assign(&fresh.local());
    update
        .update(&mut a)
        .map_err(|e| format!("{what} (second): {e}"))?;
    check_ghosts(&a, &spec, |g| value(g, 1), sentinel, &what)
}

fn linear(g: &[usize]) -> u64 {
    g.iter().fold(0u64, |v, &i| v * 64 + i as u64) + 1
}

fn random_updates(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(71);
    for case in 0..24 {
        match case % 4 {
            0 => one_case::<f64>(
                world,
                &mut rng,
                |g, s| (linear(g) + 1000 * s as u64) as f64,
                -1.0,
            )?,
            1 => one_case::<u8>(
                world,
                &mut rng,
                |g, s| (linear(g) % 250 + 1) as u8 ^ (s as u8 * 3),
                0,
            )?,
            2 => one_case::<i32>(
                world,
                &mut rng,
                |g, s| linear(g) as i32 - 7 * s as i32,
                i32::MIN,
            )?,
            _ => one_case::<Complex<f64>>(
                world,
                &mut rng,
                |g, s| Complex::new(linear(g) as f64, s as f64),
                Complex::new(-1.0, -1.0),
            )?,
        }
    }
    Ok(())
}

/// A heat-equation-like loop: two arrays alternate as source and target,
/// ghosts of the source refreshed with begin/finish around the interior's
/// work, node-direct where storage is shared.
fn alternating_arrays_overlap(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let layout = Layout::parse(&[6 * n + 1, 33], &format!("block,block@{n}x1")).unwrap();
    let spec = GhostSpec::new(&[2, 1], &[true, true], Corners::Box);
    let value = |g: &[usize], s: usize| (linear(g) * 10 + s as u64) as f64;
    let mut arrays = [
        ghosted(&grid, &layout, &[2, 1], |g| value(g, 0), -1.0, true)?,
        ghosted(&grid, &layout, &[2, 1], |g| value(g, 1), -1.0, true)?,
    ];
    let mut update = GhostUpdate::new(&arrays[0], &spec).map_err(|e| e.to_string())?;
    for step in 0..6 {
        let (first, second) = arrays.split_at_mut(1);
        let (a, b) = if step % 2 == 0 {
            (&mut first[0], &mut second[0])
        } else {
            (&mut second[0], &mut first[0])
        };
        let flight = update.begin(a).map_err(|e| e.to_string())?;
        let read: f64 = flight.local().sum();
        flight.finish().map_err(|e| e.to_string())?;
        ensure!(
            read == a.local().sum(),
            "the interior read in flight is the interior"
        );
        check_ghosts(
            a,
            &spec,
            |g| value(g, step),
            -1.0,
            &format!("alternating, step {step}"),
        )?;
        // The next step's source: b gets the next step's values.
        let next = DistArray::from_fn(&grid, layout.clone(), |g| value(g, step + 1))
            .map_err(|e| e.to_string())?;
        b.local_mut().assign(&next.local());
    }
    let copies = update.copies();
    ensure!(
        update.mappings_made() <= 2 * update.part().recvs().len(),
        "each owner's array mapped once: {} mappings for {} owners",
        update.mappings_made(),
        update.part().recvs().len()
    );
    // Owners on this rank's node (all of them on one machine; across
    // emulated nodes, those of its own).
    let node = procgrid::Node::of(world);
    let near = update.part().recvs().iter().any(|m| node.contains(m.peer));
    ensure!(
        !near || copies.read > 0,
        "shared storage on one node is read directly: {copies:?}"
    );
    ensure!(
        copies.read + copies.messages == update.part().recvs().len(),
        "every receive is read or a message: {copies:?}"
    );
    Ok(())
}

/// One rank with other widths, a layout without one block per rank, a
/// wrong array at update: every rank returns an error, none hangs.
fn errors_agree(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let me = world.rank() as usize;
    let grid = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let layout = Layout::parse(&[4 * n, 6], &format!("block,block@{n}x1")).unwrap();
    let a = DistArray::<f64>::zeros_with_ghosts(&grid, layout.clone(), &[1, 1])
        .map_err(|e| e.to_string())?;
    // The last rank asks for other widths than its array has.
    let widths = if me == n - 1 { [2, 1] } else { [1, 1] };
    let spec = GhostSpec::new(&widths, &[true, false], Corners::Box);
    ensure!(
        GhostUpdate::new(&a, &spec).is_err(),
        "other widths on rank {}: refused everywhere",
        n - 1
    );
    // The last rank's spec differs (periodic flags).
    let periodic = if me == n - 1 {
        [false, false]
    } else {
        [true, false]
    };
    let spec = GhostSpec::new(&[1, 1], &periodic, Corners::Box);
    let r = GhostUpdate::new(&a, &spec);
    ensure!(n == 1 || r.is_err(), "different specs: refused everywhere");
    // Several blocks per rank along an axis with ghosts.
    let cyclic = Layout::parse(&[4 * n, 6], &format!("cyclic,block@{n}x1")).unwrap();
    let c =
        DistArray::<f64>::zeros_with_ghosts(&grid, cyclic, &[1, 1]).map_err(|e| e.to_string())?;
    let spec = GhostSpec::new(&[1, 1], &[true, true], Corners::Box);
    let r = GhostUpdate::new(&c, &spec);
    ensure!(
        n == 1 || r.is_err(),
        "cyclic with several blocks per rank: refused"
    );
    // At update, the last rank hands in an array of other widths.
    let mut update = GhostUpdate::new(&a, &spec).map_err(|e| e.to_string())?;
    let mut right = a.clone();
    let mut wrong =
        DistArray::<f64>::zeros_with_ghosts(&grid, layout, &[1, 0]).map_err(|e| e.to_string())?;
    let r = if me == n - 1 {
        update.update(&mut wrong)
    } else {
        update.update(&mut right)
    };
    ensure!(
        r.is_err(),
        "a wrong array on rank {}: every rank errs ({r:?})",
        n - 1
    );
    // And the update still works afterwards.
    update.update(&mut right).map_err(|e| e.to_string())?;
    Ok(())
}

pub const TESTS: &[MpiTest] = &[
    MpiTest::new("random_updates", random_updates),
    MpiTest::new("alternating_arrays_overlap", alternating_arrays_overlap),
    MpiTest::new("errors_agree", errors_agree),
];
