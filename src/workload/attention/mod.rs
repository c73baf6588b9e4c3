//! Attention's forward pass: O = softmax(Q K^T / sqrt(d) [+ causal mask]) V, f16/bf16 in, f32
//! accumulation, over batch x heads x seqlen x head dim (64 or 128). A block computes 64 query
//! rows of one head; its pipeline steps are the 64-key tiles of K and V it needs (all of them, or
//! under the causal mask those up to its last query), each slot holding one tile of each
//! (kernels/attention.cu). Compute bound at long sequences: its figures are TFLOP/s, beside
//! torch's scaled_dot_product_attention backends and flex_attention.

pub mod cases;
pub mod catalogue;
pub mod data;
mod problem;
pub mod reference;
mod rows;
mod subject;

pub use catalogue::{AttnTile, AttnVariant};
pub use data::{AttnParams, Buffers, Inputs};
pub use problem::Problem;

use crate::Result;
use crate::dtype::DType;
use crate::evidence::sass::ptxas::wgmma_serialised;
use crate::evidence::sass::{Attestation, Census};
use crate::gpu::{DevBuf, DeviceInfo, Gpu};
use crate::peers::Subject;
use crate::pipeline::{Ctl, Instrument, Mechanism, Pipe, handover};
use crate::verdict::Verdict;
use crate::workload::{
    Bound, Build, Case, Grid, KernelSource, ProblemFlags, Refs, Traffic, Walk, Workload,
};

pub const KERNEL: KernelSource = KernelSource {
    file: "attention.cu",
    text: include_str!("../../../kernels/attention.cu"),
    entry: "tilepipe_attention",
    headers: &[
        (
            "attention/softmax.cuh",
            include_str!("../../../kernels/attention/softmax.cuh"),
        ),
        (
            "attention/mma.cuh",
            include_str!("../../../kernels/attention/mma.cuh"),
        ),
        (
            "attention/wgmma.cuh",
            include_str!("../../../kernels/attention/wgmma.cuh"),
        ),
    ],
};

/// The attention workload.
pub struct Attention;

/// The flags an attention problem takes.
const FLAGS: [&str; 6] = [
    "--dtype",
    "--batch",
    "--heads",
    "--seqlen",
    "--head-dim",
    "--causal",
];

/// The math the SASS must show: tensor-core MMAs for both GEMMs, fed by ldmatrix (mma.sync) or
/// through shared-memory descriptors (wgmma), and the softmax's exponentials on the
/// special-function unit; none of the other body's MMAs.
fn math_claim(wgmma: bool) -> (&'static [&'static str], &'static str, &'static str) {
    match wgmma {
        false => (
            &["HMMA", "LDSM"],
            "HGMMA",
            "HMMA + LDSM (both GEMMs on mma.sync) + MUFU.EX2 (the softmax)",
        ),
        true => (
            &["HGMMA"],
            "HMMA",
            "HGMMA (both GEMMs on wgmma) + MUFU.EX2 (the softmax), no HMMA",
        ),
    }
}

impl Workload for Attention {
    type Problem = Problem;
    type Shape = AttnTile;
    type Inputs = Inputs;
    type Buffers = Buffers;
    type Params = AttnParams;

