//! One GEMM variant built for one problem (through the cache), examined (movement and math in the
//! SASS), loaded with its resources and occupancy; the problem's buffers; the checked launch.

use crate::Result;
use crate::dtype::DType;
use crate::evidence::resources::{Resources, SmLimits, occupancy};
use crate::evidence::sass::ptxas::wgmma_serialised;
use crate::evidence::sass::{self, Attestation, SassEvidence};
use crate::gpu::{DevBuf, Gpu, Kernel, encode_tensor_map};
use crate::harness::{Engine, HANG_LIMIT, WAIT_TIMEOUT_NS, check_status};
use crate::kernels::{self, Built};
use crate::pipeline::{Ctl, Mechanism};
use crate::workload::gemm::catalogue::GemmVariant;
use crate::workload::gemm::data::{GemmParams, Inputs, tensor_maps};
use crate::workload::gemm::evidence::math_attestation;
use crate::workload::gemm::{KERNEL, Problem};

/// What one build is for: a variant on a problem's precision and layout, clean or stressed.
#[derive(Debug, Clone)]
pub struct Job {
    pub variant: GemmVariant,
    pub problem: Problem,
    /// STRESS bits (random sleeps in producer and consumer); 0: the clean build that is timed.
    pub stress: u32,
    /// Steps per sampled block that record a timeline (0: a build without the recording).
    pub trace: u32,
}

impl Job {
    /// The clean build of `variant` for `problem`'s precision and layout.
    pub fn clean(variant: &GemmVariant, problem: &Problem) -> Job {
        Job {
            variant: variant.clone(),
            problem: *problem,
            stress: 0,
            trace: 0,
        }
    }
}

pub struct GemmKernel {
    pub job: Job,
    pub built: Built,
    kernel: Kernel,
    pub resources: Resources,
    pub sass: SassEvidence,
    pub math: Attestation,
}

/// Builds every job in parallel through the cache.
pub fn build_all(e: &Engine, jobs: &[Job]) -> Vec<Result<Built>> {
    e.build_each(
        jobs,
        |j| format!("{} {}", j.variant.name, j.problem.dtype),
        |j| {
            kernels::build_with(
                KERNEL,
                &format!("{} [{}]", KERNEL.entry, j.variant.name),
                j.variant.defines(&j.problem, j.stress, j.trace),
                (e.info().arch, j.variant.tile.wgmma),
                &e.tc,
                e.nvrtc_version(),
                &e.cache,
            )
        },
    )
}

/// Examines, loads and sizes one build. Stressed builds take their clean build's evidence, as do
/// builds loaded without `examine` (a process started to run controls alone).
pub fn prepare(e: &Engine, job: Job, built: Built, examine: bool) -> Result<GemmKernel> {
    let (sass, math) = if job.stress == 0 && job.trace == 0 && examine {
        let ev = sass::examine(&built.cubin, &e.tc, KERNEL.entry, job.variant.claim())?;
        let m = match wgmma_serialised(&built.log, None) {
            Some(warning) => Attestation::Mismatch {
                claimed: "wgmma issued back to back".into(),
                emitted: warning,
            },
            None => math_attestation(
                ev.census.as_ref(),
                job.problem.dtype,
                job.variant.tile.wgmma,
            ),
        };
        (ev, m)
    } else {
        let why = Attestation::Unverified {
            reason: "instrumented or control-only build: see the clean build's evidence".into(),
        };
        let ev = SassEvidence {
            tool: None,
            census: None,
            attestation: why.clone(),
            excerpt: None,
            listing: String::new(),
        };
        (ev, why)
    };
    let kernel = e.gpu.load(&built.cubin, KERNEL.entry)?;
    let threads = job.variant.threads();
    if let Some(need) = job.variant.registers_handed_over() {
        // setmaxnreg.inc waits, unbounded, for registers the block was never given
        let have = kernel.resources.registers * threads;
        if have < need {
            return Err(crate::Error::Unsupported {
                variant: job.variant.name.clone(),
                reason: format!(
                    "launched with {} registers a thread, {have} for the block; the hand-over needs {need}",
                    kernel.resources.registers
                ),
            });
        }
    }
    let dynamic_smem = job.variant.dynamic_smem(&job.problem);
    let driver_blocks_per_sm = e.gpu.prepare(&kernel, threads, dynamic_smem)?;
    let f = kernel.resources;
    let resources = Resources {
        threads,
        function: f,
        dynamic_smem,
        slot_footprint: dynamic_smem,
        occupancy: occupancy(
            &SmLimits::of(e.info()),
            threads,
            f.registers,
            f.static_smem,
            dynamic_smem,
        ),
        driver_blocks_per_sm,
    };
    Ok(GemmKernel {
        job,
        built,
        kernel,
        resources,
        sass,
        math,
    })
}

