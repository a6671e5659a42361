//! `redist tune` as a user runs it: every choice measured and the fastest
//! added to a wisdom file, which `redist run --wisdom` then runs without a
//! trial of routes; what it does not tune is refused once.

use crate::common::mpirun;

/// A wisdom file in a temporary folder of its own, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("redist-tune-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn file(&self) -> String {
        self.0.join("wisdom").display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn tuned_choices_are_kept_and_run_later() {
    let scratch = Scratch::new("kept");
    let wisdom = scratch.file();
    let case = [
        "--shape",
        "512x256",
        "--from",
        "block,*@2x1",
        "--to",
        "cyclic(8),cyclic(64)@2x1",
    ];
    let tune: Vec<&str> = ["tune"]
        .into_iter()
        .chain(case)
        .chain([
            "--reps",
            "2",
            "--warmups",
            "1",
            "--verify",
            "--json",
            "--wisdom",
            &wisdom,
        ])
        .collect();
    let launch = mpirun(2, &tune);
    assert_eq!(launch.code, Some(0), "{launch}");
    let v = launch.json();
    assert_eq!(v["verified"], true, "{launch}");
    assert!(v["best_ms"].as_f64() <= v["auto_ms"].as_f64(), "{launch}");
    assert!(
        v["tried"].as_array().is_some_and(|t| t.len() >= 4),
        "{launch}"
    );
    let best = v["best_choice"].as_str().unwrap().to_string();
    let text = std::fs::read_to_string(&wisdom).unwrap();
    assert!(
        text.starts_with("ndcyclic-wisdom 1") && text.contains(&best),
        "{text}"
    );
    let run: Vec<&str> = ["run"]
        .into_iter()
        .chain(case)
        .chain(["--reps", "3", "--verify", "--json", "--wisdom", &wisdom])
        .collect();
    let launch = mpirun(2, &run);
    assert_eq!(launch.code, Some(0), "{launch}");
    let v = launch.json();
    assert_eq!(v["measured_choice"], best.as_str(), "{launch}");
    assert_eq!(v["tries_routes"], false, "{launch}");
    assert_eq!(v["first_ms"].as_array().map(Vec::len), Some(1), "{launch}");
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(0), "{launch}");
    // On 4 ranks the file has nothing for this job: a warning, once, and
    // auto's own choice.
    let case4 = [
        "run",
        "--shape",
        "512x256",
        "--from",
        "block,*@4x1",
        "--to",
        "cyclic(8),cyclic(64)@4x1",
        "--reps",
        "2",
        "--verify",
        "--json",
        "--wisdom",
        &wisdom,
    ];
    let launch = mpirun(4, &case4);
    assert_eq!(launch.code, Some(0), "{launch}");
    assert_eq!(
        launch.stderr.matches("warning: wisdom file").count(),
        1,
        "{launch}"
    );
    let v = launch.json();
    assert_eq!(v["measured_choice"], serde_json::Value::Null, "{launch}");
    assert_eq!(v["verified"], true, "{launch}");
}

#[test]
fn what_is_not_tuned_is_refused_once() {
    let launch = mpirun(
        2,
        &[
            "tune",
            "--shape",
            "64x64",
            "--from",
            "block,*@2x1",
            "--to",
            "*,block@1x2",
            "--transpose",
        ],
    );
    assert_eq!(launch.code, Some(2), "{launch}");
    assert_eq!(launch.stderr.matches("error:").count(), 1, "{launch}");
    assert!(
        launch.stderr.contains("--permute or --transpose"),
        "{launch}"
    );
}

