//! The array shape argument shared by the `redist` subcommands.
//!
//! Every subcommand takes `--shape AxBxC` ([`Shape`]) and layouts as spec
//! strings ([`dist_array::LayoutSpec`], which clap parses through its
//! `FromStr`); [`layout_for`] puts the two together and reports a mismatch
//! as a [`CliError`].

use crate::error::CliError;
use dist_array::LayoutSpec;
use std::fmt;
use std::ops::Deref;
use std::str::FromStr;

/// The global shape of an array as given on the command line: extents joined
/// by `x`, such as `4096x4096`, `10x7x3` or `100` (a 1-D array).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape(pub Vec<usize>);

/// The extents, one per dimension.
impl Deref for Shape {
    type Target = [usize];

    fn deref(&self) -> &[usize] {
        &self.0
    }
}

impl fmt::Display for Shape {
    /// Extents joined by `x`, the syntax [`Shape`] parses.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_extents(&self.0))
    }
}

/// Extents joined by `x`: `[10, 7]` → `10x7`, `[5]` → `5`.
pub fn format_extents(extents: &[usize]) -> String {
    extents
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

impl FromStr for Shape {
    type Err = CliError;

    /// Parses `AxBxC` (`x` or `X`, spaces around extents allowed) or a single
    /// extent. Extents may be 0 (an empty array is a legal layout).
    fn from_str(s: &str) -> Result<Shape, CliError> {
        if s.trim().is_empty() {
            return Err(CliError::EmptyShape);
        }
        s.split(['x', 'X'])
            .enumerate()
            .map(|(i, token)| {
                let token = token.trim();
                let bad = |too_large: bool| {
                    let (shape, position, token) = (s.to_string(), i + 1, token.to_string());
                    if too_large {
                        CliError::ShapeTooLarge {
                            shape,
                            position,
                            token,
                        }
                    } else {
                        CliError::ShapeNotANumber {
                            shape,
                            position,
                            token,
                        }
                    }
                };
                if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad(false));
                }
                token.parse::<usize>().map_err(|_| bad(true))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Shape)
    }
}

/// A position in an array as given on the command line: 0-based indices
/// joined by `,`, such as `3,0` (the first index of a window).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin(pub Vec<usize>);

impl Deref for Origin {
    type Target = [usize];

    fn deref(&self) -> &[usize] {
        &self.0
    }
}

impl FromStr for Origin {
    type Err = CliError;

