//! Workloads: what a pipeline computes on its tiles, and everything about it that is not the
//! pipeline: its problem, its variants' tile shapes, its inputs and device buffers, its kernel
//! parameters, how its output is judged, what it moves and computes, and the shapes it is
//! validated on. The engine and the commands drive any workload through this trait alone; only
//! `all()` and `visit` name them.
//!
//! Adding a workload: its compute body on the pipeline templates (`kernels/<name>.cu`), its folder
//! here implementing `Workload`, and one line in the `workloads!` list below.

pub mod attention;
pub mod copy;
pub mod gemm;
pub mod rmsnorm;
pub mod rows;
mod walk;

use crate::dtype::DType;
use crate::evidence::sass::{Attestation, Census};
use crate::gpu::{DevBuf, DeviceInfo, Gpu};
use crate::peers::Subject;
use crate::pipeline::{Ctl, Instrument, Variant};
use crate::results::Peer;
pub use crate::results::{Bound, Grid};
use crate::verdict::Verdict;
use crate::{Error, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt::Debug;
use std::hash::Hash;
pub use walk::Walk;

/// A kernel source embedded in the binary and the entry point it defines (NVRTC names the source
/// `<entry>.cu` in errors and line info).
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// Its path under kernels/ (where TILEPIPE_KERNELS may replace it).
    pub file: &'static str,
    pub text: &'static str,
    pub entry: &'static str,
    /// Headers of its own beside the shared ones (kernels/common, kernels/pipeline): path under
    /// kernels/ and text.
    pub headers: &'static [(&'static str, &'static str)],
}

/// Bytes a perfect kernel moves through device memory, and the floating-point operations it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Traffic {
    pub bytes: u64,
    pub flops: u64,
}

/// One validation shape: a problem, and how many blocks walk it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case<P> {
    pub name: String,
    pub problem: P,
    pub grid: Grid,
}

impl<P> Case<P> {
    pub fn new(name: &str, problem: P, grid: Grid) -> Case<P> {
        Case {
            name: name.to_string(),
            problem,
            grid,
        }
    }
}

/// A workload's problem: what a user asks it to compute on.
pub trait Problem:
    Clone + Debug + PartialEq + Serialize + DeserializeOwned + Send + Sync + 'static
{
    fn dtype(&self) -> DType;
    /// The problem in a few words, for tables and test names.
    fn label(&self) -> String;
    /// Host memory a run of it holds at once (checked against what the machine has, before any
    /// GPU work).
    fn host_bytes(&self) -> u64;
}

/// A variant's tile shape, as its workload defines it.
pub trait Shape:
    Clone + Debug + PartialEq + Eq + Hash + Serialize + DeserializeOwned + Send + Sync + 'static
{
}
impl<T> Shape for T where
    T: Clone + Debug + PartialEq + Eq + Hash + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

/// How one build of a variant is compiled and launched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Build {
    /// Every -D option: the pipeline's, then the workload's.
    pub defines: Vec<String>,
    /// The build uses instructions of its architecture alone (sm_90a: wgmma, setmaxnreg).
    pub arch_specific: bool,
    pub threads: u32,
    pub dynamic_smem: u32,
    /// Blocks of a thread-block cluster (the kernel's `__cluster_dims__`), 1 without one.
    pub cluster: u32,
}

/// What a variant's output is compared with besides the f64 reference: the output of a correct
/// variant doing the same arithmetic (bit for bit, with that output's own verdicts), and a vendor
/// library's (within bounds).
#[derive(Clone, Copy, Default)]
pub struct Refs<'a> {
    pub twin: Option<(&'a [u8], &'a [Verdict])>,
    pub vendor: Option<&'a [u8]>,
}

/// A vendor library beside the variants (cuBLAS beside the GEMM): its output a second reference,
/// its time what the variants are measured against.
pub trait Vendor<B>: Send + Sync {
    /// Its row before it ran: name, version, how it computes.
    fn peer(&self) -> Peer;
    /// Its output on the problem in `d` (in a buffer of its own).
    fn output(&self, gpu: &Gpu, d: &B) -> Result<Vec<u8>>;
    /// One launch on `d`, as timed.
    fn launch(&self, gpu: &Gpu, d: &mut B) -> Result<()>;
}