#[test]
fn grids_are_chosen_for_phases_and_kept() {
    let scratch = Scratch::new("grid");
    let wisdom = scratch.file();
    let args = [
        "tune",
        "grid",
        "--shape",
        "40x24x18",
        "--phases",
        "*,block,block@G -> block,*,block@G -> block,block,*@G",
        "--reps",
        "2",
        "--warmups",
        "1",
        "--verify",
        "--json",
        "--wisdom",
        &wisdom,
    ];
    let launch = mpirun(2, &args);
    assert_eq!(launch.code, Some(0), "{launch}");
    let v = launch.json();
    assert_eq!(v["verified"], true, "{launch}");
    assert_eq!(v["recalled"], false, "{launch}");
    // Every grid of 2 ranks on two distributed axes, each timed.
    let tried = v["tried"].as_array().unwrap();
    let grids: Vec<&str> = tried.iter().map(|t| t["grid"].as_str().unwrap()).collect();
    assert_eq!(grids, ["2x1", "1x2"], "{launch}");
    assert!(tried.iter().all(|t| t["ms"].as_f64().is_some()), "{launch}");
    assert_eq!(
        tried[1]["phases"],
        serde_json::json!([
            "*,block,block@1x1x2",
            "block,*,block@1x1x2",
            "block,block,*@1x2x1"
        ]),
        "{launch}"
    );
    assert!(v["chosen_over_default"].as_f64() <= Some(1.0), "{launch}");
    let chosen = v["grid"].as_str().unwrap().to_string();
    let text = std::fs::read_to_string(&wisdom).unwrap();
    assert!(text.contains(&format!("\tgrid {chosen}\t")), "{text}");
    // A later job takes the grid from the file, measuring nothing.
    let launch = mpirun(2, &args);
    assert_eq!(launch.code, Some(0), "{launch}");
    let v = launch.json();
    assert_eq!(v["recalled"], true, "{launch}");
    assert_eq!(v["steps"], 0, "{launch}");
    assert_eq!(v["grid"], chosen.as_str(), "{launch}");
    assert_eq!(v["verified"], true, "{launch}");
}

#[test]
fn phases_that_leave_nothing_to_choose_are_refused_once() {
    for (phases, says) in [
        ("block,*@2x1 -> *,block@1x2", "without `@G`"),
        ("block,*@G", "two or more layout specs"),
        (
            "block,block@G -> block,*@G",
            "different numbers of distributed axes",
        ),
    ] {
        let launch = mpirun(2, &["tune", "grid", "--shape", "16x16", "--phases", phases]);
        assert_eq!(launch.code, Some(2), "{launch}");
        assert_eq!(launch.stderr.matches("error:").count(), 1, "{launch}");
        assert!(launch.stderr.contains(says), "{phases}: {launch}");
    }
    // Layouts that fit no candidate: the layout's own error.
    let launch = mpirun(
        2,
        &[
            "tune",
            "grid",
            "--shape",
            "16x16x4",
            "--phases",
            "block,*@G -> *,block@G",
        ],
    );
    assert_eq!(launch.code, Some(2), "{launch}");
    assert!(launch.stderr.contains("dimension"), "{launch}");
}

#[test]
fn ghost_ways_are_tuned_and_read_by_halo() {
    let scratch = Scratch::new("ghosts");
    let wisdom = scratch.file();
    let update = [
        "--shape",
        "64x40",
        "--layout",
        "block,block@2x1",
        "--width",
        "1",
    ];
    let tune: Vec<&str> = ["tune", "ghosts"]
        .into_iter()
        .chain(update)
        .chain([
            "--reps",
            "2",
            "--warmups",
            "1",
            "--verify",
            "--json",
            "--wisdom",
            &wisdom,
        ])
        .collect();
    let launch = mpirun(2, &tune);
    assert_eq!(launch.code, Some(0), "{launch}");
    let v = launch.json();
    assert_eq!(v["verified"], true, "{launch}");
    assert_eq!(v["tried"].as_array().map(Vec::len), Some(2), "{launch}");
    assert!(
        v["best_ms"].as_f64() <= v["default_ms"].as_f64(),
        "{launch}"
    );
    let best = v["best"].as_str().unwrap().to_string();
    let text = std::fs::read_to_string(&wisdom).unwrap();
    assert!(text.contains(&format!("\tghost {best}\t")), "{text}");
    // redist halo reads it: no warning, the ghosts right.
    let halo: Vec<&str> = ["halo"]
        .into_iter()
        .chain(update)
        .chain(["--reps", "2", "--verify", "--json", "--wisdom", &wisdom])
        .collect();
    let launch = mpirun(2, &halo);
    assert_eq!(launch.code, Some(0), "{launch}");
    assert!(!launch.stderr.contains("warning"), "{launch}");
    assert_eq!(launch.json()["verified"], true, "{launch}");
    // On 1 rank the file has nothing for this update: one warning.
    let one: Vec<&str> = [
        "halo",
        "--shape",
        "64x40",
        "--layout",
        "block,block@1x1",
        "--width",
        "1",
    ]
    .into_iter()
    .chain(["--reps", "1", "--verify", "--json", "--wisdom", &wisdom])
    .collect();
    let launch = mpirun(1, &one);
    assert_eq!(launch.code, Some(0), "{launch}");
    assert_eq!(
        launch.stderr.matches("warning: wisdom file").count(),
        1,
        "{launch}"
    );
}

