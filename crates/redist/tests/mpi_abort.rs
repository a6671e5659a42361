//! A panic inside an exchange ends the whole job with a message, even in a
//! program that started MPI without `procgrid::init` (no abort-on-panic
//! hook): rank 1 panics in the middle of a redistribution while rank 0 waits
//! for it, and the launch must end, quickly, with the exchange's message.
//!
//! Under `cargo test` this program launches itself with `mpirun -n 2`; as a
//! rank (`NDCYCLIC_ABORT_CHILD` set) it runs the exchange.

use dist_array::{DistArray, Layout};
use mpi::topology::Communicator;
use procgrid::ProcGrid;
use redist::{Options, Redistribution};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn rank() {
    // Deliberately not procgrid::init: no panic hook.
    let universe = mpi::initialize().expect("MPI starts");
    let world = universe.world();
    let n = world.size() as usize;
    let grid = ProcGrid::new(&world, &[n]).expect("grid");
    let from = Layout::parse(&[1000], &format!("block@{n}")).expect("layout");
    let to = Layout::parse(&[1000], &format!("cyclic@{n}")).expect("layout");
    let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, Options::default())
        .expect("redistribution");
    let a = DistArray::from_fn(&grid, from, |g| g[0] as f64).expect("array");
    if world.rank() == 1 {
        redist::faults::inject(&[redist::faults::Fault::ExchangePanic]);
    }
    let _ = r.execute(&a);
    println!("rank {} got past the exchange", world.rank());
}

fn main() {
    if std::env::var_os("NDCYCLIC_ABORT_CHILD").is_some() {
        return rank();
    }
    let exe = std::env::current_exe().expect("own path");
    let mpirun = std::env::var("NDCYCLIC_MPIRUN").unwrap_or_else(|_| "mpirun".to_string());
    let start = Instant::now();
    let mut child = Command::new(&mpirun)
        .args(["-n", "2"])
        .arg(&exe)
        .env("NDCYCLIC_ABORT_CHILD", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("mpirun starts");
    let limit = Duration::from_secs(120);
    loop {
        match child.try_wait().expect("wait") {
            Some(_) => break,
            None if start.elapsed() > limit => {
                let _ = child.kill();
                eprintln!("mpi_abort: the job hung for {limit:?} after a panic in an exchange");
                std::process::exit(1);
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ok = !out.status.success()
        && stderr.contains("aborting the job")
        && !stdout.contains("got past the exchange");
    println!(
        "test mpi_abort np=2 ... {} ({:.1} s)",
        if ok { "ok" } else { "FAILED" },
        start.elapsed().as_secs_f64()
    );
    if !ok {
        eprintln!(
            "status {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            out.status
        );
        std::process::exit(1);
    }
}
