//! A variant: one pipeline (mechanism x stages x copy width, + flags, or a control that breaks one
//! of its protocol steps) on one workload's tile shape. The pipeline's facts are here, for every
//! workload: what it needs from the GPU, what it claims the SASS will show, which completion
//! protocol it relies on, its -D selections. What it needs of a problem, and what its tile is,
//! are the workload's (`Workload::can_implement`, the shape `S`).

use super::{Claim, Control, Instrument, McaForm, Mechanism};
use crate::dtype::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Variant<S> {
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
    /// The blocks per SM ptxas is asked to leave registers for (`__launch_bounds__`' second
    /// argument, capped in the kernel at what the ring's shared memory allows); 0: ptxas's own
    /// choice. Set in a catalogue where a measurement showed ptxas's choice to be slower.
    #[serde(default)]
    pub min_blocks: u32,
    /// The copies mark the lines they bring into L2 evict-last (`createpolicy` + `.L2::cache_hint`);
    /// only copies that take a policy (16-byte cp.async.cg, bulk, TMA) are built with it.
    #[serde(default)]
    pub l2_evict_last: bool,
    /// The workload's tile: a row workload's height and thread grouping, a GEMM's block tile.
    pub shape: S,
}

/// A pipeline not yet given a workload's tile shape.
pub type Pipe = Variant<()>;

/// What the pipeline's own -D options depend on besides the variant: the precision, the threads
/// that compute, the instrumentation, and (direct only) how a row workload regroups its threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipeBuild {
    pub dtype: DType,
    pub consumers: u32,
    pub instrument: Instrument,
    pub fold: u32,
    pub split: u32,
}

impl Pipe {
    pub fn new(name: &str, mechanism: Mechanism, stages: u32, copy_bytes: u32) -> Pipe {
        Variant {
            name: name.to_string(),
            mechanism,
            stages,
            copy_bytes,
            bypass_l1: false,
            mca_form: None,
            warp_specialized: false,
            control: None,
            min_blocks: 0,
            l2_evict_last: false,
            shape: (),
        }
    }

    pub fn cpasync(stages: u32, bytes: u32) -> Pipe {
        let cg = bytes == 16;
        let name = format!("cpasync-{}{bytes}-s{stages}", if cg { "cg" } else { "ca" });
        Variant {
            bypass_l1: cg,
            ..Pipe::new(&name, Mechanism::Cpasync, stages, bytes)
        }
    }

    pub fn mca(mechanism: Mechanism, form: McaForm, stages: u32) -> Pipe {
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
            ..Pipe::new(&format!("mca-{api}-{f}-s{stages}"), mechanism, stages, 16)
        }
    }

    pub fn ring(mechanism: Mechanism, stages: u32, ws: bool) -> Pipe {
        let name = format!(
            "{}{}-s{stages}",
            mechanism.name(),
            if ws { "-ws" } else { "" }
        );
        Variant {
            warp_specialized: ws,
            ..Pipe::new(&name, mechanism, stages, 0)
        }
    }

    /// A pipeline of `mechanism` with any stage count (sweeps): 16-byte cp.async.cg, aligned
    /// memcpy_async, the mbarrier ring with or without a producer warp.
    pub fn with_stages(mechanism: Mechanism, stages: u32, ws: bool) -> Pipe {
        match mechanism {
            Mechanism::Sync => Pipe::new("sync", mechanism, 1, 16),
            Mechanism::Regprefetch => Pipe::new("regprefetch", mechanism, 2, 16),
            Mechanism::Direct => Pipe::new("direct", mechanism, 1, 16),
            Mechanism::Cpasync => Pipe::cpasync(stages, 16),
            Mechanism::MemcpyAsyncPipeline | Mechanism::MemcpyAsyncBarrier => {
                Pipe::mca(mechanism, McaForm::Aligned16, stages)
            }
            Mechanism::Bulk | Mechanism::Tma => Pipe::ring(mechanism, stages, ws),
        }
    }
}

impl<S: Clone> Variant<S> {
    /// This pipeline on a workload's tile shape (`()`: the pipeline alone).
    pub fn shaped<T>(self, shape: T) -> Variant<T> {
        Variant {
            name: self.name,
            mechanism: self.mechanism,
            stages: self.stages,
            copy_bytes: self.copy_bytes,
            bypass_l1: self.bypass_l1,
            mca_form: self.mca_form,
            warp_specialized: self.warp_specialized,
            control: self.control,
            min_blocks: self.min_blocks,
            l2_evict_last: self.l2_evict_last,
            shape,
        }
    }

    /// The pipeline alone, without the workload's shape.
    pub fn pipe(&self) -> Pipe {
        self.clone().shaped(())
    }

    /// The same variant with its kernel's launch bound asking for `min_blocks` blocks per SM.
    pub fn bounded(self, min_blocks: u32) -> Self {
        Variant { min_blocks, ..self }
    }

    /// `base` with one protocol step broken on purpose, named `name`.
    pub fn control(base: Self, control: Control, name: &str) -> Self {
        Variant {
            name: name.to_string(),
            control: Some(control),
            ..base
        }
    }

