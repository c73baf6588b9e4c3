//! `tilepipe model`: the pipeline model against a sweep's measurements (host only).

use super::print;
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
    // a file that cannot be read or holds no sweep point is bad input (exit 2)
    let bad = |why: String| tilepipe::Error::InvalidArgument(format!("--from {why}"));
    let loaded = sweep_store::read(&a.from).map_err(|e| bad(e.to_string()))?;
    print::skipped_lines(&a.from, &loaded);
    if loaded.records.is_empty() {
        return Err(bad(format!(
            "{}: no sweep records in {} lines (allowed: a sweep.jsonl that `tilepipe sweep` wrote)",
            a.from.display(),
            loaded.lines
        ))
        .into());
    }
    print::model(&loaded.records);
    Ok(ExitCode::SUCCESS)
}
