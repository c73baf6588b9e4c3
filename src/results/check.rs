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
}
