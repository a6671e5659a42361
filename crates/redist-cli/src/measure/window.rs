//! The window `redist run` moves, from `--to-shape`, `--window`,
//! `--from-window` and `--to-window`.

use super::args::RunArgs;
use crate::error::CliError;
use crate::shape::{format_extents, Origin};
use redist::Window;

/// The window `redist run` moves: `None` for the whole array (no window
/// argument and one shape), else the window of `--window` (default: as much
/// as fits from both origins) from `--from-window` to `--to-window`
/// (default: the origins). Pure: every rank reaches the same verdict.
pub(super) fn window_for(
    args: &RunArgs,
    source: &[usize],
    target: &[usize],
) -> Result<Option<Window>, CliError> {
    let given = args.window.is_some() || args.from_window.is_some() || args.to_window.is_some();
    if args.permutation().is_some() {
        if given {
            return Err(CliError::Unsupported {
                what: "--permute or --transpose with a window",
                expected: "whole arrays in `redist run` (the library's \
                           Redistribution::with_permutation takes windows)"
                    .to_string(),
            });
        }
        return Ok(None);
    }
    if !given && source == target {
        return Ok(None);
    }
    let ndim = source.len();
    if target.len() != ndim {
        return Err(CliError::BadWindow {
            what: "--to-shape",
            value: format_extents(target),
            expected: format!("{ndim} extent(s), as --shape {}", format_extents(source)),
        });
    }
    let origin = |o: &Option<Origin>, what: &'static str| -> Result<Vec<usize>, CliError> {
        match o {
            None => Ok(vec![0; ndim]),
            Some(o) if o.len() == ndim => Ok(o.to_vec()),
            Some(o) => Err(CliError::BadWindow {
                what,
                value: format!("{} index(es)", o.len()),
                expected: format!("{ndim}, one per dimension"),
            }),
        }
    };
    let ia = origin(&args.from_window, "--from-window")?;
    let ib = origin(&args.to_window, "--to-window")?;
    for (what, o, full) in [("--from-window", &ia, source), ("--to-window", &ib, target)] {
        if o.iter().zip(full).any(|(&i, &n)| i > n) {
            return Err(CliError::BadWindow {
                what,
                value: format!("{o:?}"),
                expected: format!("an index inside the array {}", format_extents(full)),
            });
        }
    }
    let shape = match &args.window {
        Some(w) if w.len() == ndim => w.to_vec(),
        Some(w) => {
            return Err(CliError::BadWindow {
                what: "--window",
                value: w.to_string(),
                expected: format!("{ndim} extent(s), one per dimension"),
            })
        }
        None => (0..ndim)
            .map(|d| (source[d] - ia[d]).min(target[d] - ib[d]))
            .collect(),
    };
    // Whether it fits is the library's check (Plan::with_window).
    Ok(Some(Window::new(&ia, &ib, &shape)?))
}
