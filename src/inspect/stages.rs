//! How many stages a kernel's SASS really keeps: for each loop that issues asynchronous copies,
//! the copies still in flight when the loop goes round, in tiles, plus the one the iteration
//! consumes. A loop that issues tile i+d while it consumes tile i leaves d tiles in flight at its
//! back edge whatever the order of its issue and its wait, so d + 1 is Triton's `num_stages` and
//! CUTLASS's `Stages` (a 3-stage ring keeps two tiles in flight ahead of the one it reads).
//!
//! In flight means, for cp.async, commit groups (`LDGDEPBAR`) not completed by a wait_group
//! (`DEPBAR.LE SB0, N` leaves at most N); for TMA and bulk copies, mbarrier fills (an arrive
//! with a transaction count) not yet waited for (`SYNCS.PHASECHK`). The count is a dataflow
//! over the control-flow graph: the set of counts each block may start with, from the kernel's
//! entry, with the back edges of loops around the pipelined one left out (each of their trips
//! starts the ring anew) and predicated commits, fills and waits counted as if their predicate
//! held (a pipeline predicates off the prefetches of its last iterations). The largest count at
//! the loop's back edge is its steady state; divided by the groups (fills) one tile commits, it
//! is d.
//!
//! One trip is one tile unless the compiler unrolled the loop: then each tile of the trip is
//! waited for before its shared memory is read, so the tiles of a trip are its waits that a
//! shared read follows (a run of waits with no read between, such as an mbarrier try-wait and
//! its retry, is one), counted around the trip, back edge included. A tile's groups are the
//! trip's divided by its tiles: a ring commits the same groups for every tile, wherever the
//! scheduler puts the commits in the trip. A loop whose every path has one such wait (or none)
//! is one tile per trip.
//!
//! Straight-line code (a K loop the compiler unrolled whole, no loop issuing the copies) is read
//! at the shared reads that follow each wait: the groups still in flight there, in tiles of the
//! groups one tile commits (the commits between consecutive waits; those before the first wait
//! are the tiles issued ahead, and a wait after no commit issues none), plus the one read. Code
//! without a back edge does not say which trip a copy issued after a tile's reads belongs to,
//! so such a copy counts from the next tile's reads on: a ring that waits, reads, then issues
//! (Triton's order), fully unrolled, reads one stage fewer than the same ring rolled.
//!
//! Undecided, never guessed, when: the paths around the loop commit different numbers of
//! groups, or wait for different numbers of tiles; the count grows without bound (copies no
//! wait takes back); a trip's groups are not a whole number per tile, or the count not a whole
//! number of tiles; the loop reads no shared memory (a warp-specialised producer, whose depth is
//! set by the slots its consumer frees, on other warps); in straight-line code, when copies are
//! in flight at a read but the commits between waits differ or are not there, or no shared read
//! follows a wait.

use super::checks::wait_count;
use super::flow::Cfg;
use super::flow::decode::{Op, Operand, is_zero};
use super::listing::Kernel;
use super::mechanism::{TCGEN05, WARPGROUP};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The stages a kernel keeps, or why they cannot be told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Depth {
    /// None when undecided.
    pub stages: Option<u32>,
    /// How it was read, or why it could not be.
    pub detail: String,
}

/// Counts at or past this are unbounded.
const CAP: u32 = 63;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ring {
    /// Commit groups and wait_group.
    CpAsync,
    /// mbarrier fills (expect-tx arrives) and phase waits, for TMA and bulk copies.
    Mbarrier,
}

impl Ring {
    fn copies(self, op: &Op) -> bool {
        match self {
            Ring::CpAsync => op.base() == "LDGSTS",
            Ring::Mbarrier => matches!(op.base(), "UTMALDG" | "UBLKCP"),
        }
    }

