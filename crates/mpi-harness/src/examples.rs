//! Whole example programs launched under `mpirun`: how the tests run the
//! programs the tour (`docs/tour.md`) shows.
//!
//! A suite of examples is a test program with `harness = false` whose `main`
//! calls [`run_examples`]. Unless `cargo test` has built the examples it
//! names already (as it does unless only some test targets are selected:
//! then each is newer than every source file cargo's dep-info names), it
//! first builds them with the cargo that runs the tests, in the test
//! program's own profile and target directory, then starts each one under
//! `mpirun -n K` for every rank count of the suite, or once without
//! `mpirun` when it needs no MPI — each under the suite's timeout
//! (`NDCYCLIC_MPI_TIMEOUT`), killed with all its processes when it hangs —
//! and fails when any exits with a failure.

use crate::launch::{launch, Launcher};
use crate::{Args, Tally};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// One of the package's `examples/`, launched whole.
#[derive(Clone, Copy, Debug)]
pub struct Example {
    name: &'static str,
    args: &'static [&'static str],
    mpi: bool,
}

impl Example {
    /// Example `name`, launched under `mpirun -n K` for every rank count of
    /// the suite.
    pub const fn mpi(name: &'static str) -> Self {
        Example {
            name,
            args: &[],
            mpi: true,
        }
    }

    /// Example `name`, which does not start MPI: run once, without `mpirun`.
    pub const fn serial(name: &'static str) -> Self {
        Example {
            name,
            args: &[],
            mpi: false,
        }
    }

    /// The same example, started with these command-line arguments.
    pub const fn args(self, args: &'static [&'static str]) -> Self {
        Example { args, ..self }
    }
}

/// Builds `examples` and runs each one: under `mpirun -n K` for every K of
/// `rank_counts` (or of `--ranks` / `NDCYCLIC_MPI_RANKS`), or once directly
/// for [`Example::serial`] ones. Words on the command line keep only the
/// examples whose names contain them; `--list` lists the launches.
///
/// Exits the process with a failure status when the build or any launch
/// fails, printing the failed launches' output and how to repeat them.
pub fn run_examples(suite: &str, rank_counts: &[usize], examples: &[Example]) {
    let args = Args::parse();
    let rank_counts = args.rank_counts(rank_counts, true);
    let selected: Vec<Example> = examples
        .iter()
        .filter(|e| args.selects(e.name))
        .copied()
        .collect();
    let launches: Vec<(Example, Option<usize>)> = selected
        .iter()
        .flat_map(|&e| {
            let counts: Vec<Option<usize>> = if e.mpi {
                rank_counts.iter().map(|&k| Some(k)).collect()
            } else {
                vec![None]
            };
            counts.into_iter().map(move |k| (e, k))
        })
        .collect();
    if args.list {
        for (e, k) in &launches {
            println!("{}: test", label(e, *k));
        }
        return;
    }
    let dir = match examples_dir().filter(|dir| up_to_date(dir, &selected)) {
        Some(dir) => dir,
        None => {
            println!("\n{suite}: building {} examples", selected.len());
            match build(&selected) {
                Ok(dir) => dir,
                Err(message) => {
                    println!("\n{suite}: building the examples failed:\n{message}");
                    std::process::exit(1);
                }
            }
        }
    };
    println!(
        "\nrunning {} launches of {} examples ({suite})",
        launches.len(),
        selected.len()
    );
    let mut tally = Tally::new();
    let launcher = Launcher::from_env();
    for (e, k) in &launches {
        let exe = dir.join(e.name);
        let extra: Vec<String> = e.args.iter().map(|a| a.to_string()).collect();
        tally.record(label(e, *k), launch(&exe, *k, &extra, &launcher));
    }
    if !tally.finish() {
        std::process::exit(1);
    }
}

/// `tour_grids np=3`, or `tour_plans` for an example run without `mpirun`.
fn label(e: &Example, k: Option<usize>) -> String {
    match k {
        Some(k) => format!("{} np={k}", e.name),
        None => e.name.to_string(),
    }
}

/// `<target>/<profile>/examples`, next to the test program's `deps`.
fn examples_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.join("examples"))
}

/// Whether every example in `dir` is newer than each source file its
/// dep-info (`<name>.d`, which cargo writes beside it) names: then the
/// `cargo test` running this program built them already, with its own
/// features (which a build from here could not repeat: it would build
/// them again for the package's default features), and there is nothing
/// to build.
fn up_to_date(dir: &Path, examples: &[Example]) -> bool {
    examples.iter().all(|e| {
        let exe = dir.join(e.name);
        let built = std::fs::metadata(&exe).and_then(|m| m.modified());
        let deps = std::fs::read_to_string(dir.join(format!("{}.d", e.name)));
        let (Ok(built), Ok(deps)) = (built, deps) else {
            return false;
        };
        let Some((_, sources)) = deps.lines().next().and_then(|l| l.split_once(": ")) else {
            return false;
        };
        dep_info_paths(sources).iter().all(|source| {
            std::fs::metadata(source)
                .and_then(|m| m.modified())
                .is_ok_and(|changed| changed <= built)
        })
    })
}

/// The paths of a dep-info line's right-hand side (`\ ` is a space within a path).
fn dep_info_paths(sources: &str) -> Vec<PathBuf> {
    let mut paths = vec![];
    let mut current = String::new();
    let mut chars = sources.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            ' ' => {
                if !current.is_empty() {
                    paths.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        paths.push(PathBuf::from(current));
    }
    paths
}

/// Builds the examples with the cargo running the tests, in the profile the
/// test program was built in, and returns the directory holding them
/// (`<target>/<profile>/examples`, next to the test program's `deps`).
fn build(examples: &[Example]) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the test program: {e}"))?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| format!("{} is not in <target>/<profile>/deps", exe.display()))?;
    let profile = profile_dir
        .file_name()
        .and_then(|p| p.to_str())
        .unwrap_or("debug");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(&cargo);
    cmd.arg("build");
    match profile {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    if let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") {
        cmd.arg("--manifest-path")
            .arg(Path::new(&dir).join("Cargo.toml"));
    }
    for e in examples {
        cmd.args(["--example", e.name]);
    }
    let output: Output = cmd
        .output()
        .map_err(|e| format!("cannot start `{cargo}`: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{cmd:?} exited with {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(profile_dir.join("examples"))
}

#[cfg(test)]
mod tests {
    use super::dep_info_paths;
    use std::path::PathBuf;

    #[test]
    fn dep_info_paths_keep_escaped_spaces() {
        let paths = dep_info_paths("/a/b.rs /c\\ d/e.rs  /f.rs");
        let want: Vec<PathBuf> = ["/a/b.rs", "/c d/e.rs", "/f.rs"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(paths, want);
        assert!(dep_info_paths("").is_empty());
    }
}
