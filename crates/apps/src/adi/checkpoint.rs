//! Checkpoints of the ADI solver: the field `u` after a step, saved with
//! [`dist_io`] to a `.npy` file that NumPy opens, and a small JSON sidecar
//! beside it that says which step it is and what it must be resumed with.
//!
//! # The two files
//!
//! A checkpoint at `FILE` is
//!
//! - `FILE`: the `n × n` field in C order, `float64` — the solver's whole
//!   state between steps (the other arrays of a step are scratch, rewritten
//!   from `u` by the next step). It is written by [`dist_io::save()`], under a
//!   temporary name renamed to `FILE` once every rank's part is written, and
//!   loaded by [`dist_io::load_into`] onto any layout on any rank count;
//! - `FILE.json` ([`sidecar_path`]): the step count, `n`, `dt` (with its
//!   exact bits), `--two-modes`, the shape and a digest of the field
//!   ([`Sidecar`]). Rank 0 writes it after the array's save succeeded on
//!   every rank, to a temporary name beside it, flushed, then renamed.
//!
//! Both files are flushed to storage before their renames, so each is
//! always whole: either the previous version or the new one. A crash
//! while the array is written (nearly all of a checkpoint's time) leaves
//! the previous pair as it was, a consistent checkpoint. The one window
//! left — after the array's rename, before the sidecar's — leaves a new
//! array beside an old sidecar; the digest catches that on restart: the
//! sidecar records the digest of the field it describes, the restart
//! computes the digest of the field it loaded and refuses a mismatch
//! ([`AdiError::Checkpoint`]) rather than resume from the wrong step.
//!
//! The digest ([`digest`]) is a wrapping sum over the elements of a hash
//! of (global index, value bits): independent of the layout and rank
//! count, computed where the elements are, one all-reduce.
//!
//! # Agreement
//!
//! Every error is the same on every rank, so no rank is left waiting in a
//! collective: [`dist_io`] agrees on its own errors, and what rank 0 alone
//! does (reading and writing the sidecar) ends with a broadcast of its
//! outcome (`from_root`). The checks of a sidecar against the run's
//! parameters ([`Sidecar::check_resumes`]) then see the same bytes and the
//! same parameters on every rank.

use super::views::view2;
use super::{AdiConfig, AdiError};
use dist_array::DistArray;
use dist_io::IoOptions;
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where and how often a run saves its state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoints {
    /// The array's file (`.npy`); its sidecar is [`sidecar_path`] of it.
    /// Each checkpoint replaces the previous one.
    pub path: PathBuf,
    /// Save after every step whose number (counted from the start of the
    /// simulation, restarts included) is a multiple of this; at least 1.
    pub every: usize,
}

/// The value of the sidecar's `format` key.
pub const FORMAT: &str = "ndcyclic-adi-checkpoint";

/// The version of the sidecar's keys this module writes and reads.
pub const VERSION: u64 = 1;

/// What a checkpoint's sidecar records.
#[derive(Debug, Clone, PartialEq)]
pub struct Sidecar {
    /// Steps done: the state is the field after this step.
    pub step: usize,
    /// Interior points per dimension (the field is `n × n`).
    pub n: usize,
    /// The time step.
    pub dt: f64,
    /// Whether the initial field had the second mode.
    pub two_modes: bool,
    /// The field's [`digest`].
    pub digest: u64,
}

/// The sidecar of the checkpoint at `path`: `path` with `.json` appended
/// (`adi.npy` → `adi.npy.json`); `None` when `path` names no file.
///
/// ```
/// use apps::adi::checkpoint::sidecar_path;
/// use std::path::Path;
/// assert_eq!(sidecar_path(Path::new("/dev/shm/adi.npy")).unwrap(), Path::new("/dev/shm/adi.npy.json"));
/// assert!(sidecar_path(Path::new("/")).is_none());
/// ```
pub fn sidecar_path(path: &Path) -> Option<PathBuf> {
    let mut name = path.file_name()?.to_os_string();
    name.push(".json");
    Some(path.with_file_name(name))
}

