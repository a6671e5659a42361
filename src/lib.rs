//! ndcyclic: n-dimensional block-cyclic distributed arrays over MPI, and fast
//! run-time redistribution between layouts.
//!
//! This facade only re-exports the workspace's library crates:
//!
//! - [`procgrid`]: process grids over MPI communicators;
//! - [`dist_array`]: block-cyclic layouts and the distributed array type;
//! - [`redist`]: redistribution plans, schedules and their execution;
//! - [`dist_io`]: saving and loading distributed arrays in `.npy` and HDF5
//!   files, on any layout and any rank count;
//! - [`mpi`]: the MPI bindings they are built on.
//!
//! The ADI heat solver of `examples/adi.rs` lives in the unpublished
//! `ndcyclic-apps` package (`apps::adi`), the `redist` tool in `redist-cli`.
//!
//! The main operation, planned once and executed many times — whole rows
//! on each rank to 2×2 blocks dealt round-robin, on any number of ranks:
//!
//! ```
//! use ndcyclic::dist_array::{DistArray, Layout};
//! use ndcyclic::mpi::topology::Communicator;
//! use ndcyclic::procgrid::{self, ProcGrid};
//! use ndcyclic::redist::{Options, Redistribution};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let universe = procgrid::init()?; // MPI, with an abort-on-panic hook
//!     let world = universe.world();
//!     let p = world.size() as usize;
//!     let grid = ProcGrid::new(&world, &[p, 1])?;
//!     let rows = Layout::parse(&[8, 6], &format!("block,*@{p}x1"))?;
//!     let blocks = Layout::parse(&[8, 6], &format!("cyclic(2),cyclic(2)@{p}x1"))?;
//!     let mut r = Redistribution::<f64>::new(&grid, &rows, &grid, &blocks, Options::default())?;
//!     let a = DistArray::from_fn(&grid, rows, |g| (10 * g[0] + g[1]) as f64)?;
//!     let mut b = DistArray::zeros(&grid, r.target_layout().clone())?;
//!     for _ in 0..3 {
//!         r.execute_into(&a, &mut b)?; // no allocation after the first call
//!     }
//!     assert_eq!(b.gather(0)?, a.gather(0)?);
//!     Ok(())
//! }
//! ```
//!
//! Run it with `mpirun -n P` (a doc test runs it as one rank).
#![deny(missing_docs)]

pub use dist_array;
pub use dist_io;
pub use mpi;
pub use mpi_extras;
pub use procgrid;
pub use redist;

/// The crate's page on crates.io (`README-crate.md`), whose program, the
/// front-page example above, runs as a doc test (one rank).
#[cfg(doctest)]
#[doc = include_str!("../README-crate.md")]
pub struct ReadmeDoctests;

/// The README and the pages under `docs/` are checked against the files they
/// speak of: the README's "Using ndcyclic in your project" program is this
/// crate's front-page example (a doc test), and so is the crates.io page's
/// (`README-crate.md`); `docs/tour.md` shows the programs `examples/tour_*.rs`
/// (run under `mpirun` by `tests/tour.rs`) as they are; every link of every page names a file of the repository;
/// `docs/ARCHITECTURE.md` lists every source file of `crates/*/src`, every
/// exchange strategy and every file that uses `unsafe`, names no file that
/// is gone, and its glossary names only code that exists; and the planning
/// crate stays free of MPI and of the environment.
#[cfg(test)]
mod docs {
    use std::path::{Component, Path, PathBuf};

