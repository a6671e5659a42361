//! Runs the built `redist` binary under `mpirun -n 2` and `-n 4` as a user
//! would, and checks what `redist run` says when it refuses: exit code 2 on
//! every rank, one `error: ...` line from rank 0 on stderr, no panic, no
//! launcher complaint about a rank that ended without finalizing MPI. Also
//! checks that a successful run prints one JSON line however many ranks.
//!
//! Launches go through `common/`: `mpirun` from `PATH` (or
//! `NDCYCLIC_MPIRUN`), each killed after a timeout.

use crate::common::{mpirun, mpirun_with, Launch};

/// Rank counts every case runs with.
const RANKS: [usize; 2] = [2, 4];

/// A refusal as the contract wants it: exit code 2, nothing on stdout, one
/// `error:` line containing every needle, no panic and no rank that ended
/// without finalizing MPI.
fn assert_refused_once(launch: &Launch, needles: &[&str]) {
    assert_eq!(launch.code, Some(2), "{launch}");
    assert!(launch.stdout.is_empty(), "{launch}");
    assert_eq!(
        launch.stderr.matches("error:").count(),
        1,
        "one message, from rank 0: {launch}"
    );
    for needle in needles {
        assert!(
            launch.stderr.contains(needle),
            "{needle:?} missing: {launch}"
        );
    }
    for bad in [
        "panicked",
        "BAD TERMINATION",
        "Killed",
        "MPI_Abort",
        "memory allocation",
    ] {
        assert!(!launch.stderr.contains(bad), "{bad:?} in: {launch}");
    }
}

#[test]
fn closed_form_refusal_is_printed_once_and_every_rank_exits_2() {
    for n in RANKS {
        let from = format!("cyclic(7),cyclic(9)@{n}x1");
        let to = format!("cyclic(4),cyclic(9)@{n}x1");
        let launch = mpirun(
            n,
            &[
                "run",
                "--shape",
                "200x200",
                "--from",
                &from,
                "--to",
                &to,
                "--remap",
                "closed-form",
            ],
        );
        assert_refused_once(
            &launch,
            &[
                "error: remapping closed-form: no closed form covers dimension 0 \
                 (cyclic(7) -> cyclic(4))",
                "use --remap optimal",
            ],
        );
    }
}

#[test]
fn grids_larger_than_the_job_name_its_size() {
    for n in RANKS {
        let grid = format!("block,block@{n}x2");
        let launch = mpirun(
            n,
            &["run", "--shape", "8x8", "--from", &grid, "--to", &grid],
        );
        assert_refused_once(
            &launch,
            &[
                "error: invalid grids",
                &format!("expected grids of at most {n} ranks (the job's size)"),
                "mpirun -n",
            ],
        );
    }
}

#[test]
fn reps_out_of_range_are_clap_errors() {
    for n in RANKS {
        let grid = format!("block@{n}");
        for reps in ["0", "18446744073709551615", "1000001"] {
            let launch = mpirun(
                n,
                &[
                    "run", "--shape", "64", "--from", &grid, "--to", &grid, "--reps", reps,
                    "--json",
                ],
            );
            assert_refused_once(
                &launch,
                &[
                    &format!("error: invalid value '{reps}' for '--reps <REPS>'"),
                    "is not in 1..=1000000",
                ],
            );
        }
    }
}

#[test]
fn arrays_too_large_for_memory_are_refused_with_bytes() {
    for n in RANKS {
        let block = format!("block@{n}");
        let cyclic = format!("cyclic@{n}");
        let rows = format!("block,block@{n}x1");
        let cols = format!("block,cyclic@1x{n}");
        for args in [
            // 10^12 bytes: fits in the address space, not in the machine.
            vec![
                "--shape",
                "1000000000000",
                "--type",
                "u8",
                "--from",
                &block,
                "--to",
                &cyclic,
            ],
            // More than any process can allocate (2^62 f64).
            vec![
                "--shape",
                "4611686018427387904",
                "--from",
                &block,
                "--to",
                &cyclic,
                "--baseline",
                "alltoallv",
            ],
            // The element count fits in usize, the bytes do not.
            vec![
                "--shape",
                "3037000500x3037000500",
                "--from",
                &rows,
                "--to",
                &cols,
            ],
        ] {
            let args = [&["run"][..], &args, &["--json"]].concat();
            let launch = mpirun(n, &args);
            assert_refused_once(
                &launch,
                &[
                    "error: not enough memory: a rank needs ",
                    " bytes (",
                    "are available per rank",
                ],
            );
        }
    }
}