/// The flags a problem or a suite can be given on the command line, each `None` when not given.
/// A workload takes the ones it owns and refuses the others by name.
#[derive(Debug, Clone, Default)]
pub struct ProblemFlags {
    pub dtype: Option<DType>,
    pub tokens: Option<usize>,
    pub hidden: Option<usize>,
    pub row_stride: Option<usize>,
    pub offset: Option<usize>,
    pub alloc: Option<usize>,
    pub out_row_stride: Option<usize>,
    pub out_offset: Option<usize>,
    pub tile_rows: Option<usize>,
    pub m: Option<usize>,
    pub n: Option<usize>,
    pub k: Option<usize>,
    pub layout: Option<gemm::Layout>,
    pub batch: Option<usize>,
    pub heads: Option<usize>,
    pub seqlen: Option<usize>,
    pub head_dim: Option<usize>,
    /// `--causal` given (a switch: None when absent).
    pub causal: Option<bool>,
}

impl ProblemFlags {
    /// The flags given, by name, of those in `owned`'s complement: what a workload must refuse.
    pub fn given_except(&self, owned: &[&str]) -> Vec<&'static str> {
        let given = [
            ("--dtype", self.dtype.is_some()),
            ("--tokens", self.tokens.is_some()),
            ("--hidden", self.hidden.is_some()),
            ("--row-stride", self.row_stride.is_some()),
            ("--offset", self.offset.is_some()),
            ("--alloc", self.alloc.is_some()),
            ("--out-row-stride", self.out_row_stride.is_some()),
            ("--out-offset", self.out_offset.is_some()),
            ("--tile-rows", self.tile_rows.is_some()),
            ("--m", self.m.is_some()),
            ("--n", self.n.is_some()),
            ("--k", self.k.is_some()),
            ("--layout", self.layout.is_some()),
            ("--batch", self.batch.is_some()),
            ("--heads", self.heads.is_some()),
            ("--seqlen", self.seqlen.is_some()),
            ("--head-dim", self.head_dim.is_some()),
            ("--causal", self.causal.is_some()),
        ];
        given
            .into_iter()
            .filter(|(f, g)| *g && !owned.contains(f))
            .map(|(f, _)| f)
            .collect()
    }

    /// An error naming the flags `workload` does not take, if any were given.
    pub fn refuse_others(&self, workload: &str, owned: &[&str]) -> Result<()> {
        let others = self.given_except(owned);
        if others.is_empty() {
            return Ok(());
        }
        Err(not_taken(&others, workload, owned))
    }
}

/// The one refusal of flags a workload does not take, for every command: which were given, and
/// which that workload takes instead.
pub fn not_taken(flags: &[&str], workload: &str, takes: &[&str]) -> Error {
    Error::InvalidArgument(format!(
        "{} not taken by --workload {workload} (allowed: {})",
        flags.join(", "),
        takes.join(", ")
    ))
}