    fn name(&self) -> &'static str {
        "attention"
    }

    fn formula(&self) -> &'static str {
        "O = softmax(Q K^T / sqrt(d) [+ causal mask]) V, f32 accumulation, Q, K, V, O [b, h, s, d]"
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
            f.batch.unwrap_or(4),
            f.heads.unwrap_or(16),
            f.seqlen.unwrap_or(4096),
            f.head_dim.unwrap_or(128),
            f.causal.unwrap_or(false),
            f.dtype.unwrap_or(DType::Bf16),
        )
    }

    fn problem_args(&self, p: &Problem) -> Vec<String> {
        let mut args: Vec<String> = [
            ("--dtype", p.dtype.name().to_string()),
            ("--batch", p.batch.to_string()),
            ("--heads", p.heads.to_string()),
            ("--seqlen", p.seqlen.to_string()),
            ("--head-dim", p.head_dim.to_string()),
        ]
        .into_iter()
        .flat_map(|(f, v)| [f.to_string(), v])
        .collect();
        if p.causal {
            args.push("--causal".into());
        }
        args
    }

    fn dtypes(&self) -> &'static [DType] {
        &[DType::F16, DType::Bf16]
    }

    fn catalogue(&self, dtype: DType) -> Vec<AttnVariant> {
        catalogue::catalogue(dtype)
    }

    fn controls(&self, dtype: DType) -> Vec<AttnVariant> {
        catalogue::controls(dtype)
    }

    /// Every row is whole 16-byte units (a head dimension of 64 or 128 elements): nothing to narrow.
    fn fit(&self, v: &AttnVariant, _problems: &[&Problem]) -> AttnVariant {
        v.clone()
    }

    fn can_implement(
        &self,
        v: &AttnVariant,
        p: &Problem,
        gpu: &DeviceInfo,
    ) -> std::result::Result<(), String> {
        let sm = gpu.arch.sm();
        if sm < 80 {
            return Err(format!(
                "the compute body's bf16/f16 mma.sync and ldmatrix need sm_80; this GPU is sm_{sm}"
            ));
        }
        if v.shape.wgmma && sm != 90 {
            return Err(format!(
                "wgmma is sm_90a's alone (Hopper); this GPU is sm_{sm}"
            ));
        }
        match v.unfit(sm, gpu.smem_per_block_optin, catalogue::slot_bytes(v, p)) {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    fn twin<'a>(&self, v: &AttnVariant, correct: &'a [AttnVariant]) -> Option<&'a AttnVariant> {
        catalogue::twin(v, correct)
    }

    fn tile_label(&self, v: &AttnVariant, p: &Problem) -> String {
        let on = match (v.shape.wgmma, v.shape.pingpong, v.shape.overlap) {
            (false, _, _) => "",
            (true, false, false) => ", wgmma",
            (true, true, false) => ", wgmma, ping-pong",
            (true, false, true) => ", wgmma, softmax beside P V",
            (true, true, true) => ", wgmma, ping-pong, softmax beside P V",
        };
        let persist = if v.shape.persistent {
            ", persistent"
        } else {
            ""
        };
        format!(
            "{} q x {} keys, d {}{on}{persist}",
            v.shape.bm, v.shape.bn, p.head_dim
        )
    }

    fn build(&self, v: &AttnVariant, p: &Problem, instrument: Instrument) -> Build {
        Build {
            defines: catalogue::defines(v, p, instrument),
            arch_specific: v.shape.wgmma,
            threads: catalogue::threads(v),
            dynamic_smem: catalogue::dynamic_smem(v, p),
            cluster: 1,
        }
    }

    /// setmaxnreg.inc waits, unbounded, for registers the block was never given.
    fn check_loaded(
        &self,
        v: &AttnVariant,
        _p: &Problem,
        registers: u32,
    ) -> std::result::Result<(), String> {
        match catalogue::registers_handed_over(v) {
            Some(need) => handover::check_loaded(registers, catalogue::threads(v), need),
            None => Ok(()),
        }
    }

    fn math(
        &self,
        v: &AttnVariant,
        _p: &Problem,
        census: Option<&Census>,
        log: &str,
    ) -> Option<Attestation> {
        if let Some(warning) = wgmma_serialised(log, None) {
            return Some(Attestation::Mismatch {
                claimed: "wgmma issued back to back".into(),
                emitted: warning,
            });
        }
        let Some(c) = census else {
            return Some(Attestation::Unverified {
                reason: "no disassembler: the math was not checked".into(),
            });
        };
        let (want, other, claimed) = math_claim(v.shape.wgmma);
        let mut seen: Vec<String> = want
            .iter()
            .chain(["MUFU"].iter())
            .flat_map(|op| c.forms(op))
            .collect();
        seen.push(format!("{other} x{}", c.count(other)));
        let ex2 = c.opcodes.keys().any(|op| op == "MUFU.EX2");
        Some(
            match want.iter().all(|op| c.count(op) > 0) && ex2 && c.count(other) == 0 {
                true => Attestation::Attested {
                    evidence: seen.join(", "),
                },
                false => Attestation::Mismatch {
                    claimed: claimed.into(),
                    emitted: seen.join(", "),
                },
            },
        )
    }

    fn completion(&self, v: &AttnVariant, _p: &Problem) -> String {
        catalogue::completion(v)
    }

    fn bytes_per_copy(&self, v: &AttnVariant, _p: &Problem) -> u32 {
        v.copy_bytes
    }

    fn inputs(&self, p: &Problem, seed: u64) -> Inputs {
        Inputs::new(*p, seed)
    }

    fn upload(&self, gpu: &Gpu, x: &Inputs) -> Result<Buffers> {
        Buffers::upload(gpu, x)
    }

    fn output<'a>(&self, d: &'a mut Buffers) -> &'a mut DevBuf {
        &mut d.o
    }

    fn params(&self, gpu: &Gpu, d: &Buffers, v: &AttnVariant, ctl: Ctl) -> Result<AttnParams> {
        d.params(gpu, v, ctl)
    }

    /// One parameter set: at long sequences Q, K and V are far larger than L2 anyway, and each
    /// block rereads its head's K and V from L2 as FlashAttention's do.
    fn timing_params(
        &self,
        gpu: &Gpu,
        d: &mut Buffers,
        v: &AttnVariant,
        ctl: Ctl,
    ) -> Result<Vec<AttnParams>> {
        Ok(vec![d.params(gpu, v, ctl)?])
    }

    /// A block per query tile of each head; persistent, the blocks resident at once (or a fixed
    /// count, to make each walk many tiles), never more than the pairs of tiles.
    fn grid(&self, v: &AttnVariant, p: &Problem, grid: Grid, resident: u32) -> u32 {
        let tiles = (p.heads_total() * p.seqlen.div_ceil(v.shape.bm as usize)) as u32;
        match (v.shape.persistent, grid) {
            (false, _) => tiles,
            (true, Grid::Fixed(blocks)) => blocks.clamp(1, tiles.div_ceil(2)),
            (true, _) => resident.clamp(1, tiles.div_ceil(2)),
        }
    }

    fn judge(&self, out: &[u8], x: &Inputs, refs: Refs) -> Vec<Verdict> {
        let mut v = vec![reference::against_reference(out, x)];
        if let Some((b, _)) = refs.twin {
            v.push(reference::against_baseline(out, b, &x.problem));
        }
        v
    }

    /// Q, K and V read once and O written once; FLOPs as FlashAttention counts them.
    fn traffic(&self, p: &Problem) -> Traffic {
        Traffic {
            bytes: 4 * p.elements() * p.dtype.size() as u64,
            flops: p.flops(),
        }
    }

    fn run_cases(&self, p: &Problem) -> Result<Vec<Case<Problem>>> {
        cases::run_cases(p)
    }

    fn stress_cases(
        &self,
        p: &Problem,
        v: &AttnVariant,
        _gpu: &DeviceInfo,
    ) -> Result<Vec<Case<Problem>>> {
        cases::stress_cases(p, v)
    }

    fn ladder(&self) -> &'static [&'static str] {
        &catalogue::LADDER
    }

    fn ladder_step(&self, v: &AttnVariant) -> Option<usize> {
        catalogue::ladder_step(v)
    }

    fn traced(&self) -> &'static str {
        "sync,cpasync-cg16-s2,tma-s2,tma-wgmma-s2"
    }

    fn suite_axis(&self) -> &'static str {
        "--head-dims"
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
        _v: &AttnVariant,
        _gpu: &DeviceInfo,
    ) -> Result<(Vec<Case<Problem>>, Instrument)> {
        cases::control_cases(group)
    }

    /// Tails under the causal mask: quick under racecheck.
    fn sanitize_case(&self) -> Result<Case<Problem>> {
        let p = Problem::new(1, 2, 200, 64, true, DType::Bf16)?;
        Ok(Case::new("sanitizer", p, Grid::Persistent))
    }

    fn sanitize_variants(&self) -> &'static str {
        "sync,cpasync-cg16-s2,tma-s2,ctl-skip-wait,ctl-early-release"
    }

    fn peer_subject<'a>(
        &'a self,
        _p: &'a Problem,
        x: &'a Inputs,
        _vendor: Option<&'a [u8]>,
    ) -> Box<dyn Subject + 'a> {
        Box::new(subject::AttnSubject { inputs: x })
    }

    fn sweep_axis(&self) -> (&'static str, &'static [usize]) {
        ("seqlen", &[128, 256, 512, 1024, 2048, 4096, 8192, 16384])
    }

    fn sweep_mechanisms(
        &self,
    ) -> (
        &'static [&'static str],
        &'static [&'static str],
        &'static [u32],
    ) {
        (
            &["sync", "regprefetch", "cpasync", "tma"],
            &["sync", "cpasync", "tma"],
            &[2, 3],
        )
    }

    fn sweep_variant(&self, mechanism: &str, stages: u32, _dtype: DType) -> Option<AttnVariant> {
        let pipe = match (mechanism, stages) {
            ("sync", _) | (_, 1) => Pipe::with_stages(Mechanism::Sync, 1, false),
            ("regprefetch", _) => Pipe::with_stages(Mechanism::Regprefetch, 2, false),
            (m, s) => match Mechanism::pipelined(m)? {
                (Mechanism::Cpasync, _) => Pipe::cpasync(s, 16),
                (Mechanism::Tma, false) => Pipe::ring(Mechanism::Tma, s, false),
                _ => return None,
            },
        };
        Some(pipe.shaped(catalogue::TILE))
    }

    fn sweep_problem(
        &self,
        base: &Problem,
        dtype: DType,
        seqlen: usize,
        _tile_rows: Option<usize>,
    ) -> Result<Problem> {
        Problem::new(
            base.batch,
            base.heads,
            seqlen,
            base.head_dim,
            base.causal,
            dtype,
        )
    }

    fn sweep_point(&self, p: &Problem) -> (String, String) {
        let config = format!(
            "b{} h{} d{}{}",
            p.batch,
            p.heads,
            p.head_dim,
            if p.causal { " causal" } else { "" }
        );
        let key = format!("{}|s{}", config.replace(' ', "|"), p.seqlen);
        (config, key)
    }

    /// The builds are validated at the longest sequence's shape, its seqlen held to 1024 (the
    /// reference's work grows with its square; every edge of the walk is in the run cases).
    fn sweep_check(&self, largest: &Problem) -> Result<Problem> {
        Problem::new(
            largest.batch,
            largest.heads,
            largest.seqlen.min(1024),
            largest.head_dim,
            largest.causal,
            largest.dtype,
        )
    }

    /// Query tiles of BM rows of each head, a step per BN keys: under the causal mask a tile
    /// walks the keys up to its last query. Tile t is head t / q_tiles's, block t % blocks's
    /// query tile q_tiles - 1 - t % q_tiles (the last first); persistent, blocks take pairs of
    /// tiles, pair r block r % blocks's, and a head's tiles alternate from its ends: last, first,
    /// second last, second, ... (kernels/attention.cu, `AttnTiles`).
    fn walk(&self, v: &AttnVariant, p: &Problem, blocks: u32) -> Walk {
        let (bm, bn) = (v.shape.bm as usize, v.shape.bn as usize);
        let q_tiles = p.seqlen.div_ceil(bm) as u64;
        let heads = p.heads_total() as u64;
        let persistent = v.shape.persistent;
        Walk::uneven(heads * q_tiles, blocks, 1 + u64::from(persistent), |t| {
            let at = t % q_tiles;
            let q_tile = match persistent && at % 2 == 1 {
                true => at / 2,
                false => q_tiles - 1 - at / (1 + u64::from(persistent)),
            };
            let keys = match p.causal {
                true => p.seqlen.min((q_tile as usize + 1) * bm),
                false => p.seqlen,
            };
            keys.div_ceil(bn) as u64
        })
    }

    fn timing_note(&self) -> Option<&'static str> {
        Some("TFLOP/s as FlashAttention counts them: 4 b h s^2 d, halved under the causal mask")
    }
}
