//! A test program for the harness's own tests: its bodies pass, fail on one
//! rank, panic on one rank, or hang on rank 1, as `FIXTURE_MODE` says.

use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, MpiTest, TestResult};

fn body(world: &SimpleCommunicator) -> TestResult {
    let mode = std::env::var("FIXTURE_MODE").unwrap_or_default();
    let chosen = world.rank() == 1;
    match mode.as_str() {
        "fail" => ensure!(!chosen, "deliberate failure on rank 1"),
        "panic" if chosen => panic!("deliberate panic on rank 1"),
        "hang" if chosen => loop {
            std::thread::sleep(std::time::Duration::from_millis(50));
        },
        _ => {}
    }
    world.barrier();
    Ok(())
}

fn main() {
    mpi_harness::run("fixture", &[MpiTest::new("body", body)]);
}
