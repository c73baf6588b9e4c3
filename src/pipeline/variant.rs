//! The catalogue of variants: mechanism x stages x copy width (+ flags), and the deliberately
//! broken controls. A variant knows what it needs from the GPU, what it claims the SASS will show,
//! and which completion protocol it relies on; what it needs of a problem is the workload's rule
//! (`Workload::can_implement`).

use serde::{Deserialize, Serialize};

use super::{BuildConfig, Claim, Control, McaForm, Mechanism};

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Variant {
    pub name: String,
    pub mechanism: Mechanism,
    pub stages: u32,
    /// Bytes per copy instruction for per-thread copies (sync, regprefetch, cp.async,
    /// memcpy_async) and per load for direct; bulk and TMA copy a row or a whole tile per
    /// instruction.
    pub copy_bytes: u32,
    /// cp.async.cg (L2 only) rather than .ca.
    pub bypass_l1: bool,
    pub mca_form: Option<McaForm>,
    /// A dedicated producer warp (mbarrier ring only).
    pub warp_specialized: bool,
    pub control: Option<Control>,
    /// The tile size (KiB) this variant is built for, in place of the run's: TMA moves a whole
    /// tile per instruction and runs best with one block per SM and large boxes, while the
    /// per-thread copies want small tiles and several blocks per SM.
    #[serde(default)]
    pub tile_kib: Option<u32>,
    /// Direct only: each thread does the work of `fold` of the run's consumer threads, in a block
    /// `fold` times smaller, so it has `fold` times the loads in flight; the compute body keeps the
    /// run's summation order (and so `sync`'s results, bit for bit).
    #[serde(default = "one")]
    pub fold: u32,
    /// Direct only: each of the run's consumer threads is split over `split` threads, each holding
    /// a `split`-th of its vectors, in a block `split` times larger (fewer registers per thread,
    /// more threads per SM); the parts continue one sum in order, so the results stay `sync`'s.
    #[serde(default = "one")]
    pub split: u32,
    /// The blocks per SM ptxas is asked to leave registers for (`__launch_bounds__`' second
    /// argument, capped in the kernel at what the ring's shared memory allows); 0: ptxas's own
    /// choice. Set in the catalogue where a measurement showed ptxas's choice to be slower.
    #[serde(default)]
    pub min_blocks: u32,
    /// The copies mark the lines they bring into L2 evict-last (`createpolicy` + `.L2::cache_hint`),
    /// the policy the direct builds' loads carry; only copies that take a policy (16-byte
    /// cp.async.cg, bulk, TMA) are built with it.
    #[serde(default)]
    pub l2_evict_last: bool,
}

fn one() -> u32 {
    1
}

impl Variant {
    fn new(name: &str, mechanism: Mechanism, stages: u32, copy_bytes: u32) -> Variant {
        Variant {
            name: name.to_string(),
            mechanism,
            stages,
            copy_bytes,
            bypass_l1: false,
            mca_form: None,
            warp_specialized: false,
            control: None,
            tile_kib: None,
            fold: 1,
            split: 1,
            min_blocks: 0,
            l2_evict_last: false,
        }
    }

    /// The same variant with its kernel's launch bound asking for `min_blocks` blocks per SM.
    fn bounded(self, min_blocks: u32) -> Variant {
        Variant { min_blocks, ..self }
    }

    /// Direct whose threads each do the work of `fold` of the run's consumer threads.
    pub fn direct(fold: u32) -> Variant {
        let name = match fold {
            1 => "direct".to_string(),
            f => format!("direct-x{f}"),
        };
        Variant {
            fold,
            ..Variant::new(&name, Mechanism::Direct, 1, 16)
        }
    }

    /// Direct whose threads each do a `split`-th of the work of one of the run's consumer threads.
    pub fn direct_split(split: u32) -> Variant {
        Variant {
            split,
            ..Variant::new(&format!("direct-split{split}"), Mechanism::Direct, 1, 16)
        }
    }

