//! Instrumented builds and their timelines. Instrumented timings are kept apart from clean ones:
//! each variant is timed clean and instrumented, the overhead is reported, and the instrumented
//! launch whose record is kept is validated against the f64 reference and, bit for bit, against
//! the clean build's output on the same inputs.

use super::time::{TimingOptions, time_kernel};
use super::validate::failures;
use super::{Engine, Job, prepare_all};
use crate::pipeline::{Instrument, Variant};
use crate::results::Grid;
use crate::results::timeline::{SLOTS, TimelineResult, WORDS, decode, overlap, softmax_overlap};
use crate::verdict::Verdict;
use crate::workload::{Refs, Workload};
use crate::{Error, Result};

/// How both the clean and the instrumented build are timed for a timeline: a short, fixed count.
pub const TIMING: TimingOptions = TimingOptions {
    warmup: 2,
    min_repeats: 10,
    max_repeats: 10,
    target_rel_stdev: 0.01,
    budget: std::time::Duration::from_secs(3),
};

/// Blocks that record, and steps each records.
#[derive(Debug, Clone, Copy)]
pub struct TraceOptions {
    pub blocks: u32,
    pub tiles: u32,
}

/// The timelines of `variants` on `p` (inputs seeded with `seed`).
pub fn capture<W: Workload>(
    e: &Engine,
    w: &W,
    variants: &[Variant<W::Shape>],
    p: &W::Problem,
    seed: u64,
    o: TraceOptions,
) -> Result<Vec<TimelineResult>> {
    let jobs: Vec<Job<W>> = variants
        .iter()
        .flat_map(|v| {
            [
                Job::new(v, p, Instrument::CLEAN),
                Job::new(v, p, Instrument::traced(o.tiles)),
            ]
        })
        .collect();
    let ready = prepare_all(e, w, jobs, false)
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
    let x = w.inputs(p, seed);
    let mut d = w.upload(&e.gpu, &x)?;
    let words = o.blocks as usize * o.tiles as usize * SLOTS * WORDS;
    let mut trace = e.gpu.alloc(words * 8, "the timeline buffer")?;
    let mut out = Vec::new();
    e.progress.stage("timeline", variants.len() as u64);
    for pair in ready.chunks_exact(2) {
        let (c, t) = (&pair[0], &pair[1]);
        e.progress.step(c.name());
        let blocks = c.grid(w, e, p, Grid::Persistent);
        let clean_out = c.run_checked(e, w, (&mut d, p), blocks, 0)?;
        let clean = w.params(&e.gpu, &d, c.variant(), e.ctl(0))?;
        let clean_ms = time_kernel(e, c, blocks, &[clean], &TIMING)?.device.median;
        let mut ctl = e.ctl(0);
        ctl.trace = e.gpu.ptr(&trace);
        ctl.trace_blocks = o.blocks;
        let traced = w.params(&e.gpu, &d, t.variant(), ctl)?;
        let instrumented_ms = time_kernel(e, t, blocks, &[traced], &TIMING)?.device.median;
        e.gpu.fill(&mut trace, 0)?;
        // one more launch, validated, whose record is kept
        let got = t.run_checked_with(e, w, (&mut d, p), blocks, ctl)?;
        let clean_verdicts = w.judge(&clean_out, &x, Refs::default());
        let refs = Refs {
            twin: Some((&clean_out, &clean_verdicts)),
            vendor: None,
        };
        let bad = failures(&w.judge(&got, &x, refs));
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
            softmax: softmax_overlap(&blocks),
            clean_ms,
            instrumented_ms,
            overhead: instrumented_ms / clean_ms - 1.0,
            verdict: Verdict {
                passed: bad.is_none(),
                checked_against: "the f64 reference and the clean build, bit for bit".into(),
                failure: bad,
                ..Verdict::default()
            },
            blocks,
        });
    }
    e.progress.done();
    Ok(out)
}