    fn event(self, op: &Op) -> Option<Event> {
        match self {
            Ring::CpAsync if op.base() == "LDGDEPBAR" => Some(Event::Add),
            Ring::CpAsync => wait_count(op).map(|n| Event::KeepAtMost(n.into())),
            Ring::Mbarrier if op.opcode.starts_with("SYNCS.ARRIVE.TRANS64") => {
                // the transaction count: RZ on a plain arrive (a consumer releasing its slot)
                let tx = match op.ops.get(2) {
                    Some(Operand::Reg { r, .. }) => !is_zero(*r),
                    Some(Operand::Imm(n)) => *n != 0,
                    _ => false,
                };
                tx.then_some(Event::Add)
            }
            Ring::Mbarrier if op.opcode.starts_with("SYNCS.PHASECHK") => Some(Event::TakeOne),
            Ring::Mbarrier => None,
        }
    }

    /// A wait for the oldest copies: a wait_group, or an mbarrier phase wait.
    fn waits(self, op: &Op) -> bool {
        matches!(self.event(op), Some(Event::KeepAtMost(_) | Event::TakeOne))
    }

    fn unit(self) -> &'static str {
        match self {
            Ring::CpAsync => "cp.async group(s)",
            Ring::Mbarrier => "mbarrier fill(s)",
        }
    }
}

/// Whether an instruction reads the shared memory a ring fills: a load from it, or an MMA that
/// takes its operands there.
fn reads_shared(op: &Op) -> bool {
    let base = op.base();
    matches!(base, "LDS" | "LDSM") || WARPGROUP.contains(&base) || TCGEN05.contains(&base)
}

#[derive(Debug, Clone, Copy)]
enum Event {
    Add,
    KeepAtMost(u32),
    TakeOne,
}

/// A set of counts 0..=CAP as bits.
type Counts = u64;

fn members(c: Counts) -> impl Iterator<Item = u32> {
    (0..=CAP).filter(move |n| c >> n & 1 == 1)
}

fn apply(c: Counts, e: Event) -> Counts {
    let mut out = 0;
    for n in members(c) {
        let m = match e {
            Event::Add => (n + 1).min(CAP),
            Event::KeepAtMost(k) => n.min(k),
            Event::TakeOne => n.saturating_sub(1),
        };
        out |= 1 << m;
    }
    out
}

fn max(c: Counts) -> Option<u32> {
    (c != 0).then(|| 63 - c.leading_zeros())
}

/// A natural loop: its header, the blocks that jump back to it, and its body.
struct Loop {
    header: usize,
    latches: Vec<usize>,
    body: BTreeSet<usize>,
}

/// The back edges of the graph: a depth-first search's edges to a block still on the stack.
/// Without them the graph has no cycle.
fn back_edges(cfg: &Cfg) -> Vec<(usize, usize)> {
    let n = cfg.blocks.len();
    let succ = |b: usize| cfg.blocks[b].edges.iter().map(|e| e.to);
    let mut state = vec![0u8; n]; // 0 unseen, 1 on the stack, 2 done
    let mut back: Vec<(usize, usize)> = Vec::new();
    let mut work = vec![(0usize, 0usize)];
    while let Some(&mut (v, ref mut child)) = work.last_mut() {
        state[v] = 1;
        if let Some(t) = succ(v).nth(*child) {
            *child += 1;
            match state[t] {
                0 => work.push((t, 0)),
                1 => back.push((v, t)),
                _ => {}
            }
            continue;
        }
        state[v] = 2;
        work.pop();
    }
    back
}

/// The loops of the graph, by its back edges; loops that share a header are one.
fn loops(cfg: &Cfg) -> Vec<Loop> {
    let n = cfg.blocks.len();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for b in 0..n {
        for e in &cfg.blocks[b].edges {
            preds[e.to].push(b);
        }
    }
    let mut out: Vec<Loop> = Vec::new();
    for (latch, header) in back_edges(cfg) {
        let mut body = BTreeSet::from([header, latch]);
        let mut todo = vec![latch];
        while let Some(b) = todo.pop() {
            if b == header {
                continue;
            }
            for &p in &preds[b] {
                if body.insert(p) {
                    todo.push(p);
                }
            }
        }
        match out.iter_mut().find(|l| l.header == header) {
            Some(l) => {
                l.latches.push(latch);
                l.body.extend(body);
            }
            None => out.push(Loop {
                header,
                latches: vec![latch],
                body,
            }),
        }
    }
    out
}