    /// The same variant with its copies marking their L2 lines evict-last, named `-el`. Measured on
    /// the H200 through a kernel tree (BENCHMARKS.md), 2-5 % faster for most staged pipelines at
    /// bf16 rows of 4096 and f32 rows of 8192: a variant beside its base, so each run shows both.
    pub fn evict_last(self) -> Variant {
        assert!(
            self.takes_l2_policy(),
            "{}: only 16-byte cp.async.cg, bulk and TMA copies take an L2 policy",
            self.name
        );
        Variant {
            name: format!("{}-el", self.name),
            l2_evict_last: true,
            ..self
        }
    }

    /// Whether this variant's copies are instructions that take an L2 cache policy.
    pub fn takes_l2_policy(&self) -> bool {
        match self.mechanism {
            Mechanism::Bulk | Mechanism::Tma => true,
            Mechanism::Cpasync => self.copy_bytes == 16 && self.bypass_l1,
            _ => false,
        }
    }

    /// The same variant built for tiles of about `kib` KiB, named for it.
    pub fn with_tile(self, kib: u32) -> Variant {
        Variant {
            name: format!("{}-{kib}k", self.name),
            tile_kib: Some(kib),
            ..self
        }
    }

    /// The build configuration of this variant within a run configured as `cfg`. Direct takes
    /// the run's tile height like the staged variants (its compute body walks the tile's rows at
    /// X's stride). Its block has the run's consumers / fold threads: the compute body still lays
    /// its reduction out for the run's consumers (a block sized otherwise without folding, four
    /// vectors per thread for bf16 rows of 4096, rounded differently from `sync` and failed
    /// bit-for-bit validation).
    pub fn config(&self, cfg: &BuildConfig) -> BuildConfig {
        let tile_rows = match self.tile_kib {
            Some(kib) => BuildConfig::rows_for(cfg.hidden, cfg.dtype, kib),
            None => cfg.tile_rows,
        };
        BuildConfig {
            tile_rows,
            consumers: cfg.consumers * self.split / self.fold,
            ..*cfg
        }
    }

    pub fn cpasync(stages: u32, bytes: u32) -> Variant {
        let cg = bytes == 16;
        let name = format!("cpasync-{}{bytes}-s{stages}", if cg { "cg" } else { "ca" });
        Variant {
            bypass_l1: cg,
            ..Variant::new(&name, Mechanism::Cpasync, stages, bytes)
        }
    }

    pub fn mca(mechanism: Mechanism, form: McaForm, stages: u32) -> Variant {
        let api = if mechanism == Mechanism::MemcpyAsyncPipeline {
            "pipeline"
        } else {
            "barrier"
        };
        let f = match form {
            McaForm::Aligned16 => "a16",
            McaForm::ElementAligned => "elem",
            McaForm::NotTriviallyCopyable => "ntc",
        };
        Variant {
            mca_form: Some(form),
            ..Variant::new(&format!("mca-{api}-{f}-s{stages}"), mechanism, stages, 16)
        }
    }

    pub fn ring(mechanism: Mechanism, stages: u32, ws: bool) -> Variant {
        let name = format!(
            "{}{}-s{stages}",
            mechanism.name(),
            if ws { "-ws" } else { "" }
        );
        Variant {
            warp_specialized: ws,
            ..Variant::new(&name, mechanism, stages, 0)
        }
    }

    pub fn control(base: Variant, control: Control, name: &str) -> Variant {
        Variant {
            name: name.to_string(),
            control: Some(control),
            ..base
        }
    }

    /// A variant of `mechanism` with any stage count (sweeps): 16-byte cp.async.cg, aligned
    /// memcpy_async, the mbarrier ring with or without a producer warp.
    pub fn with_stages(mechanism: Mechanism, stages: u32, ws: bool) -> Variant {
        match mechanism {
            Mechanism::Sync => Variant::new("sync", mechanism, 1, 16),
            Mechanism::Regprefetch => Variant::new("regprefetch", mechanism, 2, 16),
            Mechanism::Direct => Variant::direct(1),
            Mechanism::Cpasync => Variant::cpasync(stages, 16),
            Mechanism::MemcpyAsyncPipeline | Mechanism::MemcpyAsyncBarrier => {
                Variant::mca(mechanism, McaForm::Aligned16, stages)
            }
            Mechanism::Bulk | Mechanism::Tma => Variant::ring(mechanism, stages, ws),
        }
    }

