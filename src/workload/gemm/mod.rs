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
pub mod reference;
mod subject;
pub mod tile;

pub use data::{Buffers, GemmParams, Inputs};
pub use tile::{GemmShape, GemmVariant, Tile};

use crate::dtype::DType;
use crate::evidence::sass::ptxas::wgmma_serialised;
use crate::evidence::sass::{Attestation, Census};
use crate::gpu::{DevBuf, DeviceInfo, Gpu};
use crate::peers::Subject;
use crate::pipeline::{Ctl, Instrument};
use crate::results::Peer;
use crate::verdict::Verdict;
use crate::workload::{
    Bound, Build, Case, Grid, KernelSource, ProblemFlags, Refs, Traffic, Vendor, Workload,
};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

pub const KERNEL: KernelSource = KernelSource {
    file: "gemm.cu",
    text: include_str!("../../../kernels/gemm.cu"),
    entry: "tilepipe_gemm",
};

/// How B is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// B [K x N] row-major: C = A * B.
    Kn,
    /// B [N x K] row-major (weights): C = A * B^T.
    Nk,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::Kn => "kn",
            Layout::Nk => "nk",
        }
    }
}

/// The GEMM workload.
pub struct Gemm;

/// One GEMM: its shape, B's layout and the precision of A, B and C. Matrices are dense.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Problem {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub layout: Layout,
    pub dtype: DType,
}

impl Problem {
    /// A problem whose every dimension is at least 1 and whose matrices the kernels can index
    /// (element offsets within i32 rows and i64 totals).
    pub fn new(m: usize, n: usize, k: usize, layout: Layout, dtype: DType) -> Result<Problem> {
        const MAX: usize = 1 << 20;
        for (name, v) in [("M", m), ("N", n), ("K", k)] {
            if !(1..=MAX).contains(&v) {
                return Err(Error::InvalidShape(format!(
                    "{name} = {v}: allowed 1..={MAX}"
                )));
            }
        }
        Ok(Problem {
            m,
            n,
            k,
            layout,
            dtype,
        })
    }

    pub fn lda(&self) -> usize {
        self.k
    }

    /// B's row stride: N for [K x N], K for [N x K].
    pub fn ldb(&self) -> usize {
        match self.layout {
            Layout::Kn => self.n,
            Layout::Nk => self.k,
        }
    }

    pub fn ldc(&self) -> usize {
        self.n
    }

    pub fn flops(&self) -> u64 {
        2 * self.m as u64 * self.n as u64 * self.k as u64
    }

    /// Host memory a run of this problem holds at once: A and B as bytes and as f32 values (the
    /// reference reads those), and three Cs (a variant's, `sync`'s and cuBLAS's).
    pub fn host_bytes(&self) -> u64 {
        let es = self.dtype.size() as u64;
        let inputs = (self.m * self.k + self.k * self.n) as u64;
        inputs * (es + 4) + 3 * (self.m * self.n) as u64 * es
    }

    /// B[kk][j] as an element index into B's buffer, whichever the layout.
    pub fn b_index(&self, kk: usize, j: usize) -> usize {
        match self.layout {
            Layout::Kn => kk * self.n + j,
            Layout::Nk => j * self.k + kk,
        }
    }

    pub fn label(&self) -> String {
        format!(
            "{}x{}x{} {} B[{}]",
            self.m,
            self.n,
            self.k,
            self.dtype,
            match self.layout {
                Layout::Kn => "KxN",
                Layout::Nk => "NxK",
            }
        )
    }
}

impl crate::workload::Problem for Problem {
    fn dtype(&self) -> DType {
        self.dtype
    }

    fn label(&self) -> String {
        Problem::label(self)
    }

    fn host_bytes(&self) -> u64 {
        Problem::host_bytes(self)
    }
}

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
        let have = registers * catalogue::threads(v);
        match have < need {
            true => Err(format!(
                "launched with {registers} registers a thread, {have} for the block; the hand-over needs {need}"
            )),
            false => Ok(()),
        }
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
            None => evidence::math_attestation(census, p.dtype, v.shape.tile.wgmma),
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
    /// more than the tiles).
    fn grid(&self, v: &GemmVariant, p: &Problem, _grid: Grid, resident: u32) -> u32 {
        let t = &v.shape.tile;
        let tiles = (p.m.div_ceil(t.bm as usize) * p.n.div_ceil(t.bn as usize)) as u32;
        match v.shape.persistent {
            true => tiles.min(resident.max(1)),
            false => tiles,
        }
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

    fn vendor(&self, gpu: &Gpu) -> Option<std::result::Result<Box<dyn Vendor<Buffers>>, Peer>> {
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
            ("cpasync", s) => tile::on_tile(crate::pipeline::Pipe::cpasync(s, 16), fam, false),
            ("tma", s) if hopper => hopper::variant(s, false, false),
            ("tma-ws", s) if hopper => hopper::variant(s, true, false),
            _ => return None,
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

    /// K slices per block, times the tiles a persistent block walks.
    fn steps_per_block(&self, v: &GemmVariant, p: &Problem, blocks: u32) -> usize {
        let t = &v.shape.tile;
        let slices = p.k.div_ceil(t.bk as usize);
        let tiles = p.m.div_ceil(t.bm as usize) * p.n.div_ceil(t.bn as usize);
        match v.shape.persistent {
            true => slices * tiles.div_ceil(blocks.max(1) as usize),
            false => slices,
        }
    }

    fn ladder(&self) -> &'static [&'static str] {
        &hopper::LADDER
    }

    fn ladder_step(&self, v: &GemmVariant) -> Option<usize> {
        hopper::ladder_step(&v.name)
    }

    fn timing_note(&self) -> Option<&'static str> {
        Some("timed hot: A and B stay in L2 where they fit, for cuBLAS and tilepipe alike")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_follow_the_layout() {
        let p = Problem::new(3, 5, 7, Layout::Kn, DType::F32).unwrap();
        assert_eq!((p.lda(), p.ldb(), p.ldc()), (7, 5, 5));
        assert_eq!(p.b_index(2, 4), 14);
        let q = Problem {
            layout: Layout::Nk,
            ..p
        };
        assert_eq!(q.ldb(), 7);
        assert_eq!(q.b_index(2, 4), 30);
        assert_eq!(p.flops(), 210);
    }

    #[test]
    fn empty_dimensions_are_refused_with_the_range() {
        let e = Problem::new(0, 5, 7, Layout::Kn, DType::F32)
            .unwrap_err()
            .to_string();
        assert!(e.contains("M = 0") && e.contains("allowed"), "{e}");
    }
}