/// [`sidecar_path`], or the error a path without a file name is.
pub(crate) fn sidecar_of(path: &Path, option: &str) -> Result<PathBuf, AdiError> {
    sidecar_path(path).ok_or_else(|| {
        AdiError::Parameter(format!(
            "{option} {} names no file; expected a file path such as /dev/shm/adi.npy",
            path.display()
        ))
    })
}

impl Sidecar {
    /// The sidecar as one line of JSON. `dt` is there twice: as a number
    /// to read, and as the hexadecimal bits of the `f64` that are
    /// compared on restart (a JSON reader may round a decimal by one unit).
    ///
    /// ```
    /// use apps::adi::checkpoint::Sidecar;
    /// let s = Sidecar { step: 30, n: 256, dt: 1e-3, two_modes: false, digest: 7 };
    /// let text = s.to_json("adi.npy");
    /// assert!(text.contains(r#""step":30"#), "{text}");
    /// assert_eq!(Sidecar::parse(&text, "adi.npy.json").unwrap(), s);
    /// ```
    pub fn to_json(&self, array: &str) -> String {
        json!({
            "format": FORMAT,
            "version": VERSION,
            "array": array,
            "step": self.step,
            "n": self.n,
            "shape": [self.n, self.n],
            "dtype": "float64",
            "dt": self.dt,
            "dt_bits": format!("{:016x}", self.dt.to_bits()),
            "time": self.step as f64 * self.dt,
            "two_modes": self.two_modes,
            "digest": format!("{:016x}", self.digest),
        })
        .to_string()
    }

    /// The sidecar `text` holds (`file` names it in errors).
    ///
    /// # Errors
    ///
    /// [`AdiError::Checkpoint`] when `text` is not JSON, is not an ADI
    /// checkpoint's sidecar of version [`VERSION`], or lacks a key or
    /// holds one of the wrong type.
    pub fn parse(text: &str, file: &str) -> Result<Sidecar, AdiError> {
        let bad = |reason: String| AdiError::Checkpoint {
            path: file.to_string(),
            reason,
        };
        let v: Value = serde_json::from_str(text)
            .map_err(|e| bad(format!("not a checkpoint sidecar (invalid JSON: {e})")))?;
        if v["format"] != FORMAT {
            return Err(bad(format!(
                "not a checkpoint sidecar: its \"format\" is {}, expected \"{FORMAT}\"",
                v["format"]
            )));
        }
        if v["version"] != VERSION {
            return Err(bad(format!(
                "sidecar version {}, this program reads version {VERSION}",
                v["version"]
            )));
        }
        let whole = |key: &str| {
            v[key]
                .as_u64()
                .and_then(|x| usize::try_from(x).ok())
                .ok_or_else(|| bad(format!("no \"{key}\" (a whole number) in the sidecar")))
        };
        let bits = |key: &str| {
            v[key]
                .as_str()
                .and_then(|s| u64::from_str_radix(s, 16).ok())
                .ok_or_else(|| {
                    bad(format!(
                        "no \"{key}\" (16 hexadecimal digits) in the sidecar"
                    ))
                })
        };
        let step = whole("step")?;
        let n = whole("n")?;
        let shape = v["shape"].as_array().map(|s| {
            s.iter()
                .map(|x| x.as_u64().and_then(|x| usize::try_from(x).ok()))
                .collect::<Vec<_>>()
        });
        if shape != Some(vec![Some(n), Some(n)]) {
            return Err(bad(format!(
                "the sidecar's \"shape\" is {}, expected [{n}, {n}] for n = {n}",
                v["shape"]
            )));
        }
        let dt = f64::from_bits(bits("dt_bits")?);
        let two_modes = v["two_modes"]
            .as_bool()
            .ok_or_else(|| bad("no \"two_modes\" (true or false) in the sidecar".into()))?;
        let digest = bits("digest")?;
        Ok(Sidecar {
            step,
            n,
            dt,
            two_modes,
            digest,
        })
    }