/// The counts each block ends with, from `start` at `from`, over the edges `follow` allows.
fn flow(
    cfg: &Cfg,
    ring: Ring,
    from: usize,
    follow: impl Fn(usize, usize) -> bool,
    add_only: bool,
) -> Vec<Counts> {
    let n = cfg.blocks.len();
    let mut at_start: Vec<Counts> = vec![0; n];
    let mut at_end: Vec<Counts> = vec![0; n];
    at_start[from] = 1;
    let mut todo = vec![from];
    while let Some(b) = todo.pop() {
        let mut c = at_start[b];
        for &i in &cfg.blocks[b].instructions {
            match ring.event(&cfg.ops[i]) {
                Some(Event::Add) => c = apply(c, Event::Add),
                Some(e) if !add_only => c = apply(c, e),
                _ => {}
            }
        }
        at_end[b] = c;
        for e in &cfg.blocks[b].edges {
            let t = e.to;
            if follow(b, t) && at_start[t] | c != at_start[t] {
                at_start[t] |= c;
                todo.push(t);
            }
        }
    }
    at_end
}

/// "the loop 0x03a0..0x0680": its header's offset and its last back edge's.
fn name(k: &Kernel, cfg: &Cfg, l: &Loop) -> String {
    let latch = *l.latches.iter().max().expect("a loop has a latch");
    let back = *cfg.blocks[latch]
        .instructions
        .last()
        .expect("blocks are not empty");
    format!(
        "the loop {:#06x}..{:#06x}",
        cfg.blocks[l.header].offset, k.function.instructions[back].offset
    )
}

/// One pipelined loop's stages with how they were read, or why they cannot be told.
fn depth_of(
    k: &Kernel,
    cfg: &Cfg,
    ring: Ring,
    l: &Loop,
    all: &[Loop],
) -> Result<(u32, String), String> {
    let at = name(k, cfg, l);
    let reads = l.body.iter().any(|&b| {
        cfg.blocks[b]
            .instructions
            .iter()
            .any(|&i| reads_shared(&cfg.ops[i]))
    });
    if !reads {
        return Err(format!(
            "{at} issues copies and reads no shared memory: a producer whose consumer runs on other warps (warp specialisation) keeps as many stages as that consumer frees, which one path does not show"
        ));
    }
    let per_trip = flow(
        cfg,
        ring,
        l.header,
        |_, t| l.body.contains(&t) && t != l.header,
        true,
    );
    let trips: BTreeSet<u32> = l
        .latches
        .iter()
        .flat_map(|&b| members(per_trip[b]))
        .collect();
    let g = match trips.iter().collect::<Vec<_>>()[..] {
        [&g] if g > 0 && g < CAP => g,
        [&0] => {
            return Err(format!(
                "{at} issues copies and commits no {} of its own",
                ring.unit()
            ));
        }
        _ => {
            return Err(format!(
                "the paths around {at} commit different numbers of {} ({:?})",
                ring.unit(),
                trips
            ));
        }
    };
    // the back edges of loops around this one: each of their trips starts the ring anew
    let around: Vec<(usize, usize)> = all
        .iter()
        .filter(|o| o.header != l.header && l.body.is_subset(&o.body))
        .flat_map(|o| o.latches.iter().map(move |&b| (b, o.header)))
        .collect();
    let counts = flow(cfg, ring, 0, |b, t| !around.contains(&(b, t)), false);
    let steady = l
        .latches
        .iter()
        .filter_map(|&b| max(counts[b]))
        .max()
        .unwrap_or(0);
    if steady >= CAP {
        return Err(format!(
            "the {} in flight around {at} grow without bound: some are never waited for",
            ring.unit()
        ));
    }
    // the tiles of a trip: one unless the loop was unrolled, each tile then waited for before it
    // is read
    let tiles = unrolled::tiles_per_trip(cfg, ring, l);
    let t = match tiles.iter().max() {
        Some(&t) if t > 1 && tiles.len() > 1 => {
            return Err(format!(
                "the paths around {at} wait for different numbers of tiles ({tiles:?}): a wait before shared reads on some and not on others"
            ));
        }
        Some(&t) if t >= CAP => {
            return Err(format!(
                "the waits before shared reads in {at} grow without bound: a loop inside it waits and reads"
            ));
        }
        Some(&t) if t > 1 => t,
        _ => 1,
    };
    if g % t != 0 {
        return Err(format!(
            "{at} commits {g} {} per trip over {t} tiles (waits before shared reads): not a whole number per tile",
            ring.unit()
        ));
    }
    let per = g / t;
    if steady % per != 0 {
        return Err(match t {
            1 => format!(
                "{steady} {} are in flight at the back edge of {at}, not a whole number of trips of {g}",
                ring.unit()
            ),
            _ => format!(
                "{steady} {} are in flight at the back edge of {at}, not a whole number of tiles of {per} ({g} per trip of {t} tiles)",
                ring.unit()
            ),
        });
    }
    let ahead = steady / per;
    let inits = cfg
        .ops
        .iter()
        .filter(|o| o.opcode.starts_with("SYNCS.EXCH.64"))
        .count();
    Ok((
        ahead + 1,
        format!(
            "{at} goes round with {steady} {} in flight, {g} per trip{}: {}{}",
            ring.unit(),
            match t {
                1 => String::new(),
                _ => format!(
                    " of {t} tiles (unrolled: {t} waits before shared reads), {per} per tile"
                ),
            },
            match ahead {
                0 => "each copy is waited for in the trip that issues it".to_string(),
                _ => format!("{ahead} tile(s) in flight ahead of the one consumed"),
            },
            match ring {
                Ring::Mbarrier => format!(" ({inits} mbarrier(s) initialised)"),
                Ring::CpAsync => String::new(),
            }
        ),
    ))
}

