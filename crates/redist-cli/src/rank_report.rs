//! `redist plan --rank R`: what one rank builds when a redistribution is
//! set up — its messages, schedule and copy programs — built without MPI
//! and without data, so a rank of a 10^5-rank job can be looked at on a
//! laptop.
//!
//! With `--json` the one line holds `rank`, `ranks`, `build_ms` (building
//! the rank's part as `Redistribution::new` does for the default strategy:
//! its plan and copy programs), `plan_bytes` (what the rank keeps for it,
//! data aside), `program_bytes`, `elements_kept`, `sends`, `receives`,
//! `elements_sent`, `elements_received`, `steps` (the schedule's length,
//! built apart in `schedule_ms`: only `scheduled` needs it), `schedule` (how
//! it was found) and `max_degree_bound` (the product graph's maximum
//! degree, which no schedule beats by more than one); with `--remap
//! optimal` also `remap_method`, `remap_kept` (elements the relabelling
//! keeps on their rank, over all ranks), `remap_bound` (no relabelling keeps
//! more) and `remap_exact`; with
//! `--list` also `send_list` and `recv_list`, each a list of `[rank,
//! elements, step]`.

use crate::error::CliError;
use crate::plan_args::PlanArgs;
use dist_array::Layout;
use redist::redist_plan::RankSchedule;
use redist::{Link, PartOptions, RankPart, Window};
use serde_json::{json, Value};
use std::io::Write;
use std::time::Instant;

/// Bytes per element the report assumes (`f64`): the copy programs' units
/// of work and streaming follow the element size.
const ELEMENT_BYTES: usize = 8;

