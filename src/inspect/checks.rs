//! Protocol checks on a kernel's SASS, each a forward dataflow over every path of its control
//! flow (`flow`), each saying what it found and where (SASS offset, source line when the cubin
//! has line info):
//! - mbarrier init published: no mbarrier wait (`SYNCS.PHASECHK`) can follow an init
//!   (`SYNCS.EXCH.64`) unless a block-wide barrier (`BAR.SYNC 0x0`, `BAR.RED 0x0` or a cluster
//!   barrier wait) stands between them;
//! - cp.async commit/wait: a shared read (`LDS`, `LDSM`) after a cp.async (`LDGSTS`) must follow
//!   a `wait_group` (`DEPBAR.LE SB0, N`) that completes at least one committed group (`LDGDEPBAR`)
//!   on that path, and no cp.async may reach a wait uncommitted (the wait does not cover it);
//! - fence.proxy.async: an async-proxy read of shared memory (TMA or bulk store, wgmma's
//!   descriptors) must not be reachable from a thread's shared store (`STS`, `STSM`) without a
//!   `fence.proxy.async` (`FENCE.VIEW.ASYNC`) between them.
//!
//! Limits, by construction: SASS does not say which address a read touches, so a read of data
//! that no cp.async wrote, or a store to a buffer no async-proxy read uses, is judged as if it
//! were; a bulk store's `wait_group` (also `DEPBAR.LE SB0`) counts as a cp.async wait; a callee
//! in another function is not seen; mbarrier waits on sm_80 (emulated, no `SYNCS`) are not
//! recognised.

use super::flow::{Cfg, conditional};
use super::listing::Kernel;
use crate::evidence::sass::parse::Instruction;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Holds,
    Hazard,
    NotApplicable,
}

/// An instruction a check points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// What it is to the check: "init", "wait", "read", ...
    pub role: String,
    pub offset: u32,
    pub instruction: String,
    /// "file.cu:65 (inlined file.cu:8)" when the cubin has line info.
    pub source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
    pub sites: Vec<Site>,
}

fn base(opcode: &str) -> &str {
    opcode.split('.').next().unwrap_or(opcode)
}

/// A barrier every thread of the block takes part in, unconditionally.
fn block_barrier(i: &Instruction) -> bool {
    if conditional(i) {
        return false;
    }
    if i.opcode == "UCGABAR_WAIT" {
        return true;
    }
    let mut args = i.operands.split(',').map(str::trim);
    (i.opcode.starts_with("BAR.SYNC") || i.opcode.starts_with("BAR.RED"))
        && args.next() == Some("0x0")
        && args
            .next()
            .is_none_or(|a| a.starts_with('P') || a.starts_with("!P"))
}

struct Ctx<'a> {
    k: &'a Kernel,
    cfg: &'a Cfg,
}

impl Ctx<'_> {
    fn ins(&self) -> &[Instruction] {
        &self.k.function.instructions
    }

    fn site(&self, role: &str, i: usize) -> Site {
        let ins = &self.ins()[i];
        Site {
            role: role.to_string(),
            offset: ins.offset,
            instruction: format!("{} {}", ins.opcode, ins.operands)
                .trim()
                .to_string(),
            source: self.k.where_is(i),
        }
    }

    /// "0x0140 (a.cu:65)" or "0x0140".
    fn at(&self, i: usize) -> String {
        let off = self.ins()[i].offset;
        match self.k.where_is(i) {
            Some(s) => format!("{off:#06x} ({s})"),
            None => format!("{off:#06x}"),
        }
    }

    fn live(&self, pred: impl Fn(&Instruction) -> bool) -> Vec<usize> {
        self.cfg
            .blocks
            .iter()
            .flat_map(|b| b.instructions.iter().copied())
            .filter(|&i| pred(&self.ins()[i]))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// (origin, use) pairs where an instruction that `starts` a hazard reaches a `use` on some
    /// path with no instruction that `ends` it between them (the earliest origin of each use),
    /// ordered by the use's offset.
    fn unguarded(
        &self,
        starts: impl Fn(&Instruction) -> bool,
        ends: impl Fn(&Instruction) -> bool,
        uses: impl Fn(&Instruction) -> bool,
    ) -> Vec<(usize, usize)> {
        let ins = self.ins();
        let mut found = Vec::new();
        self.cfg.forward(
            BTreeSet::<usize>::new(),
            |i, f| {
                if starts(&ins[i]) {
                    f.insert(i);
                } else if ends(&ins[i]) {
                    f.clear();
                }
            },
            |i, f| {
                if let (true, Some(&o)) = (uses(&ins[i]), f.iter().next()) {
                    found.push((o, i));
                }
            },
        );
        found.sort_by_key(|&(_, u)| ins[u].offset);
        found
    }

    fn not_applicable(&self, name: &str, why: String) -> Check {
        self.check(name, Status::NotApplicable, why, vec![])
    }

    fn check(&self, name: &str, status: Status, detail: String, sites: Vec<Site>) -> Check {
        Check {
            name: name.to_string(),
            status,
            detail,
            sites,
        }
    }
}

