//! `tilepipe report`: tables and report.html from a saved results.json (host only).

use super::print;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tilepipe::results::RunResults;
use tilepipe::{fsio, render};

#[derive(Args)]
pub struct ReportArgs {
    /// A results.json written by `tilepipe run` (any workload).
    results: PathBuf,
    /// Where the HTML goes: a path ending in .html is the file itself (unless it is an existing
    /// folder); anything else is a folder that receives report.html.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Tables with every column, wrapped only to the terminal (default: the main columns within
    /// 160 columns, long cells wrapped).
    #[arg(long)]
    wide: bool,
}

/// The HTML file `--out` names: `x.html` is that file (a user who types a file name wants that
/// file, not a folder of that name), any other path, or a folder that already exists, is a folder
/// holding report.html.
fn html_path(out: &Path) -> PathBuf {
    let is_html = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"));
    if is_html && !out.is_dir() {
        out.to_path_buf()
    } else {
        out.join("report.html")
    }
}

pub fn cmd_report(a: ReportArgs) -> anyhow::Result<ExitCode> {
    // any workload's results: its problem is read as it was written, and shown in words; a file
    // that is not one is bad input (exit 2)
    let r = RunResults::<serde_json::Value>::read(&a.results)
        .map_err(|e| tilepipe::Error::InvalidArgument(e.to_string()))?;
    // the page's folder is judged once the input is, before anything is printed or created
    if let Some(dir) = a.out.as_deref().map(html_path) {
        let dir = dir.parent().filter(|d| !d.as_os_str().is_empty());
        dir.map(fsio::writable_dir).transpose()?;
    }
    print::run_header(&r);
    print::tables(&r, print::width(a.wide));
    print::timelines(&r.timelines);
    print::problems_and_notes(&r);
    if let Some(out) = &a.out {
        write_html(out, &render::html::render(&r))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a report page where `--out` says (see `html_path`).
fn write_html(out: &Path, page: &str) -> anyhow::Result<()> {
    let html = html_path(out);
    if let Some(dir) = html.parent().filter(|d| !d.as_os_str().is_empty()) {
        fsio::create_dir_all(dir)?;
    }
    fsio::write_atomic(&html, page.as_bytes())?;
    print::notice(&format!("wrote {}", html.display()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_html_name_is_the_file_and_anything_else_a_folder() {
        assert_eq!(html_path(Path::new("x.html")), Path::new("x.html"));
        assert_eq!(html_path(Path::new("a/X.HTM")), Path::new("a/X.HTM"));
        assert_eq!(html_path(Path::new("out")), Path::new("out/report.html"));
        assert_eq!(
            html_path(Path::new("out.d/")),
            Path::new("out.d/report.html")
        );
        // a folder of that name left by an older tilepipe stays a folder
        let d = tempfile::tempdir().unwrap();
        let old = d.path().join("old.html");
        std::fs::create_dir(&old).unwrap();
        assert_eq!(html_path(&old), old.join("report.html"));
    }
}