    /// `Ok` when a run of `cfg` can resume from this checkpoint (read from
    /// `path`): the same `n`, `dt` (bit for bit) and `two_modes`, and a
    /// step no later than `cfg.steps`, which counts from the start of the
    /// simulation. A checkpoint at step `cfg.steps` resumes to run no step.
    ///
    /// # Errors
    ///
    /// [`AdiError::Checkpoint`] saying what differs and what the restart
    /// must be given.
    pub fn check_resumes(&self, cfg: &AdiConfig, path: &Path) -> Result<(), AdiError> {
        let bad = |reason: String| {
            Err(AdiError::Checkpoint {
                path: path.display().to_string(),
                reason,
            })
        };
        if self.n != cfg.n {
            return bad(format!(
                "it holds a {n}x{n} field (--n {n}), this run has --n {}; restart with --n {n}",
                cfg.n,
                n = self.n
            ));
        }
        if self.dt.to_bits() != cfg.dt.to_bits() {
            return bad(format!(
                "it was written with --dt {:?}, this run has --dt {:?}; restart with --dt {:?}",
                self.dt, cfg.dt, self.dt
            ));
        }
        if self.two_modes != cfg.two_modes {
            let (with, without) = ("with --two-modes", "without --two-modes");
            let (was, is) = if self.two_modes {
                (with, without)
            } else {
                (without, with)
            };
            return bad(format!(
                "it was written {was}, this run is {is}; restart {was}"
            ));
        }
        if self.step > cfg.steps {
            return bad(format!(
                "it is at step {}, beyond --steps {}; --steps is the total step count, so \
                 expected --steps {} or more",
                self.step, cfg.steps, self.step
            ));
        }
        Ok(())
    }
}

/// SplitMix64's finaliser: a bijection of `u64` that mixes every bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The digest of a 2-D array, the same on every rank (collective over its
/// grid's communicator): Σ mix(mix(i·ncols + j) ⊕ bits(`u[i][j]`)) over all
/// elements, wrapping — independent of the layout and the rank count.
///
/// # Errors
///
/// [`AdiError::Dist`] when the array's layout does not know this rank's
/// coordinates (not expected of an array built on its grid).
pub fn digest(u: &DistArray<f64>) -> Result<u64, AdiError> {
    let mut local = 0u64;
    if let Some(rank) = u.rank() {
        let layout = u.layout();
        let coords = layout.coords_of_rank(rank)?;
        let gi = layout.axis(0).local_to_global_table(coords[0]);
        let gj = layout.axis(1).local_to_global_table(coords[1]);
        let ncols = layout.shape()[1] as u64;
        let view = view2(u);
        for (li, &i) in gi.iter().enumerate() {
            let row = (i as u64).wrapping_mul(ncols);
            for (lj, &j) in gj.iter().enumerate() {
                let at = mix(row.wrapping_add(j as u64));
                local = local.wrapping_add(mix(at ^ view[[li, lj]].to_bits()));
            }
        }
    }
    let mut total = 0u64;
    procgrid::waits::all_reduce_into(
        u.grid().communicator(),
        &local,
        &mut total,
        SystemOperation::sum(),
    );
    Ok(total)
}

/// Rank 0's `local` (ignored elsewhere) on every rank of `comm`: its
/// bytes, or its error message. Collective (two broadcasts).
fn from_root(comm: &SimpleCommunicator, local: Result<Vec<u8>, String>) -> Result<Vec<u8>, String> {
    let mut wire = if comm.rank() == 0 {
        let (tag, body) = match local {
            Ok(bytes) => (0u8, bytes),
            Err(message) => (1u8, message.into_bytes()),
        };
        let mut w = vec![tag];
        w.extend_from_slice(&body);
        w
    } else {
        Vec::new()
    };
    let mut len = [wire.len() as u64];
    procgrid::waits::broadcast_into(comm, 0, &mut len[..]);
    wire.resize(usize::try_from(len[0]).unwrap_or(0), 0);
    procgrid::waits::broadcast_into(comm, 0, &mut wire[..]);
    match wire.split_first() {
        Some((0, body)) => Ok(body.to_vec()),
        Some((_, body)) => Err(String::from_utf8_lossy(body).into_owned()),
        None => Err("rank 0's outcome did not arrive".to_string()),
    }
}

