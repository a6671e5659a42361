//! The phases of a job as `redist tune grid` takes them: layout specs
//! joined by `->`, each either fixed (`block,*@4x1`) or on the candidate
//! grid (`block,*,block@G`), whose extents go to the distributed axes in
//! order and 1 to every `*` axis. Pure.

use crate::error::CliError;

/// The grid placeholder of a phase's spec.
const PLACEHOLDER: &str = "G";

/// One phase: a layout spec, fixed or on the candidate grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Phase {
    /// The distributions, as written (`block,*,block`), or the whole spec
    /// when the phase is fixed.
    dists: String,
    /// For a phase on the candidate grid, whether each axis is
    /// distributed (not `*`); `None` for a fixed phase.
    distributed: Option<Vec<bool>>,
}

impl Phase {
    /// The phase's spec on `grid` (the candidate's extents, one per
    /// distributed axis); a fixed phase's own.
    pub(crate) fn on(&self, grid: &[usize]) -> String {
        let Some(distributed) = &self.distributed else {
            return self.dists.clone();
        };
        let mut next = grid.iter();
        let extents: Vec<String> = distributed
            .iter()
            .map(|&d| {
                if d {
                    next.next().copied().unwrap_or(1)
                } else {
                    1
                }
                .to_string()
            })
            .collect();
        format!("{}@{}", self.dists, extents.join("x"))
    }

    /// The extents the candidate grid has for this phase: its distributed
    /// axes; `None` for a fixed phase.
    fn grid_dims(&self) -> Option<usize> {
        (self.distributed.as_ref()).map(|d| d.iter().filter(|&&d| d).count())
    }
}

/// The phases of `text` (`SPEC -> SPEC -> …`) and the extents of their
/// candidate grids; one phase is a job where a step does more than move
/// (`alone`: a ghost update).
///
/// # Errors
///
/// [`CliError::Unsupported`] for fewer than two phases (one, `alone`), an
/// empty phase, no phase on the
/// candidate grid (`@G`), a phase on it with no distributed axis, or
/// phases on it with different numbers of distributed axes.
pub(crate) fn parse(text: &str, alone: bool) -> Result<(Vec<Phase>, usize), CliError> {
    let refuse = |what: &'static str, expected: &str| CliError::Unsupported {
        what,
        expected: format!("{expected} (such as \"block,*@G -> *,block@G -> block,*@G\")"),
    };
    let phases: Vec<Phase> = text.split("->").map(phase).collect();
    let fewest = if alone { 1 } else { 2 };
    if phases.len() < fewest || phases.iter().any(|p| p.dists.is_empty()) {
        return Err(refuse(
            "--phases",
            "two or more layout specs joined by `->` (one with --ghosts)",
        ));
    }
    let dims: Vec<usize> = phases.iter().filter_map(Phase::grid_dims).collect();
    match dims.first() {
        None => Err(refuse(
            "--phases without `@G`",
            "a phase on the grid being chosen: `@G` in place of its grid extents",
        )),
        Some(0) => Err(refuse(
            "a phase `@G` with no distributed axis",
            "one axis or more that is not `*` in every phase on the grid `G`",
        )),
        Some(&k) if dims.iter().any(|&d| d != k) => Err(refuse(
            "phases `@G` with different numbers of distributed axes",
            "as many axes that are not `*` in every phase on the grid `G`",
        )),
        Some(&k) => Ok((phases, k)),
    }
}

/// One phase's text, trimmed: on the candidate grid where its grid is
/// [`PLACEHOLDER`].
fn phase(text: &str) -> Phase {
    let text = text.trim();
    match text.rsplit_once('@') {
        Some((dists, grid)) if grid.trim() == PLACEHOLDER => {
            let dists = dists.trim().to_string();
            let distributed = dists.split(',').map(|d| d.trim() != "*").collect();
            Phase {
                dists,
                distributed: Some(distributed),
            }
        }
        _ => Phase {
            dists: text.to_string(),
            distributed: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_take_the_candidate_grid_on_their_distributed_axes() {
        // (phases, candidate grid, each phase's spec on it)
        let table: [(&str, &[usize], &[&str]); 4] = [
            (
                "block,*@G -> *,block@G -> block,*@G",
                &[4],
                &["block,*@4x1", "*,block@1x4", "block,*@4x1"],
            ),
            (
                "*,block,block@G -> block,*,block@G -> block,block,*@G",
                &[2, 3],
                &[
                    "*,block,block@1x2x3",
                    "block,*,block@2x1x3",
                    "block,block,*@2x3x1",
                ],
            ),
            (
                " cyclic(64),cyclic(64)@G->block,*@4x1 ",
                &[2, 2],
                &["cyclic(64),cyclic(64)@2x2", "block,*@4x1"],
            ),
            (
                "cyclic(8)+2, * @ G -> *,block@G",
                &[3],
                &["cyclic(8)+2, *@3x1", "*,block@1x3"],
            ),
        ];
        for (text, grid, specs) in table {
            let (phases, _) = parse(text, false).unwrap();
            let on: Vec<String> = phases.iter().map(|p| p.on(grid)).collect();
            assert_eq!(on, specs, "{text}");
        }
    }

    #[test]
    fn the_candidate_grids_have_one_extent_per_distributed_axis() {
        let table = [
            ("block,*@G -> *,block@G", 1),
            ("block,block@G -> block,*@4x1", 2),
            ("*,block,block@G -> block,*,block@G", 2),
        ];
        for (text, dims) in table {
            assert_eq!(parse(text, false).unwrap().1, dims, "{text}");
        }
    }

    #[test]
    fn phases_that_leave_nothing_to_choose_are_refused() {
        for text in [
            "block,*@G",
            "block,*@G ->",
            "block,*@4x1 -> *,block@1x4",
            "*,*@G -> block,*@G",
            "block,block@G -> block,*@G",
            "",
        ] {
            let e = parse(text, false).unwrap_err();
            assert!(matches!(e, CliError::Unsupported { .. }), "{text}: {e}");
            assert!(e.to_string().contains("such as"), "{text}: {e}");
        }
        // One phase is a job where the step also refreshes ghosts.
        assert_eq!(parse("block,block@G", true).unwrap().1, 2);
        assert!(parse("block,block@G ->", true).is_err());
    }
}
