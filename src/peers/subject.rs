//! What the peers are given and how their answers are judged: a row workload's strided view
//! (validated against the f64 reference, as tilepipe's baseline is; bandwidth figures) or a GEMM
//! (against the f64 reference on the checked elements and cuBLAS's C on every element, as the
//! GEMM variants are; TFLOP/s).

use super::TorchRequest;
use crate::bench::gbps;
use crate::check::compare::against_reference;
use crate::report::Perf;
use crate::report::gemm::tflops;
use crate::report::peer::Peer;
use crate::workload::HostData;
use crate::workload::gemm::data::Inputs;
use crate::workload::gemm::reference;
use serde_json::{Value, json};

/// The rows that stand for the row workloads' peers when the script gives no answer of its own
/// (it answers for these, in this order, plus torch's fused `F.rms_norm` spelling under RMSNorm).
pub const PEER_NAMES: [&str; 2] = ["torch eager", "torch.compile"];
/// The same for a GEMM: torch's matmul (cuBLAS underneath) and Triton's, through torch.compile.
pub const GEMM_PEER_NAMES: [&str; 2] = ["torch.matmul", "torch.compile, Triton matmul"];

/// A GEMM as its peers see it: the inputs, the elements the f64 reference checks, and cuBLAS's C
/// when cuBLAS ran and passed.
pub struct GemmCase<'a> {
    pub inputs: &'a Inputs,
    pub elements: &'a [(usize, usize)],
    pub cublas_c: Option<&'a [u8]>,
}

pub enum Subject<'a> {
    Rows {
        data: &'a HostData,
        tile_rows: usize,
    },
    Gemm(&'a GemmCase<'a>),
}

impl Subject<'_> {
    pub fn names(&self) -> [&'static str; 2] {
        match self {
            Subject::Rows { .. } => PEER_NAMES,
            Subject::Gemm(_) => GEMM_PEER_NAMES,
        }
    }

    /// The input files the script loads: (spec key, file name, bytes).
    pub fn files(&self) -> Vec<(&'static str, &'static str, &[u8])> {
        match self {
            Subject::Rows { data, .. } => {
                let mut f = vec![("x", "x.bin", data.x.as_slice())];
                if !data.aux.is_empty() {
                    f.push(("aux", "aux.bin", data.aux.as_slice()));
                }
                f
            }
            Subject::Gemm(g) => vec![
                ("a", "a.bin", g.inputs.a.as_slice()),
                ("b", "b.bin", g.inputs.b.as_slice()),
            ],
        }
    }

    /// The problem as the script reads it (merged into the spec beside the files).
    pub fn spec(&self) -> Value {
        match self {
            Subject::Rows { data, .. } => {
                let v = &data.view;
                json!({
                    "dtype": data.dtype.to_string(),
                    "view": {"tokens": v.tokens, "hidden": v.hidden, "row_stride": v.row_stride,
                             "offset": v.offset, "alloc": v.alloc},
                })
            }
            Subject::Gemm(g) => {
                let p = &g.inputs.problem;
                json!({
                    "dtype": p.dtype.to_string(),
                    "gemm": {"m": p.m, "n": p.n, "k": p.k, "layout": p.layout.name()},
                })
            }
        }
    }

    /// Bytes of the dense output, and its shape in words.
    fn output(&self) -> (usize, String) {
        match self {
            Subject::Rows { data, .. } => (
                data.view.elements() * data.dtype.size(),
                format!(
                    "a dense [{} x {}] {} output",
                    data.view.tokens, data.view.hidden, data.dtype
                ),
            ),
            Subject::Gemm(g) => {
                let p = &g.inputs.problem;
                (
                    p.m * p.n * p.dtype.size(),
                    format!("a dense [{} x {}] {} C", p.m, p.n, p.dtype),
                )
            }
        }
    }

    /// Reads a peer's output file: the right size, or why not.
    pub fn read(&self, path: &std::path::Path) -> Result<Vec<u8>, String> {
        let (want, shape) = self.output();
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if bytes.len() != want {
            return Err(format!(
                "its output holds {} bytes; {shape} holds {want}",
                bytes.len()
            ));
        }
        Ok(bytes)
    }

    /// How the output was checked, and why it failed if it did.
    pub fn judge(&self, out: &[u8]) -> (String, Option<String>) {
        match self {
            Subject::Rows { data, tile_rows } => {
                let v = against_reference(out, data, *tile_rows);
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
            Subject::Gemm(g) => {
                let p = &g.inputs.problem;
                let mut verdicts = vec![reference::against_reference(out, g.inputs, g.elements)];
                if let Some(c) = g.cublas_c {
                    verdicts.push(reference::against_cublas(out, c, p));
                }
                let checked: Vec<String> = verdicts.iter().map(|v| v.summary()).collect();
                let failure = verdicts.iter().find(|v| !v.passed()).map(|v| v.summary());
                (checked.join("; "), failure)
            }
        }
    }

    /// The figures of a peer's median time: bandwidth beside the copy ceiling and `sync` (rows),
    /// TFLOP/s (GEMM).
    pub fn perf(&self, req: &TorchRequest, median_ms: f64, p: &mut Peer) {
        match self {
            Subject::Rows { data, .. } => {
                let bw = gbps(
                    data.workload.traffic(&data.view, data.dtype).bytes,
                    median_ms,
                );
                p.perf = Some(Perf {
                    gbps: bw,
                    pct_of_ceiling: req.ceiling_gbps.map(|c| 100.0 * bw / c),
                    speedup_vs_sync: req.baseline_ms.map(|b| b / median_ms),
                });
            }
            Subject::Gemm(g) => p.tflops = Some(tflops(g.inputs.problem.flops(), median_ms)),
        }
    }
}