/// Writes `text` to `path` through a temporary file beside it, flushed
/// before the rename, and flushes the directory after it.
fn write_replacing(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map_or_else(|| "sidecar".into(), |n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(text.as_bytes())?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
        return written;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)?.sync_all()
}

/// The options of checkpoint saves and loads: defaults, with saves
/// flushed to storage before their rename.
fn io_options() -> IoOptions {
    IoOptions::default().sync(true)
}

/// Saves `u`, the field after step `sidecar.step` (whose `digest` this
/// fills in), as the checkpoint `to`: the array, then the sidecar.
/// Collective over `u`'s grid's communicator.
///
/// # Errors
///
/// The same on every rank: [`AdiError::Io`] when the array cannot be
/// saved, [`AdiError::Checkpoint`] when the sidecar cannot be written.
pub(crate) fn save(u: &DistArray<f64>, to: &Checkpoints, sidecar: Sidecar) -> Result<(), AdiError> {
    let comm = u.grid().communicator();
    let side = sidecar_of(&to.path, "--checkpoint")?;
    let sidecar = Sidecar {
        digest: digest(u)?,
        ..sidecar
    };
    dist_io::save(u, &to.path, &io_options())?;
    let written = if comm.rank() == 0 {
        let array = to
            .path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        write_replacing(&side, &sidecar.to_json(&array))
            .map(|()| Vec::new())
            .map_err(|e| e.to_string())
    } else {
        Ok(Vec::new())
    };
    from_root(comm, written)
        .map(drop)
        .map_err(|reason| AdiError::Checkpoint {
            path: side.display().to_string(),
            reason: format!(
                "cannot write the sidecar: {reason} (the array was saved to {})",
                to.path.display()
            ),
        })
}

/// The sidecar of the checkpoint at `path`, read by rank 0 and sent to
/// every rank of `comm`. Collective.
///
/// # Errors
///
/// The same on every rank: [`AdiError::Parameter`] when `path` names no
/// file, [`AdiError::Checkpoint`] when the sidecar cannot be read or is
/// not one ([`Sidecar::parse`]).
pub(crate) fn read_sidecar(comm: &SimpleCommunicator, path: &Path) -> Result<Sidecar, AdiError> {
    let side = sidecar_of(path, "--restart")?;
    let read = if comm.rank() == 0 {
        std::fs::read(&side).map_err(|e| e.to_string())
    } else {
        Ok(Vec::new())
    };
    let name = side.display().to_string();
    let bytes = from_root(comm, read).map_err(|reason| AdiError::Checkpoint {
        path: name.clone(),
        reason: format!(
            "cannot read the sidecar of {}: {reason}; a checkpoint is the array and its \
             sidecar, as --checkpoint {} --every K writes them",
            path.display(),
            path.display()
        ),
    })?;
    Sidecar::parse(&String::from_utf8_lossy(&bytes), &name)
}

