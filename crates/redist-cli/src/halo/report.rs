//! What rank 0 reports on `redist halo`: one JSON object (`--json`, a
//! contract read by scripts) or a readable summary of it.

use super::args::{HaloArgs, HaloBaseline};
use crate::error::CliError;
use crate::measure::timing::median;
use dist_array::Layout;
use redist::ghost::GhostSpec;
use serde_json::{json, Value};
use std::io::Write;

/// How a yardstick of the run went.
pub(crate) enum Timed {
    /// It could not run here: why.
    Skipped(String),
    /// Seconds per update, the slowest rank's, and whether its ghosts were
    /// right (when checked).
    Times(Vec<f64>, Option<bool>),
}

/// The sweep of `--overlap` alone, and begin, sweep, finish.
pub(super) struct Overlap {
    pub sweep: Vec<f64>,
    pub both: Vec<f64>,
}

/// What the ranks measured and agreed on.
pub(super) struct HaloReport<'a> {
    pub args: &'a HaloArgs,
    pub layout: &'a Layout,
    pub spec: &'a GhostSpec,
    pub ranks: usize,
    pub elem_bytes: usize,
    pub node_direct: bool,
    /// Ghost bytes filled per update, summed over the ranks, and the most
    /// of one rank.
    pub ghost_bytes: u64,
    pub ghost_bytes_max: u64,
    /// Receives read from the owner's storage, and received as messages,
    /// in the last update, summed over the ranks.
    pub read: u64,
    pub messages: u64,
    /// Mappings of owners' storage made over the run, summed.
    pub mappings: u64,
    pub build_ms: f64,
    /// The largest plan of one rank, bytes.
    pub program_bytes: u64,
    /// Seconds per update, the slowest rank's.
    pub halo: Vec<f64>,
    /// Seconds per copy of one rank's ghost bytes.
    pub memcpy: Vec<f64>,
    pub baselines: Vec<(HaloBaseline, Timed)>,
    pub overlap: Option<Overlap>,
    pub verified: Option<bool>,
}

fn ms(v: &[f64]) -> f64 {
    median(v) * 1e3
}

impl HaloReport<'_> {
    /// Writes the JSON line or the summary to `out`; a failed check fails
    /// the run after the report.
    pub fn write(&self, out: &mut dyn Write) -> Result<(), CliError> {
        let v = self.to_json();
        if self.args.json {
            writeln!(out, "{v}")?;
        } else {
            out.write_all(summary(&v).as_bytes())?;
        }
        out.flush()?;
        let baseline_wrong =
            (self.baselines.iter()).any(|(_, t)| matches!(t, Timed::Times(_, Some(false))));
        if self.verified == Some(false) || baseline_wrong {
            return Err(CliError::VerificationFailed);
        }
        Ok(())
    }

    fn to_json(&self) -> Value {
        let halo = ms(&self.halo);
        let mut v = json!({
            "command": "halo",
            "shape": self.layout.shape(),
            "layout": self.layout.spec().to_string(),
            "ranks": self.ranks,
            "type": format!("{:?}", self.args.element).to_lowercase(),
            "elem_bytes": self.elem_bytes,
            "width": self.spec.widths(),
            "periodic": self.spec.periodic(),
            "corners": self.spec.corners().to_string(),
            "node_direct": self.node_direct,
            "agreed": !self.args.unchecked,
            "reps": self.halo.len(),
            "ghost_bytes": self.ghost_bytes,
            "ghost_bytes_max_rank": self.ghost_bytes_max,
            "receives_read": self.read,
            "receives_messages": self.messages,
            "mappings_made": self.mappings,
            "build_ms": self.build_ms,
            "program_bytes": self.program_bytes,
            "halo_ms_median": halo,
            "halo_ms_min": self.halo.iter().copied().fold(f64::INFINITY, f64::min) * 1e3,
            "memcpy_ms_median": ms(&self.memcpy),
            "verified": self.verified,
        });
        for (which, timed) in &self.baselines {
            let name = match which {
                HaloBaseline::Sendrecv => "sendrecv",
                HaloBaseline::Neighbor => "neighbor",
            };
            match timed {
                Timed::Skipped(why) => v[format!("{name}_skipped")] = json!(why),
                Timed::Times(t, verified) => {
                    v[format!("{name}_ms_median")] = json!(ms(t));
                    v[format!("halo_over_{name}")] = json!(halo / ms(t).max(1e-12));
                    v[format!("{name}_verified")] = json!(verified);
                }
            }
        }
        if let Some(o) = &self.overlap {
            let (sweep, both) = (ms(&o.sweep), ms(&o.both));
            v["sweep_ms_median"] = json!(sweep);
            v["overlapped_ms_median"] = json!(both);
            // Of the update's time, the share the sweep hid.
            v["hidden_fraction"] = json!(((halo + sweep - both) / halo.max(1e-12)).clamp(0.0, 1.0));
        }
        v
    }
}

/// The readable lines of the JSON object `v`.
fn summary(v: &Value) -> String {
    let mut s = format!(
        "ghost update {}  shape {}  width {}  periodic {}  {}  on {} ranks  type {}\n",
        v["layout"].as_str().unwrap_or(""),
        v["shape"],
        v["width"],
        v["periodic"],
        v["corners"].as_str().unwrap_or(""),
        v["ranks"],
        v["type"].as_str().unwrap_or(""),
    );
    s += &format!(
        "ghost bytes {} per update ({} on the busiest rank); plan {} bytes, built in {:.3} ms\n",
        v["ghost_bytes"],
        v["ghost_bytes_max_rank"],
        v["program_bytes"],
        v["build_ms"].as_f64().unwrap_or(0.0)
    );
    s += &format!(
        "update {:.4} ms (median of {}), memcpy of the ghost bytes {:.4} ms; receives read {}, as messages {}\n",
        v["halo_ms_median"].as_f64().unwrap_or(0.0),
        v["reps"],
        v["memcpy_ms_median"].as_f64().unwrap_or(0.0),
        v["receives_read"],
        v["receives_messages"],
    );
    for name in ["sendrecv", "neighbor"] {
        if let Some(t) = v[format!("{name}_ms_median")].as_f64() {
            s += &format!(
                "{name}: {t:.4} ms, update / {name} = {:.3}\n",
                v[format!("halo_over_{name}")].as_f64().unwrap_or(0.0)
            );
        }
        if let Some(why) = v[format!("{name}_skipped")].as_str() {
            s += &format!("{name}: skipped: {why}\n");
        }
    }
    if let Some(sweep) = v["sweep_ms_median"].as_f64() {
        s += &format!(
            "overlap: sweep {sweep:.4} ms, begin+sweep+finish {:.4} ms, {:.0}% of the update hidden\n",
            v["overlapped_ms_median"].as_f64().unwrap_or(0.0),
            100.0 * v["hidden_fraction"].as_f64().unwrap_or(0.0)
        );
    }
    match v["verified"].as_bool() {
        Some(true) => s += "verified: every ghost holds its global index's value\n",
        Some(false) => s += "verified: MISMATCH\n",
        None => {}
    }
    s
}
