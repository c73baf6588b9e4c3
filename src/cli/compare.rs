//! `tilepipe compare BASE NEW`: two saved runs of one problem side by side (host only). Exit 1 on
//! a regression, 2 on input that is not two readable results.json of one workload, problem and GPU
//! model (`--force` compares other problems or GPUs anyway), so a CI job can tell the two apart.

use super::args::Format;
use super::print;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tilepipe::Error;
use tilepipe::render::compare::{self, render};
use tilepipe::results::RunResults;

#[derive(Args)]
pub struct CompareArgs {
    /// The results.json to compare against (written by `tilepipe run`).
    base: PathBuf,
    /// The results.json under test.
    new: PathBuf,
    /// How much slower than BASE (%) a variant may get, beyond the noise, before the exit code
    /// is 1. A variant that passed in BASE and fails, errors or does not finish in NEW is a
    /// regression at any threshold.
    #[arg(long, default_value_t = 5.0, value_parser = percent)]
    threshold: f64,
    /// table (the terminal), markdown (a GitHub table for a pull request), csv (one row per
    /// variant) or json (the whole comparison).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also writes compare.html here: the table and each variant's NEW/BASE ratio as a chart.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Compare runs of different problems (shape, precision) or GPU models anyway; the output
    /// says what differs above the table.
    #[arg(long)]
    force: bool,
}

fn percent(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(format!(
            "'{s}' is not a percentage (allowed: a number >= 0)"
        )),
    }
}

/// A file the user named that cannot be read as a run is bad input (exit 2), not a failure of
/// the comparison.
fn load(role: &str, path: &Path) -> Result<RunResults<serde_json::Value>, Error> {
    RunResults::read(path).map_err(|e| Error::InvalidArgument(format!("{role} {e}")))
}

pub fn cmd_compare(a: CompareArgs) -> anyhow::Result<ExitCode> {
    let (base, new) = (load("BASE", &a.base)?, load("NEW", &a.new)?);
    if base.workload.name != new.workload.name {
        return Err(Error::InvalidArgument(format!(
            "BASE is a {} run and NEW a {} run: compare takes two runs of one workload (allowed: two results.json of the same workload)",
            base.workload.name, new.workload.name
        ))
        .into());
    }
    let differ = compare::mismatches(&base, &new);
    if !differ.is_empty() && !a.force {
        return Err(Error::InvalidArgument(format!(
            "BASE and NEW are no common ground for ratios: {}; compare takes two runs of one problem on one GPU model (--force compares them anyway)",
            differ.join("; ")
        ))
        .into());
    }
    // the page's folder is judged once both inputs are, before anything is printed or created
    if let Some(dir) = &a.out {
        tilepipe::fsio::writable_dir(dir)?;
    }
    let c = compare::compare_files(
        (&base, &a.base.display().to_string()),
        (&new, &a.new.display().to_string()),
        a.threshold,
    );
    let text = match a.format {
        Format::Table => render::terminal(&c),
        Format::Markdown => render::markdown(&c),
        Format::Json => render::json(&c),
        Format::Csv => {
            // stdout stays one CSV document
            for w in &c.warnings {
                print::notice(&format!("warning: {w}"));
            }
            render::csv(&c)
        }
    };
    print::line(text.trim_end_matches('\n'));
    if let Some(dir) = &a.out {
        let file = dir.join("compare.html");
        tilepipe::fsio::write_atomic(
            &file,
            tilepipe::render::html::compare::render(&c).as_bytes(),
        )?;
        print::notice(&format!("wrote {}", file.display()));
    }
    Ok(if c.regressed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
