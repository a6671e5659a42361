//! `redist io` as a user runs it: `write` and `read` under `mpirun`
//! (every element type, C and Fortran order, windows, the MPI-IO
//! baseline, `--verify`), `info` without MPI, and refusals that exit with
//! code 2 and a message on every rank's stderr.

use crate::common::{mpirun, Launch};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// A file name of this test's own, in a folder of the build.
fn file(name: &str) -> String {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-io");
    std::fs::create_dir_all(&d).expect("a folder for the test files");
    d.join(name).display().to_string()
}

fn ok_json(launch: &Launch) -> Value {
    assert_eq!(launch.code, Some(0), "{launch}");
    launch.json()
}

/// A refusal of `redist io`: exit code 2, nothing on stdout, the message
/// (every needle) on every rank's stderr, no panic.
fn assert_refused_everywhere(launch: &Launch, ranks: usize, needles: &[&str]) {
    assert_eq!(launch.code, Some(2), "{launch}");
    assert!(launch.stdout.is_empty(), "{launch}");
    assert_eq!(
        launch.stderr.matches("error:").count(),
        ranks,
        "one line per rank: {launch}"
    );
    for needle in needles {
        assert!(
            launch.stderr.contains(needle),
            "{needle:?} missing: {launch}"
        );
    }
    for bad in ["panicked", "BAD TERMINATION", "MPI_Abort"] {
        assert!(!launch.stderr.contains(bad), "{bad:?} in: {launch}");
    }
}

#[test]
fn written_files_read_back_verified_on_other_layouts_and_rank_counts() {
    for ty in ["f32", "f64", "i32", "i64", "u8", "u32", "u64", "c32", "c64"] {
        let f = file(&format!("types-{ty}.npy"));
        let w = ok_json(&mpirun(
            2,
            &[
                "io",
                "write",
                "--shape",
                "37x29",
                "--type",
                ty,
                "--layout",
                "cyclic(3),cyclic(2)@1x2",
                "--file",
                &f,
                "--reps",
                "1",
                "--json",
            ],
        ));
        assert_eq!(w["command"], "io write");
        assert_eq!(w["bytes"].as_u64(), Some(37 * 29 * w_size(ty)));
        assert!(
            w["write_ms_median"].as_f64().is_some_and(|t| t > 0.0),
            "{w}"
        );
        assert!(w["gb_per_s"].as_f64().is_some(), "{w}");
        let r = ok_json(&mpirun(
            3,
            &[
                "io",
                "read",
                "--file",
                &f,
                "--layout",
                "block,*@3x1",
                "--verify",
                "--reps",
                "1",
                "--json",
            ],
        ));
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(r["type"], ty);
        assert!(r["read_ms_median"].as_f64().is_some(), "{r}");
    }
}

fn w_size(ty: &str) -> u64 {
    match ty {
        "u8" => 1,
        "f32" | "i32" | "u32" => 4,
        "c64" => 16,
        _ => 8,
    }
}

#[test]
fn baselines_windows_fortran_order_and_info() {
    let f = file("base.npy");
    let w = ok_json(&mpirun(
        2,
        &[
            "io",
            "write",
            "--shape",
            "64x48",
            "--layout",
            "cyclic(8),cyclic(8)@1x2",
            "--order",
            "f",
            "--aggregators",
            "2",
            "--staging",
            "4K",
            "--file",
            &f,
            "--reps",
            "2",
            "--baseline",
            "mpiio",
            "--json",
        ],
    ));
    for key in ["mpiio_write_ms_median", "write_over_mpiio"] {
        assert!(w[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {w}");
    }
    assert_eq!(w["order"], "F");
    let r = ok_json(&mpirun(
        2,
        &[
            "io",
            "read",
            "--file",
            &f,
            "--layout",
            "cyclic,cyclic@2x1",
            "--verify",
            "--baseline",
            "mpiio",
            "--reps",
            "2",
            "--json",
        ],
    ));
    assert_eq!(r["verified"], true, "{r}");
    assert!(
        r["read_over_mpiio"].as_f64().is_some_and(|x| x > 0.0),
        "{r}"
    );
    let r = ok_json(&mpirun(
        2,
        &[
            "io",
            "read",
            "--file",
            &f,
            "--layout",
            "*,block@1x2",
            "--window",
            "1x48",
            "--from-window",
            "17,0",
            "--verify",
            "--reps",
            "1",
            "--json",
        ],
    ));
    assert_eq!(
        (r["verified"].clone(), r["shape"].clone()),
        (Value::Bool(true), serde_json::json!([1, 48]))
    );
    let out = Command::new(env!("CARGO_BIN_EXE_redist"))
        .args(["io", "info", &f, "--json"])
        .output()
        .expect("redist runs");
    assert!(out.status.success(), "{out:?}");
    let info: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(info["shape"], serde_json::json!([64, 48]));
    assert_eq!(
        (info["order"].as_str(), info["type"].as_str()),
        (Some("F"), Some("f64"))
    );
    assert_eq!(info["data_offset"], 128);
    let out = Command::new(env!("CARGO_BIN_EXE_redist"))
        .args(["io", "info", &f])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("npy 1.0, f64, shape 64x48, Fortran order"),
        "{text}"
    );
}

#[test]
fn refusals_exit_2_with_the_message_on_every_rank() {
    let missing = file("missing.npy");
    let launch = mpirun(
        2,
        &["io", "read", "--file", &missing, "--layout", "block,*@2x1"],
    );
    assert_refused_everywhere(&launch, 2, &["missing.npy", "cannot open"]);
    let f = file("refusals.npy");
    ok_json(&mpirun(
        2,
        &[
            "io",
            "write",
            "--shape",
            "10x10",
            "--layout",
            "block,*@2x1",
            "--file",
            &f,
            "--reps",
            "1",
            "--json",
        ],
    ));
    let launch = mpirun(
        2,
        &[
            "io",
            "read",
            "--file",
            &f,
            "--layout",
            "block,*@2x1",
            "--type",
            "f32",
        ],
    );
    assert_refused_everywhere(&launch, 2, &["f64", "f32"]);
    let launch = mpirun(
        2,
        &[
            "io",
            "read",
            "--file",
            &f,
            "--layout",
            "block,*@2x1",
            "--window",
            "5x5",
            "--from-window",
            "6,0",
        ],
    );
    assert_refused_everywhere(&launch, 2, &["does not fit"]);
    let nowhere = file("no-such-folder/x.npy");
    let launch = mpirun(
        2,
        &[
            "io",
            "write",
            "--shape",
            "10x10",
            "--layout",
            "block,*@2x1",
            "--file",
            &nowhere,
            "--reps",
            "1",
        ],
    );
    assert_refused_everywhere(&launch, 2, &["writing failed"]);
    let out = Command::new(env!("CARGO_BIN_EXE_redist"))
        .args(["io", "info", &missing])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot open"),
        "{out:?}"
    );
}