pub trait Workload: Send + Sync + 'static {
    type Problem: Problem;
    type Shape: Shape;
    /// Seeded host inputs of one problem (and what the reference needs of them).
    type Inputs: Send + Sync;
    /// One problem's buffers on the device.
    type Buffers: Send;
    /// The kernel's parameters, passed by value.
    type Params: bytemuck::Pod;

    fn name(&self) -> &'static str;
    /// The computation in one line, for tables and the report.
    fn formula(&self) -> &'static str;
    fn kernel(&self) -> KernelSource;
    /// The epsilon built into the kernel, where the formula has one.
    fn eps(&self) -> Option<f64> {
        None
    }
    fn bound(&self) -> Bound;

    /// The problem the command line describes, each flag checked; flags of other workloads are
    /// refused by name.
    fn problem(&self, flags: &ProblemFlags) -> Result<Self::Problem>;
    /// The command-line flags that describe `p` (for a process started to run part of the work).
    fn problem_args(&self, p: &Self::Problem) -> Vec<String>;

    /// The precisions the workload is built for (a suite's default).
    fn dtypes(&self) -> &'static [DType] {
        &DType::ALL
    }

    /// The correct variants for `dtype`, sequential baseline first.
    fn catalogue(&self, dtype: DType) -> Vec<Variant<Self::Shape>>;
    /// Deliberately broken variants; never timed or ranked.
    fn controls(&self, dtype: DType) -> Vec<Variant<Self::Shape>>;
    /// `v` as it must be built to take every one of `problems` (narrower copies, say), renamed
    /// where its name says what changed; or unchanged.
    fn fit(&self, v: &Variant<Self::Shape>, problems: &[&Self::Problem]) -> Variant<Self::Shape>;
    /// Why `v` cannot run on this GPU for `p` (CUTLASS's can_implement): every skip carries its
    /// reason.
    fn can_implement(
        &self,
        v: &Variant<Self::Shape>,
        p: &Self::Problem,
        gpu: &DeviceInfo,
    ) -> std::result::Result<(), String>;
    /// The correct variant whose output `v`'s may be compared with bit for bit (the same
    /// arithmetic), among `correct` (baseline first); a control's twin.
    fn twin<'a>(
        &self,
        v: &Variant<Self::Shape>,
        correct: &'a [Variant<Self::Shape>],
    ) -> Option<&'a Variant<Self::Shape>>;
    /// The tile a variant computes, for tables ("-" where the run's tile is every variant's).
    fn tile_label(&self, v: &Variant<Self::Shape>, p: &Self::Problem) -> String;

    /// How `v` is compiled and launched for `p` with `instrument` added.
    fn build(&self, v: &Variant<Self::Shape>, p: &Self::Problem, instrument: Instrument) -> Build;
    /// Why a loaded build with `registers` a thread can never run, if it cannot (a register
    /// hand-over the launch does not cover, say).
    fn check_loaded(
        &self,
        _v: &Variant<Self::Shape>,
        _p: &Self::Problem,
        _registers: u32,
    ) -> std::result::Result<(), String> {
        Ok(())
    }
    /// What the SASS must show of the math, where the workload claims some (tensor cores).
    fn math(
        &self,
        _v: &Variant<Self::Shape>,
        _p: &Self::Problem,
        _census: Option<&Census>,
        _log: &str,
    ) -> Option<Attestation> {
        None
    }
    /// The completion protocol, as the report names it.
    fn completion(&self, v: &Variant<Self::Shape>, p: &Self::Problem) -> String;
    /// Bytes one copy instruction moves.
    fn bytes_per_copy(&self, v: &Variant<Self::Shape>, p: &Self::Problem) -> u32;

    /// Seeded random inputs (never zeros or constants).
    fn inputs(&self, p: &Self::Problem, seed: u64) -> Self::Inputs;
    fn upload(&self, gpu: &Gpu, x: &Self::Inputs) -> Result<Self::Buffers>;
    /// The buffer the kernel writes, poisoned before each validation launch and read back.
    fn output<'a>(&self, d: &'a mut Self::Buffers) -> &'a mut DevBuf;
    /// The launch's parameters for `v` on `d`, with the pipeline's control block `ctl`.
    fn params(
        &self,
        gpu: &Gpu,
        d: &Self::Buffers,
        v: &Variant<Self::Shape>,
        ctl: Ctl,
    ) -> Result<Self::Params>;
    /// The parameter sets timed launches rotate through: one, or enough copies of the inputs
    /// that every launch reads device memory (added to `d`).
    fn timing_params(
        &self,
        gpu: &Gpu,
        d: &mut Self::Buffers,
        v: &Variant<Self::Shape>,
        ctl: Ctl,
    ) -> Result<Vec<Self::Params>>;
    /// Blocks of a launch of `v` on `p` with `grid`, `resident` blocks fitting on the GPU at once.
    fn grid(&self, v: &Variant<Self::Shape>, p: &Self::Problem, grid: Grid, resident: u32) -> u32;

    /// `out` judged against the f64 reference, and against `refs` where given; every verdict
    /// must pass.
    fn judge(&self, out: &[u8], x: &Self::Inputs, refs: Refs) -> Vec<Verdict>;
    fn traffic(&self, p: &Self::Problem) -> Traffic;

    /// The shapes `run` validates before timing, the user's problem last.
    fn run_cases(&self, p: &Self::Problem) -> Result<Vec<Case<Self::Problem>>>;
    /// Runs of each stressed build in the suite, when a control gets `runs`.
    fn stress_runs(&self, runs: usize) -> usize {
        runs
    }
    /// The shapes a variant is validated on again under stress (random sleeps).
    fn stress_cases(
        &self,
        p: &Self::Problem,
        v: &Variant<Self::Shape>,
        gpu: &DeviceInfo,
    ) -> Result<Vec<Case<Self::Problem>>>;
    /// The command-line flag of the suite's own axis (besides the precisions).
    fn suite_axis(&self) -> &'static str;
    /// The suite's groups from the command line: a problem each (a precision and the workload's
    /// own suite axis), named.
    fn suite_groups(
        &self,
        dtypes: &[DType],
        axis: Option<&str>,
    ) -> Result<Vec<(String, Self::Problem)>>;
    /// The suite's shapes in one group.
    fn suite_cases(&self, group: &Self::Problem, seed: u64) -> Result<Vec<Case<Self::Problem>>>;
    /// Where a control is run, and whether it runs its stressed build.
    fn control_cases(
        &self,
        group: &Self::Problem,
        v: &Variant<Self::Shape>,
        gpu: &DeviceInfo,
    ) -> Result<(Vec<Case<Self::Problem>>, Instrument)>;

    /// The small problem each variant is probed on once under compute-sanitizer, and its grid.
    fn sanitize_case(&self) -> Result<Case<Self::Problem>>;
    /// The variants `check --sanitize` puts under the sanitizer when none are named: a few
    /// correct pipelines of each mechanism and controls it must flag.
    fn sanitize_variants(&self) -> &'static str;
    /// A vendor library to measure against and judge by, where the workload has one (its row,
    /// skipped with the reason, where it cannot be loaded).
    fn vendor(&self, _gpu: &Gpu) -> Option<VendorOrWhy<Self::Buffers>> {
        None
    }
    /// The problem as torch sees it, with the inputs and (where one passed) the vendor's output.
    fn peer_subject<'a>(
        &'a self,
        p: &'a Self::Problem,
        x: &'a Self::Inputs,
        vendor: Option<&'a [u8]>,
    ) -> Box<dyn Subject + 'a>;
    /// The sweep's size axis (the trip count a pipeline fills and drains over): its name and the
    /// values swept by default.
    fn sweep_axis(&self) -> (&'static str, &'static [usize]);
    /// The names a sweep's mechanism axis takes, and those (with the stages) swept by default.
    fn sweep_mechanisms(
        &self,
    ) -> (
        &'static [&'static str],
        &'static [&'static str],
        &'static [u32],
    );
    /// The variant a mechanism name and a stage count name in `dtype` (one stage of a pipelined
    /// mechanism is the sequential baseline), if the workload has one.
    fn sweep_variant(
        &self,
        mechanism: &str,
        stages: u32,
        dtype: DType,
    ) -> Option<Variant<Self::Shape>>;
    /// A sweep point's problem: `base` (from the command line) in `dtype` at `size` on the size
    /// axis, with tiles of `tile_rows` rows where the workload tiles that way.
    fn sweep_problem(
        &self,
        base: &Self::Problem,
        dtype: DType,
        size: usize,
        tile_rows: Option<usize>,
    ) -> Result<Self::Problem>;
    /// A point's configuration besides its size, and its configuration and size, in words (the
    /// record's `config` and its key).
    fn sweep_point(&self, p: &Self::Problem) -> (String, String);
    /// The problem a sweep's builds are validated on (its run cases) before any point of up to
    /// `largest` is timed.
    fn sweep_check(&self, largest: &Self::Problem) -> Result<Self::Problem>;
    /// Timing buffers for a sweep's points up to `largest`, where one allocation can hold them
    /// all (`resize` then sets each point); by default the inputs of `largest` alone.
    fn sweep_buffers(
        &self,
        gpu: &Gpu,
        largest: &Self::Problem,
        seed: u64,
    ) -> Result<Self::Buffers> {
        self.upload(gpu, &self.inputs(largest, seed))
    }
    /// `d` set to hold `p` for timing, if its allocation takes it.
    fn resize(&self, _d: &mut Self::Buffers, _p: &Self::Problem) -> bool {
        false
    }
    /// How a launch of `blocks` blocks of `v` walks `p`: the blocks that own steps, the steps
    /// of them all and the most one block takes (what the monitor must see, the model counts).
    fn walk(&self, v: &Variant<Self::Shape>, p: &Self::Problem, blocks: u32) -> Walk;
    /// Whether a sweep also times each pipeline's stages alone (copy-only and compute-only
    /// builds) for the pipeline model.
    fn stage_probes(&self) -> bool {
        false
    }
    /// Whether the sweep has a tile-height axis (`tile_rows`).
    fn tile_axis(&self) -> bool {
        false
    }
    /// The workload's ladder of optimisation steps (what each adds over the one before), where it
    /// has one, and the step a variant stands on.
    fn ladder(&self) -> &'static [&'static str] {
        &[]
    }
    fn ladder_step(&self, _v: &Variant<Self::Shape>) -> Option<usize> {
        None
    }
    /// The variants a timeline traces when none are named: one per kind of pipeline.
    fn traced(&self) -> &'static str;
    /// A note every run of this workload carries about how it was timed, if any.
    fn timing_note(&self) -> Option<&'static str> {
        None
    }
}

