//! Plan build time: independent of the extent, growing with the rank count
//! and with the basic cycle lcm(s,t)/gcd(s,t).
//!
//! ```text
//! cargo bench --bench plan
//! cargo bench --bench plan -- extent      # only the extent sweep
//! ```
//!
//! Pure computation: no MPI.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use dist_array::Layout;
use redist::{AxisPlan, Plan, Remap};
use std::hint::black_box;
use std::time::Duration;

/// 1-D and 2-D plans for n = 10^3 ... 10^9 elements per dimension: the
/// time must not grow with n.
fn extent(c: &mut Criterion) {
    let mut g = c.benchmark_group("extent");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    for exp in [3u32, 5, 7, 9] {
        let n = 10usize.pow(exp);
        let from = Layout::parse(&[n], "cyclic(5)@8").unwrap();
        let to = Layout::parse(&[n], "cyclic(8)@8").unwrap();
        g.bench_with_input(
            BenchmarkId::new("1d_5_to_8_on_8", format!("1e{exp}")),
            &n,
            |b, _| b.iter(|| Plan::new(black_box(&from), black_box(&to), Remap::None).unwrap()),
        );
        let from = Layout::parse(&[n, n], "cyclic(64),cyclic(64)@2x4").unwrap();
        let to = Layout::parse(&[n, n], "cyclic(48),block@4x2").unwrap();
        g.bench_with_input(
            BenchmarkId::new("2d_on_8", format!("1e{exp}")),
            &n,
            |b, _| b.iter(|| Plan::new(black_box(&from), black_box(&to), Remap::None).unwrap()),
        );
    }
    g.finish();
}

/// An all-to-all-heavy 1-D plan (cyclic(1) -> cyclic(3)) over P ranks, with
/// and without the optimal remapping (an O(P^3) assignment solve).
fn ranks(c: &mut Criterion) {
    let mut g = c.benchmark_group("ranks");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    g.sample_size(10);
    for p in [4usize, 16, 64, 256] {
        let n = 1 << 24;
        let from = Layout::parse(&[n], &format!("cyclic@{p}")).unwrap();
        let to = Layout::parse(&[n], &format!("cyclic(3)@{p}")).unwrap();
        g.bench_with_input(BenchmarkId::new("none", p), &p, |b, _| {
            b.iter(|| Plan::new(&from, &to, Remap::None).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("optimal", p), &p, |b, _| {
            b.iter(|| Plan::new(&from, &to, Remap::Optimal).unwrap())
        });
    }
    g.finish();
}

/// The 1-D plan alone for the basic-cycle paper's block-size pairs on 72
/// processes: cost follows the runs in one period, lcm(s,t)/gcd(s,t).
fn basic_cycle(c: &mut Criterion) {
    let mut g = c.benchmark_group("basic_cycle");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    let n = 1usize << 30;
    for (s, t) in [
        (5usize, 8usize),
        (100, 3),
        (40, 300),
        (300, 200),
        (60, 3),
        (10, 500),
    ] {
        let from = Layout::parse(&[n], &format!("cyclic({s})@72")).unwrap();
        let to = Layout::parse(&[n], &format!("cyclic({t})@72")).unwrap();
        let id = format!("{s}_to_{t}");
        g.bench_with_input(BenchmarkId::new("axis_plan", &id), &id, |b, _| {
            b.iter(|| AxisPlan::new(&from.axes()[0], &to.axes()[0]).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, extent, ranks, basic_cycle);
criterion_main!(benches);
