//! `tilepipe model`: the pipeline model against a sweep's measurements (host only).

use super::print;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::sweep;

#[derive(Args)]
pub struct ModelArgs {
    /// A sweep.jsonl with copy-only and compute-only probes.
    #[arg(long)]
    from: PathBuf,
}

pub fn cmd_model(a: ModelArgs) -> anyhow::Result<ExitCode> {
    let records = sweep::read(&a.from)?;
    if records.is_empty() {
        anyhow::bail!(
            "{}: no sweep records (run tilepipe sweep first)",
            a.from.display()
        );
    }
    print::model(&records);
    Ok(ExitCode::SUCCESS)
}
