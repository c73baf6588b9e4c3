//! The suite's outcome as a GitHub comment (markdown), one CSV row per test, skip and sanitizer
//! run, or check.json.

use super::{csv_doc, md_row, md_table, opt};
use crate::results::{Finding, SuiteReport};

/// The totals, the failures, the skips and the sanitizer's runs in view; every test in a
/// collapsed block (a suite runs thousands).
pub fn markdown(s: &SuiteReport) -> String {
    let mut out = format!("**{} passed, {} failed**", s.passed(), s.failed());
    if let Some(why) = &s.stopped {
        out += &format!(" (the suite stopped early: {})", why.replace('\n', " "));
    }
    out += "\n\n";
    let failed: Vec<[&str; 2]> = s
        .tests
        .iter()
        .filter(|t| !t.passed)
        .map(|t| [t.name.as_str(), t.detail.as_str()])
        .collect();
    if !failed.is_empty() {
        out += &md_table(&["failed test", "detail"], &[], failed);
        out += "\n";
    }
    if !s.skipped.is_empty() {
        out += &md_table(&["skipped"], &[], s.skipped.iter().map(|k| [k]));
        out += "\n";
    }
    if !s.sanitizer.is_empty() {
        out += &md_table(
            &[
                "sanitizer",
                "variant",
                "reported",
                "exit code",
                "first lines",
            ],
            &[2, 3],
            s.sanitizer.iter().map(sanitizer_row),
        );
        out += "\n";
    }
    out += &format!(
        "<details><summary>all {} tests</summary>\n\n",
        s.tests.len()
    );
    out += &md_row(["test", "result", "detail"]);
    out += &md_row(["---", "---", "---"]);
    for t in &s.tests {
        out += &md_row([t.name.as_str(), verdict(t.passed), t.detail.as_str()]);
    }
    out += "\n</details>\n";
    out
}

fn verdict(passed: bool) -> &'static str {
    if passed { "ok" } else { "FAIL" }
}

fn sanitizer_row(f: &Finding) -> [String; 5] {
    [
        f.tool.clone(),
        f.variant.clone(),
        f.reported.map_or("no summary".into(), |n| n.to_string()),
        opt(f.exit_code),
        f.excerpt.clone(),
    ]
}

/// `kind` is test, skipped or sanitizer; `result` ok / FAIL, empty for a skip, the number of
/// reports (empty when the tool printed no summary) for a sanitizer run.
pub fn csv(s: &SuiteReport) -> String {
    let tests = s.tests.iter().map(|t| {
        [
            "test".into(),
            t.name.clone(),
            verdict(t.passed).into(),
            t.detail.clone(),
        ]
    });
    let skips = s
        .skipped
        .iter()
        .map(|k| ["skipped".into(), k.clone(), String::new(), String::new()]);
    let sanitizer = s.sanitizer.iter().map(|f| {
        [
            "sanitizer".into(),
            format!("{} {}", f.tool, f.variant),
            opt(f.reported),
            f.excerpt.clone(),
        ]
    });
    csv_doc(
        &["kind", "name", "result", "detail"],
        tests.chain(skips).chain(sanitizer),
    )
}

/// check.json, as `check --out` writes it.
pub fn json(s: &SuiteReport) -> String {
    serde_json::to_string_pretty(s).expect("a suite report serialises")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TestResult;

    fn suite() -> SuiteReport {
        let t = |name: &str, passed, detail: &str| TestResult {
            name: name.into(),
            passed,
            detail: detail.into(),
        };
        SuiteReport {
            tests: vec![
                t("validate sync", true, ""),
                t("control ctl-skip-wait", false, "not caught, 0 of 20 | runs"),
            ],
            skipped: vec!["tma-s3 f32: needs sm_90".into()],
            sanitizer: vec![Finding {
                tool: "racecheck".into(),
                variant: "tma-s3".into(),
                reported: Some(2),
                exit_code: Some(1),
                excerpt: "hazard one\nhazard two".into(),
            }],
            ..SuiteReport::default()
        }
    }

    #[test]
    fn markdown_shows_failures_first_and_keeps_every_test() {
        let md = markdown(&suite());
        assert!(md.starts_with("**1 passed, 1 failed**"));
        let fail = md
            .find("| control ctl-skip-wait | not caught, 0 of 20 \\| runs |")
            .unwrap();
        assert!(fail < md.find("<details>").unwrap());
        assert!(md.contains("| tma-s3 f32: needs sm_90 |"));
        assert!(md.contains("| racecheck | tma-s3 | 2 | 1 | hazard one<br>hazard two |"));
        assert!(md.contains("| validate sync | ok |  |"));
    }

    #[test]
    fn csv_has_one_row_per_test_skip_and_sanitizer_run() {
        let c = csv(&suite());
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines[0], "kind,name,result,detail");
        assert_eq!(lines[1], "test,validate sync,ok,");
        assert_eq!(
            lines[2],
            "test,control ctl-skip-wait,FAIL,\"not caught, 0 of 20 | runs\""
        );
        assert_eq!(lines[3], "skipped,tma-s3 f32: needs sm_90,,");
        assert_eq!(lines[4], "sanitizer,racecheck tma-s3,2,\"hazard one");
        let back: SuiteReport = serde_json::from_str(&json(&suite())).unwrap();
        assert_eq!(back.failed(), 1);
    }
}
