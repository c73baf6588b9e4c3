//! The clap argument groups that several commands share.

use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use tilepipe::dtype::DType;
use tilepipe::gpu::cache::Cache;
use tilepipe::harness::Harness;
use tilepipe::progress::Progress;
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
    /// Rows per tile (default: about 16 KB per tile).
    #[arg(long)]
    pub tile_rows: Option<usize>,
}

impl ProblemArgs {
    pub fn view(&self) -> tilepipe::Result<View> {
        View::new(
            self.tokens,
            self.hidden,
            self.row_stride,
            self.offset,
            self.alloc,
            self.dtype,
        )
    }
}

/// A workload by name, for clap: the error lists the names allowed.
pub fn workload_arg(name: &str) -> Result<&'static dyn Workload, String> {
    workload::by_name(name).map_err(|e| e.to_string())
}

#[derive(Args, Clone)]
pub struct GpuArgs {
    /// What the kernels compute on each tile: rmsnorm (RMSNorm + GELU) or copy (the identity,
    /// movement alone).
    #[arg(long, default_value = "rmsnorm", value_parser = workload_arg)]
    pub workload: &'static dyn Workload,
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
        Harness::open(
            self.device,
            self.workload,
            self.cache(),
            Progress::new(Arc::new(super::progress::Terminal::new(self.quiet))),
        )
    }
}