pub fn all(k: &Kernel, cfg: &Cfg) -> Vec<Check> {
    let c = Ctx { k, cfg };
    vec![mbarrier_init(&c), cp_async(&c), proxy_fence(&c)]
}

const MBARRIER: &str = "mbarrier init published";

fn mbarrier_init(c: &Ctx) -> Check {
    let is_init = |i: &Instruction| i.opcode.starts_with("SYNCS.EXCH.64");
    let is_wait = |i: &Instruction| i.opcode.starts_with("SYNCS.PHASECHK");
    let inits = c.live(is_init);
    let Some(&first_init) = inits.first() else {
        return c.not_applicable(
            MBARRIER,
            "no mbarrier initialised in SASS (SYNCS.EXCH.64; sm_90 and newer)".into(),
        );
    };
    let waits = c.live(is_wait);
    let unsafe_waits = c.unguarded(is_init, block_barrier, is_wait);
    match unsafe_waits.first() {
        Some(&(init, wait)) => c.check(
            MBARRIER,
            Status::Hazard,
            format!(
                "the mbarrier wait at {} can follow the init at {} with no block barrier (BAR.SYNC 0x0) between them on some path: other threads may wait on a barrier not yet initialised{}",
                c.at(wait),
                c.at(init),
                more(unsafe_waits.len(), "wait")
            ),
            vec![c.site("init", init), c.site("wait", wait)],
        ),
        None => {
            let mut sites = vec![c.site("init", first_init)];
            sites.extend(waits.first().map(|&w| c.site("wait", w)));
            c.check(
                MBARRIER,
                Status::Holds,
                if waits.is_empty() {
                    format!(
                        "{} init(s) from {}; no mbarrier wait in this kernel",
                        inits.len(),
                        c.at(first_init)
                    )
                } else {
                    format!(
                        "a block barrier stands between the {} init(s) (first at {}) and each of the {} wait(s) on every path",
                        inits.len(),
                        c.at(first_init),
                        waits.len()
                    )
                },
                sites,
            )
        }
    }
}

fn more(n: usize, what: &str) -> String {
    match n {
        0 | 1 => String::new(),
        2 => format!(" (and 1 more {what})"),
        n => format!(" (and {} more {what}s)", n - 1),
    }
}

/// One path's cp.async state: committed groups not known complete (capped), cp.asyncs issued
/// since the last commit, and whether a wait has completed at least one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Groups {
    committed: u8,
    uncommitted: bool,
    waited: bool,
}

const GROUP_CAP: u8 = 32;

/// `DEPBAR.LE SB0, 0x1` -> 1: the cp.async.wait_group form.
fn wait_group(i: &Instruction) -> Option<u8> {
    if !i.opcode.starts_with("DEPBAR") {
        return None;
    }
    let (sb, n) = i.operands.split_once(',')?;
    if sb.trim() != "SB0" {
        return None;
    }
    let n = n.trim();
    let v = match n.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok()?,
        None => n.parse().ok()?,
    };
    Some(v.min(u32::from(GROUP_CAP)) as u8)
}

/// A cp.async instruction's effect on one path's state; None for any other instruction.
fn advance(x: &Instruction, g: Groups) -> Option<Groups> {
    match base(&x.opcode) {
        "LDGSTS" => Some(Groups {
            uncommitted: true,
            ..g
        }),
        "LDGDEPBAR" => Some(Groups {
            committed: (g.committed + 1).min(GROUP_CAP),
            uncommitted: false,
            ..g
        }),
        _ => wait_group(x).map(|n| Groups {
            waited: g.waited || g.committed > n,
            committed: g.committed.min(n),
            ..g
        }),
    }
}

const CP_ASYNC: &str = "cp.async commit/wait";

