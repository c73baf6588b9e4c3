//! A library or framework run beside tilepipe's kernels on the same problem, timed the same way:
//! cuBLAS beside the GEMM, PyTorch eager and torch.compile beside the row workloads.

use super::{Perf, Status, Timing};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Peer {
    pub name: String,
    pub version: Option<String>,
    pub status: Status,
    pub detail: Option<String>,
    /// How it was asked to compute (precision, math mode, compile mode).
    pub math: String,
    pub timing: Option<Timing>,
    /// Its figures, as a variant's: bandwidth, TFLOP/s, its share of the ceiling.
    #[serde(default)]
    pub perf: Option<Perf>,
    /// How its output was validated, and how close it came.
    #[serde(default)]
    pub checked: Option<String>,
}

impl Peer {
    /// A peer that has not run yet (status passed until something fails it).
    pub fn new(name: &str, version: Option<String>, math: &str) -> Peer {
        Peer {
            name: name.into(),
            version,
            status: Status::Passed,
            detail: None,
            math: math.into(),
            timing: None,
            perf: None,
            checked: None,
        }
    }

    /// A peer that could not run, with the reason.
    pub fn skipped(name: &str, reason: String) -> Peer {
        Peer {
            status: Status::Skipped,
            detail: Some(reason),
            ..Peer::new(name, None, "-")
        }
    }

    /// The first failure stands.
    pub fn fail(&mut self, detail: String) {
        if self.status == Status::Passed {
            self.status = Status::Failed;
            self.detail = Some(detail);
        }
    }
}
