//! A suite's end, whichever workload: what `check` prints and writes once its tests ran.

use super::args::Format;
use super::print;
use std::path::Path;
use std::process::ExitCode;
use tilepipe::fsio;
use tilepipe::results::SuiteReport;

/// A suite's end, whichever workload: the skips (table), check.json in `out`, the totals, and the
/// exit code (1 on a failure or an early stop, 130 after Ctrl-C).
pub fn end_suite(
    report: &SuiteReport,
    out: Option<&Path>,
    format: Format,
) -> anyhow::Result<ExitCode> {
    if format == Format::Table {
        print::skipped(report);
    }
    if let Some(dir) = out {
        fsio::create_dir_all(dir)?;
        fsio::write_atomic(
            &dir.join("check.json"),
            serde_json::to_string_pretty(report)?.as_bytes(),
        )?;
    }
    print::suite_end(report, format);
    if let Some(why) = &report.stopped {
        print::notice(&format!("the suite stopped early: {why}"));
        return Ok(ExitCode::from(if tilepipe::interrupt::requested() {
            130
        } else {
            1
        }));
    }
    Ok(if report.failed() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