fn cp_async(c: &Ctx) -> Check {
    let ins = c.ins();
    let copies = c.live(|i| base(&i.opcode) == "LDGSTS");
    let Some(&first_copy) = copies.first() else {
        return c.not_applicable(CP_ASYNC, "no cp.async (LDGSTS)".into());
    };
    if let Some(&arrive) = c
        .live(|i| i.opcode.starts_with("ARRIVES.LDGSTSBAR"))
        .first()
    {
        return c.check(
            CP_ASYNC,
            Status::NotApplicable,
            format!(
                "cp.async completes on an mbarrier (cp.async.mbarrier.arrive, ARRIVES.LDGSTSBAR at {}), not through commit groups: its wait is the mbarrier's",
                c.at(arrive)
            ),
            vec![c.site("arrive", arrive)],
        );
    }
    let commits = c.live(|i| base(&i.opcode) == "LDGDEPBAR");
    let waits = c.live(|i| wait_group(i).is_some());
    let step = |i: usize, f: &mut BTreeSet<Groups>| {
        let x = &ins[i];
        let after: BTreeSet<Groups> = f.iter().filter_map(|&g| advance(x, g)).collect();
        if after.is_empty() {
            return; // not a cp.async instruction
        }
        if conditional(x) {
            f.extend(after);
        } else {
            *f = after;
        }
    };
    let mut reads: Vec<usize> = Vec::new();
    let mut idle_waits: Vec<(usize, u8, u8)> = Vec::new();
    let mut uncovered: Vec<usize> = Vec::new();
    let start = Groups {
        committed: 0,
        uncommitted: false,
        waited: false,
    };
    c.cfg.forward(BTreeSet::from([start]), step, |i, f| {
        let x = &ins[i];
        if matches!(base(&x.opcode), "LDS" | "LDSM")
            && f.iter()
                .any(|g| (g.committed > 0 || g.uncommitted) && !g.waited)
        {
            reads.push(i);
        }
        if let Some(n) = wait_group(x) {
            if f.iter().any(|g| g.uncommitted) {
                uncovered.push(i);
            }
            if let Some(g) = f
                .iter()
                .find(|g| g.committed > 0 && g.committed <= n && !g.waited)
            {
                idle_waits.push((i, n, g.committed));
            }
        }
    });
    for v in [&mut reads, &mut uncovered] {
        v.sort_by_key(|&i| ins[i].offset);
    }
    idle_waits.sort_by_key(|&(i, _, _)| ins[i].offset);
    if let Some(&w) = uncovered.first() {
        return c.check(
            CP_ASYNC,
            Status::Hazard,
            format!(
                "a cp.async reaches the wait at {} without a commit (cp.async.commit_group, LDGDEPBAR) after it: wait_group does not wait for it",
                c.at(w)
            ),
            vec![c.site("cp.async", first_copy), c.site("wait", w)],
        );
    }
    if let Some(&read) = reads.first() {
        let mut sites = vec![c.site("cp.async", first_copy)];
        sites.extend(commits.first().map(|&i| c.site("commit", i)));
        let why = match (idle_waits.first(), waits.is_empty()) {
            (Some(&(w, n, g)), _) => {
                sites.push(c.site("wait", w));
                format!(
                    "the wait at {} (wait_group {n}) leaves all {g} committed group(s) in flight",
                    c.at(w)
                )
            }
            (None, true) => "the kernel has no wait_group (DEPBAR) at all".to_string(),
            (None, false) => "no wait_group stands between them on that path".to_string(),
        };
        sites.push(c.site("read", read));
        return c.check(
            CP_ASYNC,
            Status::Hazard,
            format!(
                "the shared read {} at {} can run while the cp.async from {} is in flight: {why}{}",
                ins[read].opcode,
                c.at(read),
                c.at(first_copy),
                more(reads.len(), "read")
            ),
            sites,
        );
    }
    let mut sites: Vec<Site> = commits
        .first()
        .map(|&i| c.site("commit", i))
        .into_iter()
        .collect();
    sites.extend(waits.first().map(|&i| c.site("wait", i)));
    c.check(
        CP_ASYNC,
        Status::Holds,
        format!(
            "every shared read after a cp.async follows a wait_group that completes a committed group ({} LDGSTS, {} commits, {} waits)",
            copies.len(),
            commits.len(),
            waits.len()
        ),
        sites,
    )
}

const FENCE: &str = "fence.proxy.async";

/// Reads shared memory through the async proxy: TMA and bulk stores and reductions (shared ->
/// global), warpgroup MMA with shared-memory descriptors.
fn async_proxy_read(i: &Instruction) -> bool {
    let b = base(&i.opcode);
    matches!(b, "UTMASTG" | "UTMAREDG" | "UBLKRED")
        || (b == "UBLKCP" && i.opcode.contains(".G.S"))
        || (b.ends_with("GMMA") && i.operands.contains("gdesc"))
}

fn proxy_fence(c: &Ctx) -> Check {
    let ins = c.ins();
    let readers = c.live(async_proxy_read);
    let Some(&first_reader) = readers.first() else {
        return c.not_applicable(
            FENCE,
            "no async-proxy read of shared memory (TMA or bulk store, wgmma)".into(),
        );
    };
    let unfenced = c.unguarded(
        |x| matches!(base(&x.opcode), "STS" | "STSM"),
        |x| x.opcode.starts_with("FENCE.VIEW.ASYNC") && !conditional(x),
        async_proxy_read,
    );
    match unfenced.first() {
        Some(&(w, r)) => c.check(
            FENCE,
            Status::Hazard,
            format!(
                "{} at {} reads shared memory through the async proxy and can follow the shared store at {} with no fence.proxy.async (FENCE.VIEW.ASYNC) between them: the threads' writes may not be visible to it{}",
                ins[r].opcode,
                c.at(r),
                c.at(w),
                more(unfenced.len(), "read")
            ),
            vec![c.site("store", w), c.site("async read", r)],
        ),
        None => c.check(
            FENCE,
            Status::Holds,
            format!(
                "no thread's shared store reaches any of the {} async-proxy read(s) (first {} at {}) without fence.proxy.async",
                readers.len(),
                ins[first_reader].opcode,
                c.at(first_reader)
            ),
            vec![c.site("async read", first_reader)],
        ),
    }
}

#[cfg(test)]
mod tests;
