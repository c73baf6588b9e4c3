//! One conversation with the helper script: the spec out, each peer's output file back, the names
//! of those that validated out, their timing samples back. Lines of JSON both ways; the script's
//! stderr goes to a file whose tail explains a script that stopped answering.

use super::Clock;
use super::TorchRequest;
use super::subject::Subject;
use crate::clocks::{ClockSample, ClockTrace};
use crate::results::{Peer, Status, Timing};
use crate::verdict::statistics::Summary;
use serde::Deserialize;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How often the GPU's clocks are read while the script times a peer.
const CLOCK_EVERY: Duration = Duration::from_millis(100);

#[derive(Debug, Deserialize)]
struct Answer {
    event: String,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    peers: Vec<PeerAnswer>,
}

#[derive(Debug, Deserialize)]
struct PeerAnswer {
    name: String,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    math: Option<String>,
    #[serde(default)]
    out: Option<PathBuf>,
    #[serde(default)]
    skip: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    device_ms: Vec<f64>,
    #[serde(default)]
    host_submit_us: Vec<f64>,
    #[serde(default)]
    warmup: usize,
    #[serde(default)]
    buffer_sets: usize,
    #[serde(default)]
    host_bound_samples: usize,
}

/// A folder of this conversation's files, removed when it ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: PathBuf,
    timeout: Duration,
    _scratch: Scratch,
}

fn io(what: &str, e: impl std::fmt::Display) -> String {
    format!("{what}: {e}")
}

impl Session {
    /// Writes the inputs and the script, starts Python on it and sends the spec.
    pub fn start(
        req: &TorchRequest,
        subject: &dyn Subject,
        script: &str,
        timeout: Duration,
    ) -> Result<Session, String> {
        // unique per conversation: runs in one process (tests) must not share or remove each other's
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tilepipe-peers-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir.display().to_string(), e))?;
        let scratch = Scratch(dir.clone());
        let write = |name: &str, bytes: &[u8]| -> Result<PathBuf, String> {
            let p = dir.join(name);
            std::fs::write(&p, bytes).map_err(|e| io(&p.display().to_string(), e))?;
            Ok(p)
        };
        let script = write("torch_peer.py", script.as_bytes())?;
        write("workload_peers.py", subject.script().as_bytes())?;
        let mut spec = subject.spec();
        for (key, name, bytes) in subject.files() {
            spec[key] = json!(write(name, bytes)?);
        }
        let stderr = dir.join("stderr.log");
        let err_file = std::fs::File::create(&stderr).map_err(|e| io("stderr.log", e))?;
        let mut child = Command::new(&req.python)
            .arg(&script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(err_file)
            .spawn()
            .map_err(|e| {
                format!(
                    "Python could not be started as `{}` ({e}); give its path with --python",
                    req.python.display()
                )
            })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        for (key, value) in json!({
            "device": req.device,
            "out_dir": dir,
            "buffer_sets": req.buffer_sets,
            "timing": {"warmup": req.timing.warmup, "min_repeats": req.timing.min_repeats,
                       "max_repeats": req.timing.max_repeats,
                       "target_rel_stdev": req.timing.target_rel_stdev,
                       "budget_s": req.timing.budget.as_secs_f64()},
        })
        .as_object()
        .expect("an object")
        {
            spec[key] = value.clone();
        }
        let mut s = Session {
            child,
            stdin,
            lines,
            stderr,
            timeout,
            _scratch: scratch,
        };
        s.send(&spec)?;
        Ok(s)
    }

    fn send(&mut self, v: &serde_json::Value) -> Result<(), String> {
        writeln!(self.stdin, "{v}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| self.stopped(&format!("could not write to it ({e})")))
    }

    /// The next answer: the first line that parses as one (torch may print its own lines). While
    /// it waits, `clock` is read every CLOCK_EVERY into `seen` (the script is timing a peer).
    fn answer(&mut self, clock: Clock, seen: &mut Vec<ClockSample>) -> Result<Answer, String> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(wait.min(CLOCK_EVERY)) {
                Ok(line) => {
                    if let Ok(a) = serde_json::from_str::<Answer>(&line) {
                        return Ok(a);
                    }
                }
                Err(RecvTimeoutError::Timeout) if !wait.is_zero() => seen.extend(clock()),
                Err(RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    return Err(self.stopped(&format!(
                        "no answer within {} s; stopped it",
                        self.timeout.as_secs()
                    )));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let code = self.child.wait().ok().and_then(|s| s.code());
                    return Err(self.stopped(&format!(
                        "it ended without an answer (exit code {})",
                        code.map_or("none".into(), |c| c.to_string())
                    )));
                }
            }
        }
    }

    /// Why the script failed, with the last lines it wrote on stderr.
    fn stopped(&self, what: &str) -> String {
        let tail = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let tail: Vec<&str> = tail.lines().rev().take(3).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!(
            "the PyTorch helper script: {what}{}",
            if tail.is_empty() {
                String::new()
            } else {
                format!("; stderr: {}", tail.join(" | "))
            }
        )
    }

    /// Validates each peer's output, times those that passed one at a time with the GPU's clocks
    /// read around and during each, and returns every peer's row.
    pub fn run(mut self, req: &TorchRequest, subject: &dyn Subject, clock: Clock) -> Vec<Peer> {
        let names = subject.names();
        let mut peers = match self.answer(&|| None, &mut Vec::new()) {
            Ok(a) if a.event == "skip" => {
                let why = a.reason.unwrap_or_else(|| "no reason given".into());
                return skipped(&names, &why);
            }
            Ok(a) if a.event == "outputs" => a
                .peers
                .iter()
                .map(|p| validated(p, subject))
                .collect::<Vec<_>>(),
            Ok(a) => {
                let why = self.stopped(&format!("unexpected answer '{}'", a.event));
                return errored(&names, &why);
            }
            Err(why) => return errored(&names, &why),
        };
        let passed: Vec<String> = peers
            .iter()
            .filter(|p| p.status == Status::Passed)
            .map(|p| p.name.clone())
            .collect();
        for name in passed {
            let mut seen: Vec<ClockSample> = clock().into_iter().collect();
            let answer = self
                .send(&json!({ "time": [name] }))
                .and_then(|_| self.answer(clock, &mut seen));
            seen.extend(clock());
            match answer {
                Ok(a) if a.event == "timings" => {
                    for t in a.peers {
                        if let Some(p) = peers.iter_mut().find(|p| p.name == t.name) {
                            timed(p, t, req, subject, &seen);
                        }
                    }
                }
                Ok(a) => {
                    fail_untimed(&mut peers, &format!("unexpected answer '{}'", a.event));
                    break;
                }
                Err(why) => {
                    fail_untimed(&mut peers, &why);
                    break;
                }
            }
        }
        // closing stdin ends the script's loop
        drop(self.stdin);
        let _ = self.child.wait();
        peers
    }
}

