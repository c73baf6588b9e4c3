//! `tilepipe merge A.jsonl B.jsonl ... --out DIR`: joins the JSONL files of a sweep's shards (host
//! only), then draws the plots and the model from the whole, as `sweep` does.

use super::args::Format;
use super::print;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::commands::sweep::merge::merge;
use tilepipe::fsio;

#[derive(Args)]
pub struct MergeArgs {
    /// sweep.jsonl files of one sweep's shards (`sweep --shard I/N`), each beside its
    /// sweep.spec.json.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Folder for the joined sweep.jsonl and the plots.
    #[arg(long)]
    out: PathBuf,
    /// How the points are printed, as for `sweep`.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub fn cmd_merge(a: MergeArgs) -> anyhow::Result<ExitCode> {
    let merged = merge(&a.inputs)?;
    fsio::writable_dir(&a.out)?;
    let jsonl = a.out.join("sweep.jsonl");
    if a.inputs.iter().any(|i| i == &jsonl) {
        return Err(tilepipe::Error::InvalidArgument(format!(
            "--out {} holds one of the inputs: merge into another folder",
            a.out.display()
        ))
        .into());
    }
    let mut text = String::new();
    for r in &merged.records {
        text.push_str(&serde_json::to_string(r)?);
        text.push('\n');
    }
    fsio::write_atomic(&jsonl, text.as_bytes())?;
    for w in &merged.warnings {
        print::notice(w);
    }
    print::notice(&format!(
        "{} points from {} files in {}",
        merged.records.len(),
        a.inputs.len(),
        jsonl.display()
    ));
    super::sweep::plot(&a.out, &jsonl, a.format)?;
    Ok(ExitCode::SUCCESS)
}
