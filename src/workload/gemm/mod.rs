//! GEMM: C[M x N] = A[M x K] * B with f32 accumulation, C in the inputs' precision. A is row-major;
//! B is [K x N] row-major (the CUDA samples' layout) or [N x K] row-major (weights, C = A * B^T).
//! A block computes one BM x BN tile of C; its pipeline steps are the BK-wide slices of K, each slot
//! holding A's and B's slices (kernels/gemm.cu). Compute bound at large sizes: its reference for
//! speed and numbers is cuBLAS on the same problem.

mod cases;
pub mod catalogue;
mod cublas;
pub mod data;
pub mod evidence;
pub mod hopper;
mod problem;
pub mod reference;
mod subject;
pub mod tile;

pub use data::{Buffers, GemmParams, Inputs};
pub use problem::{Layout, Problem};
pub use tile::{GemmShape, GemmVariant, Tile};

use crate::Result;
use crate::dtype::DType;
use crate::evidence::sass::ptxas::wgmma_serialised;
use crate::evidence::sass::{Attestation, Census};
use crate::gpu::{DevBuf, DeviceInfo, Gpu};
use crate::peers::Subject;
use crate::pipeline::{Ctl, Instrument, Mechanism, Pipe};
use crate::verdict::Verdict;
use crate::workload::{
    Bound, Build, Case, Grid, KernelSource, ProblemFlags, Refs, Traffic, VendorOrWhy, Walk,
    Workload,
};

pub const KERNEL: KernelSource = KernelSource {
    file: "gemm.cu",
    text: include_str!("../../../kernels/gemm.cu"),
    entry: "tilepipe_gemm",
    headers: &[
        (
            "gemm/simt.cuh",
            include_str!("../../../kernels/gemm/simt.cuh"),
        ),
        (
            "gemm/mma.cuh",
            include_str!("../../../kernels/gemm/mma.cuh"),
        ),
        (
            "gemm/wgmma.cuh",
            include_str!("../../../kernels/gemm/wgmma.cuh"),
        ),
    ],
};

/// The GEMM workload.
pub struct Gemm;

/// The flags a GEMM problem takes.
const FLAGS: [&str; 5] = ["--dtype", "--m", "--n", "--k", "--layout"];

impl Workload for Gemm {
    type Problem = Problem;
    type Shape = GemmShape;
    type Inputs = Inputs;
    type Buffers = Buffers;
    type Params = GemmParams;

