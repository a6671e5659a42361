//! Wisdom: measured choices kept in a small text file for later jobs,
//! keyed by what they depend on. Pure: the text, its entries, merging and
//! looking up (`file.rs` reads and writes it under MPI).
//!
//! One entry a line, its fields separated by tabs (shown as ` ⇥ ` here),
//! after a header line that names the format and its fields:
//!
//! ```text
//! ndcyclic-wisdom 1 ⇥ case ⇥ ranks ⇥ ranks_per_node ⇥ nodes ⇥ mpi ⇥ processor ⇥ choice ⇥ seconds ⇥ auto_seconds
//! 4096x4096 cyclic(64),cyclic(64)@1x2 -> … elem 8B … ⇥ 2 ⇥ 2 ⇥ 1 ⇥ MPICH Version: 4.0.2 ⇥ Intel(R) … ⇥ async,packed,node-direct ⇥ 1.998515e-2 ⇥ 2.023186e-2
//! ```
//!
//! The case says which redistribution (shapes, layouts, element size and
//! the options that shape its messages); the next five fields where it was
//! measured. An entry counts only for a job whose case and machine are both
//! the same.

use super::measured::Measured;
use std::fmt;
use std::str::FromStr;

/// The first field of the header line: the format and its version.
pub const MAGIC: &str = "ndcyclic-wisdom 1";

/// The header line's field names, after [`MAGIC`].
const FIELDS: [&str; 9] = [
    "case",
    "ranks",
    "ranks_per_node",
    "nodes",
    "mpi",
    "processor",
    "choice",
    "seconds",
    "auto_seconds",
];

/// Where a choice was measured: what makes it hold for another job.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Machine {
    /// Ranks of the communicator.
    pub ranks: usize,
    /// The most ranks on one node.
    pub ranks_per_node: usize,
    /// Nodes the ranks span.
    pub nodes: usize,
    /// The MPI library (its version text's first line).
    pub mpi: String,
    /// The processor (its model name).
    pub processor: String,
}

impl Machine {
    /// What differs from `other`, as `field: this vs other` phrases.
    pub fn differences(&self, other: &Machine) -> Vec<String> {
        let mut d = Vec::new();
        let mut note = |what: &str, a: &dyn fmt::Display, b: &dyn fmt::Display, same: bool| {
            if !same {
                d.push(format!("{what} {a} (this job {b})"));
            }
        };
        note(
            "ranks",
            &self.ranks,
            &other.ranks,
            self.ranks == other.ranks,
        );
        note(
            "ranks per node",
            &self.ranks_per_node,
            &other.ranks_per_node,
            self.ranks_per_node == other.ranks_per_node,
        );
        note(
            "nodes",
            &self.nodes,
            &other.nodes,
            self.nodes == other.nodes,
        );
        note("MPI", &self.mpi, &other.mpi, self.mpi == other.mpi);
        note(
            "processor",
            &self.processor,
            &other.processor,
            self.processor == other.processor,
        );
        d
    }
}

/// What a measured choice depends on: the redistribution and the machine.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    /// The redistribution: shapes, layouts, element size, the options that
    /// shape its messages.
    pub case: String,
    /// Where it runs.
    pub machine: Machine,
}

/// What an entry keeps: the fastest way to move one redistribution's
/// data, or the fastest grid for a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// A redistribution's exchange and message form (text as
    /// [`Measured`]'s: `async,packed,node-direct`).
    Exchange(Measured),
    /// A job's process grid, its extents (text `grid 2x2`).
    Grid(Vec<usize>),
    /// Whether a ghost update's ranks of one node read each other's
    /// storage (text `ghost node-direct`) or exchange messages (`ghost
    /// messages`).
    Ghost {
        /// Reads of shared storage between the ranks of a node.
        node_direct: bool,
    },
}

impl fmt::Display for Kept {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kept::Exchange(m) => write!(f, "{m}"),
            Kept::Grid(g) => write!(f, "grid {}", super::grids::text(g)),
            Kept::Ghost { node_direct: true } => write!(f, "ghost node-direct"),
            Kept::Ghost { node_direct: false } => write!(f, "ghost messages"),
        }
    }
}

impl FromStr for Kept {
    type Err = String;

    /// `grid 2x2`, `ghost node-direct`, `ghost messages` or a measured
    /// choice's text.
    fn from_str(s: &str) -> Result<Kept, String> {
        match s {
            "ghost node-direct" => return Ok(Kept::Ghost { node_direct: true }),
            "ghost messages" => return Ok(Kept::Ghost { node_direct: false }),
            _ => {}
        }
        match s.strip_prefix("grid ") {
            Some(g) => super::grids::parse(g)
                .map(Kept::Grid)
                .ok_or_else(|| format!("grid {g:?} is not extents such as 2x2")),
            None => s
                .parse::<Measured>()
                .map(Kept::Exchange)
                .map_err(|e| e.to_string()),
        }
    }
}

