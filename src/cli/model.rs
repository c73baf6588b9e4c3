//! `tilepipe model`: the pipeline model against a sweep's measurements (host only).

use super::print;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::results::sweep_store;

#[derive(Args)]
pub struct ModelArgs {
    /// A sweep.jsonl with copy-only and compute-only probes.
    #[arg(long)]
    from: PathBuf,
}

pub fn cmd_model(a: ModelArgs) -> anyhow::Result<ExitCode> {
    let loaded = sweep_store::read(&a.from).context("cannot read the sweep records")?;
    print::skipped_lines(&a.from, &loaded);
    if loaded.records.is_empty() {
        anyhow::bail!(
            "{}: no sweep records in {} lines (run tilepipe sweep first)",
            a.from.display(),
            loaded.lines
        );
    }
    print::model(&loaded.records);
    Ok(ExitCode::SUCCESS)
}
