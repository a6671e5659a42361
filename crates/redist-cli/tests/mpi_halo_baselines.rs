//! The hand-written ghost updates (`redist_cli::halo_baseline`) under MPI,
//! launched by the harness with 1 to 5 ranks: both yardsticks on 2-D and
//! 3-D layouts of every grid of the launch's ranks and of smaller ones
//! (ranks left over take no part), ragged, offset, cyclic, collapsed and
//! empty parts, both storage orders and a permuted rank map, periodic axes
//! or not, star and box, widths 0, 1 and 2 per axis, 8-byte and 3-byte
//! elements, each updated twice from fresh values, every cell checked; the
//! periodic axes of 1 and 2 processes where a neighbour sits on both sides;
//! and the refusals, alike on every rank.
#![allow(clippy::cast_possible_truncation, reason = "test extents are small")]

use bytemuck::Pod;
use dist_array::Layout;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, MpiTest, TestResult};
use redist::ghost::{Corners, GhostSpec};
use redist_cli::halo_baseline::{
    check_ghosts, fill_ghosted, AxisByAxisHalo, HaloError, NeighborCollectiveHalo,
};
use std::fmt::Debug;

/// An element type of the tests: the value of a cell from its row-major
/// position in the array and the round of the update, and each rank's own
/// sentinel, which no value takes: a ghost that should stay untouched but
/// was written from another rank's untouched ghosts shows that rank's.
trait Value: Pod + PartialEq + Debug {
    fn sentinel(rank: usize) -> Self;
    fn of(linear: usize, round: usize) -> Self;
}

impl Value for f64 {
    fn sentinel(rank: usize) -> f64 {
        -1.0 - rank as f64
    }
    fn of(linear: usize, round: usize) -> f64 {
        linear as f64 + 0.25 + 1e6 * round as f64
    }
}

/// A 3-byte element: elements of odd size move as bytes too.
impl Value for [u8; 3] {
    fn sentinel(rank: usize) -> [u8; 3] {
        [255, 255, 255 - rank as u8]
    }
    fn of(linear: usize, round: usize) -> [u8; 3] {
        let v = (linear + 1000 * round) % 0xff_ffff;
        [v as u8, (v >> 8) as u8, (v >> 16) as u8]
    }
}

fn linear(g: &[usize], shape: &[usize]) -> usize {
    g.iter().zip(shape).fold(0, |v, (&i, &n)| v * n + i)
}

/// One ghosted layout and halo to update.
struct Case {
    layout: Layout,
    halo: GhostSpec,
    /// 8-byte (`f64`) or 3-byte elements.
    wide: bool,
}

impl Case {
    fn describe(&self) -> String {
        format!(
            "{:?} {} ({:?} storage, rank map {:?}), widths {:?}, periodic {:?}, {:?}, {} elements",
            self.layout.shape(),
            self.layout.spec(),
            self.layout.storage(),
            self.layout.rank_map(),
            self.halo.widths(),
            self.halo.periodic(),
            self.halo.corners(),
            if self.wide { "f64" } else { "3-byte" }
        )
    }
}

/// Along one axis of `p` processes, the `kind`-th of four distributions
/// whose parts all hold at least 2 indices or none: `(dist, extent)`.
fn axis_menu(kind: usize, p: usize) -> (String, usize) {
    match (kind % 4, p) {
        (0, _) => ("block".into(), 3 * p),
        // The last part shorter, the first block on process 1.
        (1, 1) => ("block".into(), 2),
        (1, _) => ("block+1".into(), 3 * p - 1),
        // One block per process but one, which holds nothing.
        (2, 1) => ("*".into(), 4),
        (2, _) => (format!("cyclic(3)+{}", p - 1), 3 * (p - 1)),
        // Parts of exactly 2 (a width of 2 takes a neighbour's whole part).
        _ => ("cyclic(2)".into(), 2 * p),
    }
}

