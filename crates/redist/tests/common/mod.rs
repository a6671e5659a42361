//! What the MPI test programs of `redist` share: a small random number
//! generator, random grids and layouts, the value of each global index, and
//! the check that an array holds it.

use dist_array::{Dist, DistArray, Element, Layout, LayoutSpec, Order};
use mpi::topology::SimpleCommunicator;
use mpi_harness::{all_indices, ensure_eq, TestResult};
use ndarray::IxDyn;
use procgrid::ProcGrid;

/// A linear congruential generator: the same cases on every rank.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// A random factorisation of `n` into `k` extents.
pub fn random_extents(rng: &mut Lcg, n: usize, k: usize) -> Vec<usize> {
    let mut out = vec![1; k];
    let mut rest = n;
    let mut f = 2;
    while rest > 1 {
        while !rest.is_multiple_of(f) {
            f += 1;
        }
        out[rng.below(k)] *= f;
        rest /= f;
    }
    out
}

/// `l` with, one time in three each, a random rank map and column-major
/// storage.
pub fn shuffled(rng: &mut Lcg, mut l: Layout) -> Layout {
    if rng.below(3) == 0 {
        let mut map: Vec<usize> = (0..l.ranks()).collect();
        for i in (1..map.len()).rev() {
            map.swap(i, rng.below(i + 1));
        }
        l = l.with_rank_map(map).unwrap();
    }
    if rng.below(3) == 0 {
        l = l.with_storage(Order::ColumnMajor);
    }
    l
}

pub fn random_layout(rng: &mut Lcg, shape: &[usize], grid: &[usize]) -> Layout {
    let dists: Vec<Dist> = grid
        .iter()
        .map(|&p| {
            let first = rng.below(p);
            match rng.below(4) {
                0 if p == 1 => Dist::Collapsed,
                0 | 1 => Dist::block().starting_at(first),
                _ => Dist::cyclic(rng.below(4) + 1).starting_at(first),
            }
        })
        .collect();
    let l = Layout::new(shape, &LayoutSpec::new(dists, grid.to_vec()).unwrap()).unwrap();
    shuffled(rng, l)
}

/// A random case on the `world.size()` ranks of `world`: a shape of `ndim`
/// dimensions of at most `max` indices, two grids over all ranks (the
/// second sharing the first's communicator) and a random layout on each.
pub fn random_case(
    rng: &mut Lcg,
    world: &SimpleCommunicator,
    ndim: usize,
    max: usize,
) -> Result<(ProcGrid, Layout, ProcGrid, Layout), String> {
    use mpi::topology::Communicator;
    let n = world.size() as usize;
    let shape: Vec<usize> = (0..ndim).map(|_| rng.below(max) + 1).collect();
    let (ga, gb) = (random_extents(rng, n, ndim), random_extents(rng, n, ndim));
    let grid_a = ProcGrid::new(world, &ga).map_err(|e| e.to_string())?;
    let grid_b = ProcGrid::builder(&gb)
        .build_sharing(&grid_a)
        .map_err(|e| e.to_string())?;
    let from = random_layout(rng, &shape, &ga);
    let to = random_layout(rng, &shape, &gb);
    Ok((grid_a, from, grid_b, to))
}

pub fn code(g: &[usize]) -> f64 {
    g.iter().fold(0.0, |acc, &x| acc * 1000.0 + x as f64 + 1.0)
}

/// Every local element of `a` holds `f` of its global index.
pub fn check<T: Element>(a: &DistArray<T>, f: impl Fn(&[usize]) -> T) -> TestResult {
    let Some(rank) = a.rank() else { return Ok(()) };
    let local = a.local();
    for l in all_indices(local.shape()) {
        let g = a
            .layout()
            .local_to_global(rank, &l)
            .map_err(|e| e.to_string())?;
        ensure_eq!(
            local[IxDyn(&l)],
            f(&g),
            "local {:?} global {:?} of {}",
            l,
            g,
            a.layout()
        );
    }
    Ok(())
}
