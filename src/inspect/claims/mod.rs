//! What a kernel claims (given with --claim, or read from its name, the CUTLASS/CuTe atoms in
//! its template arguments, the source lines its SASS came from (`read`) and Triton's metadata)
//! and whether the census, or for a pipeline's stages the count the SASS keeps in flight,
//! attests it: "claimed X, emitted Y".

mod build;
mod read;

pub use build::beyond;
pub use read::{from_line, from_name, from_source};

use super::mechanism::{self, ASYNC_COPIES, BULK, TCGEN05, TENSOR_CORE, TMA, WARPGROUP, sum};
use super::stages::Depth;
use crate::evidence::sass::Census;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mechanism")]
pub enum Claim {
    /// cp.async (LDGSTS) of `bytes` per instruction, any when None.
    Cpasync { bytes: Option<u32> },
    /// cp.async.bulk (UBLKCP, UBLKRED).
    Bulk,
    /// cp.async.bulk.tensor (UTMALDG, UTMASTG, UTMAREDG).
    Tma,
    /// wgmma.mma_async (HGMMA and its integer and fp8 forms).
    Wgmma,
    /// mma.sync / wmma (HMMA, IMMA, DMMA).
    Mma,
    /// tcgen05.mma (UTCHMMA and its integer, fp8 and block-scaled forms), sm_100 and newer.
    Tcgen05,
    /// A synchronous copy: LDG + STS, no asynchronous copy.
    Sync,
    /// Some asynchronous copy (LDGSTS, UBLKCP or UTMALDG), as `cuda::memcpy_async` promises.
    Async,
    /// A pipeline of this many stages (Triton's `num_stages`; 1: no pipelining), judged by the
    /// stages the SASS keeps in flight.
    Stages { stages: u32 },
}

pub const ALLOWED: &str =
    "cpasync16, cpasync8, cpasync4, cpasync, bulk, tma, wgmma, mma, tcgen05, sync, async";

impl FromStr for Claim {
    type Err = Error;
    fn from_str(s: &str) -> Result<Claim> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "cpasync16" => Claim::Cpasync { bytes: Some(16) },
            "cpasync8" => Claim::Cpasync { bytes: Some(8) },
            "cpasync4" => Claim::Cpasync { bytes: Some(4) },
            "cpasync" => Claim::Cpasync { bytes: None },
            "bulk" => Claim::Bulk,
            "tma" => Claim::Tma,
            "wgmma" => Claim::Wgmma,
            "mma" => Claim::Mma,
            "tcgen05" => Claim::Tcgen05,
            "sync" => Claim::Sync,
            "async" => Claim::Async,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "unknown claim '{s}' (allowed: {ALLOWED})"
                )));
            }
        })
    }
}

impl Claim {
    pub fn describe(self) -> String {
        match self {
            Claim::Cpasync { bytes: Some(b) } => format!("cp.async {b} B (LDGSTS{})", width(b)),
            Claim::Cpasync { bytes: None } => "cp.async (LDGSTS)".into(),
            Claim::Bulk => "a bulk copy, cp.async.bulk (UBLKCP)".into(),
            Claim::Tma => "TMA, cp.async.bulk.tensor (UTMALDG / UTMASTG)".into(),
            Claim::Wgmma => "warpgroup MMA, wgmma (HGMMA)".into(),
            Claim::Mma => "tensor-core MMA, mma.sync (HMMA / IMMA / DMMA / QMMA / OMMA)".into(),
            Claim::Tcgen05 => "tcgen05 MMA (UTCHMMA / UTCQMMA / UTCIMMA / UTCOMMA)".into(),
            Claim::Sync => "a synchronous copy (LDG + STS, no asynchronous copy)".into(),
            Claim::Async => "an asynchronous copy (LDGSTS, UBLKCP or UTMALDG)".into(),
            Claim::Stages { stages: 1 } => "1 stage".into(),
            Claim::Stages { stages } => format!("{stages} stages"),
        }
    }

    /// The claim in a table cell: --claim's spelling, or "3 stages".
    pub fn short(self) -> String {
        match self {
            Claim::Cpasync { bytes: Some(b) } => format!("cpasync{b}"),
            Claim::Cpasync { bytes: None } => "cpasync".into(),
            Claim::Bulk => "bulk".into(),
            Claim::Tma => "tma".into(),
            Claim::Wgmma => "wgmma".into(),
            Claim::Mma => "mma".into(),
            Claim::Tcgen05 => "tcgen05".into(),
            Claim::Sync => "sync".into(),
            Claim::Async => "async".into(),
            Claim::Stages { .. } => self.describe(),
        }
    }

