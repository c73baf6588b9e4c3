//! `tilepipe sass`: census, attestation, protocol check and annotated SASS of one variant, for the
//! workload named.

use super::args::{GpuArgs, ProblemArgs, bounded};
use super::print;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::commands::sass::inspect;
use tilepipe::evidence::sass::excerpt;
use tilepipe::workload::{Visitor, Workload};

#[derive(Args)]
pub struct SassArgs {
    /// Variant name.
    variant: String,
    /// Compile for this architecture without a GPU (e.g. sm_90); default: the GPU's.
    #[arg(long)]
    arch: Option<tilepipe::arch::Arch>,
    #[command(flatten)]
    problem: ProblemArgs,
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
    let name = a.gpu.workload.clone();
    tilepipe::workload::visit(&name, a)?
}

impl Visitor for SassArgs {
    type Output = anyhow::Result<ExitCode>;

    fn visit<W: Workload>(self, w: &'static W) -> Self::Output {
        let a = self;
        let p = w.problem(&a.problem.flags())?;
        // the name, the cache folder and the listing's path are judged before the GPU opens
        tilepipe::commands::probe::named(w, tilepipe::workload::Problem::dtype(&p), &a.variant)?;
        a.gpu.judge()?;
        if let Some(path) = &a.listing {
            tilepipe::fsio::writable_file(path, "--listing")?;
        }
        let arch = match a.arch {
            Some(arch) => arch,
            None => tilepipe::gpu::Gpu::open(a.gpu.device)?.info.arch,
        };
        let ev = inspect(w, &a.variant, &p, arch, &a.gpu.cache())?;
        ev.warnings.iter().for_each(|w| print::notice(w));
        print::sass(&ev.header, &excerpt(&ev.evidence.listing, a.context));
        if let Some(path) = &a.listing {
            tilepipe::fsio::write_atomic(path, ev.evidence.listing.as_bytes())?;
        }
        Ok(ExitCode::SUCCESS)
    }
}
