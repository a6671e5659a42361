//! What rank 0 reports on a run: the [`Measured`] results with the
//! arguments, layouts and cost of building, as one JSON object
//! (`redist run --json`, a contract read by scripts and tests) or as the
//! readable [`summary`] of that object.

use super::args::RunArgs;
use super::setup::BuildCost;
use super::timing::{median, Yardstick};
use crate::error::CliError;
use crate::pdgemr2d::Timing;
use dist_array::{Element, Layout};
use redist::Redistribution;
use serde_json::{json, Value};
use std::io::Write;

/// What the ranks measured and agreed on.
pub(super) struct Measured {
    /// Seconds per execution (per batch with `--batch`), the slowest rank's.
    pub exec: Vec<f64>,
    /// Seconds of the untimed first executions (the warm-up, and those
    /// trying routes), the slowest rank's; empty with `--batch`.
    pub first: Vec<f64>,
    /// With `--batch K`: seconds per K separate executions of the same
    /// arrays.
    pub separate: Option<Vec<f64>>,
    /// Seconds per copy of the local source data (empty when skipped).
    pub memcpy: Vec<f64>,
    /// Whether every element matched (`None` without `--verify`).
    pub verified: Option<bool>,
    /// The bare `MPI_Alltoallv` baseline.
    pub alltoallv: Yardstick,
    /// The access pattern copied by a plain loop, when asked for
    /// (`--baseline pattern`).
    pub pattern: Option<super::pattern::PatternMeasured>,
    /// The `pdgemr2d` baseline, when asked for.
    pub pdgemr2d: Option<Timing>,
    /// The PBLAS baselines asked for (`pdtran`, `pdgeadd`).
    pub pblas: Vec<crate::pblas::PblasTiming>,
    /// Whether the redistribution copied messages straight between the
    /// storage of ranks of one node (written or read).
    pub node_direct: bool,
    /// Messages of the last execution written into the receiver's target,
    /// and read from the sender's source, summed over the ranks (`None`
    /// without node-direct copies).
    pub node_copies: Option<(u64, u64)>,
    /// Whether any rank's copies used streaming stores.
    pub streamed: bool,
    /// Messages sent, and received, described by derived datatypes, summed
    /// over the ranks, with the routes kept (`None` where the exchange does
    /// not route messages one by one).
    pub typed_messages: Option<(u64, u64)>,
}

impl Measured {
    /// The run's verdict: a failed check of the result (by `--verify`,
    /// also of the pattern baseline's, or against `pdgemr2d`) fails the run.
    pub(super) fn verdict(&self) -> Result<(), CliError> {
        let pblas_differ = self.pblas.iter().any(|p| !p.timing.agrees);
        let pattern_wrong = (self.pattern.as_ref()).is_some_and(|p| p.verified == Some(false));
        if self.verified == Some(false)
            || pattern_wrong
            || self.pdgemr2d.as_ref().is_some_and(|p| !p.agrees)
            || pblas_differ
        {
            return Err(CliError::VerificationFailed);
        }
        Ok(())
    }
}

/// What rank 0 reports on a run.
pub(super) struct Report<'a, T: Element> {
    /// The command line.
    pub args: &'a RunArgs,
    /// The source layout.
    pub from: &'a Layout,
    /// The redistribution run.
    pub r: &'a Redistribution<T>,
    /// The job's ranks.
    pub ranks: usize,
    /// What building `r` cost.
    pub cost: &'a BuildCost,
    /// What the run measured.
    pub measured: &'a Measured,
}

