//! Dataset paths: `data`, `/run/3/u`, the groups on the way found (to
//! read) or made (to write), and what a group holds when the dataset is
//! not there.

use crate::error::IoError;
use hdf5::{Dataset, Group, LocationType};

/// A dataset's path in a file: the groups from the root, and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DatasetPath {
    /// The groups from the root, outermost first.
    pub groups: Vec<String>,
    /// The dataset's own name in its group.
    pub leaf: String,
}

/// Names shown when a group's members are listed in an error.
const LISTED: usize = 16;

impl DatasetPath {
    /// The path `text` names: names joined by `/`, a leading `/` or none
    /// (every path starts at the root), repeated `/` ignored.
    pub fn parse(text: &str) -> Result<DatasetPath, IoError> {
        let invalid = || {
            IoError::invalid(
                "HDF5 dataset",
                text,
                "names joined by '/', such as data or /run/3/u (no '.' name)",
            )
        };
        let mut names: Vec<String> = text
            .split('/')
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect();
        if names.iter().any(|n| n == "." || n.contains('\0')) {
            return Err(invalid());
        }
        let leaf = names.pop().ok_or_else(invalid)?;
        Ok(DatasetPath {
            groups: names,
            leaf,
        })
    }

    /// `/run/3/u`.
    pub fn full(&self) -> String {
        let mut s = String::new();
        for g in self.groups.iter().chain([&self.leaf]) {
            s.push('/');
            s.push_str(g);
        }
        s
    }

    /// `/run/3`, the dataset's group (`/` for the root).
    pub fn parent(&self) -> String {
        if self.groups.is_empty() {
            return "/".to_string();
        }
        self.groups.iter().map(|g| format!("/{g}")).collect()
    }

    /// The name the dataset is written under before it replaces an older
    /// one of its name.
    pub fn temporary_leaf(&self) -> String {
        format!("{}.ndcyclic-tmp", self.leaf)
    }
}

/// Why a dataset path does not lead to a dataset: a sentence.
pub(super) type Missing = String;

/// The group of `path` in `root`, every group on the way an existing one.
/// Not collective (reads metadata alone).
pub(super) fn find_group(root: &Group, path: &DatasetPath) -> Result<Group, Missing> {
    let mut group = root.clone();
    let mut at = String::new();
    for name in &path.groups {
        let here = if at.is_empty() { "/" } else { at.as_str() };
        if !group.link_exists(name) {
            return Err(format!(
                "no group {at}/{name} (so no dataset {}): {here} holds {}",
                path.full(),
                members(&group)
            ));
        }
        match group.loc_type_by_name(name) {
            Ok(LocationType::Group) => {}
            Ok(kind) => {
                return Err(format!(
                    "{at}/{name} is {}, not a group (so no dataset {})",
                    kind_name(kind),
                    path.full()
                ))
            }
            Err(e) => return Err(format!("{at}/{name} cannot be opened: {e}")),
        }
        group = group
            .group(name)
            .map_err(|e| format!("the group {at}/{name} cannot be opened: {e}"))?;
        at = format!("{at}/{name}");
    }
    Ok(group)
}

/// The dataset at `path` in `root`. Not collective.
pub(super) fn find_dataset(root: &Group, path: &DatasetPath) -> Result<Dataset, Missing> {
    let group = find_group(root, path)?;
    let leaf = &path.leaf;
    if !group.link_exists(leaf) {
        return Err(format!(
            "no dataset {}: {} holds {}",
            path.full(),
            path.parent(),
            members(&group)
        ));
    }
    match group.loc_type_by_name(leaf) {
        Ok(LocationType::Dataset) => group
            .dataset(leaf)
            .map_err(|e| format!("the dataset {} cannot be opened: {e}", path.full())),
        Ok(LocationType::Group) => {
            let inner = group.group(leaf).map(|g| members(&g));
            Err(format!(
                "{} is a group, not a dataset; it holds {}",
                path.full(),
                inner.unwrap_or_else(|_| "members that cannot be listed".into())
            ))
        }
        Ok(kind) => Err(format!(
            "{} is {}, not a dataset",
            path.full(),
            kind_name(kind)
        )),
        Err(e) => Err(format!("{} cannot be opened: {e}", path.full())),
    }
}

/// The group of `path` in `root`, made where missing. Collective over
/// the file's communicator when it makes groups (every rank calls alike).
pub(super) fn make_group(root: &Group, path: &DatasetPath) -> Result<Group, Missing> {
    let mut group = root.clone();
    let mut at = String::new();
    for name in &path.groups {
        at = format!("{at}/{name}");
        group = if group.link_exists(name) {
            match group.loc_type_by_name(name) {
                Ok(LocationType::Group) => group
                    .group(name)
                    .map_err(|e| format!("the group {at} cannot be opened: {e}"))?,
                Ok(kind) => {
                    return Err(format!(
                        "{at} is {}, not a group, so no dataset {} can be made",
                        kind_name(kind),
                        path.full()
                    ))
                }
                Err(e) => return Err(format!("{at} cannot be opened: {e}")),
            }
        } else {
            group
                .create_group(name)
                .map_err(|e| format!("the group {at} cannot be made: {e}"))?
        };
    }
    Ok(group)
}

/// What lies at `name` in `group`: `None` when nothing, else its kind.
/// Not collective.
pub(super) fn kind_at(group: &Group, name: &str) -> Result<Option<LocationType>, Missing> {
    if !group.link_exists(name) {
        return Ok(None);
    }
    group
        .loc_type_by_name(name)
        .map(Some)
        .map_err(|e| format!("{name} cannot be opened: {e}"))
}

/// `a dataset`, `a group`, ... for messages.
pub(super) fn kind_name(kind: LocationType) -> &'static str {
    match kind {
        LocationType::Group => "a group",
        LocationType::Dataset => "a dataset",
        LocationType::NamedDatatype => "a named datatype",
        #[allow(unreachable_patterns, reason = "TypeMap exists from HDF5 1.12")]
        _ => "an object other than a dataset",
    }
}

/// `nothing`, or `u, w, run/` (groups marked with a `/`), the first
/// [`LISTED`] names.
fn members(group: &Group) -> String {
    let Ok(mut names) = group.member_names() else {
        return "members that cannot be listed".to_string();
    };
    if names.is_empty() {
        return "nothing".to_string();
    }
    names.sort();
    let total = names.len();
    let mut shown: Vec<String> = (names.into_iter().take(LISTED))
        .map(|n| match group.loc_type_by_name(&n) {
            Ok(LocationType::Group) => format!("{n}/"),
            _ => n,
        })
        .collect();
    if total > LISTED {
        shown.push(format!("... ({total} in all)"));
    }
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_from_the_root() {
        let p = DatasetPath::parse("/run/3/u").unwrap();
        assert_eq!(
            (p.groups.clone(), p.leaf.as_str()),
            (vec!["run".into(), "3".into()], "u")
        );
        assert_eq!((p.full(), p.parent()), ("/run/3/u".into(), "/run/3".into()));
        assert_eq!(DatasetPath::parse("run//3/u/").unwrap(), p);
        let d = DatasetPath::parse("data").unwrap();
        assert_eq!((d.full(), d.parent()), ("/data".into(), "/".into()));
        assert_eq!(d.temporary_leaf(), "data.ndcyclic-tmp");
        for bad in ["", "/", "//", "a/./b"] {
            assert!(DatasetPath::parse(bad).is_err(), "{bad:?}");
        }
    }
}