#[test]
fn batches_are_tuned_whole() {
    let launch = mpirun(
        2,
        &[
            "tune",
            "--shape",
            "96x64",
            "--from",
            "block,*@2x1",
            "--to",
            "cyclic(3),cyclic(8)@1x2",
            "--batch",
            "3",
            "--reps",
            "2",
            "--warmups",
            "1",
            "--verify",
            "--json",
        ],
    );
    assert_eq!(launch.code, Some(0), "{launch}");
    let v = launch.json();
    assert_eq!(v["verified"], true, "{launch}");
    assert_eq!(v["batch"], 3, "{launch}");
    assert!(v["best_ms"].as_f64() <= v["auto_ms"].as_f64(), "{launch}");
}

#[test]
fn a_stencils_box_decomposition_is_chosen_on_its_ghost_updates() {
    let job = [
        "tune",
        "grid",
        "--shape",
        "24x20",
        "--phases",
        "block,block@G",
    ];
    let args: Vec<&str> = job
        .into_iter()
        .chain([
            "--ghosts",
            "1",
            "--reps",
            "2",
            "--warmups",
            "1",
            "--verify",
            "--json",
        ])
        .collect();
    let launch = mpirun(2, &args);
    assert_eq!(launch.code, Some(0), "{launch}");
    let v = launch.json();
    assert_eq!(v["verified"], true, "{launch}");
    let tried = v["tried"].as_array().unwrap();
    assert_eq!(tried.len(), 2, "{launch}");
    assert!(tried.iter().all(|t| t["ms"].as_f64().is_some()), "{launch}");
    // One phase without ghosts moves nothing; widths must fit the axes.
    let launch = mpirun(2, &job);
    assert_eq!(launch.code, Some(2), "{launch}");
    assert!(launch.stderr.contains("one with --ghosts"), "{launch}");
    let wrong: Vec<&str> = job.into_iter().chain(["--ghosts", "1,1,1"]).collect();
    let launch = mpirun(2, &wrong);
    assert_eq!(launch.code, Some(2), "{launch}");
    assert!(launch.stderr.contains("one per axis (2)"), "{launch}");
}

#[test]
fn thresholds_near_autos_are_tried_where_they_route_otherwise() {
    // (shape, from, to; a choice that must be among those timed, or none
    // with a threshold at all)
    let cases = [
        (
            "256x6000",
            "block,*@2x1",
            "*,block@1x2",
            Some("async,packed,messages,direct(2048)"),
        ),
        (
            "512x512",
            "block,*@2x1",
            "cyclic(12),cyclic(12)@1x2",
            Some("async,typed(8),messages"),
        ),
        ("512x256", "block,*@2x1", "cyclic(2),cyclic(64)@2x1", None),
    ];
    for (shape, from, to, expected) in cases {
        let launch = mpirun(
            2,
            &[
                "tune",
                "--shape",
                shape,
                "--from",
                from,
                "--to",
                to,
                "--reps",
                "1",
                "--warmups",
                "0",
                "--verify",
                "--json",
            ],
        );
        assert_eq!(launch.code, Some(0), "{launch}");
        let v = launch.json();
        assert_eq!(v["verified"], true, "{launch}");
        let tried: Vec<&str> = (v["tried"].as_array().unwrap().iter())
            .map(|t| t["choice"].as_str().unwrap())
            .collect();
        match expected {
            Some(choice) => assert!(tried.contains(&choice), "{shape} {to}: {tried:?}"),
            None => assert!(
                !tried.iter().any(|c| c.contains('(')),
                "{shape} {to}: {tried:?}"
            ),
        }
    }
}