#[test]
fn a_small_run_prints_one_json_line() {
    for n in RANKS {
        let from = format!("cyclic(3),block@{n}x1");
        let to = format!("block,cyclic(5)@1x{n}");
        let launch = mpirun(
            n,
            &[
                "run",
                "--shape",
                "64x48",
                "--from",
                &from,
                "--to",
                &to,
                "--reps",
                "2",
                "--verify",
                "--baseline",
                "alltoallv",
                "--json",
            ],
        );
        assert_eq!(launch.code, Some(0), "{launch}");
        assert!(!launch.stderr.contains("error"), "{launch}");
        let json_lines = launch
            .stdout
            .lines()
            .filter(|l| l.trim_start().starts_with('{'))
            .count();
        assert_eq!(json_lines, 1, "one JSON line, from rank 0: {launch}");
        let v = launch.json();
        assert_eq!(v["ranks"], n, "{launch}");
        assert_eq!(v["elements"], 64 * 48, "{launch}");
        assert_eq!(v["reps"], 2, "{launch}");
        assert_eq!(v["verified"], true, "{launch}");
        assert!(v["exec_ms_median"].is_number(), "{launch}");
        assert!(v["alltoallv_ms_median"].is_number(), "{launch}");
        assert_eq!(v["storage"], "row-major", "{launch}");
        // One node: nothing crosses between nodes.
        assert_eq!(v["nodes"], 1, "{launch}");
        assert_eq!(v["bytes_between_nodes"], 0, "{launch}");
        assert_eq!(v["messages_between_nodes"], 0, "{launch}");
    }
}

#[test]
fn streaming_is_chosen_and_reported() {
    for (when, streamed) in [("always", true), ("never", false), ("auto", false)] {
        let launch = mpirun(
            2,
            &[
                "run",
                "--shape",
                "300x200",
                "--from",
                "cyclic(16),block@1x2",
                "--to",
                "block,cyclic(16)@2x1",
                "--streaming",
                when,
                "--reps",
                "2",
                "--verify",
                "--json",
            ],
        );
        assert_eq!(launch.code, Some(0), "{launch}");
        let v = launch.json();
        assert_eq!(v["verified"], true, "{launch}");
        assert_eq!(v["streaming"], when, "{launch}");
        // 240 KB per rank: below what `auto` streams.
        assert_eq!(v["streamed"], streamed, "{launch}");
    }
    let launch = mpirun(
        2,
        &[
            "run",
            "--shape",
            "100",
            "--from",
            "block@2",
            "--to",
            "cyclic@2",
            "--streaming",
            "sometimes",
        ],
    );
    assert_eq!(launch.code, Some(2), "{launch}");
    assert!(
        launch
            .stderr
            .contains("auto, never, always or a number of bytes"),
        "{launch}"
    );
}

#[test]
fn a_small_run_prints_one_summary() {
    let launch = mpirun(
        4,
        &[
            "run", "--shape", "100", "--from", "block@4", "--to", "cyclic@2", "--verify",
        ],
    );
    assert_eq!(launch.code, Some(0), "{launch}");
    assert_eq!(
        launch.stdout.matches("redistribute block@4 -> ").count(),
        1,
        "{launch}"
    );
    assert!(
        launch
            .stdout
            .contains("verified: every element matches its global index"),
        "{launch}"
    );
}

