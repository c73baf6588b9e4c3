//! Variants turned into ready kernels on one GPU: built through the cache (in parallel), their SASS
//! examined (in parallel: a disassembler process each), loaded, their resources and occupancy
//! recorded; and the checked launch every validation uses.

use super::{Built, Engine, HANG_LIMIT, build};
use crate::dtype::DType;
use crate::evidence::resources::{Resources, SmLimits, occupancy};
use crate::evidence::sass::{self, Attestation, SassEvidence};
use crate::gpu::Kernel;
use crate::pipeline::{Ctl, Instrument, Variant};
use crate::results::Grid;
use crate::workload::Workload;
use crate::{Error, Result};
use rayon::prelude::*;

/// One build: a variant (fitted to its problems) for a problem's build-relevant part, with what
/// an instrumented build adds.
pub struct Job<W: Workload> {
    pub variant: Variant<W::Shape>,
    pub problem: W::Problem,
    pub instrument: Instrument,
}

impl<W: Workload> Clone for Job<W> {
    fn clone(&self) -> Self {
        Job {
            variant: self.variant.clone(),
            problem: self.problem.clone(),
            instrument: self.instrument,
        }
    }
}

impl<W: Workload> Job<W> {
    pub fn new(variant: &Variant<W::Shape>, problem: &W::Problem, instrument: Instrument) -> Self {
        Job {
            variant: variant.clone(),
            problem: problem.clone(),
            instrument,
        }
    }
}

/// A build loaded on the GPU, with its evidence.
pub struct Ready<W: Workload> {
    pub job: Job<W>,
    pub built: Built,
    kernel: Kernel,
    pub resources: Resources,
    pub sass: SassEvidence,
    /// The workload's claimed math, attested (clean builds of workloads that claim some).
    pub math: Option<Attestation>,
}

/// What an instrumented build's evidence says: see the clean build's.
fn unexamined() -> SassEvidence {
    SassEvidence {
        tool: None,
        census: None,
        attestation: Attestation::Unverified {
            reason: "instrumented build: see the clean build's evidence".into(),
        },
        excerpt: None,
        listing: String::new(),
    }
}

/// Builds every job in parallel through the cache, examines the clean builds' SASS (unless
/// `examine` is false: a process started to run controls alone), loads each and records its
/// resources. Each job's outcome in its place.
pub fn prepare_all<W: Workload>(
    e: &Engine,
    w: &W,
    jobs: Vec<Job<W>>,
    examine: bool,
) -> Vec<Result<Ready<W>>> {
    let builds = e.build_each(
        &jobs,
        |j| {
            format!(
                "{} {}",
                j.variant.name,
                crate::workload::Problem::dtype(&j.problem)
            )
        },
        |j| {
            build::build(
                w,
                &j.variant,
                &j.problem,
                j.instrument,
                (e.info().arch, &e.tc),
                e.nvrtc_version(),
                &e.cache,
            )
        },
    );
    let entry = w.kernel().entry;
    type Evidence = Option<Result<(SassEvidence, Option<Attestation>)>>;
    let evidence: Vec<Evidence> = jobs
        .par_iter()
        .zip(&builds)
        .map(|(j, b)| {
            let b = b.as_ref().ok()?;
            if !(examine && j.instrument.is_clean()) {
                return Some(Ok((unexamined(), None)));
            }
            Some(
                sass::examine(&b.cubin, &e.tc, entry, j.variant.claim()).map(|ev| {
                    let math = w.math(&j.variant, &j.problem, ev.census.as_ref(), &b.log);
                    (ev, math)
                }),
            )
        })
        .collect();
    e.progress.stage("load", jobs.len() as u64);
    let out = jobs
        .into_iter()
        .zip(builds)
        .zip(evidence)
        .map(|((job, built), ev)| {
            e.progress.step(&job.variant.name);
            let (sass, math) = ev.expect("evidence exists for every build")?;
            load(e, w, job, built?, sass, math)
        })
        .collect();
    e.progress.done();
    out
}

