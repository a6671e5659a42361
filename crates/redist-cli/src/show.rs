//! `redist show`: who owns what in one layout.
//!
//! Pure index arithmetic on a [`Layout`]; it never initialises MPI and runs
//! without `mpirun`.
//!
//! - [`draw`]: the human-readable report — a header, the per-dimension maps,
//!   a character grid of owning ranks for small 1-D and 2-D arrays
//!   ([`owner_grid`]) and the per-rank [`summary_table`];
//! - [`to_json`]: the machine-readable object
//!   `{"shape","layout","ranks","local_shapes"}`;
//! - [`run`]: the subcommand itself, writing either of them.

use crate::error::CliError;
use crate::shape::{format_extents, layout_for, Shape};
use clap::Args;
use dist_array::{Layout, LayoutSpec};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::io::Write;

/// The largest extent [`owner_grid`] draws one cell per element for; larger
/// arrays get the per-rank summary only.
pub const MAX_DRAWN_EXTENT: usize = 64;

/// The most ranks [`summary_table`] lists one line each (the drawing of a
/// layout of a million ranks would be a million lines).
pub const MAX_LISTED_RANKS: usize = 1024;

/// Arguments of `redist show`.
#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// Global array shape: extents joined by `x`, e.g. `8x8`, `10x7x3` or `100`.
    #[arg(long, value_name = "AxBx..")]
    pub shape: Shape,
    /// Layout spec string, e.g. `cyclic(2),block@2x3` (see the layout grammar).
    #[arg(long, value_name = "SPEC")]
    pub layout: LayoutSpec,
    /// Print one JSON object on one line instead of the drawing.
    #[arg(long)]
    pub json: bool,
}