#[test]
fn a_window_moves_between_arrays_of_two_shapes() {
    for n in RANKS {
        let from = format!("cyclic(3),block@{n}x1");
        let to = format!("block,cyclic(4)@1x{n}");
        let launch = mpirun(
            n,
            &[
                "run",
                "--shape",
                "50x40",
                "--to-shape",
                "30x70",
                "--from",
                &from,
                "--to",
                &to,
                "--from-window",
                "7,5",
                "--to-window",
                "2,11",
                "--window",
                "21x33",
                "--reps",
                "2",
                "--verify",
                "--json",
            ],
        );
        assert_eq!(launch.code, Some(0), "{launch}");
        let v = launch.json();
        assert_eq!(v["elements"], 21 * 33, "{launch}");
        assert_eq!(v["window"], serde_json::json!([21, 33]), "{launch}");
        assert_eq!(v["to_shape"], serde_json::json!([30, 70]), "{launch}");
        // Verified inside the window and outside it (untouched).
        assert_eq!(v["verified"], true, "{launch}");
    }
}

#[test]
fn windows_that_do_not_fit_are_refused_once() {
    let launch = mpirun(
        2,
        &[
            "run",
            "--shape",
            "50x40",
            "--from",
            "cyclic(3),block@2x1",
            "--to",
            "block,cyclic(4)@1x2",
            "--from-window",
            "7,5",
            "--window",
            "44x30",
        ],
    );
    assert_refused_once(&launch, &["window", "dimension 0"]);
    let launch = mpirun(
        2,
        &[
            "run",
            "--shape",
            "50x40",
            "--from",
            "block,*@2x1",
            "--to",
            "*,block@1x2",
            "--to-window",
            "3",
        ],
    );
    assert_refused_once(&launch, &["--to-window", "one per dimension"]);
}

#[cfg(not(feature = "scalapack"))]
#[test]
fn pdgemr2d_without_the_feature_is_refused_once() {
    let launch = mpirun(
        2,
        &[
            "run",
            "--shape",
            "64x64",
            "--from",
            "block,*@2x1",
            "--to",
            "*,block@1x2",
            "--baseline",
            "pdgemr2d",
        ],
    );
    assert_refused_once(&launch, &["pdgemr2d", "scalapack feature"]);
}

#[cfg(feature = "scalapack")]
#[test]
fn pdgemr2d_is_timed_next_to_the_redistribution() {
    let launch = mpirun(
        2,
        &[
            "run",
            "--shape",
            "60x50",
            "--to-shape",
            "40x70",
            "--from",
            "cyclic(3),cyclic(2)@1x2",
            "--to",
            "block,cyclic(5)@2x1",
            "--from-window",
            "5,3",
            "--to-window",
            "1,9",
            "--window",
            "33x41",
            "--baseline",
            "alltoallv,pdgemr2d",
            "--reps",
            "2",
            "--verify",
            "--json",
        ],
    );
    assert_eq!(launch.code, Some(0), "{launch}");
    let v = launch.json();
    assert!(v["pdgemr2d_ms_median"].is_number(), "{launch}");
    assert!(v["alltoallv_ms_median"].is_number(), "{launch}");
    assert_eq!(v["pdgemr2d_agrees"], true, "{launch}");
    assert_eq!(v["verified"], true, "{launch}");
    assert_eq!(v["storage"], "column-major", "{launch}");
    let refused = mpirun(
        2,
        &[
            "run",
            "--shape",
            "64",
            "--from",
            "block@2",
            "--to",
            "cyclic@2",
            "--baseline",
            "pdgemr2d",
        ],
    );
    assert_refused_once(&refused, &["pdgemr2d", "2-D"]);
}

#[test]
fn transposes_updates_and_batches_verify() {
    for n in RANKS {
        let from = format!("cyclic(3),block@{n}x1");
        let to = format!("block,cyclic(2)@1x{n}");
        for extra in [
            &["--transpose"][..],
            &["--permute", "1,0", "--alpha", "2", "--beta", "-1"][..],
            &["--alpha", "0.5", "--conjugate", "--type", "c64"][..],
            &["--batch", "3", "--transpose"][..],
            &["--batch", "5", "--batch-types", "u8,c64,i32", "--transpose"][..],
        ] {
            let mut args = vec![
                "run", "--shape", "23x17", "--from", &from, "--to", &to, "--reps", "2", "--verify",
                "--json",
            ];
            args.extend_from_slice(extra);
            let launch = mpirun(n, &args);
            assert_eq!(launch.code, Some(0), "{launch}");
            let v = launch.json();
            assert_eq!(v["verified"], true, "{launch}");
            if extra.contains(&"--transpose") || extra.contains(&"1,0") {
                assert_eq!(v["to_shape"], serde_json::json!([17, 23]), "{launch}");
                assert_eq!(v["permute"], serde_json::json!([1, 0]), "{launch}");
            }
            if let Some(k) = extra.iter().position(|&a| a == "--batch") {
                let k: u64 = extra[k + 1].parse().unwrap();
                assert_eq!(v["batch"], k, "{launch}");
                assert!(v["separate_ms_median"].is_number(), "{launch}");
            }
            if extra.contains(&"--batch-types") {
                assert_eq!(v["batch_types"], "u8,c64,i32", "{launch}");
            }
        }
    }
}