/// Something to do with a workload whose type the caller does not know: `visit` calls it with the
/// one the user named.
/// A variant of workload `W`.
pub type VariantOf<W> = Variant<<W as Workload>::Shape>;

/// A vendor library loaded, or the row that says why it could not be.
pub type VendorOrWhy<B> = std::result::Result<Box<dyn Vendor<B>>, Peer>;

pub trait Visitor {
    type Output;
    fn visit<W: Workload>(self, w: &'static W) -> Self::Output;
}

macro_rules! workloads {
    ($($name:literal => $w:expr),+ $(,)?) => {
        /// Every workload's name, the default first.
        pub fn all() -> Vec<&'static str> {
            vec![$($name),+]
        }

        /// Calls `v` with the workload named `name`, or says which names are allowed.
        pub fn visit<V: Visitor>(name: &str, v: V) -> Result<V::Output> {
            match name {
                $($name => Ok(v.visit(&$w)),)+
                _ => Err(Error::InvalidArgument(format!(
                    "no workload '{name}' (allowed: {})",
                    all().join(", ")
                ))),
            }
        }
    };
}

workloads! {
    "rmsnorm" => rows::Rows(&rmsnorm::RmsNorm),
    "copy" => rows::Rows(&copy::Copy),
    "gemm" => gemm::Gemm,
    "attention" => attention::Attention,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::Variant;

    /// Whether `check --sanitize`'s default list names only variants the workload has.
    struct SanitizeDefaults;
    impl Visitor for SanitizeDefaults {
        type Output = std::result::Result<usize, String>;
        fn visit<W: Workload>(self, w: &'static W) -> Self::Output {
            let all = DType::ALL
                .iter()
                .flat_map(|&d| w.catalogue(d).into_iter().chain(w.controls(d)))
                .collect();
            Variant::select(all, Some(w.sanitize_variants()))
                .map(|v| v.len())
                .map_err(|e| e.to_string())
        }
    }

    #[test]
    fn every_workloads_sanitizer_defaults_exist_and_an_unknown_name_is_refused() {
        for name in all() {
            let picked = visit(name, SanitizeDefaults).unwrap();
            assert!(picked.as_ref().is_ok_and(|&n| n >= 4), "{name}: {picked:?}");
        }
        let e = visit("attn", SanitizeDefaults).unwrap_err().to_string();
        assert!(
            e.contains("no workload 'attn'") && e.contains("rmsnorm, copy, gemm, attention"),
            "{e}"
        );
    }
}
