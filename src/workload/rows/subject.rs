//! A row problem as its peers see it: the seeded X (strided view and offset included) and the
//! compute body's vector, validated against the f64 reference as tilepipe's baseline is, timed as
//! bandwidth beside the copy ceiling and `sync`.

use super::{HostData, Layout, against_reference};
use crate::peers::{Subject, TorchRequest};
use crate::results::{Peer, Perf, gbps};
use serde_json::{Value, json};

/// The rows that stand for the row workloads' peers when the script gives no answer of its own
/// (it answers for these, in this order, plus torch's fused `F.rms_norm` spelling under RMSNorm).
pub const PEER_NAMES: [&str; 2] = ["torch eager", "torch.compile"];

pub struct RowSubject<'a> {
    pub data: &'a HostData,
}

impl Subject for RowSubject<'_> {
    fn names(&self) -> Vec<&'static str> {
        PEER_NAMES.to_vec()
    }

    fn files(&self) -> Vec<(&'static str, &'static str, &[u8])> {
        let mut f = vec![("x", "x.bin", self.data.x.as_slice())];
        if !self.data.aux.is_empty() {
            f.push(("aux", "aux.bin", self.data.aux.as_slice()));
        }
        f
    }

    fn script(&self) -> String {
        format!("{}\n\n{}", self.data.body.torch(), include_str!("torch.py"))
    }

    fn spec(&self) -> Value {
        let (v, d) = (&self.data.view, self.data);
        json!({
            "eps": d.body.eps(),
            "dtype": d.dtype.to_string(),
            "view": {"tokens": v.tokens, "hidden": v.hidden, "row_stride": v.row_stride,
                     "offset": v.offset, "alloc": v.alloc},
        })
    }

    fn output(&self) -> (usize, String) {
        let d = self.data;
        (
            d.view.elements() * d.dtype.size(),
            format!(
                "a dense [{} x {}] {} output",
                d.view.tokens, d.view.hidden, d.dtype
            ),
        )
    }

    fn judge(&self, out: &[u8]) -> (String, Option<String>) {
        let v = against_reference(out, self.data, Layout::Dense);
        let checked = format!(
            "{} on every element: rel L2 {:.2e}, max abs error {:.2e}, {} beyond tolerance, {} NaN",
            v.checked_against,
            v.rel_l2.unwrap_or(f64::NAN),
            v.max_abs_err.unwrap_or(f64::NAN),
            v.beyond_tolerance,
            v.nan
        );
        let failure = (!v.passed).then(|| v.failure.unwrap_or_else(|| "failed".into()));
        (checked, failure)
    }

    fn perf(&self, req: &TorchRequest, median_ms: f64, p: &mut Peer) {
        let d = self.data;
        let bw = gbps(d.view.bytes_moved(d.dtype), median_ms);
        p.perf = Some(Perf {
            gbps: bw,
            pct_of_ceiling: req.ceiling_gbps.map(|c| 100.0 * bw / c),
            speedup_vs_sync: req.baseline_ms.map(|b| b / median_ms),
            ..Perf::default()
        });
    }
}