#[test]
fn transform_arguments_are_checked_once() {
    let base = [
        "run",
        "--shape",
        "20x10",
        "--from",
        "block,*@2x1",
        "--to",
        "*,block@1x2",
    ];
    let cases: [(&[&str], &[&str]); 6] = [
        (&["--permute", "0,0"], &["--permute", "permutation"]),
        (&["--alpha", "nan"], &["'--alpha <ALPHA>'", "finite"]),
        (&["--beta=-inf"], &["'--beta <BETA>'", "finite"]),
        (
            &["--alpha", "2", "--type", "i32"],
            &["--alpha", "f32, f64 or c64"],
        ),
        (&["--transpose", "--window", "3x3"], &["window"]),
        (
            &["--batch", "2", "--batch-types", "u8,f64", "--beta", "1"],
            &["--batch-types", "overwrites"],
        ),
    ];
    for (extra, needles) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        assert_refused_once(&mpirun(2, &args), needles);
    }
}

#[cfg(feature = "scalapack")]
#[test]
fn pdtran_and_pdgeadd_are_timed_next_to_the_transposition() {
    // Grids of other shapes (pdgemr2d between them) and of one (PBLAS alone).
    for (from, to, route) in [
        (
            "cyclic(8),cyclic(4)@1x2",
            "cyclic(4),cyclic(8)@2x1",
            "pdgemr2d+pblas+pdgemr2d",
        ),
        (
            "cyclic(8),cyclic(4)@1x2",
            "cyclic(3),cyclic(5)@1x2",
            "pdtran",
        ),
    ] {
        let launch = mpirun(
            2,
            &[
                "run",
                "--shape",
                "40x30",
                "--from",
                from,
                "--to",
                to,
                "--transpose",
                "--alpha",
                "2",
                "--beta",
                "3",
                "--baseline",
                "pdtran,pdgeadd",
                "--reps",
                "2",
                "--verify",
                "--json",
            ],
        );
        assert_eq!(launch.code, Some(0), "{launch}");
        let v = launch.json();
        assert_eq!(v["verified"], true, "{launch}");
        assert_eq!(v["pdtran_agrees"], true, "{launch}");
        assert_eq!(v["pdgeadd_agrees"], true, "{launch}");
        assert_eq!(v["pdtran_route"], route, "{launch}");
        assert!(v["pdtran_ms_median"].is_number(), "{launch}");
    }
    let refused = mpirun(
        2,
        &[
            "run",
            "--shape",
            "40x30",
            "--from",
            "block,*@2x1",
            "--to",
            "block,*@2x1",
            "--baseline",
            "pdtran",
        ],
    );
    assert_refused_once(&refused, &["pdtran", "--transpose"]);
}

#[test]
fn the_shared_memory_threshold_comes_from_the_environment() {
    // Whether the node-direct path is in use says whether the local parts
    // went in shared memory: 64² f64 on 2 ranks is 16 KiB a rank, below the
    // default threshold; 512² is 1 MiB a rank, above it.
    let run = |shape: &str, env: &[(&str, &str)]| {
        let launch = mpirun_with(
            2,
            env,
            &[
                "run",
                "--shape",
                shape,
                "--from",
                "cyclic(8),cyclic(8)@1x2",
                "--to",
                "cyclic(8),cyclic(8)@2x1",
                "--reps",
                "2",
                "--verify",
                "--json",
            ],
        );
        assert_eq!(launch.code, Some(0), "{launch}");
        let v = launch.json();
        assert_eq!(v["verified"], true, "{launch}");
        v["node_direct"].as_bool().expect("node_direct in the JSON")
    };
    // Set but empty counts as not set: the default, whatever this test's
    // own environment says.
    let var = "NDCYCLIC_SHARED_MIN_BYTES";
    assert!(!run("64x64", &[(var, "")]));
    assert!(run("64x64", &[(var, "4K")]));
    assert!(run("512x512", &[(var, "")]));
    assert!(!run("512x512", &[(var, "never")]));
}