/// A pseudo-random choice below `range` for case `i`'s parameter `salt`:
/// what the cases vary besides corners and periodic axes, which they
/// enumerate, so that no two choices move in step.
fn pick(i: usize, salt: usize, range: usize) -> usize {
    let h = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ (salt as u64 + 1).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    ((h ^ (h >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) >> 33) as usize % range
}

/// The `i`-th case on `grid`: box and star alternate, the periodic axes
/// run through every combination (bits of `i / 2`), the rest is picked.
fn case(grid: &[usize], i: usize) -> Case {
    let k = grid.len();
    let (dists, shape): (Vec<String>, Vec<usize>) =
        (0..k).map(|d| axis_menu(pick(i, d, 4), grid[d])).unzip();
    let grid_text: Vec<String> = grid.iter().map(usize::to_string).collect();
    let spec = format!("{}@{}", dists.join(","), grid_text.join("x"));
    let mut layout = Layout::parse(&shape, &spec).unwrap();
    if pick(i, 10, 3) == 0 {
        let map: Vec<usize> = (0..layout.ranks()).rev().collect();
        layout = layout.with_rank_map(map).unwrap();
    }
    if pick(i, 11, 2) == 1 {
        layout = layout.with_storage(dist_array::Order::ColumnMajor);
    }
    // Widths 1 and 2, and now and then 0 on the first axis.
    let widths: Vec<usize> = (0..k)
        .map(|d| match pick(i, 20 + d, 7) {
            0 if d == 0 => 0,
            0..=3 => 1,
            _ => 2,
        })
        .collect();
    let periodic: Vec<bool> = (0..k).map(|d| ((i / 2) >> d) & 1 == 1).collect();
    let corners = if i.is_multiple_of(2) {
        Corners::Box
    } else {
        Corners::Star
    };
    Case {
        layout,
        halo: GhostSpec::new(&widths, &periodic, corners),
        wide: pick(i, 12, 2) == 0,
    }
}

/// Both yardsticks on `case`, twice each from fresh values, every cell of
/// every rank checked.
fn run_case(world: &SimpleCommunicator, case: &Case) -> TestResult {
    if case.wide {
        run_typed::<f64>(world, case)
    } else {
        run_typed::<[u8; 3]>(world, case)
    }
}

fn run_typed<T: Value>(world: &SimpleCommunicator, case: &Case) -> TestResult {
    let me = world.rank() as usize;
    let (layout, halo) = (&case.layout, &case.halo);
    let shape = layout.shape().to_vec();
    let bytes = std::mem::size_of::<T>();
    let mut axis_by_axis = AxisByAxisHalo::new(world, layout, halo, bytes)
        .map_err(|e| format!("{}: {e}", case.describe()))?;
    let neighbor = NeighborCollectiveHalo::new(world, layout, halo, bytes)
        .map_err(|e| format!("{}: {e}", case.describe()))?;
    for round in 0..2 {
        let f = |g: &[usize]| T::of(linear(g, &shape), round);
        for which in ["sendrecv", "neighbor"] {
            let mut storage = fill_ghosted(layout, me, halo.widths(), f, T::sentinel(me))
                .map_err(|e| e.to_string())?;
            match which {
                "sendrecv" => axis_by_axis.update(&mut storage),
                _ => neighbor.update(&mut storage),
            }
            .map_err(|e| format!("{which}, {}: {e}", case.describe()))?;
            let verdict = check_ghosts(layout, me, halo, &storage, f, T::sentinel(me))
                .map_err(|e| e.to_string())?;
            ensure!(
                verdict.is_right(),
                "{which}, round {round}, rank {me}, {}: {} wrong cells, the first {}",
                case.describe(),
                verdict.wrong,
                verdict.first_wrong.unwrap_or_default()
            );
        }
    }
    Ok(())
}

/// Every ordered factorisation of `n` into `k` extents.
fn grids(n: usize, k: usize) -> Vec<Vec<usize>> {
    if k == 1 {
        return vec![vec![n]];
    }
    (1..=n)
        .filter(|f| n.is_multiple_of(*f))
        .flat_map(|f| {
            grids(n / f, k - 1).into_iter().map(move |mut rest| {
                rest.insert(0, f);
                rest
            })
        })
        .collect()
}

/// The grids of `k` dimensions a launch of `n` ranks runs on: every grid
/// of all its ranks, and the named small ones that fit (the other ranks
/// left out).
fn launch_grids(n: usize, k: usize) -> Vec<Vec<usize>> {
    let named: &[&[usize]] = match k {
        2 => &[&[2, 1], &[1, 2], &[2, 2], &[3, 1], &[1, 1]],
        _ => &[&[2, 1, 1], &[2, 2, 1], &[1, 1, 1]],
    };
    let mut out = grids(n, k);
    for g in named {
        if g.iter().product::<usize>() <= n && !out.iter().any(|o| o == g) {
            out.push(g.to_vec());
        }
    }
    out
}

fn two_dimensional(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    for grid in launch_grids(n, 2) {
        for i in 0..16 {
            run_case(world, &case(&grid, i))?;
        }
    }
    Ok(())
}

fn three_dimensional(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    for grid in launch_grids(n, 3) {
        for i in 0..16 {
            run_case(world, &case(&grid, i))?;
        }
    }
    Ok(())
}

/// Periodic axes of one and two processes, where one rank (or this rank
/// itself) is the neighbour on both sides, and a box of 8 or 26 edges
/// joins few ranks: each edge must land in its own ghosts.
fn periodic_axes_of_one_and_two(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grids: &[&[usize]] = &[
        &[1, 1],
        &[2, 1],
        &[1, 2],
        &[2, 2],
        &[1, 1, 1],
        &[2, 1, 1],
        &[2, 2, 1],
    ];
    for &grid in grids {
        if grid.iter().product::<usize>() > n {
            continue;
        }
        let shape: Vec<usize> = grid.iter().enumerate().map(|(d, &p)| (4 + d) * p).collect();
        let dists = vec!["block"; grid.len()].join(",");
        let grid_text: Vec<String> = grid.iter().map(usize::to_string).collect();
        let layout = Layout::parse(&shape, &format!("{dists}@{}", grid_text.join("x"))).unwrap();
        for corners in [Corners::Box, Corners::Star] {
            for widths in [
                vec![1; grid.len()],
                (1..=grid.len()).map(|d| 1 + d % 2).collect(),
            ] {
                let halo = GhostSpec::new(&widths, &vec![true; grid.len()], corners);
                for wide in [true, false] {
                    run_case(
                        world,
                        &Case {
                            layout: layout.clone(),
                            halo: halo.clone(),
                            wide,
                        },
                    )?;
                }
            }
        }
        // The neighbour-collective graph lists every direction, repeats and all.
        let halo = GhostSpec::new(&vec![1; grid.len()], &vec![true; grid.len()], Corners::Box);
        let update =
            NeighborCollectiveHalo::new(world, &layout, &halo, 8).map_err(|e| e.to_string())?;
        let me = world.rank() as usize;
        let expected = if me < layout.ranks() {
            3usize.pow(grid.len() as u32) - 1
        } else {
            0
        };
        ensure_eq!(update.edges(), expected, "grid {:?}", grid);
    }
    Ok(())
}

/// What the yardsticks refuse, with the same error on every rank and no
/// rank left waiting.
fn refusals(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let me = world.rank() as usize;
    let halo = |widths: Vec<usize>, periodic: bool| {
        GhostSpec::new(&widths, &vec![periodic; widths.len()], Corners::Box)
    };
    let both = |layout: &Layout, halo: &GhostSpec| -> Vec<Result<(), HaloError>> {
        vec![
            AxisByAxisHalo::new(world, layout, halo, 8).map(|_| ()),
            NeighborCollectiveHalo::new(world, layout, halo, 8).map(|_| ()),
        ]
    };
    // 5 over 2: parts of 3 and 2; a width of 3 is wider than the second.
    let layout = Layout::parse(&[5, 4], "block,block@2x1").unwrap();
    for verdict in both(&layout, &halo(vec![3, 1], true)) {
        ensure!(
            matches!(
                verdict,
                Err(HaloError::WidthBeyondNeighbour {
                    axis: 0,
                    width: 3,
                    coordinate: 1,
                    extent: 2
                })
            ),
            "{verdict:?}"
        );
    }
    // Not periodic, the first part's low side has no neighbour; its high
    // side's neighbour still holds 2.
    for verdict in both(&layout, &halo(vec![3, 1], false)) {
        ensure!(
            matches!(verdict, Err(HaloError::WidthBeyondNeighbour { .. })),
            "{verdict:?}"
        );
    }
    let cyclic = Layout::parse(&[8, 4], "cyclic(2),block@1x1").unwrap();
    for verdict in both(&cyclic, &halo(vec![1, 1], true)) {
        ensure!(
            matches!(verdict, Err(HaloError::NotOneBlockPerAxis { axis: 0, .. })),
            "{verdict:?}"
        );
    }
    for verdict in both(&layout, &halo(vec![1], true)) {
        ensure!(
            matches!(
                verdict,
                Err(HaloError::PerAxis {
                    given: 1,
                    ndim: 2,
                    ..
                })
            ),
            "{verdict:?}"
        );
    }
    let large = Layout::parse(&[4 * (n + 1)], &format!("block@{}", n + 1)).unwrap();
    for verdict in both(&large, &halo(vec![1], true)) {
        ensure!(
            matches!(verdict, Err(HaloError::TooFewRanks { .. })),
            "{verdict:?}"
        );
    }
    // Storage of the wrong size is refused before any message moves (on
    // every rank of the layout alike, here all of them).
    let one = Layout::parse(&[2 * n, 3], &format!("block,block@{n}x1")).unwrap();
    let h = halo(vec![1, 1], true);
    let mut update = AxisByAxisHalo::new(world, &one, &h, 8).map_err(|e| e.to_string())?;
    let mut short = vec![0.0f64; 3];
    ensure!(
        matches!(update.update(&mut short), Err(HaloError::StorageSize { rank, .. }) if rank == me)
    );
    let update = NeighborCollectiveHalo::new(world, &one, &h, 8).map_err(|e| e.to_string())?;
    ensure!(matches!(
        update.update(&mut short),
        Err(HaloError::StorageSize { .. })
    ));
    ensure!(matches!(
        AxisByAxisHalo::new(world, &one, &h, 0),
        Err(HaloError::ZeroElement)
    ));
    Ok(())
}

fn main() {
    mpi_harness::run_with_ranks(
        "halo_baselines",
        &[1, 2, 3, 4, 5],
        &[
            MpiTest::new("two_dimensional", two_dimensional),
            MpiTest::new("three_dimensional", three_dimensional),
            MpiTest::new("periodic_axes_of_one_and_two", periodic_axes_of_one_and_two),
            MpiTest::new("refusals", refusals),
        ],
    );
}
