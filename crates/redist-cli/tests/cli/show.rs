//! Runs the built `redist` binary (`redist show`, `redist plan`, `redist
//! chart`) as a user would: without `mpirun`, without MPI in the environment.

use serde_json::{json, Value};
use std::process::{Command, Output};

/// Runs `redist` with `args`, with every launcher variable removed so the
/// test proves `show` needs no MPI launcher.
fn redist(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_redist"));
    cmd.args(args);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("PMI_")
            || key.starts_with("PMIX_")
            || key.starts_with("OMPI_")
            || key.starts_with("HYDRA_")
            || key.starts_with("MPIR_")
        {
            cmd.env_remove(key);
        }
    }
    cmd.output().expect("the redist binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8 output")
}

fn last_line_json(out: &Output) -> Value {
    let stdout = text(&out.stdout);
    let last = stdout.lines().last().expect("some output");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("last line {last:?} is not JSON: {e}"))
}

#[test]
fn json_for_a_non_divisible_layout() {
    let out = redist(&[
        "show",
        "--shape",
        "10x7",
        "--layout",
        "cyclic(3),block+1@2x2",
        "--json",
    ]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let v = last_line_json(&out);
    assert_eq!(v["shape"], json!([10, 7]));
    assert_eq!(v["layout"], "cyclic(3),block+1@2x2");
    assert_eq!(v["ranks"], 4);
    assert_eq!(v["local_shapes"], json!([[6, 3], [6, 4], [4, 3], [4, 4]]));
}

#[test]
fn json_layout_is_canonical() {
    let out = redist(&[
        "show",
        "--shape",
        "8X8",
        "--layout",
        "CYCLIC(2) , Block @ 2x3",
        "--json",
    ]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let v = last_line_json(&out);
    assert_eq!(v["layout"], "cyclic(2),block@2x3");
    assert_eq!(
        v["local_shapes"],
        json!([[4, 3], [4, 3], [4, 2], [4, 3], [4, 3], [4, 2]])
    );
}

#[test]
fn drawing_of_a_small_array() {
    let out = redist(&["show", "--shape", "6", "--layout", "cyclic(2)@3"]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("layout cyclic(2)@3  shape 6  ranks 3\n"),
        "{stdout}"
    );
    assert!(stdout.contains("owner | 0 0 1 1 2 2\n"), "{stdout}");
    assert!(stdout.contains("rank  coords"), "{stdout}");
    assert!(text(&out.stderr).is_empty());
}

#[test]
fn large_and_3d_arrays_get_the_summary_only() {
    for (shape, layout, ranks) in [
        ("4096x4096", "cyclic(64),cyclic(64)@2x3", 6),
        ("8x8x8", "cyclic,cyclic(5),block@2x2x1", 4),
    ] {
        let out = redist(&["show", "--shape", shape, "--layout", layout]);
        assert!(out.status.success(), "stderr: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(!stdout.contains("owning rank"), "{stdout}");
        let table: Vec<&str> = stdout
            .lines()
            .skip_while(|l| !l.starts_with("rank"))
            .collect();
        assert_eq!(table.len(), 1 + ranks + 1, "{stdout}");
    }
}

fn assert_usage_error(args: &[&str], needles: &[&str]) {
    let out = redist(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let stderr = text(&out.stderr);
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{args:?}: {needle:?} not in {stderr}"
        );
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(text(&out.stdout).is_empty(), "{args:?}");
}

#[test]
fn bad_layout_exits_2_with_message() {
    assert_usage_error(
        &["show", "--shape", "8x8", "--layout", "block,*@2x2"],
        &["--layout", "block,*@2x2", "grid extent 1"],
    );
    assert_usage_error(
        &["show", "--shape", "8x8", "--layout", "blok,block@2x2"],
        &["column 1", "blok", "`block`"],
    );
    // A valid spec that does not fit the shape.
    assert_usage_error(
        &["show", "--shape", "8x8", "--layout", "block@4", "--json"],
        &["block@4", "8x8", "has 1 dimension(s) but shape 8x8 has 2"],
    );
}

#[test]
fn bad_shape_exits_2_with_message() {
    assert_usage_error(
        &["show", "--shape", "8xq", "--layout", "block,block@2x2"],
        &["--shape", "8xq", "extent 2", "`q`", "non-negative integer"],
    );
    assert_usage_error(
        &["show", "--shape", "", "--layout", "block@2"],
        &["empty shape"],
    );
}

#[test]
fn missing_arguments_exit_2() {
    assert_usage_error(&["show", "--shape", "8x8"], &["--layout"]);
    assert_usage_error(&[], &["Usage"]);
}

#[test]
fn plan_json_has_the_contract_keys() {
    let out = redist(&[
        "plan",
        "--shape",
        "100",
        "--from",
        "cyclic(10)@5",
        "--to",
        "cyclic(5)@5",
        "--remap",
        "optimal",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v = last_line_json(&out);
    for key in [
        "elements",
        "elements_kept_local",
        "elements_moved",
        "messages",
        "max_partners",
        "steps",
        "schedule_cost",
        "target_rank_map",
        "plan_ms",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    // Seed 003, Fig. 4: 50 of 100 elements stay local with the remapping.
    assert_eq!(v["elements"], 100);
    assert_eq!(v["elements_kept_local"], 50);
    assert_eq!(v["elements_moved"], 50);
    let map: Vec<usize> = serde_json::from_value(v["target_rank_map"].clone()).unwrap();
    let mut sorted = map.clone();
    sorted.sort();
    assert_eq!(sorted, vec![0, 1, 2, 3, 4]);
}

#[test]
fn plan_report_draws_the_schedule() {
    let out = redist(&[
        "plan",
        "--shape",
        "8x8",
        "--from",
        "block,*@4x1",
        "--to",
        "*,block@1x4",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("kept local") && stdout.contains("steps"),
        "{stdout}"
    );
    assert!(stdout.contains("schedule (row = step"), "{stdout}");
    // Three steps of a 4-rank exchange: rows 0, 1 and 2.
    assert!(stdout.contains("   2 |"), "{stdout}");
}

#[test]
fn plan_errors_exit_2() {
    let bad_remap = redist(&[
        "plan", "--shape", "8", "--from", "block@2", "--to", "cyclic@2", "--remap", "best",
    ]);
    assert_eq!(bad_remap.status.code(), Some(2));
    assert!(
        text(&bad_remap.stderr).contains("none, closed-form or optimal"),
        "{}",
        text(&bad_remap.stderr)
    );
    let shape_change = redist(&[
        "plan",
        "--shape",
        "8x8",
        "--from",
        "block,block@2x2",
        "--to",
        "block@4",
    ]);
    assert_eq!(shape_change.status.code(), Some(2));
    let grid_change = redist(&[
        "plan",
        "--shape",
        "16x16",
        "--from",
        "block,block@2x4",
        "--to",
        "block,block@4x2",
        "--remap",
        "closed-form",
    ]);
    assert_eq!(grid_change.status.code(), Some(2));
    assert!(
        text(&grid_change.stderr).contains("use --remap optimal"),
        "{}",
        text(&grid_change.stderr)
    );
}

/// `redist chart` turns recorded `redist run --json` lines into a PNG; bad
/// lines and missing files are refused with one message naming them.
#[test]
fn chart_draws_recorded_runs_and_names_bad_input() {
    let dir = std::env::temp_dir().join(format!("redist-chart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let runs = dir.join("runs.jsonl");
    let record = |from: &str, ratio: f64| {
        json!({
            "shape": [4096, 4096], "type": "f64", "from": from, "to": "*,block@1x2",
            "strategy": "async", "node_direct": true, "ranks": 2,
            "exec_over_alltoallv": ratio, "pdgemr2d_over_exec": 6.0,
        })
        .to_string()
    };
    let lines = [record("block,*@2x1", 0.7), record("block,*@2x1", 0.8)].join("\n");
    std::fs::write(&runs, lines).unwrap();
    let png = dir.join("chart.png");
    let chart = |input: &std::path::Path| {
        redist(&[
            "chart",
            "--input",
            input.to_str().unwrap(),
            "--output",
            png.to_str().unwrap(),
        ])
    };
    let out = chart(&runs);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");

    std::fs::write(&runs, "{\"shape\": [4]}\n").unwrap();
    let out = chart(&runs);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("runs.jsonl, line 1: no key `type`"), "{err}");
    assert_eq!(err.matches("error:").count(), 1, "{err}");

    let missing = dir.join("missing.jsonl");
    let out = chart(&missing);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("missing.jsonl"));
    let _ = std::fs::remove_dir_all(&dir);
}
