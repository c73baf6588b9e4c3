//! The protocol monitor's log as a launch leaves it (kernels/common/monitor.cuh): its layout,
//! mirrored field for field, and its decoding into typed violations that name the broken rule and
//! the numbers behind it.
//!
//! A monitor build (compiled with `BUILD_DEFINE`) checks every protocol edge of its pipeline as it
//! happens and writes what it found after the timeout words of the status buffer `Ctl::status`
//! points at. Such a launch needs a status buffer of `STATUS_BYTES`, zeroed before the launch; after
//! it, `decode` reads the buffer and `Log::covers` proves the monitor saw the whole launch (every
//! block to its end, every read), so a build that never ran the monitor cannot pass as clean.

mod rule;
#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Serialize};
use std::fmt;

pub use rule::Rule;

/// The -D option that makes a build a monitor build.
pub const BUILD_DEFINE: &str = "-DMONITOR=1";
/// `Ctl::status` words before the log: the timeout report (`report_timeout`).
pub const STATUS_WORDS: usize = 8;
pub const MAGIC: u32 = 0x314E_4F4D;
pub const VERSION: u32 = 1;
/// Records the log has room for: the first of each rule in each block, in the order found.
pub const RECORDS: usize = 64;
/// Per-rule counts in the header, indexed by rule code (0 unused).
pub const RULE_SLOTS: usize = 24;

/// `struct MonRecord`: one violation as the device wrote it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct RawRecord {
    pub rule: u32,
    pub block: u32,
    pub thread: u32,
    pub slot: i32,
    pub step: i32,
    pub phase: u32,
    /// The rule's numbers (monitor.cuh says what each holds for each rule).
    pub a: i32,
    pub b: i32,
    pub c: i32,
    pub d: i32,
    pub e: i32,
    pub f: i32,
}
const _: () = assert!(std::mem::size_of::<RawRecord>() == 48);

impl RawRecord {
    /// The record as a violation of `rule` (its decoded code) by `build`.
    fn violation(&self, rule: Rule, build: Build) -> Violation {
        Violation {
            rule,
            block: self.block,
            thread: self.thread,
            slot: self.slot,
            step: self.step,
            phase: self.phase,
            counts: [self.a, self.b, self.c, self.d, self.e, self.f],
            build,
        }
    }
}

/// `struct MonLog`: the header and the records.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct RawLog {
    pub magic: u32,
    pub version: u32,
    pub capacity: u32,
    /// Records claimed; those at or past `capacity` were counted, not written.
    pub stored: u32,
    /// Blocks that reached the end of their walk.
    pub blocks: u32,
    /// (consumer thread, step) reads checked.
    pub reads: u32,
    pub mech: u32,
    pub stages: u32,
    pub consumers: u32,
    pub threads: u32,
    /// The device address of the `RawTrail` (0: none).
    pub trail: u64,
    pub per_rule: [u32; RULE_SLOTS],
    pub records: [RawRecord; RECORDS],
}
const _: () = assert!(std::mem::size_of::<RawLog>() == 144 + 48 * RECORDS);

/// Bytes of the log, and of the whole status buffer a monitor launch needs.
pub const LOG_BYTES: usize = std::mem::size_of::<RawLog>();
pub const STATUS_BYTES: usize = STATUS_WORDS * 4 + LOG_BYTES;
/// Where in the status buffer the host writes the trail's device address before a launch.
pub const TRAIL_POINTER_AT: usize = STATUS_WORDS * 4 + std::mem::offset_of!(RawLog, trail);

/// `struct MonTrail`, in host memory mapped for the device: the build (magic set once written)
/// and the launch's first record of each rule, indexed by rule code (rule 0: none, or not whole).
/// What a launch that faulted the context had recorded before the fault.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct RawTrail {
    pub magic: u32,
    pub mech: u32,
    pub stages: u32,
    pub consumers: u32,
    pub threads: u32,
    pub reserved: [u32; 3],
    pub first: [RawRecord; RULE_SLOTS],
}
pub const TRAIL_BYTES: usize = std::mem::size_of::<RawTrail>();
const _: () = assert!(TRAIL_BYTES == 32 + 48 * RULE_SLOTS);

/// The build that wrote a log, as its header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// MECH of kernels/pipeline/pipeline.cuh.
    pub mech: u32,
    pub stages: u32,
    pub consumers: u32,
    pub threads: u32,
}

impl Build {
    /// The mechanism's name for the MECH code (as `Mechanism::name` spells it).
    pub fn mechanism(&self) -> &'static str {
        match self.mech {
            0 => "sync",
            1 => "regprefetch",
            2 => "cpasync",
            3 => "memcpy_async+pipeline",
            4 => "memcpy_async+barrier",
            5 => "bulk",
            6 => "tma",
            7 => "direct",
            _ => "an unknown mechanism",
        }
    }

    fn is_ring(&self) -> bool {
        matches!(self.mech, 5 | 6)
    }
}

/// One recorded violation, with the build's shape its message needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub rule: Rule,
    pub block: u32,
    pub thread: u32,
    /// The slot, or -1 where none applies.
    pub slot: i32,
    /// The block's step the rule is about (-1: before the first).
    pub step: i32,
    pub phase: u32,
    /// The rule's numbers (monitor.cuh).
    pub counts: [i32; 6],
    pub build: Build,
}

impl Violation {
    pub fn warp(&self) -> u32 {
        self.thread / 32
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} (block {}, warp {}, thread {})",
            self.rule.name(),
            rule::message(self),
            self.block,
            self.warp(),
            self.thread
        )
    }
}

