//! The one engine every workload runs through: the GPU (device, toolchain, cubin cache, clocks,
//! progress, what each validation launch needs first: the L2 scrubbed, every SM's shared memory
//! poisoned, the wait status cleared), and the steps of the main job for any `Workload`: build,
//! prepare (evidence, resources), launch and check, validate, time, go on past a fault in a new
//! process, trace.

pub mod build;
pub mod controls;
pub mod isolate;
pub mod prepare;
pub mod sanitize;
pub mod time;
pub mod trace;
pub mod validate;

pub use build::Built;
pub use gpu::HANG_LIMIT;
pub use prepare::{Job, Ready, prepare_all};
pub use time::TimingOptions;

use crate::clocks;
use crate::gpu::{self, DevBuf, DeviceInfo, Gpu, Kernel, cache::Cache};
use crate::monitor;
use crate::pipeline::Ctl;
use crate::progress::Progress;
use crate::results::{SuiteReport, TestResult};
use crate::toolchain::Toolchain;
use crate::{Error, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
/// Bound on every in-kernel mbarrier wait: far above any legitimate wait (microseconds), short
/// enough that a control ending in a timeout costs little. Under compute-sanitizer waits are
/// slower by orders of magnitude, so `probe` takes a longer bound.
pub const WAIT_TIMEOUT_NS: u64 = 100_000_000;

pub struct Engine {
    pub gpu: Gpu,
    /// The in-kernel waits' status words (`report_timeout` in kernels/common/hooks.cuh), then a
    /// monitor build's log.
    status: Mutex<DevBuf>,
    /// The monitor's trail (`monitor::RawTrail`), in host memory: it outlives a fault.
    trail: gpu::Mapped,
    /// Bound on each in-kernel wait (ns); `probe` raises it under compute-sanitizer.
    wait_timeout_ns: u64,
    /// Twice the L2: writing it evicts the inputs, so validation copies come from device memory
    /// (slow enough for a missing wait to show).
    l2_scrub: Mutex<DevBuf>,
    /// Fills every SM's shared memory with NaN bytes before each validation launch.
    smem_poison: Kernel,
    /// Keeps the stream busy while a batch of timed launches is submitted (kernels/hold.cu).
    hold: Kernel,
    /// NVML on this GPU, or why clocks cannot be recorded.
    pub clocks: std::result::Result<clocks::Monitor, String>,
    pub tc: Toolchain,
    pub cache: Cache,
    pub progress: Progress,
    nvrtc_version: String,
    cache_hits: AtomicU32,
    compiled: AtomicU32,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct CacheStats {
    pub hits: u32,
    pub compiled: u32,
}

/// Said wherever results are shown while TILEPIPE_KERNELS replaces the embedded sources.
pub fn sources_note(dir: &std::path::Path) -> String {
    format!(
        "kernel sources from {}={}, not the ones built into tilepipe",
        build::SOURCE_DIR_ENV,
        dir.display()
    )
}

impl Engine {
    /// The GPU's clocks now (NVML), or None where they cannot be read.
    pub fn clock(&self) -> Option<clocks::ClockSample> {
        self.clocks.as_ref().ok().and_then(|m| m.sample())
    }

    pub fn open(ordinal: usize, cache: Cache, progress: Progress) -> Result<Engine> {
        let gpu = Gpu::open(ordinal)?;
        if gpu.info.arch.sm() < 70 {
            return Err(Error::ArchTooOld {
                major: gpu.info.arch.major as i32,
                minor: gpu.info.arch.minor as i32,
            });
        }
        let nvrtc_version = gpu::nvrtc::version().map(|(a, b)| format!("{a}.{b}"))?;
        let l2_scrub =
            Mutex::new(gpu.alloc(2 * gpu.info.l2_bytes as usize, "the L2 scrub buffer")?);
        let tc = Toolchain::discover();
        let (mut hits, mut compiled) = (0, 0);
        let mut load = |k: crate::workload::KernelSource| -> Result<Kernel> {
            let b = build::build_utility(k, gpu.info.arch, &tc, &nvrtc_version, &cache)?;
            b.cache_warnings.iter().for_each(|w| progress.note(w));
            if b.cache_hit {
                hits += 1
            } else {
                compiled += 1
            }
            gpu.load(&b.cubin, k.entry)
        };
        let smem_poison = load(build::POISON)?;
        let hold = load(build::HOLD)?;
        gpu.prepare(&smem_poison, 256, gpu.info.smem_per_block_optin)?;
        let status = Mutex::new(gpu.alloc(monitor::STATUS_BYTES, "the status words")?);
        let trail = gpu.alloc_mapped(monitor::TRAIL_BYTES)?;
        if let Some(dir) = build::source_dir() {
            progress.note(&sources_note(&dir));
        }
        let clocks = clocks::Monitor::open(gpu.info.pci);
        Ok(Engine {
            gpu,
            status,
            trail,
            wait_timeout_ns: WAIT_TIMEOUT_NS,
            l2_scrub,
            smem_poison,
            hold,
            clocks,
            tc,
            cache,
            progress,
            nvrtc_version,
            cache_hits: AtomicU32::new(hits),
            compiled: AtomicU32::new(compiled),
        })
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.gpu.info
    }

    /// One of tilepipe's own kernels (`build::PLAIN_COPY`, say), built through the cache and
    /// loaded.
    pub fn utility(&self, k: crate::workload::KernelSource) -> Result<gpu::Kernel> {
        let b = build::build_utility(
            k,
            self.info().arch,
            &self.tc,
            &self.nvrtc_version,
            &self.cache,
        )?;
        self.count_build(&b);
        self.gpu.load(&b.cubin, k.entry)
    }

    pub fn nvrtc_version(&self) -> &str {
        &self.nvrtc_version
    }

    pub fn cache_stats(&self) -> CacheStats {
        CacheStats {
            hits: self.cache_hits.load(Ordering::Relaxed),
            compiled: self.compiled.load(Ordering::Relaxed),
        }
    }

    /// False once the context has taken a sticky fault (an illegal address, say): every later
    /// call would fail too.
    pub fn healthy(&self) -> bool {
        self.gpu.alloc(16, "a health probe").is_ok()
            && self.gpu.finish("a health probe", HANG_LIMIT).is_ok()
    }

    /// Builds every job in parallel (NVRTC is thread-safe) with `build`, counting cache hits and
    /// compiles, one progress step each, named by `label`.
    pub fn build_each<J: Sync>(
        &self,
        jobs: &[J],
        label: impl Fn(&J) -> String + Sync,
        build: impl Fn(&J) -> Result<Built> + Sync,
    ) -> Vec<Result<Built>> {
        self.progress.stage("build", jobs.len() as u64);
        let out = jobs
            .par_iter()
            .map(|j| {
                let b = build(j);
                if let Ok(b) = &b {
                    self.count_build(b);
                }
                self.progress.step(&label(j));
                b
            })
            .collect();
        self.progress.done();
        out
    }

    /// Counts a build as a cache hit or a compile and passes on what the cache said about it.
    fn count_build(&self, b: &Built) {
        b.cache_warnings.iter().for_each(|w| self.progress.note(w));
        let counter = if b.cache_hit {
            &self.cache_hits
        } else {
            &self.compiled
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Keeps the stream busy for `ns` nanoseconds: launches submitted meanwhile queue up behind
    /// it and then run back to back, as they would from a host that is never the bottleneck.
    pub fn hold(&self, ns: u64) -> Result<()> {
        self.gpu.launch(&self.hold, 1, 32, 0, &ns)
    }

    /// The pipeline's control block for a launch: the status word, the wait bound, the stress
    /// seed; no timeline.
    pub fn ctl(&self, seed: u32) -> Ctl {
        Ctl {
            status: self.gpu.ptr(&self.status.lock().expect("status lock")),
            timeout_ns: self.wait_timeout_ns,
            seed,
            ..Ctl::default()
        }
    }

    /// Sets the bound on each in-kernel wait (raised under compute-sanitizer, where waits are
    /// slower by orders of magnitude).
    pub fn wait_timeout_ms(&mut self, ms: u64) {
        self.wait_timeout_ns = ms * 1_000_000;
    }

    /// Clears the wait status, the monitor's log and its trail before a checked launch, and
    /// points the log at the trail.
    pub fn clear_status(&self) -> Result<()> {
        let mut status = self.status.lock().expect("status lock");
        self.gpu.fill(&mut status, 0)?;
        self.trail.zero();
        let at = self.trail.device_ptr().to_le_bytes();
        self.gpu
            .write_at(&mut status, monitor::TRAIL_POINTER_AT, &at)
    }

    /// A monitored launch's error, with the rules its trail recorded where the launch faulted
    /// the context (the log in device memory is gone with it).
    pub fn with_trail(&self, err: Error) -> Error {
        let seen = monitor::decode_trail(&self.trail.read());
        if self.healthy() || seen.is_empty() {
            return err;
        }
        let trail: Vec<String> = seen.iter().map(|v| v.to_string()).collect();
        Error::FaultAfter {
            cause: Box::new(err),
            trail: trail.join("; "),
        }
    }

    /// Fails with the block, stage and phase of the first in-kernel wait that timed out, as the
    /// kernel wrote them to its status word (`report_timeout` in kernels/common/hooks.cuh).
    pub fn check_status(&self, variant: &str) -> Result<()> {
        let raw = self.status()?;
        let w: Vec<u32> = raw[..monitor::STATUS_WORDS * 4]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        if w[0] != 0 {
            return Err(Error::WaitTimeout {
                variant: variant.to_string(),
                block: w[1],
                stage: w[2],
                parity: w[3],
                role: if w[4] == 1 {
                    "producer".into()
                } else {
                    "consumer".into()
                },
                tile: w[5],
            });
        }
        Ok(())
    }

    fn status(&self) -> Result<Vec<u8>> {
        self.gpu.download(&self.status.lock().expect("status lock"))
    }

    /// After a monitored launch whose in-kernel waits ended as `waited` says: every violation its
    /// log recorded as an error (before a wait's timeout, which is often their consequence: the
    /// message has both), else the timeout, else the log proved to cover `blocks` blocks that own
    /// work and `steps` steps of each consumer thread.
    pub fn check_monitor(
        &self,
        variant: &str,
        (blocks, steps): (u32, u64),
        waited: Result<()>,
    ) -> Result<monitor::Log> {
        let log = monitor::decode(&self.status()?);
        if let Ok(log) = &log
            && !log.is_clean()
        {
            let then = match &waited {
                Err(timeout) => format!("\n  then: {timeout}"),
                Ok(()) => String::new(),
            };
            return Err(Error::Protocol {
                variant: variant.to_string(),
                log: format!("{log}{then}"),
            });
        }
        waited?;
        let log = log?;
        log.covers(blocks, steps * u64::from(log.build.consumers))?;
        Ok(log)
    }

    /// Before a validation launch: the L2 overwritten (inputs come from device memory) and every
    /// SM's shared memory filled with NaN bytes (a slot read before its copy landed shows).
    pub fn scrub_and_poison(&self, seed: u32) -> Result<()> {
        self.gpu.fill(
            &mut self.l2_scrub.lock().expect("scrub lock"),
            (seed & 0xff) as u8,
        )?;
        self.gpu.poison_shared_memory(
            &self.smem_poison,
            2 * self.info().sm_count,
            self.info().smem_per_block_optin,
        )
    }
}

/// Seed of case `i`: every case draws fresh inputs.
pub fn case_seed(seed: u64, i: usize) -> u64 {
    seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Keeps one test's outcome in `report` and reports it through `progress`.
pub fn record(
    progress: &Progress,
    report: &mut SuiteReport,
    name: String,
    passed: bool,
    detail: String,
) {
    progress.test(&name, passed, &detail);
    report.tests.push(TestResult {
        name,
        passed,
        detail,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::{Event, Recording};
    use std::sync::Arc;

    #[test]
    fn record_keeps_and_reports() {
        let rec = Arc::new(Recording::default());
        let p = Progress::new(rec.clone());
        let mut r = SuiteReport::default();
        record(&p, &mut r, "a".into(), true, String::new());
        record(&p, &mut r, "b".into(), false, "why".into());
        assert_eq!((r.passed(), r.failed()), (1, 1));
        assert_eq!(rec.events().len(), 2);
        assert!(
            matches!(&rec.events()[1], Event::Test { name, passed: false, detail } if name == "b" && detail == "why")
        );
    }
}
