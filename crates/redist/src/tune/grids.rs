//! The process grids worth trying for a job: every way to factor its ranks
//! into a grid of so many extents, the most nearly square first. Pure.

/// Every grid of `dims` extents whose product is `ranks`: the most nearly
/// square first (as [`procgrid::balanced_extents`] chooses it, the grid a
/// job gets untuned), then the others with larger leading extents first.
/// No grid for 0 ranks; for 0 extents, the empty grid of 1 rank.
///
/// ```
/// use redist::tune::grids;
/// assert_eq!(grids(4, 2), vec![vec![2, 2], vec![4, 1], vec![1, 4]]);
/// assert_eq!(grids(6, 2), vec![vec![3, 2], vec![6, 1], vec![2, 3], vec![1, 6]]);
/// assert_eq!(grids(7, 1), vec![vec![7]]);
/// ```
pub fn grids(ranks: usize, dims: usize) -> Vec<Vec<usize>> {
    let mut all = Vec::new();
    factor(ranks, dims, &mut Vec::new(), &mut all);
    // Larger leading extents first (lexicographically descending).
    all.sort_by(|a, b| b.cmp(a));
    if let Ok(square) = procgrid::balanced_extents(ranks, &vec![0; dims]) {
        if let Some(i) = all.iter().position(|g| *g == square) {
            let g = all.remove(i);
            all.insert(0, g);
        }
    }
    all
}

/// Appends to `all` every completion of `prefix` by `dims` extents whose
/// product is `ranks`.
fn factor(ranks: usize, dims: usize, prefix: &mut Vec<usize>, all: &mut Vec<Vec<usize>>) {
    if dims == 0 {
        if ranks == 1 {
            all.push(prefix.clone());
        }
        return;
    }
    for d in (1..=ranks).filter(|d| ranks.is_multiple_of(*d)) {
        prefix.push(d);
        factor(ranks / d, dims - 1, prefix, all);
        prefix.pop();
    }
}

/// A grid's text: its extents joined by `x` (`2x2`; `1` for no extents).
pub fn text(grid: &[usize]) -> String {
    if grid.is_empty() {
        return "1".to_string();
    }
    grid.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join("x")
}

/// The extents of a grid's text (`2x2`), if every one is a positive count.
pub fn parse(s: &str) -> Option<Vec<usize>> {
    s.trim()
        .split('x')
        .map(|e| e.parse::<usize>().ok().filter(|&n| n > 0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_every_factorisation_once_the_square_one_first() {
        // (ranks, dims, how many, the first)
        let table: [(usize, usize, usize, &[usize]); 7] = [
            (1, 3, 1, &[1, 1, 1]),
            (8, 3, 10, &[2, 2, 2]),
            (12, 2, 6, &[4, 3]),
            (16, 2, 5, &[4, 4]),
            (64, 2, 7, &[8, 8]),
            (5, 2, 2, &[5, 1]),
            (0, 2, 0, &[]),
        ];
        for (ranks, dims, count, first) in table {
            let g = grids(ranks, dims);
            assert_eq!(g.len(), count, "{ranks} ranks, {dims} dims: {g:?}");
            if count > 0 {
                assert_eq!(g[0], first, "{ranks} ranks, {dims} dims");
            }
            for grid in &g {
                assert_eq!(grid.len(), dims);
                assert_eq!(grid.iter().product::<usize>(), ranks);
            }
            let mut unique = g.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), g.len(), "no grid twice");
        }
        assert_eq!(grids(1, 0), vec![Vec::<usize>::new()]);
        assert!(grids(2, 0).is_empty());
    }

    #[test]
    fn grid_texts_read_back() {
        for g in [vec![2, 2], vec![1, 64], vec![3, 1, 2]] {
            assert_eq!(parse(&text(&g)), Some(g));
        }
        for bad in ["", "2x", "x2", "0x4", "2by2", "-1"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