/// Loads the checkpoint at `path`, whose sidecar is `sidecar`, into `u`
/// (any layout) and checks its digest. Collective over `u`'s grid's
/// communicator.
///
/// # Errors
///
/// The same on every rank: [`AdiError::Io`] when the array cannot be
/// loaded (missing, not `.npy`, not `float64`, another shape),
/// [`AdiError::Checkpoint`] when its digest is not the sidecar's.
pub(crate) fn restore(
    u: &mut DistArray<f64>,
    path: &Path,
    sidecar: &Sidecar,
) -> Result<(), AdiError> {
    dist_io::load_into(u, path, &IoOptions::default())?;
    let found = digest(u)?;
    if found != sidecar.digest {
        return Err(AdiError::Checkpoint {
            path: path.display().to_string(),
            reason: format!(
                "the array's digest is {found:016x}, its sidecar records {:016x} for step {}: \
                 the two files are not of the same checkpoint (an interrupted save, or a file \
                 replaced); expected the array the sidecar describes",
                sidecar.digest, sidecar.step
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use redist::{Remap, Strategy};

    fn sidecar() -> Sidecar {
        Sidecar {
            step: 30,
            n: 256,
            dt: 1e-3,
            two_modes: false,
            digest: 0x0123_4567_89ab_cdef,
        }
    }

    fn config(n: usize, steps: usize, dt: f64, two_modes: bool) -> AdiConfig {
        AdiConfig {
            n,
            steps,
            dt,
            x_layout: None,
            y_layout: None,
            strategy: Strategy::Auto,
            remap: Remap::None,
            two_modes,
            progress: false,
            checkpoint: None,
            restart: None,
        }
    }

    fn refusal(s: &Sidecar, cfg: &AdiConfig) -> String {
        match s.check_resumes(cfg, Path::new("c.npy")) {
            Err(e) => e.to_string(),
            Ok(()) => String::new(),
        }
    }

    #[test]
    fn json_round_trip_keeps_dt_bit_for_bit() {
        // 0.1 + 0.2 has no short decimal; its bits travel as they are.
        let s = Sidecar {
            dt: 0.1 + 0.2,
            two_modes: true,
            ..sidecar()
        };
        let back = Sidecar::parse(&s.to_json("c.npy"), "c.npy.json").unwrap();
        assert_eq!(back.dt.to_bits(), s.dt.to_bits());
        assert_eq!(back, s);
    }

    #[test]
    fn damaged_sidecars_are_named() {
        let good: Value = serde_json::from_str(&sidecar().to_json("c.npy")).unwrap();
        let with = |key: &str, v: Value| {
            let mut j = good.clone();
            j[key] = v;
            Sidecar::parse(&j.to_string(), "c.npy.json")
                .unwrap_err()
                .to_string()
        };
        let e = Sidecar::parse("{", "c.npy.json").unwrap_err().to_string();
        assert!(
            e.starts_with("checkpoint c.npy.json: not a checkpoint sidecar"),
            "{e}"
        );
        assert!(with("format", json!("x")).contains("expected \"ndcyclic-adi-checkpoint\""));
        assert!(with("version", json!(2)).contains("reads version 1"));
        assert!(with("step", json!(-1)).contains("no \"step\""));
        assert!(with("dt_bits", json!("0.001")).contains("no \"dt_bits\""));
        assert!(with("shape", json!([256, 255])).contains("expected [256, 256]"));
        assert!(with("two_modes", json!(1)).contains("no \"two_modes\""));
    }

    #[test]
    fn resuming_needs_the_same_parameters() {
        let s = sidecar();
        assert_eq!(refusal(&s, &config(256, 60, 1e-3, false)), "");
        assert_eq!(
            refusal(&s, &config(256, 30, 1e-3, false)),
            "",
            "no steps left"
        );
        let e = refusal(&s, &config(128, 60, 1e-3, false));
        assert!(
            e.contains("this run has --n 128; restart with --n 256"),
            "{e}"
        );
        let e = refusal(&s, &config(256, 60, 2e-3, false));
        assert!(
            e.contains("this run has --dt 0.002; restart with --dt 0.001"),
            "{e}"
        );
        let e = refusal(&s, &config(256, 60, 1e-3, true));
        assert!(
            e.contains("written without --two-modes, this run is with"),
            "{e}"
        );
        let e = refusal(&s, &config(256, 20, 1e-3, false));
        assert!(e.contains("at step 30, beyond --steps 20"), "{e}");
        assert!(e.contains("expected --steps 30 or more"), "{e}");
    }

    #[test]
    fn the_digest_mixes_position_and_value() {
        let one = |at: u64, v: f64| mix(mix(at) ^ v.to_bits());
        assert_ne!(
            one(0, 1.0).wrapping_add(one(1, 2.0)),
            one(0, 2.0).wrapping_add(one(1, 1.0)),
            "swapped elements"
        );
        assert_ne!(one(0, 0.0), one(1, 0.0));
    }
}
