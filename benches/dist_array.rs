//! Local-part throughput of `DistArray::from_fn` and `DistArray::map_inplace`
//! on a 4096×4096 `f64` array held whole by one rank (a 1×1 grid), next to
//! plain ndarray loops over the same data, serial and with rayon.
//!
//! ```text
//! cargo bench --bench dist_array
//! cargo bench --bench dist_array -- --quick
//! ```
//!
//! Runs as a singleton MPI process; no launcher is needed. Throughput is the
//! array's size (128 MiB) per iteration, so criterion reports GB/s of array
//! data produced (`from_fn`) or updated (`map_inplace`, which reads and writes
//! every element: its memory traffic is twice the reported figure).

use criterion::measurement::WallTime;
use criterion::{black_box, BenchmarkGroup, Criterion, SamplingMode, Throughput};
use dist_array::{DistArray, Layout, Order};
use ndarray::{Array2, Zip};
use procgrid::ProcGrid;
use std::time::Duration;

/// Side of the square array.
const N: usize = 4096;
/// Bytes of one array.
const BYTES: u64 = (N * N * std::mem::size_of::<f64>()) as u64;

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .throughput(Throughput::Bytes(BYTES))
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
}

fn layout(order: Order) -> Layout {
    Layout::parse(&[N, N], "block,block@1x1")
        .expect("valid layout")
        .with_storage(order)
}

/// Building a fresh array from a cheap function of the global index. Every
/// variant allocates (and drops) a new 128 MiB buffer per iteration.
fn bench_from_fn(c: &mut Criterion, grid: &ProcGrid) {
    let mut group = c.benchmark_group("from_fn");
    configure(&mut group);
    // Tens of milliseconds per iteration: equal-sized samples keep the run
    // near the measurement time instead of criterion's linear ramp.
    group.sampling_mode(SamplingMode::Flat);

    let row_major = layout(Order::RowMajor);
    group.bench_function("dist_array_row_major", |b| {
        b.iter(|| {
            DistArray::<f64>::from_fn(grid, row_major.clone(), |g: &[usize]| {
                (g[0] * N + g[1]) as f64
            })
            .expect("from_fn")
        })
    });

    let column_major = layout(Order::ColumnMajor);
    group.bench_function("dist_array_column_major", |b| {
        b.iter(|| {
            DistArray::<f64>::from_fn(grid, column_major.clone(), |g: &[usize]| {
                (g[0] * N + g[1]) as f64
            })
            .expect("from_fn")
        })
    });

    group.bench_function("ndarray_from_shape_fn_serial", |b| {
        b.iter(|| Array2::from_shape_fn((N, N), |(i, j)| (i * N + j) as f64))
    });

    group.bench_function("ndarray_zip_indexed_rayon", |b| {
        b.iter(|| {
            let mut a = Array2::<f64>::zeros((N, N));
            Zip::indexed(&mut a).par_for_each(|(i, j), x| *x = (i * N + j) as f64);
            a
        })
    });

    group.finish();
}

/// Updating every element of an existing array in place.
fn bench_map_inplace(c: &mut Criterion, grid: &ProcGrid) {
    let mut group = c.benchmark_group("map_inplace");
    configure(&mut group);

    let init = |(i, j): (usize, usize)| (i * N + j) as f64 * 1e-6;

    let mut dist = DistArray::<f64>::from_fn(grid, layout(Order::RowMajor), |g: &[usize]| {
        init((g[0], g[1]))
    })
    .expect("from_fn");
    group.bench_function("dist_array", |b| {
        b.iter(|| dist.map_inplace(|x: &mut f64| *x = *x * 1.0001 + 1.0))
    });
    black_box(dist.local_slice()[N * N - 1]);
    drop(dist);

    let mut plain = Array2::from_shape_fn((N, N), init);
    group.bench_function("ndarray_mapv_inplace_serial", |b| {
        b.iter(|| plain.mapv_inplace(|x| x * 1.0001 + 1.0))
    });
    group.bench_function("ndarray_par_mapv_inplace_rayon", |b| {
        b.iter(|| plain.par_mapv_inplace(|x| x * 1.0001 + 1.0))
    });
    black_box(plain[[N - 1, N - 1]]);

    group.finish();
}

fn main() {
    let universe = procgrid::init().expect("MPI initialises");
    let world = universe.world();
    let grid = ProcGrid::new(&world, &[1, 1])
        .expect("the bench runs as a single MPI process (no mpirun, or mpirun -n 1)");

    let mut criterion = Criterion::default().configure_from_args();
    bench_from_fn(&mut criterion, &grid);
    bench_map_inplace(&mut criterion, &grid);
    criterion.final_summary();

    // The grid's communicator must be freed before MPI is finalised.
    drop(grid);
    drop(universe);
}