    /// The correct variants, sequential baseline first.
    pub fn catalogue() -> Vec<Variant> {
        use Mechanism::*;
        vec![
            Variant::new("sync", Sync, 1, 16),
            Variant::new("regprefetch", Regprefetch, 2, 16),
            Variant::direct(1),
            Variant::direct(2),
            Variant::direct_split(2),
            Variant::cpasync(2, 16),
            Variant::cpasync(2, 16).evict_last(),
            // bounds measured on the H200 (bf16 262144 x 4096): left to itself ptxas gave these 48
            // registers (32 and spills for the element forms), and their loops ran 1-7 % slower
            Variant::cpasync(3, 16).bounded(4),
            Variant::cpasync(4, 16),
            Variant::cpasync(2, 8),
            Variant::cpasync(2, 4),
            Variant::mca(MemcpyAsyncPipeline, McaForm::Aligned16, 2).bounded(4),
            Variant::mca(MemcpyAsyncPipeline, McaForm::Aligned16, 3),
            Variant::mca(MemcpyAsyncPipeline, McaForm::ElementAligned, 2).bounded(8),
            Variant::mca(MemcpyAsyncPipeline, McaForm::NotTriviallyCopyable, 2).bounded(4),
            Variant::mca(MemcpyAsyncBarrier, McaForm::Aligned16, 2),
            Variant::mca(MemcpyAsyncBarrier, McaForm::ElementAligned, 2).bounded(8),
            Variant::ring(Bulk, 2, false),
            Variant::ring(Bulk, 2, false).evict_last(),
            Variant::ring(Bulk, 3, false),
            Variant::ring(Tma, 2, false),
            Variant::ring(Tma, 3, false),
            Variant::ring(Tma, 4, false).bounded(4),
            Variant::ring(Tma, 4, false).bounded(4).evict_last(),
            Variant::ring(Tma, 3, true),
            Variant::ring(Tma, 4, true),
            Variant::ring(Tma, 2, true).with_tile(64),
            Variant::ring(Tma, 3, true).with_tile(64),
            Variant::ring(Tma, 3, true).with_tile(64).evict_last(),
        ]
    }

    /// Deliberately broken variants; never timed or ranked. Direct has none: it has no
    /// completion protocol of its own (no slot, no wait) for a control to break.
    pub fn controls() -> Vec<Variant> {
        use Control::*;
        let cp = Variant::cpasync(2, 16);
        let tma = Variant::ring(Mechanism::Tma, 2, false);
        let tma_ws = Variant::ring(Mechanism::Tma, 2, true);
        vec![
            Variant::control(cp.clone(), SkipWait, "ctl-cpasync-skip-wait"),
            Variant::control(cp.clone(), EarlyRelease, "ctl-cpasync-early-release"),
            Variant::control(cp.clone(), Overfill, "ctl-cpasync-overfill"),
            Variant::control(cp, CommitAfterWait, "ctl-cpasync-commit-after-wait"),
            Variant::control(
                Variant::cpasync(3, 16),
                DrainNoCommit,
                "ctl-cpasync-s3-drain-no-commit",
            ),
            Variant::control(tma.clone(), SkipWait, "ctl-tma-skip-wait"),
            Variant::control(tma_ws, EarlyRelease, "ctl-tma-ws-early-release"),
            Variant::control(tma.clone(), WrongParity, "ctl-tma-wrong-parity"),
            Variant::control(tma.clone(), NoExpectTx, "ctl-tma-no-expect-tx"),
            Variant::control(tma, WrongStride, "ctl-tma-wrong-stride"),
        ]
    }

