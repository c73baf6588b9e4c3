//! What the suite produced: each test's outcome, what was skipped, the results it gathered and the
//! sanitizer's findings. Plain data.

use super::VariantResult;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestResult {
    pub name: String,
    pub passed: bool,
    pub detail: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SuiteReport {
    pub tests: Vec<TestResult>,
    pub skipped: Vec<String>,
    pub results: Vec<VariantResult>,
    pub sanitizer: Vec<Finding>,
    /// Why the suite ended before its last test (a hang, Ctrl-C), if it did.
    #[serde(default)]
    pub stopped: Option<String>,
    /// Controls run by a process that started for them alone: its runs, for the process that
    /// started it to add up.
    #[serde(default)]
    pub control_runs: Vec<ControlRuns>,
}

/// The runs of one control so far: how many caught it, and the first catch's words.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ControlRuns {
    pub name: String,
    pub runs: usize,
    pub caught: usize,
    pub first: String,
    /// Why the runs stopped short other than by a fault of the context (which is a catch).
    #[serde(default)]
    pub stopped: Option<String>,
}

impl ControlRuns {
    /// No run yet.
    pub fn none(name: &str) -> ControlRuns {
        ControlRuns {
            name: name.to_string(),
            runs: 0,
            caught: 0,
            first: String::new(),
            stopped: None,
        }
    }
}

/// One compute-sanitizer run of one variant.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finding {
    pub tool: String,
    pub variant: String,
    /// Errors (memcheck, synccheck) or hazards (racecheck) the tool reported; None if it printed
    /// no summary (it crashed or was stopped).
    pub reported: Option<u32>,
    pub exit_code: Option<i32>,
    /// The tool's first report lines, for the reader.
    pub excerpt: String,
}

impl SuiteReport {
    pub fn passed(&self) -> usize {
        self.tests.iter().filter(|t| t.passed).count()
    }

    pub fn failed(&self) -> usize {
        self.tests.len() - self.passed()
    }

    /// Appends everything `other` holds.
    pub fn merge(&mut self, other: SuiteReport) {
        self.tests.extend(other.tests);
        self.skipped.extend(other.skipped);
        self.results.extend(other.results);
        self.sanitizer.extend(other.sanitizer);
        self.control_runs.extend(other.control_runs);
        if other.stopped.is_some() {
            self.stopped = other.stopped;
        }
    }

    /// Appends the report of a process that went on after a fault by starting the group again:
    /// a test it ran once more (one this process had finished before the fault) is kept once, as
    /// first run, and so are skips.
    pub fn merge_restarted(&mut self, mut other: SuiteReport) {
        let seen: std::collections::HashSet<String> =
            self.tests.iter().map(|t| t.name.clone()).collect();
        other.tests.retain(|t| !seen.contains(&t.name));
        other.skipped.retain(|s| !self.skipped.contains(s));
        self.merge(other);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(name: &str, passed: bool) -> TestResult {
        TestResult {
            name: name.into(),
            passed,
            detail: String::new(),
        }
    }

    #[test]
    fn a_restarted_group_counts_each_test_once() {
        let mut parent = SuiteReport {
            tests: vec![test("sass sync", true), test("fault tma-s2", false)],
            skipped: vec!["skip a".into()],
            ..SuiteReport::default()
        };
        let child = SuiteReport {
            tests: vec![test("sass sync", true), test("valid sync", true)],
            skipped: vec!["skip a".into(), "skip b".into()],
            ..SuiteReport::default()
        };
        parent.merge_restarted(child);
        let names: Vec<&str> = parent.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["sass sync", "fault tma-s2", "valid sync"]);
        assert_eq!((parent.passed(), parent.failed()), (2, 1));
        assert_eq!(parent.skipped, ["skip a", "skip b"]);
    }
}