    fn is_math(self) -> bool {
        matches!(self, Claim::Wgmma | Claim::Mma | Claim::Tcgen05)
    }
}

fn width(bytes: u32) -> &'static str {
    match bytes {
        16 => ".128",
        8 => ".64",
        _ => "",
    }
}

/// A claim and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stated {
    pub claim: Claim,
    /// "--claim", "the name copyAsyncLargeChunk", "a.cu:17: cuda::memcpy_async".
    pub from: String,
    /// The architecture the CUTLASS/CuTe identifier it was read from is written for
    /// (`SM120_16x8x32_TN`: 120).
    #[serde(skip)]
    pub arch: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Attested,
    Contradicted,
    /// The kernel is an empty stub for this architecture: its claim is about another build.
    NotJudged,
    /// The SASS cannot tell (a pipeline's stages; `emitted` says why).
    Undecided,
}

/// The claim's verdict against the census.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    #[serde(flatten)]
    pub stated: Stated,
    pub outcome: Outcome,
    /// What the SASS shows, in the claim's terms (movement or math).
    pub emitted: String,
}

impl Verdict {
    pub fn attested(&self) -> bool {
        self.outcome == Outcome::Attested
    }

    pub fn label(&self) -> String {
        match self.outcome {
            Outcome::Attested => format!("attested: {}", self.emitted),
            Outcome::Contradicted => format!(
                "CONTRADICTED: claimed {}, emitted {}",
                self.stated.claim.describe(),
                self.emitted
            ),
            Outcome::NotJudged => format!("not judged: {}", self.emitted),
            Outcome::Undecided => format!(
                "undecided: claimed {}; {}",
                self.stated.claim.describe(),
                self.emitted
            ),
        }
    }

    /// A claim this build says nothing of (an empty stub, an architecture that cannot emit
    /// what it names): not judged, whatever the census.
    pub fn not_judged(s: &Stated, why: &str) -> Verdict {
        Verdict {
            stated: s.clone(),
            outcome: Outcome::NotJudged,
            emitted: why.to_string(),
        }
    }
}

/// A stage claim against the stages the SASS keeps.
fn stages(s: &Stated, claimed: u32, depth: &Depth) -> Verdict {
    let (outcome, emitted) = match depth.stages {
        Some(n) if n == claimed => (Outcome::Attested, format!("{n}: {}", depth.detail)),
        Some(n) => (Outcome::Contradicted, format!("{n}: {}", depth.detail)),
        None => (Outcome::Undecided, depth.detail.clone()),
    };
    Verdict {
        stated: s.clone(),
        outcome,
        emitted,
    }
}

/// The claim against the census, and a stage claim against the stages `depth` read.
pub fn attest(s: &Stated, c: &Census, depth: &Depth) -> Verdict {
    let attested = match s.claim {
        Claim::Stages { stages: n } => return stages(s, n, depth),
        Claim::Cpasync { bytes: Some(b) } => c.ldgsts(b, true) + c.ldgsts(b, false) > 0,
        Claim::Cpasync { bytes: None } => c.count("LDGSTS") > 0,
        Claim::Tma => sum(c, &TMA) > 0,
        Claim::Bulk => sum(c, &BULK) > 0,
        Claim::Wgmma => sum(c, &WARPGROUP) > 0,
        Claim::Mma => sum(c, &TENSOR_CORE) > 0,
        Claim::Tcgen05 => sum(c, &TCGEN05) > 0,
        Claim::Sync => sum(c, &ASYNC_COPIES) == 0 && c.count("LDG") > 0 && c.count("STS") > 0,
        Claim::Async => sum(c, &["LDGSTS", "UBLKCP", "UTMALDG"]) > 0,
    };
    Verdict {
        stated: s.clone(),
        outcome: if attested {
            Outcome::Attested
        } else {
            Outcome::Contradicted
        },
        emitted: if s.claim.is_math() {
            mechanism::math(c)
        } else {
            mechanism::movement(c)
        },
    }
}

#[cfg(test)]
mod tests;