/// A problem's matrices on the device, a zero source for the copies past an edge, and the status
/// word of the in-kernel waits.
pub struct Buffers {
    pub problem: Problem,
    pub a: DevBuf,
    pub b: DevBuf,
    pub c: DevBuf,
    zeros: DevBuf,
    status: DevBuf,
}

impl Buffers {
    pub fn upload(gpu: &Gpu, x: &Inputs) -> Result<Buffers> {
        let p = x.problem;
        let mut zeros = gpu.alloc(256, "the zero source")?;
        gpu.fill(&mut zeros, 0)?;
        let mut status = gpu.alloc(32, "the status word")?;
        gpu.fill(&mut status, 0)?;
        Ok(Buffers {
            problem: p,
            a: gpu.upload(&x.a, "A")?,
            b: gpu.upload(&x.b, "B")?,
            c: gpu.alloc(p.m * p.n * p.dtype.size(), "C")?,
            zeros,
            status,
        })
    }

    /// The launch's parameters; TMA variants get their tensor maps encoded here.
    pub fn params(&self, gpu: &Gpu, k: &GemmKernel, seed: u32) -> Result<GemmParams> {
        let ctl = Ctl {
            status: gpu.ptr(&self.status),
            timeout_ns: WAIT_TIMEOUT_NS,
            seed,
            ..Ctl::default()
        };
        let ptrs = (
            gpu.ptr(&self.a),
            gpu.ptr(&self.b),
            gpu.ptr(&self.c),
            gpu.ptr(&self.zeros),
        );
        let v = &k.job.variant;
        let mut params = GemmParams::new(&self.problem, &v.tile, ptrs, ctl);
        if v.pipe.mechanism == Mechanism::Tma {
            let (a, b) = tensor_maps(&self.problem, &v.tile, (ptrs.0, ptrs.1), v.pipe.control);
            params.map_a = encode_tensor_map(&a)?;
            params.map_b = encode_tensor_map(&b)?;
        }
        Ok(params)
    }
}

impl GemmKernel {
    pub fn name(&self) -> &str {
        &self.job.variant.name
    }

    /// A block per tile, or for a persistent variant as many as are resident at once (never more
    /// than the tiles).
    pub fn grid(&self, gpu: &Gpu, params: &GemmParams) -> u32 {
        let tiles = params.grid();
        match self.job.variant.persistent {
            true => tiles.min(gpu.info.sm_count * self.resources.driver_blocks_per_sm.max(1)),
            false => tiles,
        }
    }

    pub fn launch(&self, gpu: &Gpu, params: &GemmParams) -> Result<()> {
        gpu.launch(
            &self.kernel,
            self.grid(gpu, params),
            self.resources.threads,
            self.resources.dynamic_smem,
            params,
        )
    }

    /// One validation launch: C poisoned (NaN), the L2 scrubbed and shared memory poisoned first;
    /// waits (bounded), surfaces in-kernel timeouts and faults, returns C.
    pub fn run_checked(&self, e: &Engine, d: &mut Buffers, seed: u32) -> Result<Vec<u8>> {
        self.run_checked_with(e, d, seed, |_| {})
    }

    /// `run_checked` with the parameters edited first (a timeline buffer added).
    pub fn run_checked_with(
        &self,
        e: &Engine,
        d: &mut Buffers,
        seed: u32,
        edit: impl FnOnce(&mut GemmParams),
    ) -> Result<Vec<u8>> {
        e.gpu.fill(&mut d.c, DType::POISON_BYTE)?;
        e.gpu.fill(&mut d.status, 0)?;
        e.scrub_and_poison(seed)?;
        let mut params = d.params(&e.gpu, self, seed)?;
        edit(&mut params);
        self.launch(&e.gpu, &params)?;
        e.gpu.finish(self.name(), HANG_LIMIT)?;
        check_status(&e.gpu, &d.status, self.name())?;
        e.gpu.download(&d.c)
    }
}