    /// Selects variants by exact name or name prefix from a comma-separated list.
    pub fn select(all: Vec<Variant>, filter: Option<&str>) -> crate::Result<Vec<Variant>> {
        let Some(filter) = filter else { return Ok(all) };
        let mut out: Vec<Variant> = Vec::new();
        for want in filter.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let hits: Vec<&Variant> = all
                .iter()
                .filter(|v| v.name == want || v.name.starts_with(want))
                .collect();
            if hits.is_empty() {
                let names: Vec<&str> = all.iter().map(|v| v.name.as_str()).collect();
                return Err(crate::Error::InvalidArgument(format!(
                    "no variant matches '{want}' (allowed: a name or prefix of {})",
                    names.join(", ")
                )));
            }
            for v in hits {
                if !out.contains(v) {
                    out.push(v.clone());
                }
            }
        }
        Ok(out)
    }

    /// Variants matching the filter by name or prefix; all of them without a filter.
    pub fn matching(all: Vec<Variant>, filter: Option<&str>) -> Vec<Variant> {
        match filter {
            None => all,
            Some(f) => {
                let wants: Vec<&str> = f
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                all.into_iter()
                    .filter(|v| wants.iter().any(|w| v.name.starts_with(w)))
                    .collect()
            }
        }
    }

    /// A control whose broken protocol can fault the device; the suite runs it in a child process
    /// so a fault cannot take the suite's context down. On the mbarrier ring every control but a
    /// wrong stride can: a transaction count driven below zero, a barrier re-armed while its last
    /// phase is pending, a block leaving with copies still in flight or a phase that never
    /// completes (a box smaller than announced faulted the H200 on every run).
    pub fn may_fault(&self) -> bool {
        self.mechanism.uses_mbarrier_ring()
            && self.control.is_some_and(|c| c != Control::WrongStride)
    }

    pub fn is_control(&self) -> bool {
        self.control.is_some()
    }

    pub fn is_baseline(&self) -> bool {
        self.mechanism == Mechanism::Sync && self.control.is_none()
    }

    pub fn threads(&self, cfg: &BuildConfig) -> u32 {
        cfg.consumers + if self.warp_specialized { 32 } else { 0 }
    }

    pub fn dynamic_smem(&self, cfg: &BuildConfig) -> u32 {
        self.slots() * cfg.slot_bytes()
    }

    /// Slots in shared memory: one per stage, none where the tile is read in place.
    fn slots(&self) -> u32 {
        match self.mechanism {
            Mechanism::Direct => 0,
            _ => self.stages,
        }
    }

    /// Bytes one copy instruction moves for this configuration.
    pub fn bytes_per_copy(&self, cfg: &BuildConfig) -> u32 {
        match self.mechanism {
            Mechanism::Bulk => cfg.row_bytes(),
            Mechanism::Tma => cfg.tile_rows as u32 * cfg.row_bytes(),
            Mechanism::MemcpyAsyncPipeline | Mechanism::MemcpyAsyncBarrier => match self.mca_form {
                Some(McaForm::ElementAligned) => cfg.dtype.size() as u32,
                _ => 16,
            },
            _ => self.copy_bytes,
        }
    }

    pub fn claim(&self) -> Claim {
        match self.mechanism {
            Mechanism::Sync | Mechanism::Regprefetch => Claim::Synchronous,
            Mechanism::Cpasync => Claim::Ldgsts {
                bytes: self.copy_bytes,
                bypass: self.bypass_l1,
            },
            Mechanism::MemcpyAsyncPipeline | Mechanism::MemcpyAsyncBarrier => Claim::AnyAsync,
            Mechanism::Bulk => Claim::BulkCopy,
            Mechanism::Tma => Claim::TensorCopy,
            Mechanism::Direct => Claim::Direct,
        }
    }

    /// The completion protocol, as the report names it.
    pub fn completion(&self, cfg: &BuildConfig) -> String {
        let protocol = self.protocol(cfg);
        match self.l2_evict_last {
            true => format!("{protocol}; its copies mark their L2 lines evict-last"),
            false => protocol,
        }
    }

    fn protocol(&self, cfg: &BuildConfig) -> String {
        let s = self.stages;
        match self.mechanism {
            Mechanism::Sync => "st.shared + bar.sync publishes the tile; bar.sync after compute frees the slot".into(),
            Mechanism::Regprefetch => {
                "tile k+1 held in registers during compute; st.shared + bar.sync publishes it and proves slot k-1 free"
                    .into()
            }
            Mechanism::Cpasync => format!(
                "cp.async.commit_group per tile; cp.async.wait_group {} + bar.sync publishes tile k and proves slot k-1 free",
                s - 2
            ),
            Mechanism::MemcpyAsyncPipeline => format!(
                "cuda::pipeline<thread_scope_block, {s}>: producer_acquire/producer_commit, consumer_wait, consumer_release"
            ),
            Mechanism::MemcpyAsyncBarrier => format!(
                "cuda::barrier per slot ({s}): arrive_and_wait (all arrivals + copy completion); bar.sync before refill"
            ),
            Mechanism::Direct => format!(
                "no staging: each thread loads its vectors of the tile straight into registers{}; the compute body's own barrier orders the row reduction",
                match (self.fold, self.split) {
                    (1, 1) => String::new(),
                    (1, s) => format!(
                        " (a block of {} threads, each holding 1/{s} of one reduction thread's vectors and continuing its sum in turn)",
                        cfg.consumers
                    ),
                    (f, _) => format!(" (a block of {} threads, each doing the work of {f})", cfg.consumers),
                }
            ),
            Mechanism::Bulk | Mechanism::Tma => format!(
                "mbarrier full[s]: expect_tx + complete_tx, consumers wait parity (k/{s})&1; empty[s]: arrive count {} (one per consumer warp), {} waits parity before refill",
                cfg.consumers / 32,
                if self.warp_specialized { "a dedicated producer warp" } else { "consumer warp 0" }
            ),
        }
    }

    /// Why this variant cannot run on this GPU at all, if it cannot.
    pub fn unsupported_on(&self, sm: u32, smem_optin: u32, cfg: &BuildConfig) -> Option<String> {
        if let Some(why) = self.unfit(sm, smem_optin, cfg.slot_bytes()) {
            return Some(why);
        }
        if self.mechanism == Mechanism::Tma && cfg.tile_rows > 256 {
            return Some(format!(
                "a tile of {} rows exceeds the 256-row TMA box",
                cfg.tile_rows
            ));
        }
        None
    }

    /// Why a pipeline of this variant's mechanism and stages with slots of `slot_bytes` cannot
    /// run on an sm_`sm` GPU whose blocks may have `smem_optin` bytes of shared memory, if it cannot.
    pub fn unfit(&self, sm: u32, smem_optin: u32, slot_bytes: u32) -> Option<String> {
        let m = self.mechanism;
        if sm < m.min_sm() {
            return Some(format!(
                "{} needs sm_{} or newer (this GPU is sm_{sm})",
                m.name(),
                m.min_sm()
            ));
        }
        let smem = self.slots() * slot_bytes;
        (smem > smem_optin).then(|| {
            format!(
                "{} stages x {slot_bytes} B slots = {smem} B of shared memory exceeds the {smem_optin} B a block may use",
                self.stages
            )
        })
    }

    /// The -D options that select this variant's pipeline (kernels/pipeline/pipeline.cuh) and
    /// precision; the workload adds its own.
    pub fn defines(&self, cfg: &BuildConfig) -> Vec<String> {
        let mut d = vec![
            format!("-DDTYPE={}", cfg.dtype.kernel_code()),
            format!("-DCONSUMERS={}", cfg.consumers),
            format!("-DSTAGES={}", self.stages),
            format!("-DMECH={}", self.mechanism.kernel_code()),
            format!(
                "-DCOPY_BYTES={}",
                if self.mechanism.uses_mbarrier_ring() {
                    16
                } else {
                    self.copy_bytes
                }
            ),
            format!("-DCP_CG={}", u32::from(self.bypass_l1)),
            format!("-DWS={}", u32::from(self.warp_specialized)),
            format!("-DCONTROL={}", self.control.map_or(0, Control::code)),
            format!("-DSTRESS={}", cfg.stress),
            format!("-DTRACE_TILES={}", cfg.trace_tiles),
            format!("-DONLY={}", cfg.only),
            format!("-DFOLD={}", self.fold),
            format!("-DSPLIT={}", self.split),
            format!("-DMIN_BLOCKS={}", self.min_blocks),
            format!("-DL2_EVICT_LAST={}", u32::from(self.l2_evict_last)),
        ];
        if let Some(f) = self.mca_form {
            d.push(format!("-DMCA_FORM={}", f.code()));
        }
        d
    }
}

#[cfg(test)]
mod tests;