/// The stages the SASS keeps: the most any pipelined loop keeps, or straight-line code where no
/// loop issues the copies; 1 where there are none.
pub fn depth(k: &Kernel, cfg: &Cfg) -> Depth {
    let all = loops(cfg);
    let mut found: Vec<(u32, String)> = Vec::new();
    let mut undecided: Vec<String> = Vec::new();
    for ring in [Ring::CpAsync, Ring::Mbarrier] {
        let copies: Vec<bool> = cfg
            .blocks
            .iter()
            .map(|b| b.instructions.iter().any(|&i| ring.copies(&cfg.ops[i])))
            .collect();
        let issues: Vec<bool> = all
            .iter()
            .map(|l| l.body.iter().any(|&b| copies[b]))
            .collect();
        // the innermost loops that issue copies
        let pipelined = all.iter().zip(&issues).filter(|&(l, &i)| {
            i && !all
                .iter()
                .zip(&issues)
                .any(|(o, &oi)| oi && o.header != l.header && o.body.is_subset(&l.body))
        });
        for (l, _) in pipelined {
            match depth_of(k, cfg, ring, l, &all) {
                Ok(f) => found.push(f),
                Err(why) => undecided.push(why),
            }
        }
        if copies.contains(&true) && !issues.contains(&true) {
            match straight::depth(cfg, ring, !all.is_empty()) {
                Ok(f) => found.push(f),
                Err(why) => undecided.push(why),
            }
        }
    }
    if !undecided.is_empty() {
        return Depth {
            stages: None,
            detail: undecided
                .into_iter()
                .chain(found.into_iter().map(|f| f.1))
                .collect::<Vec<_>>()
                .join("; "),
        };
    }
    match found.iter().map(|f| f.0).max() {
        Some(s) => Depth {
            stages: Some(s),
            detail: found
                .into_iter()
                .map(|f| f.1)
                .collect::<Vec<_>>()
                .join("; "),
        },
        None => Depth {
            stages: Some(1),
            detail: if all.is_empty() {
                "no loop: nothing is pipelined".into()
            } else {
                "no loop issues an asynchronous copy (LDGSTS, UTMALDG, UBLKCP): each tile is loaded and used in the same trip".into()
            },
        },
    }
}

mod straight;
#[cfg(test)]
mod tests;
mod unrolled;