/// Runs `redist show`: builds the layout and writes [`draw`] (or, with
/// `--json`, [`to_json`] on one line) to `out`.
pub fn run(args: &ShowArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let layout = layout_for(&args.shape, &args.layout)?;
    if args.json {
        writeln!(out, "{}", to_json(&layout))?;
    } else {
        out.write_all(draw(&layout).as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// The JSON description of `layout`: its shape, canonical spec string, number
/// of ranks and the local shape of every rank in rank order.
pub fn to_json(layout: &Layout) -> Value {
    json!({
        "shape": layout.shape(),
        "layout": layout.spec().to_string(),
        "ranks": layout.ranks(),
        "local_shapes": layout.local_shapes(),
    })
}

/// The human-readable report on `layout`: a header line (canonical spec,
/// shape, number of ranks), one line per dimension with its resolved 1-D map,
/// the [`owner_grid`] when the array is small enough to draw, and the
/// [`summary_table`].
pub fn draw(layout: &Layout) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "layout {}  shape {}  ranks {}",
        layout.spec(),
        format_extents(layout.shape()),
        layout.ranks()
    );
    for (d, a) in layout.axes().iter().enumerate() {
        let _ = writeln!(
            s,
            "  dim {d}: extent {} over {} process{}, block {}, first block on grid coordinate {}",
            a.extent(),
            a.procs(),
            if a.procs() == 1 { "" } else { "es" },
            a.block(),
            a.first()
        );
    }
    s.push('\n');
    if let Some(grid) = owner_grid(layout) {
        s.push_str("owning rank of each element:\n");
        s.push_str(&grid);
        s.push('\n');
    }
    s.push_str(&summary_table(layout));
    s
}

/// Number of decimal digits of `n`.
fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// A character grid of the rank owning every element, for 1-D and 2-D arrays
/// whose extents are between 1 and [`MAX_DRAWN_EXTENT`]; `None` otherwise.
///
/// Cells are right-aligned in columns of equal width, with the column index
/// above and (in 2-D) the row index on the left: element `(i, j)` is in row
/// `i`, column `j`.
pub fn owner_grid(layout: &Layout) -> Option<String> {
    let shape = layout.shape();
    if shape.is_empty() || shape.len() > 2 || shape.iter().any(|&n| n == 0 || n > MAX_DRAWN_EXTENT)
    {
        return None;
    }
    let (rows, cols) = if shape.len() == 1 {
        (1, shape[0])
    } else {
        (shape[0], shape[1])
    };
    let owner = |i: usize, j: usize| {
        let index: &[usize] = if shape.len() == 1 { &[j] } else { &[i, j] };
        layout.owner(index).expect("index inside the array")
    };
    let cell = digits(layout.ranks() - 1).max(digits(cols - 1));
    let (corner, row_label): (&str, Box<dyn Fn(usize) -> String>) = if shape.len() == 1 {
        ("index", Box::new(|_| "owner".to_string()))
    } else {
        ("i \\ j", Box::new(|i: usize| i.to_string()))
    };
    let label = corner.len().max(digits(rows - 1));
    let mut s = String::new();
    let _ = write!(s, "{corner:>label$} |");
    for j in 0..cols {
        let _ = write!(s, " {j:>cell$}");
    }
    s.push('\n');
    let _ = writeln!(
        s,
        "{}-+{}",
        "-".repeat(label),
        "-".repeat(cols * (cell + 1))
    );
    for i in 0..rows {
        let _ = write!(s, "{:>label$} |", row_label(i));
        for j in 0..cols {
            let _ = write!(s, " {:>cell$}", owner(i, j));
        }
        s.push('\n');
    }
    Some(s)
}

/// A table with one line per rank — rank, grid coordinates, local shape and
/// element count — followed by the minimum, maximum and total element counts.
/// Only the first [`MAX_LISTED_RANKS`] ranks get a line; one more line
/// counts the others, which still count in the minimum and maximum.
pub fn summary_table(layout: &Layout) -> String {
    let listed = layout.ranks().min(MAX_LISTED_RANKS);
    let rows = rank_rows(layout, listed);
    let headers = ["rank", "coords", "local shape", "elements"];
    let width = |k: usize, f: &dyn Fn(&RankRow) -> usize| {
        rows.iter().map(f).max().unwrap_or(0).max(headers[k].len())
    };
    let w = [
        width(0, &|r| r.0.len()),
        width(1, &|r| r.1.len()),
        width(2, &|r| r.2.len()),
        width(3, &|r| digits(r.3)),
    ];
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>w0$}  {:<w1$}  {:<w2$}  {:>w3$}",
        headers[0],
        headers[1],
        headers[2],
        headers[3],
        w0 = w[0],
        w1 = w[1],
        w2 = w[2],
        w3 = w[3]
    );
    for (rank, coords, local, n) in &rows {
        let _ = writeln!(
            s,
            "{rank:>w0$}  {coords:<w1$}  {local:<w2$}  {n:>w3$}",
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3]
        );
    }
    let unlisted = layout.ranks() - listed;
    if unlisted > 0 {
        let _ = writeln!(
            s,
            "{:>w0$}  {unlisted} more ranks not listed (--json lists every rank's local shape)",
            "...",
            w0 = w[0]
        );
    }
    s + &elements_per_rank(layout)
}

/// One line of [`summary_table`], formatted: rank, coordinates, local
/// shape, and the element count.
type RankRow = (String, String, String, usize);

/// The lines of [`summary_table`] for the first `listed` ranks of `layout`.
fn rank_rows(layout: &Layout, listed: usize) -> Vec<RankRow> {
    (0..listed)
        .map(|r| {
            let coords = layout.coords_of_rank(r).expect("rank within layout");
            let local = layout.local_shape(r).expect("rank within layout");
            let coords = coords
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",");
            (
                r.to_string(),
                format!("({coords})"),
                format_extents(&local),
                local.iter().product(),
            )
        })
        .collect()
}

