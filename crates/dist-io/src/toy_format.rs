//! A throwaway format for the tests, added as any format is: this module
//! and its line in the registry (`registry.rs`), plus its variant
//! [`Format::Toy`] (test builds only). A toy file is `TOYARRAY`, the
//! element type's place in [`ALL`], the order (0: C, 1: Fortran), the
//! number of dimensions, the extents (8 bytes each, little-endian), then
//! the array's bytes, saved and loaded by the default `run`
//! (`raw_file.rs`), as `.npy` is.

use crate::element::{ElementType, ALL};
use crate::error::{name, IoError};
use crate::file_format::{FileFormat, RawHeader};
use crate::file_info::FileInfo;
use crate::options::Format;
use procgrid::Order;
use std::path::Path;

/// The first bytes of a toy file.
const MAGIC: &[u8; 8] = b"TOYARRAY";

/// The toy format: [`Format::Toy`].
pub(crate) struct Toy;

impl FileFormat for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["toy"]
    }

    fn description(&self) -> &'static str {
        "a toy file (first bytes TOYARRAY)"
    }

    fn recognizes(&self, head: &[u8]) -> bool {
        head.starts_with(MAGIC)
    }

    fn format(&self) -> Format {
        Format::Toy
    }

    fn info(&self, path: &Path, _: &Format, header: &RawHeader) -> Result<FileInfo, IoError> {
        let bytes = &header.bytes;
        let field = |i: usize| bytes.get(MAGIC.len() + i).copied();
        let extent = |d: usize| {
            let at = MAGIC.len() + 3 + 8 * d;
            let word = bytes.get(at..at + 8)?.try_into().ok()?;
            usize::try_from(u64::from_le_bytes(word)).ok()
        };
        let element = field(0).and_then(|e| ALL.get(usize::from(e)).copied());
        let order = match field(1) {
            Some(0) => Some(Order::RowMajor),
            Some(1) => Some(Order::ColumnMajor),
            _ => None,
        };
        let ndim = field(2).map_or(0, usize::from);
        let shape: Option<Vec<usize>> = (0..ndim).map(extent).collect();
        let (Some(element), Some(order), Some(shape)) = (element, order, shape) else {
            return Err(IoError::Header {
                path: name(path),
                reason: "not a whole toy header".to_string(),
            });
        };
        Ok(FileInfo {
            format: Format::Toy,
            element,
            order,
            data_offset: Some((MAGIC.len() + 3 + 8 * ndim) as u64),
            shape,
            version: None,
            file_bytes: header.file_bytes,
            layout: None,
        })
    }

    fn new_header(&self, element: ElementType, order: Order, shape: &[usize]) -> Vec<u8> {
        let place = ALL.iter().position(|&e| e == element).unwrap_or(0);
        let mut header = MAGIC.to_vec();
        header.push(u8::try_from(place).unwrap_or(u8::MAX));
        header.push(u8::from(order == Order::ColumnMajor));
        header.push(u8::try_from(shape.len()).unwrap_or(u8::MAX));
        for &n in shape {
            header.extend_from_slice(&(n as u64).to_le_bytes());
        }
        header
    }
}

#[cfg(test)]
mod tests {
    use crate::info::info;
    use crate::load::{load, load_window};
    use crate::options::{Format, IoOptions};
    use crate::save::{save, save_window};
    use dist_array::{DistArray, Layout};
    use procgrid::ProcGrid;

    /// The value the test arrays hold at `(i, j)` of the file's array.
    fn value(i: usize, j: usize) -> i64 {
        i64::try_from(10 * i + j).unwrap_or(-1)
    }

    #[test]
    fn a_format_of_one_module_and_one_line_is_found_and_round_trips() {
        // Found by its name and by its first bytes, named by its own name.
        assert_eq!(Format::from_name("u.TOY".as_ref()), Format::Toy);
        assert_eq!(Format::Toy.name(), "toy");
        // MPI by itself, one process (no abort-on-panic hook: the other
        // tests of this program may panic when they fail).
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled).unwrap();
        let world = universe.world();
        let grid = ProcGrid::new(&world, &[1, 1]).unwrap();
        let layout = Layout::parse(&[5, 3], "block,*@1x1").unwrap();
        let a = DistArray::from_fn(&grid, layout, |g| value(g[0], g[1])).unwrap();
        let path = std::env::temp_dir().join(format!("dist-io-toy-{}.toy", std::process::id()));
        let options = IoOptions::default();
        save(&a, &path, &options).unwrap();
        let header = info(&path, &options).unwrap();
        assert_eq!(
            header.to_string(),
            "toy, i64, shape 5x3, C order, data from byte 27"
        );
        // Loaded back on another layout, and a window of it.
        let spec = "cyclic(2),*@1x1".parse().unwrap();
        let b: DistArray<i64> = load(&grid, &spec, &path, &options).unwrap();
        assert_eq!(b.gather(0).unwrap(), a.gather(0).unwrap());
        let w: DistArray<i64> =
            load_window(&grid, &spec, &path, &[1, 1], &[2, 2], &options).unwrap();
        let square = Layout::parse(&[2, 2], "block,*@1x1").unwrap();
        let expected = DistArray::from_fn(&grid, square, |g| value(g[0] + 1, g[1] + 1)).unwrap();
        assert_eq!(w.gather(0).unwrap(), expected.gather(0).unwrap());
        // The window written back at the origin.
        save_window(&w, &path, &[0, 0], &options).unwrap();
        let c: DistArray<i64> = load(&grid, &spec, &path, &options).unwrap();
        let moved = Layout::parse(&[5, 3], "block,*@1x1").unwrap();
        let expected = DistArray::from_fn(&grid, moved, |g| match g {
            [i @ 0..=1, j @ 0..=1] => value(i + 1, j + 1),
            _ => value(g[0], g[1]),
        })
        .unwrap();
        assert_eq!(c.gather(0).unwrap(), expected.gather(0).unwrap());
        std::fs::remove_file(&path).unwrap();
    }

    /// The guide's diffs (docs/io.md, "Adding a file format") hold the
    /// code as it is.
    #[test]
    fn the_guide_shows_the_code_as_it_is() {
        let guide = include_str!("../../../docs/io.md");
        let section = guide
            .split("\n## Adding a file format\n")
            .nth(1)
            .unwrap_or("");
        let sources = [
            include_str!("lib.rs"),
            include_str!("registry.rs"),
            include_str!("options.rs"),
            include_str!("toy_format.rs"),
        ]
        .concat();
        let blocks: Vec<&str> = (section.split("```diff\n").skip(1))
            .filter_map(|b| b.split("```").next())
            .collect();
        assert_eq!(
            blocks.len(),
            2,
            "docs/io.md shows the toy format's two diffs"
        );
        for line in blocks.iter().flat_map(|b| b.lines()) {
            if !line.starts_with("---") && !line.starts_with("+++") {
                let code = line.get(1..).unwrap_or("");
                assert!(
                    sources.contains(code),
                    "docs/io.md shows what the code does not hold: {line}"
                );
            }
        }
    }
}
