//! What the peers are given and how their answers are judged, as the workload describes its
//! problem: the input files and the spec the script reads, the output it must write, how that
//! output is validated (as tilepipe's own outputs are) and the figures of its time.

use super::TorchRequest;
use crate::results::Peer;
use serde_json::Value;

pub trait Subject {
    /// The peers' names, as the script answers for them (rows that stand for them when the
    /// script gives no answer of its own).
    fn names(&self) -> Vec<&'static str>;
    /// The input files the script loads: (spec key, file name, bytes).
    fn files(&self) -> Vec<(&'static str, &'static str, &[u8])>;
    /// The problem as the script reads it (merged into the spec beside the files).
    fn spec(&self) -> Value;
    /// The workload's `workload_peers.py`: its `peers(torch, spec, dtype, device)` gives the
    /// inputs and the peers the script validates and times.
    fn script(&self) -> String;
    /// Bytes of the output, and its shape in words.
    fn output(&self) -> (usize, String);
    /// How the output was checked, and why it failed if it did.
    fn judge(&self, out: &[u8]) -> (String, Option<String>);
    /// The figures of a peer's median time.
    fn perf(&self, req: &TorchRequest, median_ms: f64, p: &mut Peer);

    /// Reads a peer's output file: the right size, or why not.
    fn read(&self, path: &std::path::Path) -> Result<Vec<u8>, String> {
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
}
