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