/// A decoded log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Log {
    pub build: Build,
    pub blocks: u32,
    pub reads: u32,
    /// Violations per rule, every one counted, in code order; only rules that fired.
    pub counts: Vec<(Rule, u32)>,
    /// The records: the first violation of each rule in each block, up to `RECORDS`.
    pub violations: Vec<Violation>,
    /// Records claimed past the log's room.
    pub unstored: u32,
}

impl Log {
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|&(_, n)| n as u64).sum()
    }

    pub fn is_clean(&self) -> bool {
        self.total() == 0
    }

    /// Whether the monitor saw the whole launch: `blocks` blocks that own work reached the end of
    /// their walk, and `reads` (consumer thread, step) reads were checked (a row launch: its tiles
    /// x the build's consumers; a GEMM: its tiles x K slices x consumers).
    pub fn covers(&self, blocks: u32, reads: u64) -> Result<()> {
        if self.blocks != blocks || self.reads as u64 != reads {
            return Err(Error::MonitorLog(format!(
                "the monitor saw {} of {blocks} blocks reach their end and checked {} of {reads} reads: \
                 the launch ended early or its build does not monitor every read",
                self.blocks, self.reads
            )));
        }
        Ok(())
    }
}

impl fmt::Display for Log {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = &self.build;
        write!(
            f,
            "monitor ({}, {} stages, {} consumer threads): ",
            b.mechanism(),
            b.stages,
            b.consumers
        )?;
        if self.is_clean() {
            return write!(
                f,
                "no violation in {} blocks, {} reads checked",
                self.blocks, self.reads
            );
        }
        let rules: Vec<String> = self
            .counts
            .iter()
            .map(|(r, n)| format!("{} x{n}", r.name()))
            .collect();
        write!(
            f,
            "{} violations ({}) in {} blocks, {} reads checked",
            self.total(),
            rules.join(", "),
            self.blocks,
            self.reads
        )?;
        for v in &self.violations {
            write!(f, "\n  {v}")?;
        }
        if self.unstored > 0 {
            write!(f, "\n  ({} more records did not fit)", self.unstored)?;
        }
        Ok(())
    }
}

/// The violations a trail holds (`TRAIL_BYTES` as the device left them), one per rule that fired,
/// in code order; none where no monitor block started. A record with an unknown code is not
/// whole (the fault came while it was written) and is left out.
pub fn decode_trail(trail: &[u8]) -> Vec<Violation> {
    if trail.len() < TRAIL_BYTES {
        return Vec::new();
    }
    let raw: RawTrail = bytemuck::pod_read_unaligned(&trail[..TRAIL_BYTES]);
    if raw.magic != MAGIC || raw.stages == 0 {
        return Vec::new();
    }
    let build = Build {
        mech: raw.mech,
        stages: raw.stages,
        consumers: raw.consumers,
        threads: raw.threads,
    };
    raw.first
        .iter()
        .enumerate()
        .filter_map(|(code, r)| {
            let rule = Rule::from_code(r.rule).filter(|rule| rule.code() as usize == code)?;
            Some(r.violation(rule, build))
        })
        .collect()
}

/// Decodes the status buffer of a monitor launch (`STATUS_BYTES`, as the device left it).
pub fn decode(status: &[u8]) -> Result<Log> {
    let bad = |what: String| Err(Error::MonitorLog(what));
    if status.len() < STATUS_BYTES {
        return bad(format!(
            "a status buffer of {} bytes; a monitor launch needs {STATUS_BYTES}",
            status.len()
        ));
    }
    let raw: RawLog = bytemuck::pod_read_unaligned(&status[STATUS_WORDS * 4..STATUS_BYTES]);
    if raw.magic != MAGIC {
        return bad(match raw.magic {
            0 => "no log: the launch did not run a monitor build (built without -DMONITOR=1, or no block started)".into(),
            m => format!("not a monitor log (magic {m:#010x}, want {MAGIC:#010x})"),
        });
    }
    if raw.version != VERSION || raw.capacity as usize != RECORDS {
        return bad(format!(
            "layout version {} with {} records; this tilepipe reads version {VERSION} with {RECORDS}",
            raw.version, raw.capacity
        ));
    }
    let build = Build {
        mech: raw.mech,
        stages: raw.stages,
        consumers: raw.consumers,
        threads: raw.threads,
    };
    if build.stages == 0 {
        return bad("a log whose build has no stages".into());
    }
    let unknown = |code: u32| Error::MonitorLog(format!("unknown rule code {code}"));
    let mut counts = Vec::new();
    for (code, &n) in raw.per_rule.iter().enumerate().filter(|(_, n)| **n > 0) {
        counts.push((Rule::from_code(code as u32).ok_or(unknown(code as u32))?, n));
    }
    let stored = (raw.stored as usize).min(RECORDS);
    let violations = raw.records[..stored]
        .iter()
        .map(|r| Ok(r.violation(Rule::from_code(r.rule).ok_or(unknown(r.rule))?, build)))
        .collect::<Result<Vec<_>>>()?;
    if let Some(v) = violations
        .iter()
        .find(|v| !counts.iter().any(|&(r, _)| r == v.rule))
    {
        return bad(format!("a record of {} that no count has", v.rule.name()));
    }
    Ok(Log {
        build,
        blocks: raw.blocks,
        reads: raw.reads,
        counts,
        violations,
        unstored: raw.stored.saturating_sub(RECORDS as u32),
    })
}