impl<T: Element> Report<'_, T> {
    /// Writes the JSON line (`--json`) or the readable summary to `out`.
    pub(super) fn write(&self, out: &mut dyn Write) -> Result<(), CliError> {
        let v = self.to_json();
        if self.args.json {
            writeln!(out, "{v}")?;
        } else {
            out.write_all(summary(&v).as_bytes())?;
        }
        out.flush()?;
        Ok(())
    }

    /// The JSON object of `--json`: the keys of every run, then the
    /// window's and the baselines' where they apply.
    fn to_json(&self) -> Value {
        let mut v = self.keys_of_every_run();
        let r = self.r;
        let w = r.window();
        if !r.rank_plan().is_whole() {
            v["window"] = json!(w.shape());
            v["from_window"] = json!(w.source_origin());
            v["to_window"] = json!(w.target_origin());
        }
        let exec = &self.measured.exec;
        let ms = |v: &[f64]| median(v) * 1e3;
        let each = |v: &[f64]| v.iter().map(|t| t * 1e3).collect::<Vec<f64>>();
        v["exec_ms"] = json!(each(exec));
        v["first_ms"] = json!(each(&self.measured.first));
        v["wisdom"] = json!(self.args.wisdom.as_ref().map(|p| p.display().to_string()));
        v["measured_choice"] = json!(r.measured().map(|m| m.to_string()));
        v["tries_routes"] = json!(r.tries_routes());
        v["warnings"] = json!(r.warnings());
        if let Yardstick::Skipped(reason) = &self.measured.alltoallv {
            v["baseline_skipped"] = json!(reason);
        }
        if let Yardstick::Timed(times) = &self.measured.alltoallv {
            v["alltoallv_ms_median"] = json!(ms(times));
            v["exec_over_alltoallv"] = json!(median(exec) / median(times).max(1e-12));
        }
        if let Some(p) = &self.measured.pattern {
            match &p.times {
                Yardstick::Skipped(reason) => v["pattern_skipped"] = json!(reason),
                Yardstick::Timed(times) => {
                    v["pattern_ms_median"] = json!(ms(times));
                    v["exec_over_pattern"] = json!(median(exec) / median(times).max(1e-12));
                    v["pattern_runs"] = json!(p.runs);
                    v["pattern_verified"] = json!(p.verified);
                }
                Yardstick::NotAsked => {}
            }
        }
        if let Some(p) = &self.measured.pdgemr2d {
            v["pdgemr2d_ms_median"] = json!(ms(&p.times));
            v["pdgemr2d_over_exec"] = json!(median(&p.times) / median(exec).max(1e-12));
            v["pdgemr2d_agrees"] = json!(p.agrees);
        }
        for p in &self.measured.pblas {
            let name = p.routine.name();
            v[format!("{name}_ms_median")] = json!(ms(&p.timing.times));
            v[format!("{name}_over_exec")] =
                json!(median(&p.timing.times) / median(exec).max(1e-12));
            v[format!("{name}_agrees")] = json!(p.timing.agrees);
            v[format!("{name}_route")] = json!(p.route);
        }
        v
    }

    /// The keys every report has.
    fn keys_of_every_run(&self) -> Value {
        let Report {
            args,
            from,
            r,
            ranks,
            cost,
            measured,
        } = *self;
        let elem = std::mem::size_of::<T>();
        let elements = r.window().len();
        let ms = |v: &[f64]| median(v) * 1e3;
        let (exec, memcpy) = (&measured.exec, &measured.memcpy);
        json!({
            "shape": from.shape(),
            "to_shape": r.target_layout().shape(),
            "from": from.spec().to_string(),
            "to": r.target_layout().spec().to_string(),
            "ranks": ranks,
            "type": format!("{:?}", args.element).to_lowercase(),
            "strategy": r.strategy().to_string(),
            "remap": args.remap.to_string(),
            "permute": args.permutation(),
            "alpha": args.updates().then(|| args.alpha.unwrap_or(1.0)),
            "beta": args.updates().then(|| args.beta.unwrap_or(0.0)),
            "conjugate": args.conjugate,
            "batch": args.batch,
            "batch_types": (!args.batch_types.is_empty()).then(|| {
                let names: Vec<String> =
                    args.batch_types.iter().map(|t| format!("{t:?}").to_lowercase()).collect();
                names.join(",")
            }),
            "separate_ms_median": measured.separate.as_ref().map(|s| ms(s)),
            "batch_over_separate": measured.separate.as_ref().map(|s| median(exec) / median(s)),
            "reps": args.reps,
            "elements": elements,
            "bytes_total": elements * elem,
            "bytes_moved": cost.moved * elem,
            "nodes": cost.between_nodes.nodes,
            "bytes_between_nodes": cost.between_nodes.elements * elem,
            "messages_between_nodes": cost.between_nodes.messages,
            "plan_ms": cost.plan_ms,
            "build_ms": cost.build_ms,
            "program_bytes": cost.program_bytes,
            "plan_bytes": cost.plan_bytes,
            "exec_ms_median": ms(exec),
            "exec_ms_min": exec.iter().copied().fold(f64::INFINITY, f64::min) * 1e3,
            "memcpy_ms_median": (!memcpy.is_empty()).then(|| ms(memcpy)),
            "verified": measured.verified,
            "target_rank_map": r.target_layout().rank_map(),
            "node_direct": measured.node_direct,
            "node_written": measured.node_copies.map(|c| c.0),
            "node_read": measured.node_copies.map(|c| c.1),
            "streaming": args.streaming.to_string(),
            "streamed": measured.streamed,
            "typed_sends": measured.typed_messages.map(|t| t.0),
            "typed_receives": measured.typed_messages.map(|t| t.1),
            "storage": match from.storage() {
                dist_array::Order::RowMajor => "row-major",
                dist_array::Order::ColumnMajor => "column-major",
            },
        })
    }
}

