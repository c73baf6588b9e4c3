//! Protocol checks on a kernel's SASS, each run over the feasible paths of its control flow
//! (`flow::paths`), each finding with its severity, the path that leads to it and the
//! instructions on that path (SASS offset, source line when the cubin has line info):
//! - mbarrier init published (`mbarrier`);
//! - cp.async commit/wait (`cpasync`);
//! - fence.proxy.async before async-proxy reads of thread-written shared memory (`fence`).
//!
//! A finding is a hazard only when the path is feasible as far as predicates and values tell and
//! the addresses involved are known to meet; where the addresses (or a wait count chosen at run
//! time) cannot be told, it is undecided, with the reason.

pub mod address;
mod cpasync;
pub use cpasync::wait_count;
mod fence;
mod mbarrier;
mod witness;

use super::flow::Cfg;
use super::flow::paths::{Overflow, Paths, Witness};
use super::listing::Kernel;
use crate::evidence::sass::parse::Instruction;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    NotApplicable,
    Holds,
    Undecided,
    Hazard,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Holds => "holds",
            Status::Hazard => "HAZARD",
            Status::Undecided => "undecided",
            Status::NotApplicable => "n/a",
        }
    }
}

/// An instruction a finding points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// What it is to the check: "init", "wait", "read", ...
    pub role: String,
    pub offset: u32,
    pub instruction: String,
    /// "file.cu:65 (inlined file.cu:8)" when the cubin has line info.
    pub source: Option<String>,
}

/// One place where a check found a hazard, or could not decide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub status: Status,
    pub detail: String,
    /// The copy, commit, wait and read (or init and wait, store and async read) on the path.
    pub sites: Vec<Site>,
    /// The path from the kernel's entry: the offset of each block it runs through, ending at
    /// the instruction found.
    pub path: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    /// The worst of its findings; holds when it has none, n/a when nothing it checks is there.
    pub status: Status,
    pub detail: String,
    pub findings: Vec<Finding>,
}

/// Findings kept per check; the detail says how many more there were.
const FINDINGS: usize = 6;

pub struct Ctx<'a> {
    pub k: &'a Kernel,
    pub cfg: &'a Cfg,
}

/// A finding as a check records it during the analysis.
pub struct Raw {
    pub status: Status,
    /// The instruction found (a read, a wait, an async read).
    pub at: usize,
    pub witness: Witness,
    /// The protocol's own instructions the finding names, by role.
    pub sites: Vec<(&'static str, usize)>,
    pub detail: String,
}

impl Ctx<'_> {
    pub fn ins(&self) -> &[Instruction] {
        &self.k.function.instructions
    }

    pub fn site(&self, role: &str, i: usize) -> Site {
        let ins = &self.ins()[i];
        Site {
            role: role.to_string(),
            offset: ins.offset,
            instruction: format!("{} {}", ins.opcode, ins.operands)
                .split("(*")
                .next()
                .unwrap_or("")
                .trim()
                .to_string(),
            source: self.k.where_is(i),
        }
    }

    /// "0x0140 (a.cu:65)" or "0x0140".
    pub fn at(&self, i: usize) -> String {
        let off = self.ins()[i].offset;
        match self.k.where_is(i) {
            Some(s) => format!("{off:#06x} ({s})"),
            None => format!("{off:#06x}"),
        }
    }

    /// Instructions that can execute (in some block) and match.
    pub fn live(&self, pred: impl Fn(&Instruction) -> bool) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .cfg
            .blocks
            .iter()
            .flat_map(|b| b.instructions.iter().copied())
            .filter(|&i| pred(&self.ins()[i]))
            .collect();
        v.sort_unstable();
        v
    }

    pub fn check(&self, name: &str, status: Status, detail: String) -> Check {
        Check {
            name: name.to_string(),
            status,
            detail,
            findings: Vec::new(),
        }
    }

    /// The check's verdict from what the analysis found: each use site once (its worst
    /// finding), hazards first; `holds` when nothing was found.
    pub fn verdict(
        &self,
        name: &str,
        run: Result<(Vec<Raw>, Paths), Overflow>,
        holds: String,
    ) -> Check {
        let (mut raws, paths) = match run {
            Ok(r) => r,
            Err(Overflow(why)) => {
                return self.check(
                    name,
                    Status::Undecided,
                    format!("not decided: {why}; the paths are too many to follow one by one"),
                );
            }
        };
        raws.sort_by_key(|r| (std::cmp::Reverse(r.status), self.ins()[r.at].offset));
        let mut seen = std::collections::HashSet::new();
        raws.retain(|r| seen.insert(r.at));
        let Some(worst) = raws.first().map(|r| r.status) else {
            return self.check(name, Status::Holds, holds);
        };
        let total = raws.len();
        let findings: Vec<Finding> = raws
            .into_iter()
            .take(FINDINGS)
            .map(|r| {
                let mut path = witness::offsets(self, &paths, r.witness);
                path.push(self.ins()[r.at].offset);
                path.dedup();
                Finding {
                    status: r.status,
                    detail: r.detail,
                    sites: r
                        .sites
                        .iter()
                        .map(|&(role, i)| self.site(role, i))
                        .collect(),
                    path,
                }
            })
            .collect();
        let mut detail = findings[0].detail.clone();
        if total > 1 {
            let hazards = findings
                .iter()
                .filter(|f| f.status == Status::Hazard)
                .count();
            detail.push_str(&format!(
                " ({total} places found{})",
                if hazards > 0 && hazards < total.min(FINDINGS) {
                    format!(", {hazards} of the first {} hazards", findings.len())
                } else {
                    String::new()
                }
            ));
        }
        Check {
            name: name.to_string(),
            status: worst,
            detail,
            findings,
        }
    }
}

pub fn base(opcode: &str) -> &str {
    opcode.split('.').next().unwrap_or(opcode)
}

pub fn all(k: &Kernel, cfg: &Cfg) -> Vec<Check> {
    let c = Ctx { k, cfg };
    vec![mbarrier::check(&c), cpasync::check(&c), fence::check(&c)]
}

#[cfg(test)]
pub(crate) mod tests;