    fn name(&self) -> &'static str {
        "gemm"
    }

    fn formula(&self) -> &'static str {
        "C = A B, f32 accumulation, A [M x K] row-major, B [K x N] or [N x K]"
    }

    fn kernel(&self) -> KernelSource {
        KERNEL
    }

    fn bound(&self) -> Bound {
        Bound::Compute
    }

    fn problem(&self, f: &ProblemFlags) -> Result<Problem> {
        f.refuse_others(self.name(), &FLAGS)?;
        Problem::new(
            f.m.unwrap_or(4096),
            f.n.unwrap_or(4096),
            f.k.unwrap_or(4096),
            f.layout.unwrap_or(Layout::Kn),
            f.dtype.unwrap_or(DType::Bf16),
        )
    }

    fn problem_args(&self, p: &Problem) -> Vec<String> {
        [
            ("--dtype", p.dtype.name().to_string()),
            ("--m", p.m.to_string()),
            ("--n", p.n.to_string()),
            ("--k", p.k.to_string()),
            ("--layout", p.layout.name().to_string()),
        ]
        .into_iter()
        .flat_map(|(f, v)| [f.to_string(), v])
        .collect()
    }

    fn catalogue(&self, dtype: DType) -> Vec<GemmVariant> {
        catalogue::catalogue(dtype)
    }

    fn controls(&self, dtype: DType) -> Vec<GemmVariant> {
        catalogue::controls(dtype)
    }

    fn fit(&self, v: &GemmVariant, problems: &[&Problem]) -> GemmVariant {
        catalogue::fit(v, problems)
    }

    fn can_implement(
        &self,
        v: &GemmVariant,
        p: &Problem,
        gpu: &DeviceInfo,
    ) -> std::result::Result<(), String> {
        let sm = gpu.arch.sm();
        if v.shape.tile.wgmma && sm != 90 {
            return Err(format!(
                "wgmma and setmaxnreg exist on sm_90 (Hopper) alone; this GPU is sm_{sm}"
            ));
        }
        let slot = v.shape.tile.slot_bytes(p.dtype, p.layout);
        let optin = gpu.smem_per_block_optin;
        let smem = catalogue::dynamic_smem(v, p);
        if smem > optin {
            return Err(format!(
                "{} stages x {slot} B slots + alignment = {smem} B of shared memory exceeds the {optin} B a block may use",
                v.stages
            ));
        }
        if let Some(why) = v.unfit(sm, optin, slot) {
            return Err(why);
        }
        catalogue::can_implement(v, p)
    }

    fn twin<'a>(&self, v: &GemmVariant, correct: &'a [GemmVariant]) -> Option<&'a GemmVariant> {
        hopper::twin(v, correct)
    }

    fn tile_label(&self, v: &GemmVariant, _p: &Problem) -> String {
        v.shape.tile.label()
    }

    fn build(&self, v: &GemmVariant, p: &Problem, instrument: Instrument) -> Build {
        Build {
            defines: catalogue::defines(v, p, instrument),
            arch_specific: v.shape.tile.wgmma,
            cluster: v.shape.cluster,
            threads: catalogue::threads(v),
            dynamic_smem: catalogue::dynamic_smem(v, p),
        }
    }

    /// setmaxnreg.inc waits, unbounded, for registers the block was never given.
    fn check_loaded(
        &self,
        v: &GemmVariant,
        _p: &Problem,
        registers: u32,
    ) -> std::result::Result<(), String> {
        let Some(need) = catalogue::registers_handed_over(v) else {
            return Ok(());
        };
        crate::pipeline::handover::check_loaded(registers, catalogue::threads(v), need)
    }

    fn math(
        &self,
        v: &GemmVariant,
        p: &Problem,
        census: Option<&Census>,
        log: &str,
    ) -> Option<Attestation> {
        Some(match wgmma_serialised(log, None) {
            Some(warning) => Attestation::Mismatch {
                claimed: "wgmma issued back to back".into(),
                emitted: warning,
            },
            None => evidence::math_attestation(census, p.dtype, &v.shape),
        })
    }

    fn completion(&self, v: &GemmVariant, _p: &Problem) -> String {
        catalogue::completion(v)
    }

    fn bytes_per_copy(&self, v: &GemmVariant, _p: &Problem) -> u32 {
        v.copy_bytes
    }

    fn inputs(&self, p: &Problem, seed: u64) -> Inputs {
        Inputs::new(*p, seed)
    }

    fn upload(&self, gpu: &Gpu, x: &Inputs) -> Result<Buffers> {
        Buffers::upload(gpu, x)
    }

    fn output<'a>(&self, d: &'a mut Buffers) -> &'a mut DevBuf {
        &mut d.c
    }

    fn params(&self, gpu: &Gpu, d: &Buffers, v: &GemmVariant, ctl: Ctl) -> Result<GemmParams> {
        d.params(gpu, v, ctl)
    }

    /// Timed hot: one parameter set, A and B staying in L2 where they fit, as cuBLAS is timed.
    fn timing_params(
        &self,
        gpu: &Gpu,
        d: &mut Buffers,
        v: &GemmVariant,
        ctl: Ctl,
    ) -> Result<Vec<GemmParams>> {
        Ok(vec![d.params(gpu, v, ctl)?])
    }

    /// A block per tile of C, or for a persistent variant as many as are resident at once (never
    /// more than the tiles); in whole clusters, a cluster's CTAs on vertically adjacent tiles (a
    /// CTA past M where the tile rows are odd).
    fn grid(&self, v: &GemmVariant, p: &Problem, _grid: Grid, resident: u32) -> u32 {
        let (t, c) = (&v.shape.tile, v.shape.cluster.max(1));
        let tiles = (p.m.div_ceil((c * t.bm) as usize) * p.n.div_ceil(t.bn as usize)) as u32;
        if v.shape.split_k {
            // as many parts of K as keep every tile's blocks resident at once
            let slices = p.k.div_ceil(t.bk as usize) as u32;
            return tiles * (resident / tiles).clamp(1, data::MAX_SPLITS.min(slices));
        }
        let clusters = match v.shape.persistent {
            true => tiles.min((resident / c).max(1)),
            false => tiles,
        };
        clusters * c
    }

    fn judge(&self, out: &[u8], x: &Inputs, refs: Refs) -> Vec<Verdict> {
        let p = &x.problem;
        let mut v = vec![reference::against_reference(out, x)];
        if let Some(c) = refs.vendor {
            v.push(reference::against_cublas(out, c, p));
        }
        if let Some((b, _)) = refs.twin {
            v.push(reference::against_baseline(out, b, p));
        }
        v
    }

    fn traffic(&self, p: &Problem) -> Traffic {
        let es = p.dtype.size() as u64;
        let (m, n, k) = (p.m as u64, p.n as u64, p.k as u64);
        Traffic {
            bytes: (m * k + k * n + m * n) * es,
            flops: p.flops(),
        }
    }

    fn run_cases(&self, p: &Problem) -> Result<Vec<Case<Problem>>> {
        cases::run_cases(p)
    }

    fn stress_cases(
        &self,
        p: &Problem,
        v: &GemmVariant,
        _gpu: &DeviceInfo,
    ) -> Result<Vec<Case<Problem>>> {
        cases::stress_cases(p, v)
    }

    fn stress_runs(&self, runs: usize) -> usize {
        runs.div_ceil(3).max(1)
    }

    fn traced(&self) -> &'static str {
        "sync,cpasync-cg16-s3,tma-wgmma-s2,tma-wgmma-ws-s4"
    }

    fn suite_axis(&self) -> &'static str {
        "--layouts"
    }

    fn suite_groups(&self, dtypes: &[DType], axis: Option<&str>) -> Result<Vec<(String, Problem)>> {
        cases::suite_groups(dtypes, axis)
    }

    fn suite_cases(&self, group: &Problem, _seed: u64) -> Result<Vec<Case<Problem>>> {
        cases::suite_cases(group)
    }

    fn control_cases(
        &self,
        group: &Problem,
        v: &GemmVariant,
        _gpu: &DeviceInfo,
    ) -> Result<(Vec<Case<Problem>>, Instrument)> {
        cases::control_cases(group, v)
    }

    /// The first tail problem in bf16 B [N x K]: tails in every dimension, quick under racecheck.
    fn sanitize_case(&self) -> Result<Case<Problem>> {
        let p = Problem::new(257, 392, 1000, Layout::Nk, DType::Bf16)?;
        Ok(Case::new("sanitizer", p, Grid::Persistent))
    }

    fn sanitize_variants(&self) -> &'static str {
        "sync,cpasync-cg16-s3,mca-pipeline-a16-s3,tma-wgmma-s4,tma-wgmma-ws-s3,ctl-skip-wait,ctl-early-release"
    }

    fn vendor(&self, gpu: &Gpu) -> Option<VendorOrWhy<Buffers>> {
        Some(match gpu.blas() {
            Ok(b) => Ok(Box::new(cublas::CuBlas(b))),
            Err(why) => Err(cublas::missing(&why)),
        })
    }

    fn peer_subject<'a>(
        &'a self,
        _p: &'a Problem,
        x: &'a Inputs,
        vendor: Option<&'a [u8]>,
    ) -> Box<dyn Subject + 'a> {
        Box::new(subject::GemmSubject {
            inputs: x,
            cublas_c: vendor,
        })
    }

    fn sweep_axis(&self) -> (&'static str, &'static [usize]) {
        ("k", &[32, 64, 128, 256, 512, 1024, 2048, 4096, 8192])
    }

    fn sweep_mechanisms(
        &self,
    ) -> (
        &'static [&'static str],
        &'static [&'static str],
        &'static [u32],
    ) {
        (
            &["sync", "regprefetch", "cpasync", "tma", "tma-ws"],
            &["sync", "regprefetch", "cpasync"],
            &[2, 3, 4, 5],
        )
    }

    /// The family tile's pipelines by name (so a line of the sweep differs in movement alone),
    /// and the Hopper ring's on its own tile.
    fn sweep_variant(&self, mechanism: &str, stages: u32, dtype: DType) -> Option<GemmVariant> {
        let all = catalogue::catalogue(dtype);
        let fam = Tile::family(dtype);
        let hopper = dtype != DType::F32;
        Some(match (mechanism, stages) {
            ("sync", _) | (_, 1) => all[0].clone(),
            ("regprefetch", _) => all[1].clone(),
            (m, s) => match Mechanism::pipelined(m)? {
                (Mechanism::Cpasync, _) => tile::on_tile(Pipe::cpasync(s, 16), fam, false),
                (Mechanism::Tma, ws) if hopper => hopper::variant(
                    s,
                    hopper::Build {
                        ws,
                        ..hopper::Build::PLAIN
                    },
                ),
                _ => return None,
            },
        })
    }

    fn sweep_problem(
        &self,
        base: &Problem,
        dtype: DType,
        k: usize,
        _tile_rows: Option<usize>,
    ) -> Result<Problem> {
        Problem::new(base.m, base.n, k, base.layout, dtype)
    }

    fn sweep_point(&self, p: &Problem) -> (String, String) {
        let l = p.layout.name();
        (
            format!("m{} n{} {l}", p.m, p.n),
            format!("m{}|n{}|{l}|k{}", p.m, p.n, p.k),
        )
    }

    fn sweep_check(&self, largest: &Problem) -> Result<Problem> {
        Ok(*largest)
    }

    /// A tile of C per block (or, persistent, every grid-th; a cluster's blocks on whole pairs of
    /// tile rows), a step per K slice; split-K, every block of the grid on one tile's part of K
    /// (the parts of a tile, `blocks / tiles` of them, walk its K slices once between them).
    fn walk(&self, v: &GemmVariant, p: &Problem, blocks: u32) -> Walk {
        let (t, c) = (&v.shape.tile, v.shape.cluster as usize);
        let tiles = (p.m.div_ceil(c * t.bm as usize) * c * p.n.div_ceil(t.bn as usize)) as u64;
        let slices = p.k.div_ceil(t.bk as usize) as u64;
        if v.shape.split_k {
            let splits = (u64::from(blocks) / tiles).clamp(1, slices);
            return Walk {
                blocks: (tiles * splits) as u32,
                steps: tiles * slices,
                longest: slices.div_ceil(splits),
            };
        }
        Walk::strided(tiles, slices, blocks)
    }

    fn ladder(&self) -> &'static [&'static str] {
        &hopper::LADDER
    }

    fn ladder_step(&self, v: &GemmVariant) -> Option<usize> {
        hopper::ladder_step(v)
    }

    fn timing_note(&self) -> Option<&'static str> {
        Some("timed hot: A and B stay in L2 where they fit, for cuBLAS and tilepipe alike")
    }
}
