//! ndcyclic: n-dimensional block-cyclic distributed arrays over MPI, and fast
//! run-time redistribution between layouts.
//!
//! This facade only re-exports the workspace's library crates:
//!
//! - [`procgrid`]: process grids over MPI communicators;
//! - [`dist_array`]: block-cyclic layouts and the distributed array type;
//! - [`redist`]: redistribution plans, schedules and their execution;
//! - [`mpi`]: the MPI bindings they are built on.
//!
//! The ADI heat solver of `examples/adi.rs` lives in the unpublished
//! `ndcyclic-apps` package (`apps::adi`), the `redist` tool in `redist-cli`.
//!
//! The main operation, planned once and executed many times — whole rows
//! on each rank to 2×2 blocks dealt round-robin, on any number of ranks:
//!
//! ```
//! use ndcyclic::dist_array::{DistArray, Layout};
//! use ndcyclic::mpi::topology::Communicator;
//! use ndcyclic::procgrid::{self, ProcGrid};
//! use ndcyclic::redist::{Options, Redistribution};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let universe = procgrid::init()?; // MPI, with an abort-on-panic hook
//!     let world = universe.world();
//!     let p = world.size() as usize;
//!     let grid = ProcGrid::new(&world, &[p, 1])?;
//!     let rows = Layout::parse(&[8, 6], &format!("block,*@{p}x1"))?;
//!     let blocks = Layout::parse(&[8, 6], &format!("cyclic(2),cyclic(2)@{p}x1"))?;
//!     let mut r = Redistribution::<f64>::new(&grid, &rows, &grid, &blocks, Options::default())?;
//!     let a = DistArray::from_fn(&grid, rows, |g| (10 * g[0] + g[1]) as f64)?;
//!     let mut b = DistArray::zeros(&grid, r.target_layout().clone())?;
//!     for _ in 0..3 {
//!         r.execute_into(&a, &mut b)?; // no allocation after the first call
//!     }
//!     assert_eq!(b.gather(0)?, a.gather(0)?);
//!     Ok(())
//! }
//! ```
//!
//! Run it with `mpirun -n P` (a doc test runs it as one rank).
#![deny(missing_docs)]

pub use dist_array;
pub use mpi;
pub use procgrid;
pub use redist;

/// The README's programs are files the tests compile and run: its "Using
/// ndcyclic in your project" program is this crate's front-page example (a
/// doc test), the others are `examples/tour_*.rs` (run under `mpirun` by
/// `tests/tour.rs`). The README must show each as it is.
#[cfg(test)]
mod readme {
    const README: &str = include_str!("../README.md");

    #[test]
    fn the_readme_program_is_the_front_page_example() {
        let front: String = include_str!("lib.rs")
            .lines()
            .skip_while(|l| !l.starts_with("//! use ndcyclic::dist_array"))
            .take_while(|l| !l.starts_with("//! ```"))
            .map(|l| {
                l.strip_prefix("//! ")
                    .unwrap_or(l.trim_start_matches("//!"))
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert!(front.len() > 200, "front-page example not found");
        assert!(
            README.contains(&front),
            "README and src/lib.rs differ:\n{front}"
        );
    }

    /// A tour file without its `//!` header: the code the README shows.
    fn code(file: &str) -> &str {
        let start = file
            .find("\nuse ")
            .expect("a tour program starts with its imports");
        file[start + 1..].trim_end()
    }

    #[test]
    fn the_readme_shows_every_tour_program_as_it_is() {
        for (name, file) in [
            ("tour_grids", include_str!("../examples/tour_grids.rs")),
            ("tour_layouts", include_str!("../examples/tour_layouts.rs")),
            ("tour_plans", include_str!("../examples/tour_plans.rs")),
            (
                "tour_redistribute",
                include_str!("../examples/tour_redistribute.rs"),
            ),
        ] {
            let shown = format!("```rust\n{}\n```", code(file));
            assert!(
                README.contains(&shown),
                "README does not show examples/{name}.rs as it is:\n{shown}"
            );
            assert!(
                README.contains(&format!("`examples/{name}.rs`")),
                "README does not name examples/{name}.rs"
            );
        }
    }

    /// Every link of the README stays inside the repository and names a
    /// file that exists.
    #[test]
    fn readme_links_name_files_of_the_repository() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut links = 0;
        for (at, _) in README.match_indices("](") {
            let rest = &README[at + 2..];
            let target = &rest[..rest.find(')').expect("a link ends with )")];
            assert!(
                !target.contains("://") && !target.starts_with("..") && !target.starts_with('/'),
                "README links out of the repository: {target}"
            );
            let file = target.split('#').next().unwrap_or(target);
            assert!(
                root.join(file).exists(),
                "README links to a missing file: {target}"
            );
            links += 1;
        }
        assert!(links >= 3, "README links not found");
    }

    #[test]
    fn every_rust_block_of_the_readme_is_a_tested_program() {
        let blocks = README.matches("```rust\n").count();
        assert_eq!(blocks, 5, "the front-page example and four tours");
    }
}
