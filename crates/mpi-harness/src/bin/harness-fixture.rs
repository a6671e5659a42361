//! A test program for the harness's own tests: its bodies pass, fail on one
//! rank, panic on one rank, or hang on rank 1, as `FIXTURE_MODE` says.
//! With `FIXTURE_SUITES=2` it holds a second suite, `second`, launched with
//! 3 ranks, whose body `sized` checks that it runs on 3 (and whose `body`
//! is left out).

use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, MpiTest, Suite, TestResult};

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

fn sized(world: &SimpleCommunicator) -> TestResult {
    ensure_eq!(world.size(), 3);
    Ok(())
}

fn main() {
    let mut suites = vec![Suite::new("fixture", &[MpiTest::new("body", body)])];
    if std::env::var("FIXTURE_SUITES").is_ok_and(|v| v == "2") {
        let second = [MpiTest::new("body", body), MpiTest::new("sized", sized)];
        suites.push(Suite::new("second", &second).ranks(&[3]).without(&["body"]));
    }
    mpi_harness::run_suites(&suites);
}
