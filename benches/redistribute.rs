//! Redistribution time under MPI, next to a bare `MPI_Alltoallv` of the same
//! bytes, over grid shapes (1×P, P×1, square, non-square), the basic-cycle
//! paper's block-size pairs, and array sizes.
//!
//! ```text
//! scripts/bench-mpi.sh                      # builds it and runs it under mpirun -n 2
//! RANKS=4 scripts/bench-mpi.sh grid_shapes  # other rank counts, a filter
//! cargo bench --bench redistribute          # one rank: local copies only
//! ```
//!
//! Benchmark ids are plain words (`2048x2048 block-star 2x1 to star-block
//! 1x2`); criterion's HTML report is `target/criterion/report/index.html`.
//!
//! Criterion runs on rank 0 only; before every measurement rank 0 tells the
//! other ranks (one broadcast) which case to run and how many times, so all
//! ranks execute the same collective calls.

use criterion::{BenchmarkId, Criterion, Throughput};
use dist_array::{DistArray, Layout};
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::{balanced_extents, ProcGrid};
use redist::{BareAlltoallv, Options, Redistribution};
use std::time::Duration;

struct Case {
    group: &'static str,
    name: String,
    redistribution: Redistribution<f64>,
    bare: BareAlltoallv<f64>,
    src: DistArray<f64>,
    dst: DistArray<f64>,
    send: Vec<f64>,
    recv: Vec<f64>,
    bytes: u64,
}

impl Case {
    fn new(
        group: &'static str,
        world: &SimpleCommunicator,
        shape: &[usize],
        from: &str,
        to: &str,
    ) -> Case {
        let from_l = Layout::parse(shape, from).expect("valid source layout");
        let to_l = Layout::parse(shape, to).expect("valid target layout");
        let a = ProcGrid::builder(from_l.grid_extents())
            .subset(true)
            .build(world)
            .expect("source grid");
        let b = ProcGrid::builder(to_l.grid_extents())
            .subset(true)
            .build_sharing(&a)
            .expect("target grid");
        let r =
            Redistribution::<f64>::new(&a, &from_l, &b, &to_l, Options::default()).expect("plan");
        let src =
            DistArray::from_fn(&a, from_l, |g| g.iter().sum::<usize>() as f64).expect("source");
        let dst = DistArray::zeros(&b, r.target_layout().clone()).expect("target");
        let bare = BareAlltoallv::new(&r).expect("counts within MPI's i32");
        let send = vec![1.0; bare.send_len()];
        let recv = vec![1.0; bare.recv_len()];
        let bytes = (r.window().len() * 8) as u64;
        Case {
            group,
            name: plain_id(shape, from, to),
            redistribution: r,
            bare,
            src,
            dst,
            send,
            recv,
            bytes,
        }
    }

    /// Runs `kind` (0: the redistribution, 1: the bare all-to-all) `iters` times.
    fn run(&mut self, kind: u64, iters: u64) {
        for _ in 0..iters {
            if kind == 0 {
                self.redistribution
                    .execute_into(&self.src, &mut self.dst)
                    .expect("execute");
            } else {
                self.bare
                    .run(&self.send, &mut self.recv)
                    .expect("alltoallv");
            }
        }
    }
}

/// A benchmark id in plain words, fit for a folder name of criterion's
/// report: `2048x2048 block-star 2x1 to star-block 1x2` for
/// `block,*@2x1 -> *,block@1x2` (`cyclic(64)` is `cyclic64`, `+1` is `plus1`).
fn plain_id(shape: &[usize], from: &str, to: &str) -> String {
    let plain = |spec: &str| {
        spec.replace('*', "star")
            .replace(['(', ')'], "")
            .replace('+', "plus")
            .replace(',', "-")
            .replace('@', " ")
    };
    let shape: Vec<String> = shape.iter().map(ToString::to_string).collect();
    format!("{} {} to {}", shape.join("x"), plain(from), plain(to))
}

fn cases(world: &SimpleCommunicator) -> Vec<Case> {
    let p = world.size() as usize;
    let sq = balanced_extents(p, &[0, 0]).expect("factorisation");
    let (r, c) = (sq[0], sq[1]);
    let n = 2048;
    let mut out = vec![
        Case::new(
            "grid_shapes",
            world,
            &[n, n],
            &format!("cyclic(64),cyclic(64)@1x{p}"),
            &format!("cyclic(64),cyclic(64)@{p}x1"),
        ),
        Case::new(
            "grid_shapes",
            world,
            &[n, n],
            &format!("block,*@{p}x1"),
            &format!("*,block@1x{p}"),
        ),
        Case::new(
            "grid_shapes",
            world,
            &[n, n],
            &format!("cyclic(32),cyclic(32)@{r}x{c}"),
            &format!("cyclic(48),cyclic(16)@{c}x{r}"),
        ),
        Case::new(
            "grid_shapes",
            world,
            &[n, n],
            &format!("block,block@{r}x{c}"),
            &format!("cyclic(8),cyclic(8)@{r}x{c}"),
        ),
    ];
    for (s, t) in [(5, 8), (100, 3), (40, 300), (300, 200), (60, 3), (10, 500)] {
        out.push(Case::new(
            "block_sizes",
            world,
            &[1 << 22],
            &format!("cyclic({s})@{p}"),
            &format!("cyclic({t})@{p}"),
        ));
    }
    for n in [256usize, 1024, 4096] {
        out.push(Case::new(
            "array_sizes",
            world,
            &[n, n],
            &format!("block,*@{p}x1"),
            &format!("*,block@1x{p}"),
        ));
    }
    out
}

fn main() {
    let universe = procgrid::init().expect("MPI starts");
    let world = universe.world();
    let mut cases = cases(&world);
    let root = world.process_at_rank(0);
    if world.rank() != 0 {
        // Follow rank 0: (case, kind, iterations) until told to stop.
        loop {
            let mut order = [0u64; 3];
            root.broadcast_into(&mut order[..]);
            if order[0] == u64::MAX {
                break;
            }
            let case = usize::try_from(order[0]).expect("a case index from rank 0");
            cases[case].run(order[1], order[2]);
            world.barrier();
        }
        drop(cases);
        return;
    }
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    for group in ["grid_shapes", "block_sizes", "array_sizes"] {
        let mut g = criterion.benchmark_group(format!("{group} {} ranks", world.size()));
        // Indices, not references: each measurement borrows its case mutably.
        let members: Vec<usize> = (0..cases.len())
            .filter(|&i| cases[i].group == group)
            .collect();
        for i in members {
            g.throughput(Throughput::Bytes(cases[i].bytes));
            let name = cases[i].name.clone();
            for (kind, label) in [(0u64, "redistribute"), (1, "bare_alltoallv")] {
                g.bench_function(BenchmarkId::new(label, &name), |b| {
                    b.iter_custom(|iters| {
                        let mut order = [i as u64, kind, iters];
                        root.broadcast_into(&mut order[..]);
                        let start = mpi::time();
                        cases[i].run(kind, iters);
                        world.barrier();
                        Duration::from_secs_f64(mpi::time() - start)
                    })
                });
            }
        }
        g.finish();
    }
    let mut stop = [u64::MAX, 0, 0];
    root.broadcast_into(&mut stop[..]);
    criterion.final_summary();
    drop(cases);
}
