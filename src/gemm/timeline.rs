//! `timeline --workload gemm`: the mainloop of sampled blocks as the instrumented build records it
//! (copy issued, slot ready, MMAs begun and ended, slot released, per K slice), beside the clean
//! build's time, with the instrumented launch's C checked against the sampled reference and, bit
//! for bit, against the clean build's.

use super::kernel::{self, Buffers, GemmKernel, Job};
use super::unsupported;
use crate::bench::time_with;
use crate::check::compare::Verdict;
use crate::harness::Engine;
use crate::timeline::{TIMING, TimelineResult, decode, overlap, trace_buffer};
use crate::workload::gemm::Problem;
use crate::workload::gemm::catalogue::GemmVariant;
use crate::workload::gemm::data::Inputs;
use crate::workload::gemm::reference;
use crate::{Error, Result};

pub struct GemmTimelineOptions {
    pub problem: Problem,
    pub seed: u64,
    /// Blocks that record, and K slices each records.
    pub blocks: u32,
    pub tiles: u32,
}

/// The variants `names` picks (names or prefixes), minus those this GPU or problem cannot run,
/// each with the reason.
pub fn traceable(e: &Engine, names: &str, p: &Problem) -> Result<(Vec<GemmVariant>, Vec<String>)> {
    let all = super::selected(p.dtype, Some(names))?;
    let (mut ok, mut why) = (Vec::new(), Vec::new());
    for v in all {
        match unsupported(e, &v.fit(p), p) {
            Some(w) => why.push(format!("{}: {w}", v.name)),
            None => ok.push(v.fit(p)),
        }
    }
    Ok((ok, why))
}

pub fn capture(
    e: &Engine,
    variants: &[GemmVariant],
    o: &GemmTimelineOptions,
) -> Result<Vec<TimelineResult>> {
    let p = &o.problem;
    let jobs: Vec<Job> = variants
        .iter()
        .flat_map(|v| {
            let clean = Job::clean(v, p);
            let traced = Job {
                trace: o.tiles,
                ..clean.clone()
            };
            [clean, traced]
        })
        .collect();
    let mut ready: Vec<GemmKernel> = Vec::new();
    for (job, built) in jobs.iter().zip(kernel::build_all(e, &jobs)) {
        ready.push(kernel::prepare(e, job.clone(), built?, false)?);
    }
    let x = Inputs::new(*p, o.seed);
    let mut d = Buffers::upload(&e.gpu, &x)?;
    let elements = reference::checked_elements(p, o.seed);
    let mut trace = trace_buffer(&e.gpu, o.blocks, o.tiles)?;
    let timing = TIMING;
    let mut out = Vec::new();
    e.progress.stage("timeline", variants.len() as u64);
    for pair in ready.chunks_exact(2) {
        let (c, t) = (&pair[0], &pair[1]);
        e.progress.step(c.name());
        let clean_c = c.run_checked(e, &mut d, 0)?;
        let params = d.params(&e.gpu, c, 0)?;
        let clean_ms = time_with(e, c.name(), 1, &timing, |_| c.launch(&e.gpu, &params))?
            .device
            .median;
        let mut traced = d.params(&e.gpu, t, 0)?;
        traced.ctl.trace = e.gpu.ptr(&trace);
        traced.ctl.trace_blocks = o.blocks;
        let instrumented_ms = time_with(e, t.name(), 1, &timing, |_| t.launch(&e.gpu, &traced))?
            .device
            .median;
        e.gpu.fill(&mut trace, 0)?;
        // one more launch, validated, whose record is kept
        let ptr = e.gpu.ptr(&trace);
        let got = t.run_checked_with(e, &mut d, 0, |q| {
            q.ctl.trace = ptr;
            q.ctl.trace_blocks = o.blocks;
        })?;
        let checks = [
            reference::against_reference(&got, &x, &elements),
            reference::against_baseline(&got, &clean_c, p),
        ];
        let bad = super::failures(&checks);
        let raw: Vec<u64> = e
            .gpu
            .download(&trace)?
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        let blocks = decode(&raw, o.blocks as usize, o.tiles as usize);
        if blocks.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{}: the instrumented build recorded nothing",
                t.name()
            )));
        }
        out.push(TimelineResult {
            variant: c.name().to_string(),
            overlap: overlap(&blocks),
            clean_ms,
            instrumented_ms,
            overhead: instrumented_ms / clean_ms - 1.0,
            verdict: Verdict {
                passed: bad.is_none(),
                checked_against: "f64 reference (sampled) and the clean build, bit for bit".into(),
                failure: bad,
                ..Verdict::default()
            },
            blocks,
        });
    }
    e.progress.done();
    Ok(out)
}
