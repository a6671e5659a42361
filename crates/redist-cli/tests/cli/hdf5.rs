//! `redist io` on HDF5 files (feature `hdf5`): writes and reads timed
//! next to parallel HDF5's own hyperslab calls (`--baseline hdf5`), read
//! back verified on other layouts and rank counts, datasets in groups,
//! `info`, and the baseline's refusals (exit code 2 on every rank).

use crate::common::{mpirun, Launch};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// A file name of this test's own, in a folder of the build.
fn file(name: &str) -> String {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-hdf5");
    std::fs::create_dir_all(&d).expect("a folder for the test files");
    d.join(name).display().to_string()
}

fn ok_json(launch: &Launch) -> Value {
    assert_eq!(launch.code, Some(0), "{launch}");
    launch.json()
}

fn positive(v: &Value, key: &str) {
    assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {v}");
}

#[test]
fn hdf5_baselines_write_and_read_what_ndcyclic_reads() {
    for (ty, layout) in [
        ("f64", "cyclic(3),cyclic(2)@1x2"),
        ("c32", "cyclic,block@2x1"),
        ("u8", "block,cyclic(5)@1x2"),
    ] {
        let f = file(&format!("base-{ty}.h5"));
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
                layout,
                "--file",
                &f,
                "--reps",
                "2",
                "--baseline",
                "hdf5",
                "--json",
            ],
        ));
        positive(&w, "hdf5_write_ms_median");
        positive(&w, "write_over_hdf5");
        assert_eq!(
            (w["format"].as_str(), w["dataset"].as_str()),
            (Some("h5"), Some("data"))
        );
        // The baseline wrote the file last: ndcyclic reads what it wrote,
        // and the baseline reads it on another layout, both verified.
        let r = ok_json(&mpirun(
            3,
            &[
                "io",
                "read",
                "--file",
                &f,
                "--layout",
                "cyclic(2),*@3x1",
                "--verify",
                "--baseline",
                "hdf5",
                "--reps",
                "2",
                "--json",
            ],
        ));
        assert_eq!(
            (r["verified"].clone(), r["type"].as_str()),
            (Value::Bool(true), Some(ty))
        );
        positive(&r, "hdf5_read_ms_median");
        positive(&r, "read_over_hdf5");
    }
}

#[test]
fn datasets_in_groups_and_info() {
    // (`io write` makes a new file every time: one dataset per file.)
    let f = file("groups.h5");
    ok_json(&mpirun(
        2,
        &[
            "io",
            "write",
            "--shape",
            "5x6x7",
            "--layout",
            "block,*,cyclic@2x1x1",
            "--file",
            &f,
            "--format",
            "h5",
            "--dataset",
            "/run/2/u",
            "--reps",
            "1",
            "--json",
        ],
    ));
    let r = ok_json(&mpirun(
        3,
        &[
            "io",
            "read",
            "--file",
            &f,
            "--format",
            "h5",
            "--dataset",
            "/run/2/u",
            "--layout",
            "cyclic,block,*@3x1x1",
            "--verify",
            "--reps",
            "1",
            "--json",
        ],
    ));
    assert_eq!(
        (r["verified"].clone(), r["shape"].clone()),
        (Value::Bool(true), serde_json::json!([5, 6, 7]))
    );
    let out = Command::new(env!("CARGO_BIN_EXE_redist"))
        .args([
            "io",
            "info",
            &f,
            "--format",
            "h5",
            "--dataset",
            "run/2/u",
            "--json",
        ])
        .output()
        .expect("redist runs");
    assert!(out.status.success(), "{out:?}");
    let info: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(info["shape"], serde_json::json!([5, 6, 7]));
    assert_eq!(
        (info["format"].as_str(), info["order"].as_str()),
        (Some("h5"), Some("C"))
    );
    assert_eq!(info["layout"].as_str(), Some("block,*,cyclic@2x1x1"));
    assert_eq!(info["dataset"].as_str(), Some("run/2/u"));
    // A dataset the file lacks: the error says what the group holds.
    let out = Command::new(env!("CARGO_BIN_EXE_redist"))
        .args(["io", "info", &f, "--format", "h5", "--dataset", "run/1/u"])
        .output()
        .expect("redist runs");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && text.contains("/run holds 2/"),
        "{text}"
    );
}

#[test]
fn the_hdf5_baseline_refuses_what_it_cannot_do() {
    let f = file("refusals.h5");
    for (extra, needle) in [
        (&["--order", "f"][..], "--order c"),
        (&["--format", "npy"][..], "an HDF5 file"),
    ] {
        let mut args = vec![
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
            "--baseline",
            "hdf5",
        ];
        args.extend_from_slice(extra);
        let _ = std::fs::remove_file(&f);
        let launch = mpirun(2, &args);
        assert_eq!(launch.code, Some(2), "{launch}");
        assert_eq!(
            launch.stderr.matches("error:").count(),
            2,
            "one line per rank: {launch}"
        );
        assert!(
            launch.stderr.contains(needle),
            "{needle:?} missing: {launch}"
        );
        for bad in ["panicked", "BAD TERMINATION", "MPI_Abort"] {
            assert!(!launch.stderr.contains(bad), "{bad:?} in: {launch}");
        }
    }
}
