//! What `inspect` found: per kernel the census, mechanism, claims, checks and resources; per
//! input the cubins left out and those that could not be read; and the outcome a script acts on.

use super::checks::{Check, Status};
use super::claims::{Outcome, Verdict};
use super::input::Kind;
use super::stages::Depth;
use super::triton::Meta;
use super::usage::Resources;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::str::FromStr;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub input: String,
    pub kind: Kind,
    /// How a `.cu` was compiled.
    pub compiled: Option<String>,
    pub kernels: Vec<KernelReport>,
    /// NVRTC's warnings.
    pub notes: Vec<String>,
    /// Cubins the input holds.
    pub cubins: usize,
    /// Cubins left out before disassembly: not for --arch, or holding no kernel --kernel asks for.
    pub skipped_by_arch: usize,
    pub skipped_by_kernel: usize,
    /// Cubins that could not be read, with the reason.
    pub unreadable: Vec<Unreadable>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Unreadable {
    pub cubin: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelReport {
    /// Unique in the report: the cubin and the symbol.
    pub id: String,
    /// The symbol, as in the SASS.
    pub name: String,
    /// Its short readable form (`ns::kernel`).
    pub display_name: String,
    /// The demangled name with its template arguments, for C++ symbols.
    pub demangled: Option<String>,
    pub arch: Option<String>,
    pub cubin: String,
    pub disassembler: String,
    pub instructions: u32,
    /// Movement and synchronisation instructions, form -> count.
    pub movement_census: BTreeMap<String, u32>,
    /// Math instructions, form -> count.
    pub math_census: BTreeMap<String, u32>,
    /// The copy mechanism in words.
    pub movement: String,
    /// The math units in words.
    pub math: String,
    /// Why the kernel is an empty stub for this architecture, when it is one.
    pub stub: Option<String>,
    /// The stages its loops keep in flight (none on a stub).
    pub stages: Option<Depth>,
    pub claims: Vec<Verdict>,
    pub checks: Vec<Check>,
    pub resources: Resources,
    /// Triton's metadata, for a kernel of a Triton cache.
    pub triton: Option<Meta>,
}

impl KernelReport {
    pub fn contradicted(&self) -> usize {
        self.claims
            .iter()
            .filter(|v| v.outcome == Outcome::Contradicted)
            .count()
    }

    /// Claims the SASS cannot settle (a pipeline's stages).
    pub fn undecided_claims(&self) -> usize {
        self.claims
            .iter()
            .filter(|v| v.outcome == Outcome::Undecided)
            .count()
    }

    pub fn with_status(&self, s: Status) -> usize {
        self.checks.iter().filter(|c| c.status == s).count()
    }

    pub fn hazards(&self) -> usize {
        self.with_status(Status::Hazard)
    }

    pub fn flagged(&self) -> bool {
        self.contradicted()
            + self.hazards()
            + self.with_status(Status::Undecided)
            + self.undecided_claims()
            > 0
    }

    /// The copy mechanisms the census shows: "cp.async", "bulk", "TMA".
    pub fn copies(&self) -> Vec<&'static str> {
        let has = |b: &str| {
            self.movement_census
                .keys()
                .any(|k| k.split('.').next() == Some(b))
        };
        let mut out = Vec::new();
        if has("LDGSTS") {
            out.push("cp.async");
        }
        if has("UBLKCP") || has("UBLKRED") {
            out.push("bulk");
        }
        if has("UTMALDG") || has("UTMASTG") || has("UTMAREDG") {
            out.push("TMA");
        }
        out
    }
}

/// What makes the exit code 1: `--fail-on claims|hazards|both`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailOn {
    Claims,
    Hazards,
    #[default]
    Both,
}

impl FromStr for FailOn {
    type Err = Error;
    fn from_str(s: &str) -> Result<FailOn> {
        match s {
            "claims" => Ok(FailOn::Claims),
            "hazards" => Ok(FailOn::Hazards),
            "both" => Ok(FailOn::Both),
            _ => Err(Error::InvalidArgument(format!(
                "unknown --fail-on '{s}' (allowed: claims, hazards, both)"
            ))),
        }
    }
}

/// The command's outcome: 0 clean, 1 failed (a contradicted claim or a hazard, as --fail-on
/// says), 2 nothing judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Clean,
    Failed,
    NothingJudged,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Clean => 0,
            Exit::Failed => 1,
            Exit::NothingJudged => 2,
        }
    }
}

impl Report {
    pub fn outcome(&self, fail_on: FailOn) -> Exit {
        if self.kernels.is_empty() {
            return Exit::NothingJudged;
        }
        let claims: usize = self.kernels.iter().map(KernelReport::contradicted).sum();
        let hazards: usize = self.kernels.iter().map(KernelReport::hazards).sum();
        let failed = match fail_on {
            FailOn::Claims => claims > 0,
            FailOn::Hazards => hazards > 0,
            FailOn::Both => claims + hazards > 0,
        };
        if failed { Exit::Failed } else { Exit::Clean }
    }
}
