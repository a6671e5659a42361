//! procgrid under MPI: launched by the harness with 1, 2, 3, 4, 5, 6 and 8 ranks.
#![allow(
    clippy::cast_possible_truncation,
    reason = "test ranks and extents are small"
)]

use mpi::collective::CommunicatorCollectives;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, CommunicatorRelation, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, MpiTest, TestResult};
use procgrid::{balanced_extents, rank_to_coords, GridError, Order, ProcGrid, Shift};

/// Every ordered factorisation of `n` into `k` extents.
fn shapes(n: usize, k: usize) -> Vec<Vec<usize>> {
    if k == 1 {
        return vec![vec![n]];
    }
    let mut out = vec![];
    for f in 1..=n {
        if n.is_multiple_of(f) {
            for mut rest in shapes(n / f, k - 1) {
                rest.insert(0, f);
                out.push(rest);
            }
        }
    }
    out
}

fn all_shapes(n: usize) -> Vec<Vec<usize>> {
    (1..=3).flat_map(|k| shapes(n, k)).collect()
}

/// Every 2-D shape and a few 3-D ones (the first, the balanced one, the last):
/// sub-grid tests are collective-heavy, and oversubscribed MPICH makes each
/// collective slow.
fn some_shapes(n: usize) -> Vec<Vec<usize>> {
    let mut out = shapes(n, 2);
    let three = shapes(n, 3);
    let balanced = balanced_extents(n, &[0, 0, 0]).unwrap();
    for s in [
        three.first().cloned(),
        Some(balanced),
        three.last().cloned(),
    ]
    .into_iter()
    .flatten()
    {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

fn orders() -> [Order; 2] {
    [Order::RowMajor, Order::ColumnMajor]
}

fn bijection(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let me = world.rank() as usize;
    for extents in all_shapes(n) {
        for order in orders() {
            let grid = ProcGrid::builder(&extents)
                .order(order)
                .build(world)
                .map_err(|e| e.to_string())?;
            ensure!(grid.is_member());
            ensure_eq!(grid.size(), n);
            ensure_eq!(grid.rank(), Some(me), "grid rank is the communicator rank");
            let coords = grid.coords().unwrap().to_vec();
            ensure_eq!(coords, rank_to_coords(me, &extents, order).unwrap());
            ensure_eq!(grid.rank_of(&coords).unwrap(), me);
            // MPI's own view of the coordinates (reversed for column-major grids).
            let mut mpi_coords: Vec<usize> = grid
                .grid_communicator()
                .unwrap()
                .rank_to_coordinates(me as i32)
                .into_iter()
                .map(|c| c as usize)
                .collect();
            if order == Order::ColumnMajor {
                mpi_coords.reverse();
            }
            ensure_eq!(mpi_coords, coords, "extents {:?} {:?}", extents, order);
            // Gather every rank's coordinates: all distinct, each maps back to its rank.
            let mut all = vec![0u64; n * extents.len()];
            let mine: Vec<u64> = coords.iter().map(|&c| c as u64).collect();
            world.all_gather_into(&mine[..], &mut all[..]);
            let mut seen = vec![false; n];
            for (r, c) in all.chunks(extents.len()).enumerate() {
                let c: Vec<usize> = c.iter().map(|&x| x as usize).collect();
                let back = grid.rank_of(&c).map_err(|e| e.to_string())?;
                ensure_eq!(back, r);
                ensure!(!seen[back]);
                seen[back] = true;
                ensure_eq!(grid.coords_of(r).unwrap(), c);
            }
        }
    }
    Ok(())
}

fn sub_grids(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let me = world.rank() as usize;
    for extents in some_shapes(n) {
        for order in orders() {
            let grid = ProcGrid::builder(&extents)
                .order(order)
                .periodic(&vec![true; extents.len()])
                .build(world)
                .map_err(|e| e.to_string())?;
            let coords = grid.coords().unwrap().to_vec();
            for mask in 1..(1u32 << extents.len()) {
                let keep: Vec<bool> = (0..extents.len()).map(|d| mask & (1 << d) != 0).collect();
                let sub = grid.sub_grid(&keep).map_err(|e| e.to_string())?.unwrap();
                let kept_extents: Vec<usize> = (0..extents.len())
                    .filter(|&d| keep[d])
                    .map(|d| extents[d])
                    .collect();
                let kept_coords: Vec<usize> = (0..extents.len())
                    .filter(|&d| keep[d])
                    .map(|d| coords[d])
                    .collect();
                ensure_eq!(sub.extents(), &kept_extents[..]);
                ensure_eq!(sub.coords().unwrap(), &kept_coords[..]);
                ensure_eq!(sub.order(), order);
                let sub_comm = sub.grid_communicator().unwrap();
                ensure_eq!(sub_comm.size() as usize, sub.size());
                ensure_eq!(sub_comm.rank() as usize, sub.rank_of(&kept_coords).unwrap());
                // Members: exactly the world ranks sharing the dropped coordinates, in sub-grid order.
                let mut members = vec![0u64; sub.size()];
                sub_comm.all_gather_into(&(me as u64), &mut members[..]);
                for (sr, &wr) in members.iter().enumerate() {
                    let theirs = grid.coords_of(wr as usize).unwrap();
                    for d in 0..extents.len() {
                        if !keep[d] {
                            ensure_eq!(
                                theirs[d],
                                coords[d],
                                "member {} of sub-grid {:?}",
                                wr,
                                keep
                            );
                        }
                    }
                    let their_kept: Vec<usize> = (0..extents.len())
                        .filter(|&d| keep[d])
                        .map(|d| theirs[d])
                        .collect();
                    ensure_eq!(sub.rank_of(&their_kept).unwrap(), sr);
                }
            }
            if extents.len() == 2 {
                let row = grid.row_grid().map_err(|e| e.to_string())?.unwrap();
                let col = grid.column_grid().map_err(|e| e.to_string())?.unwrap();
                ensure_eq!(row.size(), extents[1]);
                ensure_eq!(col.size(), extents[0]);
                ensure_eq!(row.coords().unwrap(), &[coords[1]][..]);
                ensure_eq!(col.coords().unwrap(), &[coords[0]][..]);
            }
        }
    }
    Ok(())
}

fn shifts(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    for extents in all_shapes(n) {
        for order in orders() {
            for periodic in [false, true] {
                let grid = ProcGrid::builder(&extents)
                    .order(order)
                    .periodic(&vec![periodic; extents.len()])
                    .build(world)
                    .map_err(|e| e.to_string())?;
                let coords = grid.coords().unwrap().to_vec();
                let cart = grid.grid_communicator().unwrap();
                for dim in 0..extents.len() {
                    for disp in -3i64..=3 {
                        let s = grid.shift(dim, disp).map_err(|e| e.to_string())?.unwrap();
                        // Oracle: move the coordinate by hand.
                        let expect = |d: i64| {
                            let t = coords[dim] as i64 + d;
                            let e = extents[dim] as i64;
                            let t = if periodic {
                                Some(t.rem_euclid(e))
                            } else {
                                (0..e).contains(&t).then_some(t)
                            };
                            t.map(|t| {
                                let mut c = coords.clone();
                                c[dim] = t as usize;
                                grid.rank_of(&c).unwrap()
                            })
                        };
                        ensure_eq!(
                            s,
                            Shift {
                                source: expect(-disp),
                                dest: expect(disp)
                            }
                        );
                        // MPI's own shift agrees (its dimensions are reversed for column-major).
                        let mpi_dim = if order == Order::ColumnMajor {
                            extents.len() - 1 - dim
                        } else {
                            dim
                        };
                        let (src, dst) = cart.shift(mpi_dim as i32, disp as i32);
                        ensure_eq!(
                            src.map(|r| r as usize),
                            s.source,
                            "MPI source, dim {} disp {}",
                            dim,
                            disp
                        );
                        ensure_eq!(
                            dst.map(|r| r as usize),
                            s.dest,
                            "MPI dest, dim {} disp {}",
                            dim,
                            disp
                        );
                    }
                    if periodic {
                        // Pass our rank one step along the ring; we receive the source's.
                        let s = grid.shift(dim, 1).unwrap().unwrap();
                        let (dest, source) = (s.dest.unwrap(), s.source.unwrap());
                        let mine = grid.rank().unwrap() as u64;
                        let mut got = 0u64;
                        mpi::request::scope(|scope| {
                            let r = cart
                                .process_at_rank(source as i32)
                                .immediate_receive_into(scope, &mut got);
                            cart.process_at_rank(dest as i32).send(&mine);
                            r.wait();
                        });
                        ensure_eq!(got, source as u64);
                    }
                }
            }
        }
    }
    Ok(())
}

fn automatic_extents(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    for ndims in 1..=4 {
        let grid = ProcGrid::balanced(world, ndims).map_err(|e| e.to_string())?;
        ensure_eq!(grid.size(), n);
        ensure_eq!(
            grid.extents(),
            &balanced_extents(n, &vec![0; ndims]).unwrap()[..]
        );
    }
    // Against MPI_Dims_create for 1..64 ranks (a local call, no communication).
    for ranks in 1..=64usize {
        for ndims in 1..=3usize {
            let dims = mpi_extras::communicator::dims_create(ranks, ndims)
                .ok_or_else(|| format!("MPI_Dims_create({ranks}, {ndims}) failed"))?;
            let mpi_dims: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
            let ours = balanced_extents(ranks, &vec![0; ndims]).unwrap();
            ensure_eq!(ours.iter().product::<usize>(), ranks);
            // MPI_Dims_create's heuristic may differ in ties, but never beats ours on balance.
            let spread = |v: &[usize]| v.iter().max().unwrap() - v.iter().min().unwrap();
            ensure!(
                spread(&ours) <= spread(&mpi_dims),
                "ranks {ranks}: ours {ours:?}, MPI {mpi_dims:?}"
            );
            if ndims <= 2 {
                ensure_eq!(ours, mpi_dims, "ranks {}", ranks);
            }
        }
    }
    Ok(())
}

fn subset_grids(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let me = world.rank() as usize;
    for used in 1..=n {
        let grid = ProcGrid::builder(&[used])
            .subset(true)
            .periodic(&[true])
            .build(world)
            .map_err(|e| e.to_string())?;
        ensure_eq!(grid.is_member(), me < used);
        if me < used {
            ensure_eq!(grid.coords(), Some(&[me][..]));
            ensure_eq!(grid.rank(), Some(me));
            ensure!(grid.shift(0, 1).unwrap().is_some());
            let sub = grid.sub_grid(&[true]).map_err(|e| e.to_string())?;
            ensure!(sub.is_some());
            let members = grid.grid_communicator().unwrap();
            ensure_eq!(members.size() as usize, used);
            let mut sum = 0u64;
            members.all_reduce_into(&1u64, &mut sum, mpi::collective::SystemOperation::sum());
            ensure_eq!(sum as usize, used);
        } else {
            ensure_eq!(grid.coords(), None);
            ensure_eq!(grid.rank(), None);
            ensure_eq!(grid.shift(0, 1), Ok(None));
            ensure!(grid.sub_grid(&[true]).unwrap().is_none());
            ensure!(grid.grid_communicator().is_none());
        }
        // A second grid over the same duplicate, using every rank.
        let full = ProcGrid::builder(&[1, n])
            .build_sharing(&grid)
            .map_err(|e| e.to_string())?;
        ensure!(full.shares_communicator(&grid));
        ensure!(full.is_member());
        let mut sum = 0u64;
        full.communicator().all_reduce_into(
            &(me as u64),
            &mut sum,
            mpi::collective::SystemOperation::sum(),
        );
        ensure_eq!(sum as usize, n * (n - 1) / 2);
    }
    Ok(())
}

fn own_communicator(world: &SimpleCommunicator) -> TestResult {
    let grid = ProcGrid::balanced(world, 2).map_err(|e| e.to_string())?;
    ensure_eq!(
        world.compare(grid.communicator()),
        CommunicatorRelation::Congruent
    );
    let other = ProcGrid::balanced(world, 2).map_err(|e| e.to_string())?;
    ensure!(!grid.shares_communicator(&other));
    // A message on the grid's communicator is not seen by a receive on the world.
    let n = world.size();
    let me = world.rank();
    let to = (me + 1) % n;
    let from = (me + n - 1) % n;
    let mut got_world = -1i32;
    let mut got_grid = -1i32;
    mpi::request::scope(|scope| {
        let rw =
            world
                .process_at_rank(from)
                .immediate_receive_into_with_tag(scope, &mut got_world, 7);
        let rg = grid
            .communicator()
            .process_at_rank(from)
            .immediate_receive_into_with_tag(scope, &mut got_grid, 7);
        grid.communicator()
            .process_at_rank(to)
            .send_with_tag(&(me * 10 + 1), 7);
        world.process_at_rank(to).send_with_tag(&(me * 10 + 2), 7);
        rw.wait();
        rg.wait();
    });
    ensure_eq!(got_grid, from * 10 + 1);
    ensure_eq!(got_world, from * 10 + 2);
    Ok(())
}

fn errors_everywhere(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let err = |r: Result<ProcGrid, GridError>| r.err();
    ensure!(
        matches!(err(ProcGrid::new(world, &[n + 1])), Some(GridError::SizeMismatch { needed, available, .. }) if needed == n + 1 && available == n)
    );
    ensure!(matches!(
        err(ProcGrid::new(world, &[n, 0])),
        Some(GridError::ZeroExtent { dim: 1, .. })
    ));
    ensure!(matches!(
        err(ProcGrid::new(world, &[])),
        Some(GridError::NoDimensions)
    ));
    ensure!(matches!(
        err(ProcGrid::new(world, &[usize::MAX, 3])),
        Some(GridError::ExtentOverflow { .. })
    ));
    ensure!(matches!(
        err(ProcGrid::builder(&[n, 1]).periodic(&[true]).build(world)),
        Some(GridError::DimensionCount {
            what: "periodic flags",
            expected: 2,
            got: 1
        })
    ));
    ensure!(matches!(
        err(ProcGrid::builder(&[n + 1]).subset(true).build(world)),
        Some(GridError::TooFewRanks { .. })
    ));
    if n > 1 {
        ensure!(matches!(
            err(ProcGrid::new(world, &[n - 1])),
            Some(GridError::SizeMismatch { .. })
        ));
    }
    let grid = ProcGrid::new(world, &[1, n, 1]).map_err(|e| e.to_string())?;
    ensure!(matches!(
        grid.rank_of(&[0, n, 0]),
        Err(GridError::CoordinateOutOfRange { dim: 1, .. })
    ));
    ensure!(matches!(
        grid.rank_of(&[0, 0]),
        Err(GridError::DimensionCount { .. })
    ));
    ensure!(matches!(
        grid.coords_of(n),
        Err(GridError::RankOutOfRange { .. })
    ));
    ensure!(matches!(
        grid.shift(3, 1),
        Err(GridError::NoSuchDimension { dim: 3, ndims: 3 })
    ));
    ensure!(matches!(
        grid.shift_at(&[1, 0, 0], 0, 1),
        Err(GridError::CoordinateOutOfRange { dim: 0, .. })
    ));
    ensure!(matches!(
        grid.row_grid(),
        Err(GridError::NotTwoDimensional { ndims: 3, .. })
    ));
    ensure!(matches!(
        grid.sub_grid(&[true]),
        Err(GridError::DimensionCount { .. })
    ));
    ensure!(matches!(
        grid.sub_grid(&[false, false, false]),
        Err(GridError::NoDimensions)
    ));
    // Messages say what was wrong and what was expected.
    let msg = err(ProcGrid::new(world, &[n + 1])).unwrap().to_string();
    ensure!(
        msg.contains(&format!("need {} ranks", n + 1)) && msg.contains(&format!("has {n}")),
        "{msg}"
    );
    // Nobody was left behind in a collective: a valid grid still builds everywhere.
    let ok = ProcGrid::balanced(world, 2).map_err(|e| e.to_string())?;
    ok.communicator().barrier();
    Ok(())
}

/// The library's communicators abort on MPI errors even when the user's
/// communicator returns them (a duplicate inherits the user's handler).
fn errors_are_fatal_on_library_communicators(world: &SimpleCommunicator) -> TestResult {
    use mpi_extras::communicator::{errors_are_fatal, set_errors_return};
    let n = world.size() as usize;
    let user = world.duplicate();
    set_errors_return(&user);
    ensure!(errors_are_fatal(&user) == Some(false));
    let grid = ProcGrid::new(&user, &[n]).map_err(|e| e.to_string())?;
    ensure!(errors_are_fatal(grid.communicator()) == Some(true));
    if let Some(row) = ProcGrid::new(&user, &[n, 1])
        .map_err(|e| e.to_string())?
        .row_grid()
        .map_err(|e| e.to_string())?
    {
        ensure!(errors_are_fatal(row.communicator()) == Some(true));
    }
    Ok(())
}

/// `memo` runs its computation once per communicator: shared by grids
/// built to share it, not by a grid over a duplicate; collective
/// computations in it agree.
fn memos(world: &SimpleCommunicator) -> TestResult {
    #[derive(Clone, Copy, PartialEq, Debug)]
    struct Sum(i32);
    let n = world.size() as usize;
    let rows = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let cols = ProcGrid::builder(&[1, n])
        .build_sharing(&rows)
        .map_err(|e| e.to_string())?;
    let other = ProcGrid::new(world, &[1, n]).map_err(|e| e.to_string())?;
    let runs = std::cell::Cell::new(0);
    let sum = |comm: &SimpleCommunicator| {
        runs.set(runs.get() + 1);
        let mut total = 0;
        comm.all_reduce_into(
            &comm.rank(),
            &mut total,
            mpi::collective::SystemOperation::sum(),
        );
        Sum(total)
    };
    let expected = Sum((0..n as i32).sum());
    ensure_eq!(rows.memo(sum), expected);
    ensure_eq!(cols.memo(sum), expected);
    ensure_eq!(
        runs.get(),
        1,
        "a grid sharing the communicator finds the value"
    );
    ensure_eq!(other.memo(sum), expected);
    ensure_eq!(
        runs.get(),
        2,
        "a grid over another communicator computes its own"
    );
    ensure_eq!(rows.memo(|_| 7u8), 7u8, "one value per type");
    ensure_eq!(cols.memo(|_| 9u8), 7u8);
    Ok(())
}

fn main() {
    mpi_harness::run(
        "procgrid",
        &[
            MpiTest::new("bijection", bijection),
            MpiTest::new("sub_grids", sub_grids),
            MpiTest::new("shifts", shifts),
            MpiTest::new("automatic_extents", automatic_extents),
            MpiTest::new("subset_grids", subset_grids),
            MpiTest::new("own_communicator", own_communicator),
            MpiTest::new("memos", memos),
            MpiTest::new("errors_everywhere", errors_everywhere),
            MpiTest::new(
                "errors_are_fatal_on_library_communicators",
                errors_are_fatal_on_library_communicators,
            ),
        ],
    );
}