fn load<W: Workload>(
    e: &Engine,
    w: &W,
    job: Job<W>,
    built: Built,
    sass: SassEvidence,
    math: Option<Attestation>,
) -> Result<Ready<W>> {
    let kernel = e.gpu.load(&built.cubin, w.kernel().entry)?;
    let b = w.build(&job.variant, &job.problem, job.instrument);
    let f = kernel.resources;
    if let Err(why) = w.check_loaded(&job.variant, &job.problem, f.registers) {
        return Err(Error::Unsupported {
            variant: job.variant.name.clone(),
            reason: why,
        });
    }
    let driver_blocks_per_sm = e.gpu.prepare(&kernel, b.threads, b.dynamic_smem)?;
    let resident_clusters = match b.cluster > 1 {
        true => Some(
            e.gpu
                .resident_clusters(&kernel, b.threads, b.dynamic_smem, b.cluster)?,
        ),
        false => None,
    };
    let resources = Resources {
        threads: b.threads,
        function: f,
        dynamic_smem: b.dynamic_smem,
        slot_footprint: b.dynamic_smem,
        occupancy: occupancy(
            &SmLimits::of(e.info()),
            b.threads,
            f.registers,
            f.static_smem,
            b.dynamic_smem,
        ),
        driver_blocks_per_sm,
        cluster: b.cluster,
        resident_clusters,
    };
    Ok(Ready {
        job,
        built,
        kernel,
        resources,
        sass,
        math,
    })
}

impl<W: Workload> Ready<W> {
    pub fn name(&self) -> &str {
        &self.job.variant.name
    }

    pub fn variant(&self) -> &Variant<W::Shape> {
        &self.job.variant
    }

    /// Blocks of a launch on `p` with `grid`.
    pub fn grid(&self, w: &W, e: &Engine, p: &W::Problem, grid: Grid) -> u32 {
        let resident = self.resources.resident_blocks(e.info().sm_count);
        w.grid(&self.job.variant, p, grid, resident)
    }

    pub fn launch(&self, e: &Engine, blocks: u32, params: &W::Params) -> Result<()> {
        e.gpu.launch(
            &self.kernel,
            blocks,
            self.resources.threads,
            self.resources.dynamic_smem,
            params,
        )
    }

    /// One validation launch of `blocks` blocks on `p` (what `d` holds) with stress seed `seed`:
    /// see `run_checked_with`.
    pub fn run_checked(
        &self,
        e: &Engine,
        w: &W,
        (d, p): (&mut W::Buffers, &W::Problem),
        blocks: u32,
        seed: u32,
    ) -> Result<Vec<u8>> {
        self.run_checked_with(e, w, (d, p), blocks, e.ctl(seed))
    }

    /// One validation launch: the output poisoned (NaN), the wait status cleared, the L2 scrubbed
    /// and every SM's shared memory poisoned first; waits (bounded), surfaces in-kernel timeouts,
    /// faults and (a monitor build) broken protocol rules, returns the output.
    pub fn run_checked_with(
        &self,
        e: &Engine,
        w: &W,
        (d, p): (&mut W::Buffers, &W::Problem),
        blocks: u32,
        ctl: Ctl,
    ) -> Result<Vec<u8>> {
        e.gpu.fill(w.output(d), DType::POISON_BYTE)?;
        e.clear_status()?;
        e.scrub_and_poison(ctl.seed)?;
        let params = w.params(&e.gpu, d, &self.job.variant, ctl)?;
        let ran = self
            .launch(e, blocks, &params)
            .and_then(|()| e.gpu.finish(self.name(), HANG_LIMIT));
        if let Err(err) = ran {
            return Err(match self.job.instrument.monitor {
                true => e.with_trail(err),
                false => err,
            });
        }
        let waited = e.check_status(self.name());
        if self.job.instrument.monitor {
            let walk = w.walk(&self.job.variant, p, blocks);
            e.check_monitor(self.name(), (walk.blocks, walk.steps), waited)?;
        } else {
            waited?;
        }
        e.gpu.download(w.output(d))
    }
}
