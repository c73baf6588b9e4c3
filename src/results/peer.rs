//! A library or framework run beside tilepipe's kernels on the same problem, timed the same way:
//! cuBLAS beside the GEMM, PyTorch eager and torch.compile beside the row workloads.

use super::{Bound, Perf, RunResults, Status, Timing};
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

/// Where a compute-bound run has no vendor library (attention), its shares of the ceiling are
/// taken against the fastest peer that passed validation: every timed variant's and peer's, with
/// the clocks of each ratio judged as a vendor's are. Nothing changes where a vendor ran or no
/// peer passed.
pub fn share_of_fastest_peer<P>(out: &mut RunResults<P>) {
    if out.vendor.is_some() || out.workload.bound != Bound::Compute {
        return;
    }
    let Some((name, best)) = out
        .peers
        .iter()
        .filter(|p| p.status == Status::Passed)
        .filter_map(|p| Some((p.name.clone(), p.timing.clone()?)))
        .min_by(|a, b| a.1.device.median.total_cmp(&b.1.device.median))
    else {
        return;
    };
    let rows = out.variants.iter_mut().map(|v| (&v.timing, &mut v.perf));
    let peers = out.peers.iter_mut().map(|p| (&p.timing, &mut p.perf));
    for (t, perf) in rows.chain(peers) {
        if let (Some(t), Some(perf)) = (t, perf.as_mut()) {
            perf.pct_of_ceiling = Some(100.0 * best.device.median / t.device.median);
            perf.ceiling_clocks = match (&best.clocks, &t.clocks) {
                (Some(a), Some(b)) => crate::clocks::unmatched(&name, a, b),
                _ => None,
            };
        }
    }
    out.ceiling_peer = Some(name);
}