/// Runs `redist plan --rank rank` on the layouts `from` and `to`.
pub fn run(
    args: &PlanArgs,
    rank: usize,
    from: &Layout,
    to: &Layout,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let ranks = from.ranks().max(to.ranks());
    if rank >= ranks {
        return Err(CliError::NoSuchRank { rank, ranks });
    }
    let options = PartOptions {
        remap: args.remap,
        ..PartOptions::default()
    };
    // The machine the engine would see here, so that the part is what
    // `Redistribution::new` builds on this rank of this machine.
    let machine = redist::this_machine();
    let window = Window::whole(from.shape());
    let start = Instant::now();
    let mut part = RankPart::new(from, to, &window, options, rank, ELEMENT_BYTES, &machine)?;
    let build_ms = start.elapsed().as_secs_f64() * 1e3;
    // The schedule apart: a redistribution builds it only for `scheduled`.
    let start = Instant::now();
    let schedule = part.schedule()?;
    let schedule_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut v = to_json(args, &part, &schedule, ranks, build_ms);
    v["schedule_ms"] = json!(schedule_ms);
    if args.json {
        writeln!(out, "{v}")?;
    } else {
        out.write_all(summary(&v).as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// The JSON object of `--rank`.
fn to_json(
    args: &PlanArgs,
    part: &RankPart,
    schedule: &RankSchedule,
    ranks: usize,
    build_ms: f64,
) -> Value {
    let plan = part.plan();
    let mut v = json!({
        "shape": plan.source().shape(),
        "from": plan.source().spec().to_string(),
        "to": plan.target().spec().to_string(),
        "remap": args.remap.to_string(),
        "rank": plan.rank(),
        "ranks": ranks,
        "build_ms": build_ms,
        "plan_bytes": redist::rank_part_bytes(part),
        "program_bytes": part.program_bytes(),
        "elements_kept": plan.kept(),
        "sends": plan.sends().len(),
        "receives": plan.recvs().len(),
        "elements_sent": plan.elements_sent(),
        "elements_received": plan.elements_received(),
        "steps": schedule.steps,
        "schedule": format!("{:?}", schedule.construction).to_lowercase(),
        "max_degree_bound": schedule.degree,
    });
    if let Some(r) = part.relabelling() {
        v["remap_method"] = json!(format!("{:?}", r.method).to_lowercase());
        v["remap_kept"] = json!(r.kept);
        v["remap_bound"] = json!(r.bound);
        v["remap_exact"] = json!(r.is_exact());
    }
    if args.list {
        let list = |links: &[Link]| -> Vec<[usize; 3]> {
            links.iter().map(|l| [l.peer, l.len, l.step]).collect()
        };
        v["send_list"] = json!(list(plan.sends()));
        v["recv_list"] = json!(list(plan.recvs()));
    }
    v
}

/// The readable report: one line per figure, the lists when asked for.
fn summary(v: &Value) -> String {
    let mut out = format!(
        "rank {} of {}: {} -> {}  shape {}  remap {}\n",
        v["rank"],
        v["ranks"],
        v["from"].as_str().unwrap_or(""),
        v["to"].as_str().unwrap_or(""),
        v["shape"],
        v["remap"].as_str().unwrap_or("")
    );
    for (key, label) in [
        ("build_ms", "build ms"),
        ("plan_bytes", "plan bytes"),
        ("program_bytes", "program bytes"),
        ("elements_kept", "elements kept"),
        ("sends", "sends"),
        ("receives", "receives"),
        ("elements_sent", "elements sent"),
        ("elements_received", "elements received"),
        ("steps", "steps"),
        ("schedule", "schedule"),
        ("max_degree_bound", "max degree <="),
        ("remap_method", "remapped by"),
        ("remap_kept", "remap keeps"),
        ("remap_bound", "no remap keeps >"),
        ("remap_exact", "remap exact"),
    ] {
        if v[key].is_null() {
            continue;
        }
        out += &format!("{label:<18} {}\n", v[key]);
    }
    for (key, label) in [("send_list", "sends to"), ("recv_list", "receives from")] {
        if let Some(list) = v[key].as_array() {
            out += &format!("{label} [rank, elements, step]:\n");
            for entry in list {
                out += &format!("  {entry}\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::layout_for;
    use redist::{Plan, Remap};

    /// Every rank's report lists the whole plan's messages of that rank,
    /// with the figures that sum them.
    #[test]
    fn rank_reports_list_the_whole_plans_messages() {
        let args = |rank| PlanArgs {
            shape: "24x18".parse().unwrap(),
            from: "cyclic(2),block@2x3".parse().unwrap(),
            to: "block,cyclic(3)@3x2".parse().unwrap(),
            remap: Remap::None,
            rank: Some(rank),
            list: true,
            json: true,
        };
        let a = args(0);
        let (from, to) = (
            layout_for(&a.shape, &a.from).unwrap(),
            layout_for(&a.shape, &a.to).unwrap(),
        );
        let whole = Plan::new(&from, &to, Remap::None).unwrap();
        for rank in 0..6 {
            let mut out = Vec::new();
            run(&args(rank), rank, &from, &to, &mut out).unwrap();
            let v: Value = serde_json::from_slice(&out).unwrap();
            let sends: Vec<(usize, usize)> = (whole.messages().iter())
                .filter(|m| m.from == rank && m.to != rank)
                .map(|m| (m.to, m.len))
                .collect();
            let listed: Vec<(usize, usize)> = (v["send_list"].as_array().unwrap().iter())
                .map(|e| {
                    (
                        usize::try_from(e[0].as_u64().unwrap()).unwrap(),
                        usize::try_from(e[1].as_u64().unwrap()).unwrap(),
                    )
                })
                .collect();
            assert_eq!(listed, sends, "rank {rank}");
            assert_eq!(v["sends"], sends.len());
            assert_eq!(v["elements_sent"], sends.iter().map(|s| s.1).sum::<usize>());
            assert_eq!(v["rank"], rank);
            assert_eq!(v["ranks"], 6);
            assert!(v["plan_bytes"].as_u64().unwrap() > 0);
        }
        // A rank of neither layout is refused by name.
        let mut out = Vec::new();
        let e = run(&args(6), 6, &from, &to, &mut out).unwrap_err();
        assert!(e.to_string().contains("rank 6 is in neither layout"), "{e}");
    }
}
