//! Plans, without MPI (no `mpirun` needed): what a redistribution between
//! two layouts of nine ranks moves, its contention-free schedule, and the
//! rank relabelling that keeps the most data in place.
//!
//! `cargo run --release --example tour_plans`

use ndcyclic::dist_array::Layout;
use ndcyclic::redist::{Plan, Remap};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let from = Layout::parse(&[8, 8], "cyclic(3),cyclic(4)@3x3")?;
    let to = Layout::parse(&[8, 8], "cyclic(4),cyclic(2)@3x3")?;

    let fixed = Plan::new(&from, &to, Remap::None)?;
    let plan = Plan::new(&from, &to, Remap::Optimal)?; // relabel the target's ranks
    let (before, after) = (fixed.stats(), plan.stats());
    println!(
        "{} of {} elements stay in place ({} without relabelling)",
        after.kept_local, after.elements, before.kept_local
    );
    println!(
        "{} messages in {} steps; target ranks {:?}",
        after.messages,
        plan.schedule().len(),
        plan.target().rank_map() // the target layout with the chosen rank map
    );
    assert_eq!((after.kept_local, before.kept_local), (26, 10));
    assert_eq!(after.kept_local + after.moved, after.elements);
    Ok(())
}