pub(super) fn skipped(names: &[&str], why: &str) -> Vec<Peer> {
    names
        .iter()
        .map(|n| Peer::skipped(n, why.to_string()))
        .collect()
}

fn errored(names: &[&str], why: &str) -> Vec<Peer> {
    names
        .iter()
        .map(|n| Peer {
            status: Status::Error,
            ..Peer::skipped(n, why.to_string())
        })
        .collect()
}

/// A peer that validated but has no timing: the script failed after validation.
fn fail_untimed(peers: &mut [Peer], why: &str) {
    for p in peers.iter_mut().filter(|p| p.timing.is_none()) {
        if p.status == Status::Passed {
            p.status = Status::Error;
            p.detail = Some(format!("timing: {why}"));
        }
    }
}

/// The peer's row once its output is judged, as tilepipe's own outputs are (`Subject::judge`).
fn validated(a: &PeerAnswer, subject: &dyn Subject) -> Peer {
    let mut p = Peer::new(&a.name, a.version.clone(), a.math.as_deref().unwrap_or("-"));
    if let Some(why) = &a.skip {
        return Peer {
            version: a.version.clone(),
            ..Peer::skipped(&a.name, format!("it did not run: {why}"))
        };
    }
    let Some(out) = &a.out else {
        p.fail("the script named no output file".into());
        return p;
    };
    match subject.read(out) {
        Ok(bytes) => {
            let (checked, failure) = subject.judge(&bytes);
            p.checked = Some(checked);
            if let Some(why) = failure {
                p.fail(format!("validation: {why}"));
            }
        }
        Err(why) => p.fail(why),
    }
    p
}

/// The peer's timing from its samples, summarised as tilepipe's own are.
fn timed(
    p: &mut Peer,
    t: PeerAnswer,
    req: &TorchRequest,
    subject: &dyn Subject,
    seen: &[ClockSample],
) {
    if let Some(e) = t.error {
        p.status = Status::Error;
        p.detail = Some(format!("timing: {e}"));
        return;
    }
    let (Some(device), Some(host)) = (Summary::of(&t.device_ms), Summary::of(&t.host_submit_us))
    else {
        p.status = Status::Error;
        p.detail = Some("timing: no finite samples came back".into());
        return;
    };
    subject.perf(req, device.median, p);
    p.timing = Some(Timing {
        device_ms: t.device_ms,
        device,
        host_submit_us: t.host_submit_us,
        host_submit: host,
        warmup: t.warmup,
        buffer_sets: t.buffer_sets,
        host_bound_samples: t.host_bound_samples,
        clocks: (!seen.is_empty()).then(|| ClockTrace::new(seen.to_vec())),
    });
}
