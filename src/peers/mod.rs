//! Peers beside tilepipe's kernels: the same problem through PyTorch, run by the user's Python
//! with a helper script shipped inside this binary (`torch_peer.py`). Beside a row workload:
//! torch eager and torch.compile; beside a GEMM: torch.matmul and torch.compile's Triton matmul.
//! They get the same bytes (the seeded inputs, a row workload's strided view and offset
//! included), the same number of rotated buffer sets, the same timing rule; their outputs are
//! validated as tilepipe's are before any of them is timed. A missing Python or torch skips them
//! with the reason; nothing here needs a GPU of its own, so the protocol is tested on any machine.

mod protocol;
mod subject;

use crate::clocks::ClockSample;
use crate::results::Peer;
use protocol::Session;
use std::path::PathBuf;
use std::time::Duration;
pub use subject::Subject;

const SCRIPT: &str = include_str!("torch_peer.py");

/// Longest wait for one answer of the script: torch.compile's first call compiles (tens of
/// seconds), and a timing may run to its budget several times over on a slow launch.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// What the peers are asked to do: where Python is, which GPU, and the timing rule of the run
/// they join (the copy ceiling and the baseline's time, for their figures, where the run has them).
#[derive(Debug, Clone)]
pub struct TorchRequest {
    pub python: PathBuf,
    pub device: usize,
    pub buffer_sets: usize,
    pub timing: crate::results::timing::TimingOptions,
    /// For each peer's % of the copy ceiling and speedup against `sync`.
    pub ceiling_gbps: Option<f64>,
    pub baseline_ms: Option<f64>,
}

/// Reads the GPU's clocks (NVML), or None where they cannot be read. The peers' timings carry
/// what it read around and during them, as tilepipe's own do.
pub type Clock<'a> = &'a dyn Fn() -> Option<ClockSample>;

/// The torch peers on `subject`: validated, then timed; each peer that could not run carries its
/// reason.
pub fn torch(req: &TorchRequest, subject: &dyn Subject, clock: Clock) -> Vec<Peer> {
    match Session::start(req, subject, SCRIPT, ANSWER_TIMEOUT) {
        Ok(s) => s.run(req, subject, clock),
        Err(why) => protocol::skipped(&subject.names(), &why),
    }
}

#[cfg(test)]
mod tests;
