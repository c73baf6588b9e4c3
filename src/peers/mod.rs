//! Peers beside the row workloads: the same problem through PyTorch eager and torch.compile, run
//! by the user's Python with a helper script shipped inside this binary (`torch_peer.py`). They
//! get the same bytes (the seeded input allocation, strided view and offset included), the same
//! number of rotated buffer sets, the same timing rule; their outputs are validated against the
//! same f64 reference before any of them is timed. A missing Python or torch skips them with the
//! reason; nothing here needs a GPU of its own, so the protocol is tested on any machine.

mod protocol;

use crate::bench::TimingOptions;
use crate::report::peer::Peer;
use crate::workload::HostData;
use protocol::Session;
use std::path::PathBuf;
use std::time::Duration;

pub use protocol::PEER_NAMES;

const SCRIPT: &str = include_str!("torch_peer.py");

/// Longest wait for one answer of the script: torch.compile's first call compiles (tens of
/// seconds), and a timing may run to its budget several times over on a slow launch.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// What the peers are asked to do: where Python is, which GPU, the problem's constants and the
/// timing rule of the run they join.
#[derive(Debug, Clone)]
pub struct TorchRequest {
    pub python: PathBuf,
    pub device: usize,
    pub workload: &'static str,
    pub eps: Option<f64>,
    pub tile_rows: usize,
    pub buffer_sets: usize,
    pub timing: TimingOptions,
    /// For each peer's % of the copy ceiling and speedup against `sync`.
    pub ceiling_gbps: Option<f64>,
    pub baseline_ms: Option<f64>,
}

/// PyTorch eager and torch.compile on `data`: validated, then timed; each peer that could not run
/// carries its reason.
pub fn torch(req: &TorchRequest, data: &HostData) -> Vec<Peer> {
    match Session::start(req, data, SCRIPT, ANSWER_TIMEOUT) {
        Ok(s) => s.run(req, data),
        Err(why) => protocol::skipped(&why),
    }
}

#[cfg(test)]
mod tests;