    /// The same variant with its copies marking their L2 lines evict-last, named `-el`. Measured on
    /// the H200 through a kernel tree (BENCHMARKS.md), 2-5 % faster for most staged pipelines at
    /// bf16 rows of 4096 and f32 rows of 8192: a variant beside its base, so each run shows both.
    pub fn evict_last(self) -> Self {
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

    /// Selects variants by exact name or name prefix from a comma-separated list.
    pub fn select(all: Vec<Self>, filter: Option<&str>) -> crate::Result<Vec<Self>>
    where
        S: PartialEq,
    {
        let Some(filter) = filter else { return Ok(all) };
        if filter.split(',').all(|s| s.trim().is_empty()) {
            return Err(crate::Error::InvalidArgument(format!(
                "an empty list of variants ('{filter}'): allowed: names or prefixes, comma-separated, or leave the flag out for all"
            )));
        }
        if filter.split(',').any(|s| s.trim().is_empty()) {
            return Err(crate::Error::InvalidArgument(format!(
                "the list of variants '{filter}' has an empty entry: allowed: names or prefixes separated by single commas"
            )));
        }
        let mut out: Vec<Self> = Vec::new();
        for want in filter.split(',').map(str::trim) {
            let hits: Vec<&Self> = all
                .iter()
                .filter(|v| v.name == want || v.name.starts_with(want))
                .collect();
            if hits.is_empty() {
                // each name once, though precisions and layouts repeat it
                let mut names: Vec<&str> = Vec::new();
                for v in &all {
                    if !names.contains(&v.name.as_str()) {
                        names.push(&v.name);
                    }
                }
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
    pub fn matching(all: Vec<Self>, filter: Option<&str>) -> Vec<Self> {
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
}

impl<S> Variant<S> {
    /// Whether this variant's copies are instructions that take an L2 cache policy.
    pub fn takes_l2_policy(&self) -> bool {
        match self.mechanism {
            Mechanism::Bulk | Mechanism::Tma => true,
            Mechanism::Cpasync => self.copy_bytes == 16 && self.bypass_l1,
            _ => false,
        }
    }

    /// A control whose broken protocol can fault the device; it runs in processes of its own so
    /// a fault cannot take the suite's context down. On the mbarrier ring every control but a
    /// tensor map describing the wrong bytes (a wrong stride, a window read unshifted) can: a transaction count driven below zero, a barrier re-armed
    /// while its last phase is pending, a block leaving with copies still in flight or a phase
    /// that never completes (a box smaller than announced faulted the H200 on every run).
    pub fn may_fault(&self) -> bool {
        self.mechanism.uses_mbarrier_ring()
            && self
                .control
                .is_some_and(|c| !matches!(c, Control::WrongStride | Control::WindowUnshifted))
    }

    pub fn is_control(&self) -> bool {
        self.control.is_some()
    }

    pub fn is_baseline(&self) -> bool {
        self.mechanism == Mechanism::Sync && self.control.is_none()
    }

    /// Slots in shared memory: one per stage, none where the tile is read in place.
    pub fn slots(&self) -> u32 {
        match self.mechanism {
            Mechanism::Direct => 0,
            _ => self.stages,
        }
    }

    pub fn claim(&self) -> Claim {
        self.mechanism.claim(self.copy_bytes, self.bypass_l1)
    }

    /// The completion protocol, as the report names it, for `consumers` computing threads (a
    /// direct build's own words come from its workload, which knows how its threads are grouped).
    pub fn protocol(&self, consumers: u32) -> String {
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
            Mechanism::Direct => "no staging: each thread loads its vectors of the tile straight into registers; the compute body's own barrier orders the row reduction".into(),
            Mechanism::Bulk | Mechanism::Tma => format!(
                "mbarrier full[s]: expect_tx + complete_tx, consumers wait parity (k/{s})&1; empty[s]: arrive count {} (one per consumer warp), {} waits parity before refill",
                consumers / 32,
                if self.warp_specialized { "a dedicated producer warp" } else { "consumer warp 0" }
            ),
        }
    }

    /// `protocol` with the L2 policy of the copies, where they carry one.
    pub fn with_policy(&self, protocol: String) -> String {
        match self.l2_evict_last {
            true => format!("{protocol}; its copies mark their L2 lines evict-last"),
            false => protocol,
        }
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
    pub fn defines(&self, b: &PipeBuild) -> Vec<String> {
        let copy = match self.mechanism.uses_mbarrier_ring() {
            true => 16,
            false => self.copy_bytes,
        };
        let mut d = vec![
            format!("-DDTYPE={}", b.dtype.kernel_code()),
            format!("-DCONSUMERS={}", b.consumers),
            format!("-DSTAGES={}", self.stages),
            format!("-DMECH={}", self.mechanism.kernel_code()),
            format!("-DCOPY_BYTES={copy}"),
            format!("-DCP_CG={}", u32::from(self.bypass_l1)),
            format!("-DWS={}", u32::from(self.warp_specialized)),
            format!("-DCONTROL={}", self.control.map_or(0, Control::code)),
            format!("-DSTRESS={}", b.instrument.stress),
            format!("-DTRACE_TILES={}", b.instrument.trace_tiles),
            format!("-DONLY={}", b.instrument.only),
            format!("-DFOLD={}", b.fold),
            format!("-DSPLIT={}", b.split),
            format!("-DMIN_BLOCKS={}", self.min_blocks),
            format!("-DL2_EVICT_LAST={}", u32::from(self.l2_evict_last)),
        ];
        if let Some(f) = self.mca_form {
            d.push(format!("-DMCA_FORM={}", f.code()));
        }
        // only where set, so every other build's cache key and SASS stay as they were
        if b.instrument.monitor {
            d.push(crate::monitor::BUILD_DEFINE.into());
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_select_the_mechanism() {
        let b = PipeBuild {
            dtype: DType::Bf16,
            consumers: 256,
            instrument: Instrument::CLEAN,
            fold: 1,
            split: 1,
        };
        let cp = Variant::control(Pipe::cpasync(2, 16), Control::SkipWait, "ctl");
        let d = cp.defines(&b);
        assert!(d.contains(&"-DMECH=2".to_string()));
        assert!(d.contains(&"-DCONTROL=1".to_string()));
        assert!(d.contains(&"-DCP_CG=1".to_string()));
        let tma = Pipe::ring(Mechanism::Tma, 3, true).defines(&b);
        assert!(
            tma.contains(&"-DWS=1".to_string()) && tma.contains(&"-DCOPY_BYTES=16".to_string())
        );
    }

    #[test]
    fn only_the_checking_build_is_monitored() {
        let mut b = PipeBuild {
            dtype: DType::Bf16,
            consumers: 256,
            instrument: Instrument::CLEAN,
            fold: 1,
            split: 1,
        };
        let v = Pipe::ring(Mechanism::Tma, 3, false);
        let monitored = |d: &[String]| d.iter().any(|d| d == crate::monitor::BUILD_DEFINE);
        assert!(!monitored(&v.defines(&b)));
        assert!(!monitored(&v.defines(&PipeBuild {
            instrument: Instrument::traced(8),
            ..b
        })));
        b.instrument = Instrument::STRESSED;
        let d = v.defines(&b);
        assert!(
            monitored(&d) && d.contains(&"-DSTRESS=3".to_string()),
            "{d:?}"
        );
    }

    #[test]
    fn requirements_name_what_is_wrong() {
        let cp = Pipe::cpasync(2, 16);
        assert_eq!(cp.unfit(90, 232448, 16384), None);
        let why = cp.unfit(75, 232448, 16384).unwrap();
        assert!(why.contains("needs sm_80"), "{why}");
        let tma = Pipe::ring(Mechanism::Tma, 4, false);
        assert!(tma.unfit(86, 232448, 16384).unwrap().contains("sm_90"));
        let why = tma.unfit(90, 32768, 16384).unwrap();
        assert!(why.contains("exceeds"), "{why}");
    }

    #[test]
    fn an_empty_selection_is_refused() {
        let all = vec![
            Pipe::new("sync", Mechanism::Sync, 1, 16),
            Pipe::cpasync(2, 16),
        ];
        for empty in ["", " ", ",", " , "] {
            let e = Variant::select(all.clone(), Some(empty))
                .unwrap_err()
                .to_string();
            assert!(e.contains("an empty list of variants"), "{e}");
        }
        for gap in ["sync,", ",sync", "sync,,cpasync"] {
            let e = Variant::select(all.clone(), Some(gap))
                .unwrap_err()
                .to_string();
            assert!(e.contains("has an empty entry"), "{gap}: {e}");
        }
        assert_eq!(
            Variant::select(all, Some("sync, cpasync")).unwrap().len(),
            2
        );
    }

    #[test]
    fn select_by_prefix_and_reject_unknown() {
        let all = vec![
            Pipe::new("sync", Mechanism::Sync, 1, 16),
            Pipe::cpasync(2, 16),
            Pipe::cpasync(3, 16),
            Pipe::cpasync(2, 8),
        ];
        let v = Variant::select(all.clone(), Some("sync,cpasync-cg")).unwrap();
        let names: Vec<&str> = v.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["sync", "cpasync-cg16-s2", "cpasync-cg16-s3"]);
        let e = Variant::select(all, Some("warp-magic"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("warp-magic") && e.contains("allowed"), "{e}");
    }

    #[test]
    fn a_pipe_keeps_everything_but_its_shape_when_shaped() {
        let p = Pipe::cpasync(3, 16).bounded(4);
        let v = p.clone().shaped(7u32);
        assert_eq!((v.shape, v.min_blocks, v.bypass_l1), (7, 4, true));
        assert_eq!(v.pipe(), p);
        // a variant recorded before min_blocks existed reads back unbounded
        let mut j = serde_json::to_value(&v).unwrap();
        j.as_object_mut().unwrap().remove("min_blocks");
        assert_eq!(
            serde_json::from_value::<Variant<u32>>(j)
                .unwrap()
                .min_blocks,
            0
        );
    }
}