    /// Parses `I,J,..` (spaces around indices allowed).
    fn from_str(s: &str) -> Result<Origin, CliError> {
        s.split(',')
            .enumerate()
            .map(|(i, token)| {
                let token = token.trim();
                let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
                token
                    .parse::<usize>()
                    .ok()
                    .filter(|_| digits)
                    .ok_or_else(|| CliError::OriginNotAnIndex {
                        origin: s.to_string(),
                        position: i + 1,
                        token: token.to_string(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Origin)
    }
}

/// The most ranks a layout given to the tool may have: `redist show --json`
/// lists every rank's local shape and a layout keeps a rank map, so a layout
/// of 10^11 ranks would ask for gigabytes before anything is printed.
pub const MAX_RANKS: usize = 1 << 20;

/// Refuses a layout of more than [`MAX_RANKS`] ranks, before anything is
/// built for it.
pub fn check_ranks(spec: &LayoutSpec) -> Result<(), CliError> {
    if spec.ranks() > MAX_RANKS {
        return Err(CliError::TooManyRanks {
            spec: spec.to_string(),
            ranks: spec.ranks(),
            limit: MAX_RANKS,
        });
    }
    Ok(())
}

/// Builds the layout of `shape` distributed as `spec`, with the error
/// reported in command-line terms; layouts of more than [`MAX_RANKS`] ranks
/// are refused.
pub fn layout_for(shape: &Shape, spec: &LayoutSpec) -> Result<dist_array::Layout, CliError> {
    check_ranks(spec)?;
    if spec.ndim() != shape.len() {
        return Err(CliError::DimensionMismatch {
            spec: spec.to_string(),
            spec_dims: spec.ndim(),
            shape: shape.to_string(),
            shape_dims: shape.len(),
        });
    }
    dist_array::Layout::new(shape, spec).map_err(|source| CliError::Layout {
        spec: spec.to_string(),
        shape: shape.to_string(),
        source: Box::new(source),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn origins_parse_and_name_what_is_wrong() {
        let o: Origin = "3, 0,12".parse().unwrap();
        assert_eq!(&*o, &[3, 0, 12]);
        let e = "3,,1".parse::<Origin>().unwrap_err().to_string();
        assert!(e.contains("index 2 of origin \"3,,1\""), "{e}");
        assert!("-1".parse::<Origin>().is_err());
        assert!("99999999999999999999999".parse::<Origin>().is_err());
    }

    /// Formerly the doc example of [`Shape`].
    #[test]
    fn shape_example() {
        let s: Shape = "10x7".parse().unwrap();
        assert_eq!(&*s, &[10, 7]);
        assert_eq!(s.to_string(), "10x7");
        assert_eq!(&*"100".parse::<Shape>().unwrap(), &[100]);
        let err = "8xq".parse::<Shape>().unwrap_err().to_string();
        assert!(err.contains("`q`") && err.contains("extent 2"), "{err}");
    }

    /// Formerly the doc example of [`format_extents`].
    #[test]
    fn format_extents_example() {
        assert_eq!(format_extents(&[10, 7, 3]), "10x7x3");
    }

    /// Formerly the doc example of [`layout_for`].
    #[test]
    fn layout_for_example() {
        let shape: Shape = "8x8".parse().unwrap();
        let layout = layout_for(&shape, &"block,block@2x2".parse().unwrap()).unwrap();
        assert_eq!(layout.ranks(), 4);
        let err = layout_for(&shape, &"block@2".parse().unwrap()).unwrap_err();
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn shapes_parse() {
        assert_eq!("8x8".parse::<Shape>().unwrap().0, vec![8, 8]);
        assert_eq!("4096".parse::<Shape>().unwrap().0, vec![4096]);
        assert_eq!(" 2 X 3 x 4 ".parse::<Shape>().unwrap().0, vec![2, 3, 4]);
        assert_eq!("0x5".parse::<Shape>().unwrap().0, vec![0, 5]);
        assert_eq!("10x7x3".parse::<Shape>().unwrap().to_string(), "10x7x3");
    }

    #[test]
    fn shape_errors_name_the_token() {
        assert_eq!("".parse::<Shape>(), Err(CliError::EmptyShape));
        assert_eq!("  ".parse::<Shape>(), Err(CliError::EmptyShape));
        assert_eq!(
            "8xq".parse::<Shape>(),
            Err(CliError::ShapeNotANumber {
                shape: "8xq".into(),
                position: 2,
                token: "q".into()
            })
        );
        for (s, position, token) in [
            ("8x", 2, ""),
            ("x8", 1, ""),
            ("8xx8", 2, ""),
            ("-3", 1, "-3"),
            ("+3", 1, "+3"),
            ("8,8", 1, "8,8"),
            ("2.5x2", 1, "2.5"),
        ] {
            match s.parse::<Shape>() {
                Err(CliError::ShapeNotANumber {
                    position: p,
                    token: t,
                    ..
                }) => assert_eq!((p, t.as_str()), (position, token), "{s}"),
                other => panic!("{s}: {other:?}"),
            }
        }
        assert!(matches!(
            "8x99999999999999999999999".parse::<Shape>(),
            Err(CliError::ShapeTooLarge { position: 2, .. })
        ));
        let msg = "8xq".parse::<Shape>().unwrap_err().to_string();
        assert!(
            msg.contains("extent 2") && msg.contains("`q`") && msg.contains("non-negative integer"),
            "{msg}"
        );
    }

    #[test]
    fn layouts_of_too_many_ranks_are_refused_before_they_are_built() {
        let shape: Shape = "8".parse().unwrap();
        let err = layout_for(&shape, &"block@2097152".parse().unwrap()).unwrap_err();
        assert_eq!(
            err,
            CliError::TooManyRanks {
                spec: "block@2097152".into(),
                ranks: 2_097_152,
                limit: MAX_RANKS,
            }
        );
        assert_eq!(err.exit_code(), 2);
        assert_eq!(
            err.to_string(),
            "invalid layout block@2097152: 2097152 ranks; expected at most 1048576 \
             ranks (the most the redist tool lists or plans for)"
        );
        let at_limit = format!("block@{MAX_RANKS}");
        assert_eq!(
            layout_for(&shape, &at_limit.parse().unwrap())
                .unwrap()
                .ranks(),
            MAX_RANKS
        );
        let above: LayoutSpec = "block,block@1024x1025".parse().unwrap();
        assert!(matches!(
            layout_for(&"8x8".parse().unwrap(), &above),
            Err(CliError::TooManyRanks {
                ranks: 1_049_600,
                ..
            })
        ));
    }

    #[test]
    fn layout_errors_are_exit_code_2() {
        let shape: Shape = "8x8".parse().unwrap();
        let err = layout_for(&shape, &"block@4".parse().unwrap()).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let msg = err.to_string();
        assert!(msg.contains("block@4") && msg.contains("8x8"), "{msg}");
        assert!(
            msg.contains("has 1 dimension(s) but shape 8x8 has 2"),
            "{msg}"
        );
        let huge: Shape = format!("{}x{}", usize::MAX, usize::MAX).parse().unwrap();
        let err = layout_for(&huge, &"block,block@1x1".parse().unwrap()).unwrap_err();
        assert!(matches!(err, CliError::Layout { .. }), "{err}");
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("overflow"), "{err}");
        assert!(!err.is_broken_pipe());
        assert!(CliError::from(io::Error::from(io::ErrorKind::BrokenPipe)).is_broken_pipe());
    }
}
