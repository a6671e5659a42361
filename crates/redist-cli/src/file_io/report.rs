//! What rank 0 reports on `redist io write` and `read`: one JSON object
//! (`--json`, keys as `redist run` names its figures) or a readable
//! summary of it.

use super::args::Common;
use crate::collective::agree_on_output;
use crate::error::CliError;
use crate::measure::median;
use dist_io::{ElementType, Format};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::Order;
use serde_json::{json, Map, Value};
use std::io::Write;

/// What was timed, in seconds per repetition (the slowest rank's).
pub(super) struct Timed {
    /// ndcyclic's saves or loads.
    pub ours: Vec<f64>,
    /// The MPI-IO baseline's, when asked for.
    pub mpiio: Option<Vec<f64>>,
    /// The parallel HDF5 baseline's, when asked for.
    pub hdf5: Option<Vec<f64>>,
    /// Whether every element read held its value (`None` unchecked).
    pub verified: Option<bool>,
}

/// A run of `redist io write` or `read`.
pub(super) struct Report<'a> {
    /// `write` or `read`.
    pub operation: &'static str,
    pub common: &'a Common,
    /// The shape moved (a window's when reading one).
    pub shape: Vec<usize>,
    pub element: ElementType,
    pub order: Order,
    pub format: Format,
    pub ranks: usize,
    pub timed: Timed,
}

impl Report<'_> {
    /// The report as one JSON object.
    fn json(&self) -> Value {
        let op = self.operation;
        let bytes = self.shape.iter().product::<usize>() * self.element.size();
        let ms = |v: &[f64]| median(v) * 1e3;
        let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min) * 1e3;
        let ours = ms(&self.timed.ours);
        let mut o = Map::new();
        o.insert("command".into(), json!(format!("io {op}")));
        o.insert("file".into(), json!(self.common.file.display().to_string()));
        o.insert("format".into(), json!(self.format.name()));
        if let Format::Hdf5 { dataset } = &self.format {
            o.insert("dataset".into(), json!(dataset));
        }
        o.insert("shape".into(), json!(self.shape));
        o.insert("layout".into(), json!(self.common.layout.to_string()));
        o.insert("type".into(), json!(self.element.name()));
        let order = if self.order == Order::RowMajor {
            "C"
        } else {
            "F"
        };
        o.insert("order".into(), json!(order));
        o.insert("ranks".into(), json!(self.ranks));
        o.insert("aggregators".into(), json!(self.common.aggregators));
        o.insert("staging_bytes".into(), json!(self.common.staging));
        o.insert("reps".into(), json!(self.timed.ours.len()));
        o.insert("bytes".into(), json!(bytes));
        o.insert(format!("{op}_ms_median"), json!(ours));
        o.insert(format!("{op}_ms_min"), json!(min(&self.timed.ours)));
        o.insert("gb_per_s".into(), json!(bytes as f64 / (ours * 1e6)));
        o.insert("verified".into(), json!(self.timed.verified));
        if let Some(m) = &self.timed.mpiio {
            o.insert(format!("mpiio_{op}_ms_median"), json!(ms(m)));
            o.insert(format!("{op}_over_mpiio"), json!(ours / ms(m)));
        }
        if let Some(h) = &self.timed.hdf5 {
            o.insert(format!("hdf5_{op}_ms_median"), json!(ms(h)));
            o.insert(format!("{op}_over_hdf5"), json!(ours / ms(h)));
        }
        Value::Object(o)
    }

    /// Writes the report on rank 0 (`--json`: one line; else a summary)
    /// and agrees on whether that worked. Collective.
    pub(super) fn print(
        &self,
        world: &SimpleCommunicator,
        out: &mut dyn Write,
    ) -> Result<(), CliError> {
        let written = if world.rank() == 0 {
            let v = self.json();
            if self.common.json {
                writeln!(out, "{v}").map_err(CliError::from)
            } else {
                self.summary(&v, out)
            }
        } else {
            Ok(())
        };
        agree_on_output(world, written)
    }

    fn summary(&self, v: &Value, out: &mut dyn Write) -> Result<(), CliError> {
        let op = self.operation;
        let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
        writeln!(
            out,
            "{op} {} ({} {}, {} bytes) on {} ranks as {}: {:.3} ms (median of {}), {:.2} GB/s",
            self.common.file.display(),
            self.format.name(),
            self.element,
            v["bytes"],
            self.ranks,
            self.common.layout,
            f(&format!("{op}_ms_median")),
            self.timed.ours.len(),
            f("gb_per_s"),
        )?;
        if self.timed.mpiio.is_some() {
            writeln!(
                out,
                "  MPI-IO (darray view, {op}_all): {:.3} ms; ndcyclic takes {:.2}x its time",
                f(&format!("mpiio_{op}_ms_median")),
                f(&format!("{op}_over_mpiio")),
            )?;
        }
        if self.timed.hdf5.is_some() {
            writeln!(
                out,
                "  parallel HDF5 (hyperslab unions, collective H5D{op}): {:.3} ms; ndcyclic \
                 takes {:.2}x its time",
                f(&format!("hdf5_{op}_ms_median")),
                f(&format!("{op}_over_hdf5")),
            )?;
        }
        if let Some(ok) = self.timed.verified {
            writeln!(
                out,
                "  verified: {}",
                if ok { "every element" } else { "MISMATCHES" }
            )?;
        }
        Ok(())
    }
}
