//! `tilepipe sass`: census, attestation, protocol check and annotated SASS of one variant.

use super::args::{GpuArgs, bounded};
use super::print;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::dtype::DType;

#[derive(Args)]
pub struct SassArgs {
    /// Variant name.
    variant: String,
    /// Compile for this architecture without a GPU (e.g. sm_90); default: the GPU's.
    #[arg(long)]
    arch: Option<tilepipe::arch::Arch>,
    #[arg(long, default_value = "bf16")]
    dtype: DType,
    #[arg(long, default_value_t = 4096)]
    hidden: usize,
    #[arg(long)]
    tile_rows: Option<usize>,
    /// Lines of listing shown around each movement instruction.
    #[arg(long, default_value_t = 2, value_parser = bounded::<0, 1000>())]
    context: usize,
    /// Writes the full listing here.
    #[arg(long)]
    listing: Option<PathBuf>,
    #[command(flatten)]
    gpu: GpuArgs,
}

pub fn cmd_sass(a: SassArgs) -> anyhow::Result<ExitCode> {
    let ev = tilepipe::evidence::sass::inspect(
        a.gpu.workload.rows()?,
        &a.variant,
        a.arch,
        tilepipe::pipeline::BuildConfig::checked(a.dtype, a.hidden, a.tile_rows)?,
        a.gpu.cache(),
        a.gpu.device,
    )?;
    ev.warnings.iter().for_each(|w| print::notice(w));
    print::sass(
        &ev.header,
        &tilepipe::evidence::sass::excerpt(&ev.evidence.listing, a.context),
    );
    if let Some(path) = &a.listing {
        tilepipe::fsio::write_atomic(path, ev.evidence.listing.as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}