/// The last line of [`summary_table`]: the minimum and maximum element
/// counts over every rank, listed or not (without keeping them), and the
/// total.
fn elements_per_rank(layout: &Layout) -> String {
    let counts = (0..layout.ranks()).map(|r| layout.local_len(r).expect("rank within layout"));
    let (min, max) = counts
        .fold(None, |acc: Option<(usize, usize)>, n| {
            Some(acc.map_or((n, n), |(lo, hi)| (lo.min(n), hi.max(n))))
        })
        .unwrap_or((0, 0));
    format!(
        "elements per rank: min {min}, max {max}, total {}\n",
        layout.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // The doc examples of this module, kept as unit tests now that the
    // module lives in a binary (whose doc examples do not run).

    /// Formerly the module's doc example.
    #[test]
    fn module_example() {
        let layout = Layout::parse(&[6], "cyclic(2)@3").unwrap();
        assert_eq!(
            owner_grid(&layout).unwrap(),
            "index | 0 1 2 3 4 5\n\
             ------+------------\n\
             owner | 0 0 1 1 2 2\n"
        );
    }

    /// Formerly the doc example of [`run`].
    #[test]
    fn run_example() {
        let args = ShowArgs {
            shape: "4".parse().unwrap(),
            layout: "block@2".parse().unwrap(),
            json: true,
        };
        let mut out = Vec::new();
        run(&args, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"layout\":\"block@2\",\"local_shapes\":[[2],[2]],\"ranks\":2,\"shape\":[4]}\n"
        );
    }

    /// Formerly the doc example of [`to_json`].
    #[test]
    fn to_json_example() {
        let layout = Layout::parse(&[10, 7], "cyclic(3),block+1@2x2").unwrap();
        let v = to_json(&layout);
        assert_eq!(v["shape"], json!([10, 7]));
        assert_eq!(v["layout"], "cyclic(3),block+1@2x2");
        assert_eq!(v["ranks"], 4);
        assert_eq!(v["local_shapes"], json!([[6, 3], [6, 4], [4, 3], [4, 4]]));
    }

    /// Formerly the doc example of [`draw`].
    #[test]
    fn draw_example() {
        let layout = Layout::parse(&[6, 8], "cyclic(2),block@3x2").unwrap();
        let text = draw(&layout);
        assert!(text.starts_with("layout cyclic(2),block@3x2  shape 6x8  ranks 6\n"));
        assert!(text.contains("i \\ j | 0 1 2 3 4 5 6 7\n"));
        assert!(text.contains("rank"));
    }

    /// Formerly the doc example of [`owner_grid`].
    #[test]
    fn owner_grid_example() {
        let layout = Layout::parse(&[3, 4], "block,cyclic@1x2").unwrap();
        assert_eq!(
            owner_grid(&layout).unwrap(),
            "i \\ j | 0 1 2 3\n\
             ------+--------\n    \
                 0 | 0 1 0 1\n    \
                 1 | 0 1 0 1\n    \
                 2 | 0 1 0 1\n"
        );
        assert!(owner_grid(&Layout::parse(&[100, 4], "block,*@2x1").unwrap()).is_none());
    }

    /// Formerly the doc example of [`summary_table`].
    #[test]
    fn summary_table_example() {
        let layout = Layout::parse(&[5, 4], "cyclic(2),block@2x1").unwrap();
        assert_eq!(
            summary_table(&layout),
            "rank  coords  local shape  elements\n   \
                0  (0,0)   3x4                12\n   \
                1  (1,0)   2x4                 8\n\
             elements per rank: min 8, max 12, total 20\n"
        );
    }

    #[test]
    fn one_d_grid_exact() {
        let layout = Layout::parse(&[6], "cyclic(2)@3").unwrap();
        let grid = owner_grid(&layout).unwrap();
        assert_eq!(
            grid,
            "index | 0 1 2 3 4 5\n------+------------\nowner | 0 0 1 1 2 2\n"
        );
        let owners: Vec<&str> = grid.lines().nth(2).unwrap()[8..].split(' ').collect();
        assert_eq!(owners, ["0", "0", "1", "1", "2", "2"]);
    }

    #[test]
    fn one_d_grid_wide_columns() {
        // 12 ranks and 12 indices: two-digit cells, right-aligned.
        let layout = Layout::parse(&[12], "cyclic@12").unwrap();
        let grid = owner_grid(&layout).unwrap();
        let lines: Vec<&str> = grid.lines().collect();
        assert_eq!(lines[0], "index |  0  1  2  3  4  5  6  7  8  9 10 11");
        assert_eq!(lines[2], "owner |  0  1  2  3  4  5  6  7  8  9 10 11");
    }

    /// Parses the drawn grid back into (row, column) → rank.
    fn parse_grid(grid: &str) -> Vec<Vec<usize>> {
        grid.lines()
            .skip(2)
            .map(|line| {
                let (_, cells) = line.split_once('|').unwrap();
                cells
                    .split_whitespace()
                    .map(|c| c.parse().unwrap())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn two_d_grid_matches_owner_cell_by_cell() {
        for (shape, spec) in [
            ([8, 8], "cyclic(2),block@2x3"),
            ([6, 8], "cyclic(2),block@3x2"),
            ([10, 7], "cyclic(3),block+1@2x2"),
            ([13, 11], "cyclic(2)+2,cyclic(3)+1@3x4"),
            ([64, 64], "cyclic,cyclic(5)@4x3"),
            ([1, 1], "*,*@1x1"),
        ] {
            let layout = Layout::parse(&shape, spec).unwrap();
            let grid = owner_grid(&layout).unwrap();
            let header: Vec<usize> = grid
                .lines()
                .next()
                .unwrap()
                .split_once('|')
                .unwrap()
                .1
                .split_whitespace()
                .map(|c| c.parse().unwrap())
                .collect();
            assert_eq!(header, (0..shape[1]).collect::<Vec<_>>(), "{spec}");
            let cells = parse_grid(&grid);
            assert_eq!(cells.len(), shape[0], "{spec}");
            for (i, row) in cells.iter().enumerate() {
                let label = grid.lines().nth(i + 2).unwrap().split_once('|').unwrap().0;
                assert_eq!(label.trim().parse::<usize>().unwrap(), i);
                assert_eq!(row.len(), shape[1], "{spec}");
                for (j, &r) in row.iter().enumerate() {
                    assert_eq!(r, layout.owner(&[i, j]).unwrap(), "{spec} at ({i},{j})");
                }
            }
            // Every line has the same width.
            let widths: Vec<usize> = grid.lines().map(str::len).collect();
            assert!(widths.iter().all(|&w| w == widths[0]), "{spec}: {widths:?}");
        }
    }

    #[test]
    fn two_d_grid_exact() {
        let layout = Layout::parse(&[6, 8], "cyclic(2),block@3x2").unwrap();
        assert_eq!(
            owner_grid(&layout).unwrap(),
            "i \\ j | 0 1 2 3 4 5 6 7\n\
             ------+----------------\n    \
                 0 | 0 0 0 0 1 1 1 1\n    \
                 1 | 0 0 0 0 1 1 1 1\n    \
                 2 | 2 2 2 2 3 3 3 3\n    \
                 3 | 2 2 2 2 3 3 3 3\n    \
                 4 | 4 4 4 4 5 5 5 5\n    \
                 5 | 4 4 4 4 5 5 5 5\n"
        );
    }

    #[test]
    fn no_grid_for_large_or_high_rank_or_empty() {
        for (shape, spec) in [
            (vec![65], "block@2"),
            (vec![8, 65], "block,block@2x2"),
            (vec![4, 4, 4], "block,block,*@2x2x1"),
            (vec![0], "block@2"),
            (vec![3, 0], "block,block@1x2"),
        ] {
            let layout = Layout::parse(&shape, spec).unwrap();
            assert!(owner_grid(&layout).is_none(), "{shape:?} {spec}");
            let text = draw(&layout);
            assert!(!text.contains("owning rank"), "{text}");
            assert!(text.contains("rank  coords"), "{text}");
        }
        assert!(owner_grid(&Layout::parse(&[64, 64], "block,block@2x2").unwrap()).is_some());
    }

    #[test]
    fn summary_lists_every_rank() {
        let layout = Layout::parse(&[10, 7, 3], "cyclic(3),block+1,*@2x2x1").unwrap();
        let table = summary_table(&layout);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 1 + 4 + 1);
        assert_eq!(lines[0], "rank  coords   local shape  elements");
        assert_eq!(lines[1], "   0  (0,0,0)  6x3x3              54");
        assert_eq!(lines[4], "   3  (1,1,0)  4x4x3              48");
        assert_eq!(lines[5], "elements per rank: min 36, max 72, total 210");
    }

    #[test]
    fn summary_of_many_ranks_lists_the_first_and_counts_the_rest() {
        let ranks = MAX_LISTED_RANKS + 10;
        let layout = Layout::parse(&[ranks * 2 - 1], &format!("cyclic@{ranks}")).unwrap();
        let table = summary_table(&layout);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 1 + MAX_LISTED_RANKS + 2, "{table}");
        assert!(lines[MAX_LISTED_RANKS].starts_with(&format!("{}  ", MAX_LISTED_RANKS - 1)));
        assert_eq!(
            lines[MAX_LISTED_RANKS + 1],
            " ...  10 more ranks not listed (--json lists every rank's local shape)"
        );
        // The last rank (not listed) holds one element fewer than the others.
        assert_eq!(
            lines[MAX_LISTED_RANKS + 2],
            format!("elements per rank: min 1, max 2, total {}", ranks * 2 - 1)
        );
        // At the limit every rank is listed and nothing is counted apart.
        let layout = Layout::parse(&[4096], &format!("cyclic@{MAX_LISTED_RANKS}")).unwrap();
        let table = summary_table(&layout);
        assert_eq!(table.lines().count(), 1 + MAX_LISTED_RANKS + 1);
        assert!(!table.contains("not listed"));
    }

    #[test]
    fn draw_has_header_dims_grid_and_summary() {
        let layout = Layout::parse(&[10, 7], "cyclic(3),block+1@2x2").unwrap();
        let text = draw(&layout);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "layout cyclic(3),block+1@2x2  shape 10x7  ranks 4"
        );
        assert_eq!(
            lines[1],
            "  dim 0: extent 10 over 2 processes, block 3, first block on grid coordinate 0"
        );
        assert_eq!(
            lines[2],
            "  dim 1: extent 7 over 2 processes, block 4, first block on grid coordinate 1"
        );
        let grid = owner_grid(&layout).unwrap();
        assert!(text.contains(&grid));
        assert!(text.ends_with(&summary_table(&layout)));
    }

    #[test]
    fn json_keys_and_values() {
        let layout = Layout::parse(&[8, 8], "CYCLIC(2), block @ 2x3").unwrap();
        let v = to_json(&layout);
        let obj = v.as_object().unwrap();
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["layout", "local_shapes", "ranks", "shape"]);
        assert_eq!(v["shape"], json!([8, 8]));
        assert_eq!(v["layout"], "cyclic(2),block@2x3");
        assert_eq!(v["ranks"], 6);
        assert_eq!(
            v["local_shapes"],
            json!([[4, 3], [4, 3], [4, 2], [4, 3], [4, 3], [4, 2]])
        );
        // One line when serialised.
        assert!(!v.to_string().contains('\n'));
    }

    #[test]
    fn run_writes_json_or_drawing() {
        let mut args = ShowArgs {
            shape: "6".parse().unwrap(),
            layout: "cyclic(2)@3".parse().unwrap(),
            json: false,
        };
        let mut out = Vec::new();
        run(&args, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("owner | 0 0 1 1 2 2\n"), "{text}");

        args.json = true;
        let mut out = Vec::new();
        run(&args, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 1);
        let v: Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(v["local_shapes"], json!([[2], [2], [2]]));

        args.shape = "6x6".parse().unwrap();
        let err = run(&args, &mut Vec::new()).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(
            err.to_string()
                .contains("has 1 dimension(s) but shape 6x6 has 2"),
            "{err}"
        );
    }
}