/// The readable report of a run, from its JSON object `v`.
fn summary(v: &Value) -> String {
    let mut s = heading(v);
    s += &times(v);
    match v["verified"].as_bool() {
        Some(true) => s += "verified: every element matches its global index\n",
        Some(false) => s += "verified: MISMATCH\n",
        None => {}
    }
    s
}

/// The lines on what moved: the layouts, the window, how.
fn heading(v: &Value) -> String {
    let mut s = format!(
        "redistribute {} -> {}  shape {}  on {} ranks  type {}\n",
        v["from"].as_str().unwrap_or(""),
        v["to"].as_str().unwrap_or(""),
        v["shape"],
        v["ranks"],
        v["type"].as_str().unwrap_or("")
    );
    if let Some(w) = v["window"].as_array() {
        s += &format!(
            "window {} from {} of the source to {} of the target {}\n",
            w.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("x"),
            v["from_window"],
            v["to_window"],
            v["to_shape"]
        );
    }
    s += &format!(
        "strategy {}  remap {}  streaming {} ({})  bytes moved {} of {}\n",
        v["strategy"].as_str().unwrap_or(""),
        v["remap"].as_str().unwrap_or(""),
        v["streaming"].as_str().unwrap_or(""),
        if v["streamed"] == true {
            "streamed"
        } else {
            "ordinary stores"
        },
        v["bytes_moved"],
        v["bytes_total"]
    );
    if v["node_written"].as_u64().is_some_and(|n| n > 0)
        || v["node_read"].as_u64().is_some_and(|n| n > 0)
    {
        s += &format!(
            "node-direct copies: {} messages written into their targets, {} read from their sources\n",
            v["node_written"], v["node_read"]
        );
    }
    if v["nodes"].as_u64().is_some_and(|n| n > 1) {
        s += &format!(
            "on {} nodes: {} bytes in {} messages between nodes\n",
            v["nodes"], v["bytes_between_nodes"], v["messages_between_nodes"]
        );
    }
    s
}

/// The lines of times: the execution's, then each baseline's measured.
fn times(v: &Value) -> String {
    let mut s = format!(
        "exec      median {:10.3} ms   min {:10.3} ms   ({} reps)\n",
        v["exec_ms_median"].as_f64().unwrap_or(0.0),
        v["exec_ms_min"].as_f64().unwrap_or(0.0),
        v["reps"]
    );
    if let Some(m) = v["memcpy_ms_median"].as_f64() {
        s += &format!("memcpy    median {m:10.3} ms   (one copy of the local source data)\n");
    }
    if let Some(a) = v["alltoallv_ms_median"].as_f64() {
        s += &format!(
            "alltoallv median {a:10.3} ms   (bare MPI_Alltoallv, same bytes)   exec/alltoallv {:.2}\n",
            v["exec_over_alltoallv"].as_f64().unwrap_or(0.0)
        );
    }
    if let Some(p) = v["pattern_ms_median"].as_f64() {
        s += &format!(
            "pattern   median {p:10.3} ms   (the same runs, one plain loop per rank)   exec/pattern {:.2}{}\n",
            v["exec_over_pattern"].as_f64().unwrap_or(0.0),
            if v["pattern_verified"].as_bool() == Some(false) {
                "   PATTERN WRONG"
            } else {
                ""
            }
        );
    }
    if let Some(p) = v["pdgemr2d_ms_median"].as_f64() {
        s += &format!(
            "pdgemr2d  median {p:10.3} ms   (ScaLAPACK, same layouts)   pdgemr2d/exec {:.2}{}\n",
            v["pdgemr2d_over_exec"].as_f64().unwrap_or(0.0),
            if v["pdgemr2d_agrees"].as_bool() == Some(true) {
                ""
            } else {
                "   RESULTS DIFFER"
            }
        );
    }
    s
}
