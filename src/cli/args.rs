//! The clap argument groups that several commands share.

use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::sync::Arc;
use tilepipe::dtype::DType;
use tilepipe::gpu::cache::Cache;
use tilepipe::harness::{Engine, Harness};
use tilepipe::meminfo;
use tilepipe::pipeline::{BuildConfig, Variant};
use tilepipe::progress::Progress;
use tilepipe::workload::gemm::Layout;
use tilepipe::workload::{self, View, Workload};

#[derive(Args, Clone)]
pub struct ProblemArgs {
    /// Rows of the activation view.
    #[arg(long, default_value_t = 262_144)]
    pub tokens: usize,
    /// Elements per row.
    #[arg(long, default_value_t = 4096)]
    pub hidden: usize,
    /// Elements between row starts (default: hidden, a dense view).
    #[arg(long)]
    pub row_stride: Option<usize>,
    /// Elements before the first row in the allocation.
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// Elements in the underlying allocation (default: just enough for the view).
    #[arg(long)]
    pub alloc: Option<usize>,
    /// Element type: f32, f16, bf16.
    #[arg(long, default_value = "bf16")]
    pub dtype: DType,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Rows per tile (default: about 16 KB per tile); a slot of tile rows x hidden must fit in
    /// 227 KiB.
    #[arg(long)]
    pub tile_rows: Option<usize>,
}

impl ProblemArgs {
    /// The view, checked before any GPU work with the tile height and the host memory its buffers
    /// take.
    pub fn view(&self) -> tilepipe::Result<View> {
        let view = View::new(
            self.tokens,
            self.hidden,
            self.row_stride,
            self.offset,
            self.alloc,
            self.dtype,
        )?;
        BuildConfig::checked(self.dtype, self.hidden, self.tile_rows)?;
        meminfo::check(
            "the view's host buffers (input allocation, output, baseline output)",
            view.host_bytes(self.dtype),
            meminfo::available(),
        )?;
        Ok(view)
    }
}

/// How a command prints its results: table (the terminal), markdown (GitHub tables for a pull
/// request), csv or json; the last three alone on stdout.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Csv,
    Json,
}

/// The workload's variants and controls together.
pub fn with_controls(w: &dyn Workload) -> Vec<Variant> {
    w.catalogue().into_iter().chain(w.controls()).collect()
}

/// A usize within `lo..=hi`, for clap: the error names the range allowed.
pub fn bounded<const LO: u64, const HI: u64>() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(LO..=HI)
}

/// What `--workload` names: a row workload (rmsnorm, copy) or the GEMM, whose engine is its own.
#[derive(Clone, Copy)]
pub enum WorkloadArg {
    Rows(&'static dyn Workload),
    Gemm,
}

impl WorkloadArg {
    /// The row workload, or an error saying which commands take the GEMM.
    pub fn rows(self) -> tilepipe::Result<&'static dyn Workload> {
        match self {
            WorkloadArg::Rows(w) => Ok(w),
            WorkloadArg::Gemm => Err(tilepipe::Error::InvalidArgument(
                "--workload gemm is taken by `run`, `check`, `sweep` and `timeline` only; allowed here: rmsnorm, copy"
                    .into(),
            )),
        }
    }
}

/// A workload by name, for clap: the error lists the names allowed.
pub fn workload_arg(name: &str) -> Result<WorkloadArg, String> {
    if name == "gemm" {
        return Ok(WorkloadArg::Gemm);
    }
    workload::by_name(name)
        .map(WorkloadArg::Rows)
        .map_err(|_| format!("no workload '{name}' (allowed: rmsnorm, copy, gemm)"))
}

/// The GEMM's problem: C[M x N] = A[M x K] * B.
#[derive(Args, Clone)]
pub struct GemmArgs {
    /// GEMM (--workload gemm): rows of A and C.
    #[arg(long, default_value_t = 4096)]
    pub m: usize,
    /// GEMM: columns of C.
    #[arg(long, default_value_t = 4096)]
    pub n: usize,
    /// GEMM: the reduction dimension.
    #[arg(long, default_value_t = 4096)]
    pub k: usize,
    /// GEMM: B as [K x N] row-major (kn, the CUDA samples') or [N x K] (nk, weights: C = A B^T).
    #[arg(long, value_enum, default_value_t = Layout::Kn)]
    pub layout: Layout,
}

#[derive(Args, Clone)]
pub struct GpuArgs {
    /// What the kernels compute on each tile: rmsnorm (RMSNorm + GELU), copy (the identity,
    /// movement alone) or gemm (C = A B: `run`, `check`, `sweep` and `timeline`).
    #[arg(long, default_value = "rmsnorm", value_parser = workload_arg)]
    pub workload: WorkloadArg,
    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Cubin cache folder (default: TILEPIPE_CACHE_DIR or ~/.cache/tilepipe).
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Compile everything afresh and store nothing (also TILEPIPE_NO_CACHE=1).
    #[arg(long)]
    pub no_cache: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

impl GpuArgs {
    pub fn cache(&self) -> Cache {
        Cache::configure(self.cache_dir.clone(), self.no_cache)
    }

    pub fn open(&self) -> tilepipe::Result<Harness> {
        self.open_for(Format::Table)
    }

    /// Opens the GPU for a command printing `format`: test lines go to stdout only beside the
    /// terminal's table, so that another format's document is alone there.
    pub fn open_for(&self, format: Format) -> tilepipe::Result<Harness> {
        Ok(Harness {
            workload: self.workload.rows()?,
            engine: self.engine(format)?,
        })
    }

    /// The GPU without a row workload (the GEMM's engine).
    pub fn engine(&self, format: Format) -> tilepipe::Result<Engine> {
        let sink = super::progress::Terminal::new(self.quiet, format == Format::Table);
        Engine::open(self.device, self.cache(), Progress::new(Arc::new(sink)))
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum PeerArg {
    /// PyTorch: eager and torch.compile beside a row workload, torch.matmul and torch.compile's
    /// Triton matmul beside a GEMM.
    Torch,
}

/// Other tools run on the same problem beside tilepipe's variants (`run`, `sweep`).
#[derive(Args)]
pub struct PeerArgs {
    /// Also run the same problem through other tools, validated and timed alike: `torch` (PyTorch
    /// eager and torch.compile, or beside a GEMM torch.matmul and Triton's matmul through
    /// torch.compile, in --python; skipped with the reason when either is missing).
    #[arg(long, value_enum)]
    peers: Option<PeerArg>,
    /// The Python that runs the torch peers.
    #[arg(long, default_value = "python3")]
    python: PathBuf,
}

impl PeerArgs {
    /// The Python to run the torch peers with, when they were asked for.
    pub fn torch_python(&self) -> Option<PathBuf> {
        self.peers.map(|PeerArg::Torch| self.python.clone())
    }

    /// A GEMM sweep has cuBLAS beside every point; torch's GEMM peers join one `run`.
    pub fn refuse_with_gemm_sweep(&self) -> anyhow::Result<()> {
        if self.peers.is_some() {
            anyhow::bail!(tilepipe::Error::InvalidArgument(
                "--peers torch in a sweep takes the row workloads (rmsnorm, copy); a GEMM sweep has cuBLAS beside every point, and `run --workload gemm --peers torch` puts torch.matmul and Triton's matmul beside one GEMM".into()
            ));
        }
        Ok(())
    }
}
