//! compute-sanitizer driven by tilepipe: each selected variant runs once under racecheck,
//! synccheck or memcheck through `tilepipe probe`, and the tool's summary is folded into the
//! suite's report.

use super::Engine;
use super::record;
use crate::pipeline::Variant;
use crate::results::{Finding, Grid, SuiteReport};
use crate::workload::Workload;
use crate::{Error, Result};
use std::path::Path;
use std::process::Command;

pub const TOOLS: [&str; 3] = ["racecheck", "synccheck", "memcheck"];

/// Parses compute-sanitizer's summary: `RACECHECK SUMMARY: N hazards displayed` for racecheck,
/// `ERROR SUMMARY: N errors` otherwise.
pub fn parse_summary(tool: &str, output: &str) -> Option<u32> {
    let key = if tool == "racecheck" {
        "RACECHECK SUMMARY:"
    } else {
        "ERROR SUMMARY:"
    };
    let after = output
        .lines()
        .find_map(|l| l.split_once(key).map(|(_, r)| r.trim().to_string()))?;
    after.split_whitespace().next()?.parse().ok()
}

pub fn parse_tools(list: &str) -> Result<Vec<String>> {
    if list.split(',').all(|t| t.trim().is_empty()) {
        return Err(Error::InvalidArgument(format!(
            "an empty list of sanitizer tools ('{list}'): allowed: racecheck, synccheck, memcheck, comma-separated"
        )));
    }
    if list.split(',').any(|t| t.trim().is_empty()) {
        return Err(Error::InvalidArgument(format!(
            "the list of sanitizer tools '{list}' has an empty entry: allowed: racecheck, synccheck, memcheck, separated by single commas"
        )));
    }
    list.split(',')
        .map(|t| t.trim())
        .map(|t| {
            if TOOLS.contains(&t) {
                Ok(t.to_string())
            } else {
                Err(Error::InvalidArgument(format!(
                    "unknown sanitizer tool '{t}' (allowed: racecheck, synccheck, memcheck)"
                )))
            }
        })
        .collect()
}

/// Runs `exe probe <variant> <probe_args>` under the tool.
pub fn run(
    sanitizer: &Path,
    tool: &str,
    exe: &Path,
    variant: &str,
    probe_args: &[String],
) -> Result<Finding> {
    let mut cmd = Command::new(sanitizer);
    cmd.args(["--tool", tool, "--print-limit", "20"]);
    if tool == "racecheck" {
        cmd.args(["--racecheck-report", "all"]);
    }
    cmd.arg(exe).arg("probe").arg(variant).args(probe_args);
    let out = cmd.output().map_err(|e| Error::io(sanitizer, e))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let excerpt: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("========="))
        .take(12)
        .collect();
    Ok(Finding {
        tool: tool.to_string(),
        variant: variant.to_string(),
        reported: parse_summary(tool, &text),
        exit_code: out.status.code(),
        excerpt: excerpt.join("\n"),
    })
}

/// Runs the chosen variants under each compute-sanitizer tool through `tilepipe probe`. Correct
/// variants must come out clean; racecheck must report a hazard for at least one control.
pub fn run_all<W: Workload>(
    h: &Engine,
    w: &W,
    report: &mut SuiteReport,
    tools: &[String],
    variants: &str,
    seed: u64,
) -> Result<()> {
    let Some(sanitizer) = h.tc.compute_sanitizer.clone() else {
        report.skipped.push("compute-sanitizer not found (CUDA_HOME, CUDA_PATH, /usr/local/cuda, PATH): sanitizer checks not run".into());
        return Ok(());
    };
    let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    let case = w.sanitize_case()?;
    let dtype = crate::workload::Problem::dtype(&case.problem);
    let all: Vec<_> = w
        .catalogue(dtype)
        .into_iter()
        .chain(w.controls(dtype))
        .collect();
    let chosen = Variant::select(all, Some(variants))?;
    let mut args = w.problem_args(&case.problem);
    if let Grid::Fixed(b) = case.grid {
        args.extend(["--blocks".to_string(), b.to_string()]);
    }
    args.extend(
        ["--wait-timeout-ms", "30000", "--quiet", "--seed"]
            .iter()
            .map(|s| s.to_string())
            .chain([seed.to_string(), "--workload".into(), w.name().into()]),
    );
    for tool in tools {
        let mut control_hazards = 0;
        for v in &chosen {
            let f = run(&sanitizer, tool, &exe, &v.name, &args)?;
            let n = f.reported;
            if v.is_control() {
                control_hazards += n.unwrap_or(0);
                h.progress.info(&format!(
                    "info {tool} {} (control): {} reported",
                    v.name,
                    n.map_or("no summary".into(), |n| n.to_string())
                ));
            } else {
                record(
                    &h.progress,
                    report,
                    format!("{tool} {}", v.name),
                    n == Some(0),
                    format!(
                        "{} reported{}",
                        n.map_or("no summary".into(), |n| n.to_string()),
                        if n == Some(0) {
                            String::new()
                        } else {
                            format!("\n{}", f.excerpt)
                        }
                    ),
                );
            }
            report.sanitizer.push(f);
        }
        if tool == "racecheck" && chosen.iter().any(Variant::is_control) {
            record(
                &h.progress,
                report,
                "racecheck reports a hazard for at least one control".into(),
                control_hazards > 0,
                format!("{control_hazards} hazards across the controls"),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_parse_per_tool() {
        let race = "========= Error: Race reported between Read access at ...\n========= RACECHECK SUMMARY: 3 hazards displayed (3 errors, 0 warnings)\n";
        assert_eq!(parse_summary("racecheck", race), Some(3));
        assert_eq!(
            parse_summary(
                "racecheck",
                "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
            ),
            Some(0)
        );
        assert_eq!(
            parse_summary("memcheck", "========= ERROR SUMMARY: 0 errors"),
            Some(0)
        );
        assert_eq!(
            parse_summary("synccheck", "========= ERROR SUMMARY: 12 errors"),
            Some(12)
        );
        assert_eq!(parse_summary("memcheck", "the process crashed"), None);
        assert_eq!(
            parse_summary("racecheck", "========= ERROR SUMMARY: 0 errors"),
            None,
            "racecheck reads its own line"
        );
    }

    #[test]
    fn tools_are_checked() {
        assert_eq!(
            parse_tools("racecheck, memcheck").unwrap(),
            vec!["racecheck", "memcheck"]
        );
        let e = parse_tools("initcheck").unwrap_err().to_string();
        assert!(e.contains("initcheck") && e.contains("allowed"), "{e}");
    }
}