#[test]
fn the_pattern_baseline_copies_what_the_redistribution_copies() {
    // Source parts in shared memory whatever their size: every case has
    // the pattern timed, and with `--verify` its own result checked too
    // (the target is started again before it copies).
    let shared = [("NDCYCLIC_SHARED_MIN_BYTES", "1")];
    for n in [1, 2, 3, 5] {
        let (rows, cols) = (
            format!("cyclic(3),block@{n}x1"),
            format!("block,cyclic(5)@1x{n}"),
        );
        let three = (
            format!("cyclic(2),block,*@{n}x1x1"),
            format!("*,cyclic,block@1x1x{n}"),
        );
        let cases: [Vec<&str>; 3] = [
            vec!["--shape", "37x29", "--from", &rows, "--to", &cols],
            // Axes permuted: runs of one element on the target side.
            vec![
                "--shape",
                "12x9x7",
                "--from",
                &three.0,
                "--to",
                &three.1,
                "--permute",
                "2,0,1",
            ],
            // A window between arrays of two shapes: the rest of the target
            // keeps its values, which the check reads too.
            vec![
                "--shape",
                "40x30",
                "--to-shape",
                "25x50",
                "--window",
                "20x20",
                "--from-window",
                "3,4",
                "--to-window",
                "1,7",
                "--from",
                &rows,
                "--to",
                &cols,
            ],
        ];
        for case in cases {
            let args = [
                &["run"][..],
                &case,
                &[
                    "--reps",
                    "2",
                    "--verify",
                    "--baseline",
                    "pattern,alltoallv",
                    "--json",
                ],
            ]
            .concat();
            let launch = mpirun_with(n, &shared, &args);
            assert_eq!(launch.code, Some(0), "{launch}");
            let v = launch.json();
            assert_eq!(v["verified"], true, "{launch}");
            assert_eq!(v["pattern_verified"], true, "{launch}");
            assert!(
                v["pattern_runs"].as_u64().is_some_and(|r| r > 0),
                "{launch}"
            );
            assert!(v["pattern_ms_median"].is_number(), "{launch}");
            assert!(v["exec_over_pattern"].is_number(), "{launch}");
        }
    }
    // Private source parts cannot be read by their peers: skipped on every
    // rank, said once, and the run goes on.
    let launch = mpirun_with(
        2,
        &[("NDCYCLIC_SHARED_MIN_BYTES", "never")],
        &[
            "run",
            "--shape",
            "1000",
            "--from",
            "cyclic(3)@2",
            "--to",
            "cyclic(5)@2",
            "--reps",
            "2",
            "--verify",
            "--baseline",
            "pattern",
            "--json",
        ],
    );
    assert_eq!(launch.code, Some(0), "{launch}");
    let v = launch.json();
    assert!(
        v["pattern_skipped"]
            .as_str()
            .is_some_and(|s| s.contains("private memory")),
        "{launch}"
    );
    assert!(v.get("pattern_ms_median").is_none(), "{launch}");
    assert_eq!(
        launch.stderr.matches("pattern baseline skipped").count(),
        1,
        "{launch}"
    );
    // A batch moves several arrays; the pattern copies one.
    let launch = mpirun(
        2,
        &[
            "run",
            "--shape",
            "1000",
            "--from",
            "cyclic(3)@2",
            "--to",
            "cyclic(5)@2",
            "--batch",
            "2",
            "--baseline",
            "pattern",
        ],
    );
    assert_refused_once(&launch, &["--batch with --baseline pattern"]);
}
