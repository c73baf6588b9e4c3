//! `tilepipe report`: tables and report.html from a saved results.json (host only).

use super::print;
use super::timeline::named;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tilepipe::report;
use tilepipe::timeline;

#[derive(Args)]
pub struct ReportArgs {
    /// A results.json written by `tilepipe run`.
    results: PathBuf,
    /// Writes report.html here.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn cmd_report(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let r = report::RunResults::read(&a.results)?;
    print::tables(&r);
    print::timelines(&r.timelines);
    print::problems_and_notes(&r);
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
        let named = named(&r.timelines);
        let svg = if named.is_empty() {
            None
        } else {
            timeline::svg::render(&named, "timeline").ok()
        };
        let html = dir.join("report.html");
        std::fs::write(&html, report::html::render(&r, svg.as_deref()))
            .with_context(|| html.display().to_string())?;
        print::notice(&format!("wrote {}", html.display()));
    }
    Ok(ExitCode::SUCCESS)
}