    const README: &str = include_str!("../README.md");
    const TOUR: &str = include_str!("../docs/tour.md");
    const ARCHITECTURE: &str = include_str!("../docs/ARCHITECTURE.md");
    const IO: &str = include_str!("../docs/io.md");
    const GHOSTS: &str = include_str!("../docs/ghosts.md");

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    /// Every page: `README.md` and `docs/*.md`, as (path from the
    /// repository's root, text).
    fn pages() -> Vec<(PathBuf, String)> {
        let mut pages = vec![(PathBuf::from("README.md"), README.to_string())];
        for entry in std::fs::read_dir(root().join("docs")).expect("docs/ is readable") {
            let path = entry.expect("a docs/ entry").path();
            if path.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&path).expect("a page is readable");
                let name = path.file_name().expect("a page has a name");
                pages.push((Path::new("docs").join(name), text));
            }
        }
        assert!(pages.len() > 5, "the pages under docs/ not found");
        pages
    }

    #[test]
    fn the_readme_program_is_the_front_page_example() {
        let front: String = include_str!("lib.rs")
            .lines()
            .skip_while(|l| !l.starts_with("//! use ndcyclic::dist_array"))
            .take_while(|l| !l.starts_with("//! ```"))
            .map(|l| {
                l.strip_prefix("//! ")
                    .unwrap_or(l.trim_start_matches("//!"))
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert!(front.len() > 200, "front-page example not found");
        assert!(
            README.contains(&front),
            "README and src/lib.rs differ:\n{front}"
        );
        assert!(
            include_str!("../README-crate.md").contains(&front),
            "README-crate.md (the crate's page on crates.io) and src/lib.rs differ:\n{front}"
        );
    }

    /// A tour file without its `//!` header: the code the tour shows.
    fn code(file: &str) -> &str {
        let start = file
            .find("\nuse ")
            .expect("a tour program starts with its imports");
        file[start + 1..].trim_end()
    }

    #[test]
    fn the_tour_shows_every_tour_program_as_it_is() {
        for (name, file) in [
            ("tour_grids", include_str!("../examples/tour_grids.rs")),
            ("tour_layouts", include_str!("../examples/tour_layouts.rs")),
            ("tour_plans", include_str!("../examples/tour_plans.rs")),
            (
                "tour_redistribute",
                include_str!("../examples/tour_redistribute.rs"),
            ),
        ] {
            let shown = format!("```rust\n{}\n```", code(file));
            assert!(
                TOUR.contains(&shown),
                "docs/tour.md does not show examples/{name}.rs as it is:\n{shown}"
            );
            assert!(
                TOUR.contains(&format!("`examples/{name}.rs`")),
                "docs/tour.md does not name examples/{name}.rs"
            );
        }
    }

    #[test]
    fn the_io_page_shows_its_program_as_it_is() {
        let file = include_str!("../examples/tour_files.rs");
        let shown = format!("```rust\n{}\n```", code(file));
        assert!(
            IO.contains(&shown),
            "docs/io.md does not show examples/tour_files.rs as it is:\n{shown}"
        );
        assert!(IO.contains("`examples/tour_files.rs`"));
    }

    #[test]
    fn the_ghosts_page_shows_its_program_as_it_is() {
        let file = include_str!("../examples/tour_ghosts.rs");
        let shown = format!("```rust\n{}\n```", code(file));
        assert!(
            GHOSTS.contains(&shown),
            "docs/ghosts.md does not show examples/tour_ghosts.rs as it is:\n{shown}"
        );
        assert!(GHOSTS.contains("`examples/tour_ghosts.rs`"));
    }

    /// Every Rust block of every page is a tested program: the README's is
    /// the front-page example, the tour's are the four tour programs, the
    /// I/O page's is `tour_files`, the ghost page's `tour_ghosts`.
    #[test]
    fn every_rust_block_of_the_pages_is_a_tested_program() {
        for (page, text) in pages() {
            let expected = match page.to_str() {
                Some("README.md") => 1,
                Some("docs/tour.md") => 4,
                Some("docs/io.md") => 1,
                Some("docs/ghosts.md") => 1,
                _ => 0,
            };
            let blocks = text.matches("```rust\n").count();
            assert_eq!(
                blocks,
                expected,
                "{}: Rust blocks that no test checks",
                page.display()
            );
        }
    }

    /// `target` (a path relative to the folder `dir`, itself relative to
    /// the repository's root) as a path from the root, or `None` when it
    /// leaves the repository.
    fn resolve(dir: &Path, target: &str) -> Option<PathBuf> {
        let mut path = PathBuf::new();
        for part in dir.join(target).components() {
            match part {
                Component::Normal(name) => path.push(name),
                Component::CurDir => {}
                Component::ParentDir if path.pop() => {}
                _ => return None,
            }
        }
        Some(path)
    }

    /// The anchors of a page's headings, as GitHub makes them: lower case,
    /// spaces to hyphens, punctuation dropped. Code blocks hold no headings.
    fn anchors(text: &str) -> Vec<String> {
        let mut in_code = false;
        let mut anchors = vec![];
        for line in text.lines() {
            if line.starts_with("```") {
                in_code = !in_code;
            } else if let Some(heading) = line.strip_prefix('#').filter(|_| !in_code) {
                let title = heading.trim_start_matches('#').trim();
                let anchor = title
                    .to_lowercase()
                    .chars()
                    .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
                    .map(|c| if c == ' ' { '-' } else { c })
                    .collect();
                anchors.push(anchor);
            }
        }
        anchors
    }

    /// Every link of every page stays inside the repository and names a
    /// file that exists, relative to the page's own folder; a link to a
    /// section names a heading of that page.
    #[test]
    fn links_of_every_page_name_files_of_the_repository() {
        let mut links = 0;
        for (page, text) in pages() {
            let dir = page.parent().expect("a page lies in a folder");
            for (at, _) in text.match_indices("](") {
                let rest = &text[at + 2..];
                let target = &rest[..rest.find(')').expect("a link ends with )")];
                let (file, section) = target.split_once('#').unwrap_or((target, ""));
                let resolved = match file {
                    "" => Some(page.clone()),
                    _ if target.contains("://") => None,
                    _ => resolve(dir, file),
                };
                let Some(resolved) = resolved else {
                    panic!("{} links out of the repository: {target}", page.display());
                };
                let path = root().join(&resolved);
                assert!(
                    path.exists(),
                    "{} links to a missing file: {target}",
                    page.display()
                );
                if !section.is_empty() {
                    let linked = std::fs::read_to_string(&path).expect("a linked page");
                    assert!(
                        anchors(&linked).iter().any(|a| a == section),
                        "{} links to a missing section: {target}",
                        page.display()
                    );
                }
                links += 1;
            }
        }
        assert!(links >= 20, "the pages' links not found");
    }

    /// The paths `docs/ARCHITECTURE.md`'s table of `unsafe` names in its
    /// first column, as written there: relative to `crates/` (or to the
    /// root), a folder ending in `/`.
    fn unsafe_table() -> Vec<&'static str> {
        let section = ARCHITECTURE
            .split("## Where `unsafe` lives")
            .nth(1)
            .expect("docs/ARCHITECTURE.md has a section on unsafe");
        let section = section.split("\n## ").next().unwrap_or(section);
        section
            .lines()
            .filter_map(|row| row.strip_prefix('|')?.split('|').next())
            .flat_map(|cell| cell.split('`').skip(1).step_by(2))
            .filter(|name| name.contains('/'))
            .collect()
    }

    /// Whether a line of Rust uses the word `unsafe` as code: not in a
    /// comment line, not inside a string, not as part of a longer name.
    fn uses_unsafe(line: &str) -> bool {
        const WORD: &str = "unsafe";
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        !line.trim_start().starts_with("//")
            && line.match_indices(WORD).any(|(at, _)| {
                let before = &line[..at];
                let quotes = before.matches('"').count() - before.matches("\\\"").count();
                quotes.is_multiple_of(2)
                    && !before.chars().next_back().is_some_and(ident)
                    && !line[at + WORD.len()..].chars().next().is_some_and(ident)
            })
    }

    /// The Rust files under `dir`, at any depth, into `files`.
    fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                rust_files(&path, files);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }

    /// The workspace's Rust files: every crate's `src` and `tests`, the
    /// facade's `src`, `examples`, `benches` and `tests`, and the Python
    /// extension's `python/src` (outside the Cargo workspace).
    fn workspace_files() -> Vec<PathBuf> {
        let mut files = vec![];
        for crate_dir in std::fs::read_dir(root().join("crates")).expect("crates/ is readable") {
            let crate_dir = crate_dir.expect("a crates/ entry").path();
            rust_files(&crate_dir.join("src"), &mut files);
            rust_files(&crate_dir.join("tests"), &mut files);
        }
        for dir in ["src", "examples", "benches", "tests", "python/src"] {
            rust_files(&root().join(dir), &mut files);
        }
        files
    }

    /// The planning crate depends on nothing that links MPI, and its code
    /// neither calls MPI nor reads the environment: machine facts come in
    /// as arguments (`Machine`). What its test binary links is shown by
    /// `ldd` (docs/ARCHITECTURE.md, "Crates").
    #[test]
    fn the_planning_crate_links_no_mpi() {
        let manifest = std::fs::read_to_string(root().join("crates/redist-plan/Cargo.toml"))
            .expect("crates/redist-plan/Cargo.toml is readable");
        let mut section = "";
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line;
                continue;
            }
            let name = line.split(['.', ' ', '=']).next().unwrap_or("");
            let mpi_linked = [
                "mpi",
                "mpi-sys",
                "procgrid",
                "dist-array",
                "redist",
                "mpi-harness",
            ];
            assert!(
                !(section.contains("dependencies") && mpi_linked.contains(&name)),
                "redist-plan's {section} names {name}, which links MPI"
            );
        }
        let mut files = vec![];
        rust_files(&root().join("crates/redist-plan/src"), &mut files);
        assert!(files.len() > 20, "the planning crate's sources not found");
        let banned = [
            "mpi::",
            "procgrid::",
            "dist_array::",
            "std::env",
            "std::fs",
            "available_parallelism",
        ];
        for file in &files {
            let text = std::fs::read_to_string(file).expect("a source file is readable");
            for (n, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                for b in banned {
                    assert!(
                        !code.contains(b),
                        "{}:{}: {b} in the planning crate",
                        file.display(),
                        n + 1
                    );
                }
            }
        }
    }

    /// Whether `code` (a line without its comment) reaches into MPI's C
    /// interface: a call, constant or type of `mpi::ffi`.
    fn reaches_mpi_ffi(code: &str) -> bool {
        // Spelled in parts, so that this file does not name them itself.
        let ffi = "ffi";
        let code = code.split("//").next().unwrap_or("");
        [
            format!("mpi::{ffi}"),
            format!("{ffi}::MPI_"),
            format!("{ffi}::RSMPI_"),
        ]
        .iter()
        .any(|p| code.contains(p.as_str()))
    }

    /// `mpi-extras` is the only door to `mpi::ffi`: no other Rust file of
    /// the workspace (tests, examples and the Python extension included)
    /// names a call, constant or type of MPI's C interface.
    #[test]
    fn only_mpi_extras_reaches_mpi_ffi() {
        let ffi = "ffi";
        assert!(reaches_mpi_ffi(&format!(
            "unsafe {{ mpi::{ffi}::MPI_Abort(c, 1) }};"
        )));
        assert!(reaches_mpi_ffi(&format!("use mpi::{ffi};")));
        assert!(reaches_mpi_ffi(&format!("let h = {ffi}::RSMPI_COMM_SELF;")));
        assert!(!reaches_mpi_ffi(&format!(
            "let s = std::{ffi}::CString::new(x); // mpi::{ffi}"
        )));
        // The crate stands beneath everything that uses MPI.
        let manifest = std::fs::read_to_string(root().join("crates/mpi-extras/Cargo.toml"))
            .expect("crates/mpi-extras/Cargo.toml is readable");
        for line in manifest.lines().map(str::trim) {
            let name = line.split(['.', ' ', '=']).next().unwrap_or("");
            assert!(
                !["procgrid", "dist-array", "redist", "dist-io"].contains(&name),
                "mpi-extras depends on {name}, a layer above it"
            );
        }
        let (mut inside, mut outside) = (0, vec![]);
        for path in workspace_files() {
            let text = std::fs::read_to_string(&path).expect("a Rust file is readable");
            let rel = path.strip_prefix(root()).expect("a file of the repository");
            let rel = rel.to_str().expect("a UTF-8 path").replace('\\', "/");
            for (n, line) in text.lines().enumerate() {
                if !reaches_mpi_ffi(line.trim_start()) {
                    continue;
                }
                if rel.starts_with("crates/mpi-extras/") {
                    inside += 1;
                } else {
                    outside.push(format!("{rel}:{}", n + 1));
                }
            }
        }
        assert!(
            inside > 20,
            "mpi-extras reaches no C call: the walk is broken"
        );
        assert!(
            outside.is_empty(),
            "MPI's C interface reached outside crates/mpi-extras: {}",
            outside.join(", ")
        );
    }

    /// The names `redist`'s root offers: its `pub mod`s and what its
    /// `lib.rs` re-exports with `pub use` (the last segment of each path,
    /// or each name of a `{…}` list).
    fn redist_root_names() -> Vec<String> {
        let lib = std::fs::read_to_string(root().join("crates/redist/src/lib.rs"))
            .expect("crates/redist/src/lib.rs is readable");
        let mut names = vec![];
        let mut statement = String::new();
        for line in lib.lines().map(str::trim) {
            if statement.is_empty()
                && !(line.starts_with("pub use ") || line.starts_with("pub mod "))
            {
                continue;
            }
            statement.push_str(line);
            statement.push(' ');
            if !line.ends_with(';') {
                continue;
            }
            let body = statement.trim_end_matches([';', ' ']);
            let list = match (body.find('{'), body.rfind('}')) {
                (Some(a), Some(b)) => &body[a + 1..b],
                _ => body.rsplit([' ', ':']).next().unwrap_or(""),
            };
            names.extend(list.split(',').map(|n| n.trim().to_string()));
            statement.clear();
        }
        names.retain(|n| !n.is_empty());
        names
    }

    /// The layers above the engine stay above (issue 37, part 5): no crate
    /// beneath names the I/O crate, the tool, the apps or the Python
    /// package among its dependencies; and the I/O crate and the Python
    /// package reach the engine only through what its root offers, never
    /// through `redist::exec::…` or another module's insides.
    #[test]
    fn the_layers_above_use_only_the_engines_public_face() {
        let above = [
            "dist-io",
            "redist-cli",
            "ndcyclic-apps",
            "ndcyclic-python",
            "python",
        ];
        for below in [
            "redist-plan",
            "mpi-extras",
            "procgrid",
            "dist-array",
            "redist",
        ] {
            let path = root().join("crates").join(below).join("Cargo.toml");
            let manifest = std::fs::read_to_string(&path).expect("a manifest is readable");
            let mut section = "";
            for line in manifest.lines().map(str::trim) {
                if line.starts_with('[') {
                    section = line;
                    continue;
                }
                let name = line.split(['.', ' ', '=']).next().unwrap_or("");
                assert!(
                    !(section.contains("dependencies") && above.contains(&name)),
                    "{below}'s {section} names {name}, a layer above it"
                );
            }
        }
        // `exec` is public for its documentation; its insides are not the
        // face the layers above may use.
        let offered: Vec<String> = (redist_root_names().into_iter())
            .filter(|n| n != "exec")
            .collect();
        for must in ["Redistribution", "RedistError", "Options", "Window"] {
            assert!(
                offered.iter().any(|n| n == must),
                "{must} not read from redist's lib.rs"
            );
        }
        let mut files = vec![];
        rust_files(&root().join("crates/dist-io/src"), &mut files);
        rust_files(&root().join("python/src"), &mut files);
        assert!(
            files.len() > 10,
            "dist-io's and the Python package's sources not found"
        );
        let mut reached = 0;
        for file in &files {
            let text = std::fs::read_to_string(file).expect("a source file is readable");
            for (n, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                for (at, _) in code.match_indices("redist::") {
                    if at > 0 && code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                        continue; // another crate's path ending in "redist::"
                    }
                    let rest = &code[at + "redist::".len()..];
                    let names: Vec<&str> = match rest.strip_prefix('{') {
                        Some(list) => list.split('}').next().unwrap_or("").split(',').collect(),
                        None => vec![rest],
                    };
                    for name in names {
                        let first: String = name
                            .trim()
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        assert!(
                            offered.contains(&first),
                            "{}:{}: redist::{first} is not among what redist's root offers",
                            file.display(),
                            n + 1
                        );
                        reached += 1;
                    }
                }
            }
        }
        assert!(reached > 5, "no use of redist found in dist-io and python");
    }

    #[test]
    fn the_unsafe_table_names_every_file_that_uses_unsafe() {
        let table = unsafe_table();
        for name in &table {
            assert!(
                root().join("crates").join(name).exists() || root().join(name).exists(),
                "docs/ARCHITECTURE.md's unsafe table names a missing path: {name}"
            );
        }
        let (mut users, mut unnamed) = (0, vec![]);
        for path in workspace_files() {
            let text = std::fs::read_to_string(&path).expect("a Rust file is readable");
            if !text.lines().any(uses_unsafe) {
                continue;
            }
            users += 1;
            let rel = path.strip_prefix(root()).expect("a file of the repository");
            let rel = rel.to_str().expect("a UTF-8 path").replace('\\', "/");
            let name = rel.strip_prefix("crates/").unwrap_or(&rel);
            if !table
                .iter()
                .any(|e| name == *e || (e.ends_with('/') && name.starts_with(e)))
            {
                unnamed.push(rel);
            }
        }
        assert!(users >= 5, "no file using unsafe found: the walk is broken");
        assert!(
            unnamed.is_empty(),
            "these files use unsafe but docs/ARCHITECTURE.md's unsafe table does not name them: {}",
            unnamed.join(", ")
        );
    }

    /// The README's "Documentation" puts every page under `docs/` on one
    /// shelf: the guide (what a user reads) or the lab notebook (what a
    /// maintainer reads), never both, never neither.
    #[test]
    fn every_page_is_on_one_shelf() {
        let section = README
            .split("\n## Documentation\n")
            .nth(1)
            .expect("the README has a section Documentation");
        let section = section.split("\n## ").next().unwrap_or(section);
        let (guide, notebook) = section
            .split_once("\nLab notebook:\n")
            .expect("the README's Documentation has a list Lab notebook:");
        let guide = guide
            .split_once("\nGuide:\n")
            .expect("the README's Documentation has a list Guide:")
            .1;
        let mut wrong = vec![];
        for (page, _) in pages() {
            let page = page.to_str().expect("a UTF-8 path").replace('\\', "/");
            if page == "README.md" {
                continue;
            }
            let link = format!("]({page})");
            if guide.contains(&link) == notebook.contains(&link) {
                wrong.push(page);
            }
        }
        assert!(
            wrong.is_empty(),
            "pages the README's Documentation lists on both shelves or on neither \
             (Guide: for users; Lab notebook: for maintainers): {wrong:?}"
        );
    }

    /// Every crate's source files, as `crates/NAME/src/PATH` with `/`
    /// between folders, sorted.
    fn crate_sources() -> Vec<String> {
        let mut names = vec![];
        for crate_dir in std::fs::read_dir(root().join("crates")).expect("crates/ is readable") {
            let mut files = vec![];
            rust_files(
                &crate_dir.expect("a crates/ entry").path().join("src"),
                &mut files,
            );
            for file in files {
                let rel = file.strip_prefix(root()).expect("a file of the repository");
                names.push(rel.to_str().expect("a UTF-8 path").replace('\\', "/"));
            }
        }
        names.sort();
        names
    }

    /// The section of `docs/ARCHITECTURE.md` under the heading `## {title}`,
    /// up to the next heading of that level.
    fn architecture_section(title: &str) -> &'static str {
        let section = ARCHITECTURE
            .split(&format!("\n## {title}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md has no section \"## {title}\""));
        section.split("\n## ").next().unwrap_or(section)
    }

    /// The files the section "Source files" of `docs/ARCHITECTURE.md`
    /// lists, as `crates/NAME/src/PATH`: under each heading
    /// ``### `crates/NAME/src/` ``, the names in backticks in the first
    /// column of its table (paths relative to that folder).
    fn listed_sources() -> Vec<String> {
        let mut folder = None;
        let mut names = vec![];
        for line in architecture_section("Source files").lines() {
            if let Some(heading) = line.strip_prefix("### ") {
                folder = heading
                    .split('`')
                    .nth(1)
                    .filter(|f| f.starts_with("crates/") && f.ends_with("/src/"));
                assert!(
                    folder.is_some(),
                    "docs/ARCHITECTURE.md, \"Source files\": a heading names no `crates/NAME/src/`: {line}"
                );
            } else if let (Some(folder), Some(row)) = (folder, line.strip_prefix('|')) {
                let cell = row.split('|').next().unwrap_or("");
                for name in cell.split('`').skip(1).step_by(2) {
                    names.push(format!("{folder}{name}"));
                }
            }
        }
        names
    }

    /// `docs/ARCHITECTURE.md` lists every source file of every crate,
    /// once, and no file that is gone: a file added, moved or removed
    /// fails this test, which names each row to add or remove.
    #[test]
    fn the_architecture_lists_every_source_file() {
        let sources = crate_sources();
        let listed = listed_sources();
        assert!(sources.len() > 100, "the crates' sources not found");
        let missing: Vec<_> = sources.iter().filter(|s| !listed.contains(s)).collect();
        let stale: Vec<_> = listed.iter().filter(|l| !sources.contains(l)).collect();
        let mut twice: Vec<_> = listed
            .iter()
            .filter(|l| listed.iter().filter(|m| m == l).count() > 1)
            .collect();
        twice.dedup();
        let list = |names: &[&String]| match names {
            [] => " none".to_string(),
            _ => names.iter().map(|n| format!("\n  {n}")).collect(),
        };
        assert!(
            missing.is_empty() && stale.is_empty() && twice.is_empty(),
            "docs/ARCHITECTURE.md, section \"Source files\", is out of date \
             (one row per file, in the table of its crate's `crates/NAME/src/`):\
             \nfiles it does not list (add a row):{}\
             \nfiles it lists that do not exist (remove or rename the row):{}\
             \nfiles it lists twice:{}",
            list(&missing),
            list(&stale),
            list(&twice)
        );
    }

    /// Every file name of `docs/ARCHITECTURE.md` (a word ending in `.rs`,
    /// with or without folders before it) names an existing Rust file of
    /// the workspace: the end of its path, folder by folder. Stale names in
    /// the pipeline's drawing and the prose fail here.
    #[test]
    fn every_file_the_architecture_names_exists() {
        let files: Vec<String> = workspace_files()
            .iter()
            .map(|f| {
                let rel = f.strip_prefix(root()).expect("a file of the repository");
                format!(
                    "/{}",
                    rel.to_str().expect("a UTF-8 path").replace('\\', "/")
                )
            })
            .collect();
        let path_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.');
        let (mut named, mut stale) = (0, vec![]);
        for (n, line) in ARCHITECTURE.lines().enumerate() {
            for word in line.split(|c: char| !path_char(c)) {
                let word = word.trim_start_matches("./").trim_start_matches('/');
                if !word.ends_with(".rs") || word.len() <= 3 {
                    continue;
                }
                named += 1;
                if !files.iter().any(|f| f.ends_with(&format!("/{word}"))) {
                    stale.push(format!("\n  line {}: {word}", n + 1));
                }
            }
        }
        assert!(
            named > 100,
            "the file names of docs/ARCHITECTURE.md not found"
        );
        assert!(
            stale.is_empty(),
            "docs/ARCHITECTURE.md names Rust files that no longer exist:{}",
            stale.concat()
        );
    }

    /// The variants of `redist::Strategy` but `Auto`, read from
    /// `crates/redist/src/options.rs`: the exchange strategies.
    fn strategies() -> Vec<String> {
        let path = root().join("crates/redist/src/options.rs");
        let text =
            std::fs::read_to_string(&path).expect("crates/redist/src/options.rs is readable");
        let body = text
            .split("pub enum Strategy {")
            .nth(1)
            .expect("options.rs declares pub enum Strategy");
        let body = &body[..body.find("\n}").expect("the enum Strategy ends")];
        let variants: Vec<String> = body
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('#'))
            .map(|l| {
                l.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            })
            .filter(|v: &String| !v.is_empty() && v != "Auto")
            .collect();
        assert!(
            variants.len() >= 3,
            "Strategy's variants not found: {variants:?}"
        );
        variants
    }

    /// The section "Exchanges" of `docs/ARCHITECTURE.md` names every
    /// strategy (`Strategy::Async`, …), and the page names no strategy
    /// that does not exist: a strategy added, renamed or removed fails
    /// this test.
    #[test]
    fn the_architecture_names_every_exchange() {
        let strategies = strategies();
        let section = architecture_section("Exchanges");
        let missing: Vec<_> = strategies
            .iter()
            .filter(|s| !section.contains(&format!("`Strategy::{s}`")))
            .collect();
        let mut unknown: Vec<String> = ARCHITECTURE
            .match_indices("Strategy::")
            .map(|(at, w)| {
                ARCHITECTURE[at + w.len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            })
            .filter(|v: &String| v != "Auto" && !strategies.contains(v))
            .collect();
        unknown.dedup();
        assert!(
            missing.is_empty() && unknown.is_empty(),
            "docs/ARCHITECTURE.md, section \"Exchanges\": strategies of \
             crates/redist/src/options.rs it does not name (as `Strategy::Name`): {missing:?}; \
             strategies it names that options.rs does not have: {unknown:?}"
        );
    }

    /// The Rust sources of every crate, as one text each.
    fn crate_texts() -> Vec<String> {
        crate_sources()
            .iter()
            .map(|f| std::fs::read_to_string(root().join(f)).expect("a source file is readable"))
            .collect()
    }

    /// Whether `texts` define `name`: an item (`struct name`, `fn name`,
    /// …, not as the start of a longer name) or an enum variant (a line
    /// `name,`, `name(…`, `name {…`).
    fn defines(texts: &[String], name: &str) -> bool {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        let items = [
            "struct", "enum", "trait", "type", "const", "static", "fn", "mod", "union",
        ];
        texts.iter().any(|text| {
            items.iter().any(|kw| {
                let item = format!("{kw} {name}");
                text.match_indices(&item).any(|(at, _)| {
                    !text[..at].chars().next_back().is_some_and(ident)
                        && !text[at + item.len()..].chars().next().is_some_and(ident)
                })
            }) || text.lines().map(str::trim).any(|l| {
                l.strip_prefix(name)
                    .is_some_and(|rest| [",", "(", " {", " ="].iter().any(|e| rest.starts_with(e)))
            })
        })
    }

    /// Whether a module of that name exists: a file `name.rs` or a folder
    /// `name/` in some crate's sources, or a crate of that name.
    fn module_exists(sources: &[String], name: &str) -> bool {
        let crate_name = name.replace('_', "-");
        sources.iter().any(|s| {
            s.ends_with(&format!("/{name}.rs"))
                || s.contains(&format!("/{name}/"))
                || s.starts_with(&format!("crates/{crate_name}/"))
        }) || root().join("crates").join(&crate_name).exists()
    }

    /// The code items the glossary of `docs/ARCHITECTURE.md` names: words
    /// in backticks that are paths (`plan::Run`), types (`RankPart`) or
    /// constants (`PORTION_BYTES`), not plain words (`count`) or formulas.
    fn glossary_items() -> Vec<&'static str> {
        architecture_section("Glossary")
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|w| {
                w.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == ':')
                    && (w.contains("::") || w.starts_with(|c: char| c.is_ascii_uppercase()))
            })
            .collect()
    }

    /// Every code item the glossary names exists in the crates' sources:
    /// each segment of a path is a module (a file or folder, or a crate)
    /// or an item, the last one an item, method or variant. A renamed type
    /// fails this test.
    #[test]
    fn the_glossary_names_code_that_exists() {
        let sources = crate_sources();
        let texts = crate_texts();
        let items = glossary_items();
        assert!(
            items.len() >= 8,
            "the glossary's code items not found: {items:?}"
        );
        let mut gone = vec![];
        for item in &items {
            let segments: Vec<&str> = item.split("::").collect();
            let (last, path) = segments.split_last().expect("a non-empty path");
            let path_ok = path.iter().all(|s| {
                if s.starts_with(|c: char| c.is_ascii_uppercase()) {
                    defines(&texts, s)
                } else {
                    module_exists(&sources, s)
                }
            });
            if !path_ok || !defines(&texts, last) {
                gone.push(*item);
            }
        }
        assert!(
            gone.is_empty(),
            "docs/ARCHITECTURE.md's glossary names code the crates no longer define \
             (rename the entry with the code): {gone:?}"
        );
    }

    #[test]
    fn the_glossary_check_reads_definitions() {
        let texts = vec![
            "pub struct RankPart {\n}\nenum Cut {\n    Whole,\n    Pieces(usize),\n}\n\
             pub(crate) fn kept_all() {}\nconst PORTION_BYTES: usize = 1;"
                .to_string(),
        ];
        assert!(defines(&texts, "RankPart"));
        assert!(defines(&texts, "Whole"));
        assert!(defines(&texts, "Pieces"));
        assert!(defines(&texts, "PORTION_BYTES"));
        assert!(!defines(&texts, "kept"));
        assert!(!defines(&texts, "Rank"));
    }

    #[test]
    fn uses_unsafe_reads_code_only() {
        assert!(uses_unsafe("    unsafe { libc::close(fd) };"));
        assert!(uses_unsafe("unsafe impl Send for X {}"));
        assert!(!uses_unsafe("    // SAFETY: unsafe is fine here"));
        assert!(!uses_unsafe("/// calls unsafe code"));
        assert!(!uses_unsafe("#![forbid(unsafe_code)]"));
        assert!(!uses_unsafe("let word = \"unsafe\";"));
    }
}
