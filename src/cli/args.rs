//! The clap argument groups that several commands share. A problem's flags are given as options:
//! the workload named takes the ones it owns and refuses the others by name.

use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::sync::Arc;
use tilepipe::dtype::DType;
use tilepipe::engine::Engine;
use tilepipe::gpu::cache::{Cache, DIR_ENV};
use tilepipe::meminfo;
use tilepipe::progress::Progress;
use tilepipe::workload::gemm::Layout;
use tilepipe::workload::{Problem, ProblemFlags, Workload};

#[derive(Args, Clone)]
pub struct ProblemArgs {
    /// Row workloads: rows of the activation view [default: 262144].
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub tokens: Option<usize>,
    /// Row workloads: elements per row [default: 4096].
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub hidden: Option<usize>,
    /// Row workloads: elements between row starts (default: hidden, a dense view).
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub row_stride: Option<usize>,
    /// Row workloads: elements before the first row in the allocation [default: 0].
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub offset: Option<usize>,
    /// Row workloads: elements in the underlying allocation (default: just enough for the view).
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub alloc: Option<usize>,
    /// Row workloads: elements between the output's row starts (default: hidden, a dense output).
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub out_row_stride: Option<usize>,
    /// Row workloads: elements before the output's first row in its allocation [default: 0].
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub out_offset: Option<usize>,
    /// Row workloads: rows per tile (default: about 16 KB per tile); a slot of tile rows x hidden
    /// must fit in 227 KiB.
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub tile_rows: Option<usize>,
    /// GEMM: rows of A and C [default: 4096].
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub m: Option<usize>,
    /// GEMM: columns of C [default: 4096].
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub n: Option<usize>,
    /// GEMM: the reduction dimension [default: 4096].
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub k: Option<usize>,
    /// GEMM: B as [K x N] row-major (kn, the CUDA samples') or [N x K] (nk, weights: C = A B^T)
    /// [default: kn].
    #[arg(long, value_enum)]
    pub layout: Option<Layout>,
    /// Attention: sequences in the batch [default: 4].
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub batch: Option<usize>,
    /// Attention: heads of each sequence [default: 16].
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub heads: Option<usize>,
    /// Attention: tokens of each sequence, queries and keys alike [default: 4096].
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub seqlen: Option<usize>,
    /// Attention: elements of a head, 64 or 128 [default: 128].
    #[arg(long, allow_negative_numbers = true, value_parser = whole)]
    pub head_dim: Option<usize>,
    /// Attention: a causal mask (query i sees keys 0..=i) [default: none].
    #[arg(long)]
    pub causal: bool,
    /// Element type: f32, f16, bf16 [default: bf16].
    #[arg(long)]
    pub dtype: Option<DType>,
    /// Seed of the random inputs: a whole number from 0 to 18446744073709551615.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = seed)]
    pub seed: u64,
}

/// A size, count or offset: a whole number (the workload then says which it can take, in one
/// line, as for 0).
fn whole(s: &str) -> Result<usize, String> {
    s.parse::<usize>()
        .map_err(|_| format!("'{s}' is not a whole number (allowed: 0, 1, 2, ...)"))
}

pub fn seed(s: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|_| {
        format!(
            "'{s}' is not a seed (allowed: a whole number from 0 to {})",
            u64::MAX
        )
    })
}

impl ProblemArgs {
    pub fn flags(&self) -> ProblemFlags {
        ProblemFlags {
            dtype: self.dtype,
            tokens: self.tokens,
            hidden: self.hidden,
            row_stride: self.row_stride,
            offset: self.offset,
            alloc: self.alloc,
            out_row_stride: self.out_row_stride,
            out_offset: self.out_offset,
            tile_rows: self.tile_rows,
            m: self.m,
            n: self.n,
            k: self.k,
            layout: self.layout,
            batch: self.batch,
            heads: self.heads,
            seqlen: self.seqlen,
            head_dim: self.head_dim,
            causal: self.causal.then_some(true),
        }
    }

    /// The problem `w` takes from these flags, checked before any GPU work with the host memory
    /// its buffers take.
    pub fn problem<W: Workload>(&self, w: &W) -> tilepipe::Result<W::Problem> {
        let p = w.problem(&self.flags())?;
        meminfo::check(
            "the problem's host buffers",
            p.host_bytes(),
            meminfo::available(),
        )?;
        Ok(p)
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

/// A usize within `lo..=hi`, for clap: the error, for a number out of range, negative or not a
/// number at all, names the range allowed.
pub fn bounded<const LO: u64, const HI: u64>()
-> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    |s: &str| {
        s.parse::<u64>()
            .ok()
            .filter(|v| (LO..=HI).contains(v))
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| {
                format!("'{s}' is not allowed (allowed: a whole number from {LO} to {HI})")
            })
    }
}

/// `bounded` for a u32 field.
pub fn bounded32<const LO: u32, const HI: u32>()
-> impl Fn(&str) -> Result<u32, String> + Clone + Send + Sync + 'static {
    |s: &str| {
        s.parse::<u32>()
            .ok()
            .filter(|v| (LO..=HI).contains(v))
            .ok_or_else(|| {
                format!("'{s}' is not allowed (allowed: a whole number from {LO} to {HI})")
            })
    }
}

/// A workload by name, for clap: the error lists the names allowed.
fn workload_name(name: &str) -> Result<String, String> {
    match tilepipe::workload::all().contains(&name) {
        true => Ok(name.to_string()),
        false => Err(format!(
            "no workload '{name}' (allowed: {})",
            tilepipe::workload::all().join(", ")
        )),
    }
}

#[derive(Args, Clone)]
pub struct GpuArgs {
    /// What the kernels compute on each tile: rmsnorm (RMSNorm + GELU over row tiles), copy (the
    /// identity, movement alone), gemm (C = A B) or attention (softmax(Q K^T) V, K/V tiles).
    #[arg(long, default_value = "rmsnorm", value_parser = workload_name)]
    pub workload: String,
    /// GPU ordinal.
    #[arg(long, default_value_t = 0, value_parser = bounded::<0, 1023>())]
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

    /// The cubin cache folder, from the flag or TILEPIPE_CACHE_DIR, judged before any work: a file,
    /// or a folder that cannot be made or written, is refused.
    pub fn judge(&self) -> tilepipe::Result<()> {
        let from_user = self.cache_dir.is_some() || std::env::var_os(DIR_ENV).is_some();
        match self.cache().dir() {
            Some(dir) if from_user => tilepipe::fsio::writable_folder(dir, "cubin cache folder"),
            _ => Ok(()),
        }
    }

    /// Opens the GPU for a command printing `format`: test lines go to stdout only beside the
    /// terminal's table, so that another format's document is alone there.
    pub fn engine(&self, format: Format) -> tilepipe::Result<Engine> {
        // the cache folder is judged before the GPU opens
        self.judge()?;
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
}
