//! `tilepipe model`: the pipeline model against a sweep's measurements (host only).

use super::print;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::render::formats;
use tilepipe::results::{RunResults, sweep_store};

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
    if loaded.records.is_empty() {
        let run = RunResults::<serde_json::Value>::read(&a.from).is_ok();
        return Err(bad(format!(
            "{}: no sweep records in {} lines{} (allowed: a sweep.jsonl that `tilepipe sweep` wrote)",
            a.from.display(),
            loaded.lines,
            if run { "; it is a run's results.json (`tilepipe report` reads it)" } else { "" }
        ))
        .into());
    }
    print::skipped_lines(&a.from, &loaded);
    if formats::sweep::model_rows(&loaded.records).is_empty() {
        return Err(bad(format!(
            "{}: none of its {} points has the copy-only and compute-only probes a model needs \
             (it was swept with --no-probes, or by GEMM, which sweeps none): allowed: a sweep.jsonl \
             of a row workload swept with its probes",
            a.from.display(),
            loaded.records.len()
        ))
        .into());
    }
    print::model(&loaded.records);
    Ok(ExitCode::SUCCESS)
}