/// One measured choice.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// What it holds for.
    pub key: Key,
    /// The fastest choice.
    pub choice: Kept,
    /// Its time per execution, in seconds (the slowest rank's median).
    pub seconds: f64,
    /// The time per execution of `auto`'s own choice (for a grid: the
    /// job's default grid's time per step), measured beside it.
    pub auto_seconds: f64,
}

/// The entries of a wisdom file, in the file's order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Wisdom {
    /// Entries, at most one per key.
    pub entries: Vec<Entry>,
}

/// What a lookup found for a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// An entry of this key: its choice.
    Found(Kept),
    /// No entry of this key; the sentence says what the file holds
    /// instead (for the warning).
    Missing(String),
}

/// A text field as the file holds it: tabs and line breaks become spaces,
/// runs of spaces one.
fn field(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Wisdom {
    /// Reads a wisdom file's text.
    ///
    /// # Errors
    ///
    /// A sentence naming the first line that is not a wisdom entry and why
    /// (the whole file is then not used).
    pub fn parse(text: &str) -> Result<Wisdom, String> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, header)) if header.split('\t').next() == Some(MAGIC) => {}
            Some(_) => return Err(format!("line 1 is not the header `{MAGIC} …`")),
            None => return Err("the file is empty".to_string()),
        }
        let mut w = Wisdom::default();
        for (i, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let entry = Self::entry(line).map_err(|why| format!("line {}: {why}", i + 1))?;
            w.merge(entry);
        }
        Ok(w)
    }

    /// One line's entry.
    fn entry(line: &str) -> Result<Entry, String> {
        let f: Vec<&str> = line.split('\t').collect();
        let [case, ranks, per_node, nodes, mpi, processor, choice, seconds, auto] = f.as_slice()
        else {
            return Err(format!(
                "{} fields, expected {} ({})",
                f.len(),
                FIELDS.len(),
                FIELDS.join(", ")
            ));
        };
        let count = |what: &str, s: &str| {
            s.parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{what} {s:?} is not a positive count"))
        };
        let time = |what: &str, s: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|t| t.is_finite() && *t >= 0.0)
                .ok_or_else(|| format!("{what} {s:?} is not a time in seconds"))
        };
        Ok(Entry {
            key: Key {
                case: field(case),
                machine: Machine {
                    ranks: count("ranks", ranks)?,
                    ranks_per_node: count("ranks_per_node", per_node)?,
                    nodes: count("nodes", nodes)?,
                    mpi: field(mpi),
                    processor: field(processor),
                },
            },
            choice: choice.parse::<Kept>()?,
            seconds: time("seconds", seconds)?,
            auto_seconds: time("auto_seconds", auto)?,
        })
    }

    /// The file's text: the header, then one line per entry.
    pub fn render(&self) -> String {
        let mut s = format!("{MAGIC}\t{}\n", FIELDS.join("\t"));
        for e in &self.entries {
            let m = &e.key.machine;
            s.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.6e}\t{:.6e}\n",
                field(&e.key.case),
                m.ranks,
                m.ranks_per_node,
                m.nodes,
                field(&m.mpi),
                field(&m.processor),
                e.choice,
                e.seconds,
                e.auto_seconds
            ));
        }
        s
    }

    /// Adds `entry`, replacing the one of the same key (a later
    /// measurement wins).
    pub fn merge(&mut self, mut entry: Entry) {
        entry.key.case = field(&entry.key.case);
        entry.key.machine.mpi = field(&entry.key.machine.mpi);
        entry.key.machine.processor = field(&entry.key.machine.processor);
        match self.entries.iter_mut().find(|e| e.key == entry.key) {
            Some(e) => *e = entry,
            None => self.entries.push(entry),
        }
    }

    /// Every entry of `other`, merged into these.
    pub fn merge_all(&mut self, other: Wisdom) {
        for e in other.entries {
            self.merge(e);
        }
    }

    /// The choice measured for `key`, or what the file holds instead: the
    /// entries of the same case measured elsewhere (with what differs), or
    /// that the case was never measured.
    pub fn lookup(&self, key: &Key) -> Lookup {
        let case = field(&key.case);
        let machine = Machine {
            mpi: field(&key.machine.mpi),
            processor: field(&key.machine.processor),
            ..key.machine.clone()
        };
        let same_case: Vec<&Entry> = self.entries.iter().filter(|e| e.key.case == case).collect();
        if let Some(e) = same_case.iter().find(|e| e.key.machine == machine) {
            return Lookup::Found(e.choice.clone());
        }
        Lookup::Missing(match same_case.first() {
            Some(e) => format!(
                "this case was measured with {}",
                e.key.machine.differences(&machine).join(", ")
            ),
            None => format!(
                "no entry for this case ({case}) among its {} entries",
                self.entries.len()
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Strategy;

    fn machine(ranks: usize) -> Machine {
        Machine {
            ranks,
            ranks_per_node: ranks,
            nodes: 1,
            mpi: "MPICH Version:\t4.0.2".to_string(),
            processor: "Some CPU @ 2.0GHz".to_string(),
        }
    }

    fn entry(case: &str, ranks: usize, strategy: Strategy, seconds: f64) -> Entry {
        Entry {
            key: Key {
                case: case.to_string(),
                machine: machine(ranks),
            },
            choice: Kept::Exchange(Measured {
                strategy,
                typed: false,
                node_direct: true,
                min_run: None,
                direct_run: None,
            }),
            seconds,
            auto_seconds: 2.0 * seconds,
        }
    }

    #[test]
    fn wisdom_reads_back_as_written_and_later_entries_replace_earlier_ones() {
        let mut w = Wisdom::default();
        w.merge(entry("a -> b", 2, Strategy::Async, 0.5));
        w.merge(entry("a -> b", 4, Strategy::Alltoallv, 0.25));
        w.merge(entry("c -> d", 2, Strategy::Combined, 1e-6));
        let text = w.render();
        assert!(text.starts_with(MAGIC));
        let back = Wisdom::parse(&text).unwrap();
        assert_eq!(back.entries.len(), 3);
        assert_eq!(back.render(), text);
        let mut merged = back.clone();
        merged.merge(entry("a -> b", 2, Strategy::Alltoallv, 0.4));
        assert_eq!(merged.entries.len(), 3);
        let key = entry("a -> b", 2, Strategy::Async, 0.0).key;
        assert_eq!(
            merged.lookup(&key),
            Lookup::Found(Kept::Exchange(Measured {
                strategy: Strategy::Alltoallv,
                typed: false,
                node_direct: true,
                min_run: None,
                direct_run: None,
            }))
        );
        // Grids read back too.
        let mut grid = entry("job fft3d", 4, Strategy::Async, 0.1);
        grid.choice = Kept::Grid(vec![1, 4]);
        merged.merge(grid.clone());
        let back = Wisdom::parse(&merged.render()).unwrap();
        assert!(merged.render().contains("\tgrid 1x4\t"));
        assert_eq!(
            back.lookup(&grid.key),
            Lookup::Found(Kept::Grid(vec![1, 4]))
        );
        // Tabs in a field (MPICH's version text) are spaces in the file.
        assert!(!text.contains("Version:\t"));
    }

    #[test]
    fn a_lookup_says_what_differs_or_that_nothing_was_measured() {
        let mut w = Wisdom::default();
        w.merge(entry("a -> b", 4, Strategy::Async, 0.5));
        let mut key = entry("a -> b", 2, Strategy::Async, 0.0).key;
        match w.lookup(&key) {
            Lookup::Missing(why) => {
                assert!(why.contains("ranks 4 (this job 2)"), "{why}");
                assert!(why.contains("ranks per node 4 (this job 2)"), "{why}");
                assert!(!why.contains("MPI"), "{why}");
            }
            found => panic!("{found:?}"),
        }
        key.case = "x -> y".to_string();
        match w.lookup(&key) {
            Lookup::Missing(why) => assert!(why.contains("no entry") && why.contains("x -> y")),
            found => panic!("{found:?}"),
        }
    }

    #[test]
    fn files_that_are_not_wisdom_are_refused_naming_the_line() {
        let good = {
            let mut w = Wisdom::default();
            w.merge(entry("a -> b", 2, Strategy::Async, 0.5));
            w.render()
        };
        let line2 = good.lines().nth(1).unwrap().to_string();
        let cases = [
            (String::new(), "empty"),
            ("garbage\n".to_string(), "line 1"),
            (format!("{MAGIC}\nnot\ta\tline\n"), "line 2: 3 fields"),
            (good.replace("\t2\t2\t1\t", "\t0\t2\t1\t"), "ranks \"0\""),
            (good.replace("async,packed", "fast,packed"), "line 2"),
            (good.replace("5.000000e-1", "soon"), "seconds"),
            (
                good.replace("async,packed,node-direct", "grid 2xx"),
                "grid \"2xx\"",
            ),
            (format!("{good}{}\n", &line2[..10]), "line 3"),
        ];
        for (text, expected) in cases {
            let err = Wisdom::parse(&text).unwrap_err();
            assert!(err.contains(expected), "{err:?} lacks {expected:?}");
        }
        // Blank lines are nothing.
        assert_eq!(
            Wisdom::parse(&format!("{good}\n\n")).unwrap().entries.len(),
            1
        );
    }
}
