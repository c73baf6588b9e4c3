//! cp.async commit/wait: a shared read (`LDS`, `LDSM`) that may touch bytes a cp.async
//! (`LDGSTS`) writes must not run while that copy is in flight: its group committed
//! (`LDGDEPBAR`) and completed by a `wait_group` (`DEPBAR.LE SB0, N`), on every feasible path.
//!
//! A read after a wait that completed some group is taken to read a completed stage (a ring's
//! slots cannot be told apart by address when the slot is chosen at run time); a read before any
//! such wait is compared by address with each copy in flight: disjoint is no finding, known to
//! meet is a hazard, not known is undecided. A wait count chosen at run time (libcu++'s
//! `consumer_wait()` switches over `DEPBAR.LE SB0, 0..8`) is followed per count where the value
//! analysis can tell which count runs; where it cannot, a path through a weaker count is
//! undecided while a stronger count of the same switch would have completed the group.

use super::address::{self, Relation};
use super::{Ctx, Raw, Status, base, witness};
use crate::inspect::flow::Cfg;
use crate::inspect::flow::decode::{Op, Operand, Pred};
use crate::inspect::flow::paths::{self, Protocol, Relevance, Table};
use crate::inspect::flow::preds::Preds;
use crate::inspect::flow::values::Values;
use std::collections::{BTreeSet, HashMap};

pub const NAME: &str = "cp.async commit/wait";

/// Committed groups tracked; more are counted as this many.
const CAP: u8 = 16;

/// One path's cp.async state. Paths are told apart by the counts and the idle wait; the copies
/// in flight are joined where paths meet (what may be in flight).
#[derive(Debug, Clone)]
pub struct Groups {
    /// Committed groups not known complete.
    committed: u8,
    /// The copies in those groups.
    in_flight: BTreeSet<usize>,
    /// Copies issued since the last commit.
    pending: BTreeSet<usize>,
    /// A wait has completed at least one group.
    waited: bool,
    /// Before any group completed: the last wait on the path, which completed nothing.
    idle: Option<Idle>,
}

impl Groups {
    fn key(&self) -> (u8, bool, Option<Idle>, bool) {
        (
            self.committed,
            self.waited,
            self.idle,
            self.pending.is_empty(),
        )
    }
}

impl PartialEq for Groups {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}

impl Eq for Groups {}

impl std::hash::Hash for Groups {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.key().hash(h);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Idle {
    wait: usize,
    /// Committed groups when it ran.
    groups: u8,
    /// One count of a run-time switch, run because the path supposed the branch into it went
    /// that way (the values did not say).
    guessed: bool,
}

/// `DEPBAR.LE SB0, 0x1` -> 1: the cp.async.wait_group form.
pub fn wait_count(op: &Op) -> Option<u8> {
    match (op.base(), op.ops.first(), op.ops.get(1)) {
        ("DEPBAR", Some(Operand::Scoreboard(0)), Some(Operand::Imm(n))) => {
            Some((*n).clamp(0, i64::from(CAP)) as u8)
        }
        _ => None,
    }
}

struct CpAsync<'a> {
    ops: &'a [Op],
    /// Per wait of a switch: its switch's counts and the predicates of the edges into it.
    switch: HashMap<usize, (Vec<u8>, Vec<Pred>)>,
}

impl CpAsync<'_> {
    fn kind(&self, i: usize) -> Option<Event> {
        let op = &self.ops[i];
        match op.base() {
            "LDGSTS" => Some(Event::Copy),
            "LDGDEPBAR" => Some(Event::Commit),
            _ => wait_count(op).map(Event::Wait),
        }
    }
}

enum Event {
    Copy,
    Commit,
    Wait(u8),
}

impl Protocol for CpAsync<'_> {
    type State = Groups;
    fn start(&self) -> Groups {
        Groups {
            committed: 0,
            in_flight: BTreeSet::new(),
            pending: BTreeSet::new(),
            waited: false,
            idle: None,
        }
    }
    fn relevance(&self, i: usize) -> Relevance {
        match self.kind(i) {
            Some(Event::Copy) => Relevance::Adds,
            Some(_) => Relevance::Splits,
            None => Relevance::None,
        }
    }
    fn absorb(&self, into: &mut Groups, from: &Groups) -> bool {
        let n = into.in_flight.len() + into.pending.len();
        into.in_flight.extend(from.in_flight.iter().copied());
        into.pending.extend(from.pending.iter().copied());
        into.in_flight.len() + into.pending.len() != n
    }
    fn step(&self, i: usize, g: &mut Groups, _: &Values, preds: &Preds) {
        match self.kind(i) {
            Some(Event::Copy) => {
                g.pending.insert(i);
            }
            Some(Event::Commit) => {
                g.committed = (g.committed + 1).min(CAP);
                let p = std::mem::take(&mut g.pending);
                g.in_flight.extend(p);
            }
            Some(Event::Wait(n)) => {
                if g.committed > n {
                    g.waited = true;
                    g.committed = n;
                    g.idle = None;
                } else if !g.waited {
                    g.idle = Some(Idle {
                        wait: i,
                        groups: g.committed,
                        guessed: self
                            .switch
                            .get(&i)
                            .is_some_and(|(_, sel)| sel.iter().any(|&p| preds.supposed(p))),
                    });
                }
                if n == 0 {
                    g.in_flight.clear();
                }
            }
            None => {}
        }
    }
}

/// Waits of one switch: `DEPBAR.LE SB0, k` blocks with different counts that go on to the same
/// block. Per wait, the counts of its switch and the predicates of the branches into it.
fn switches(cfg: &Cfg, waits: &[usize]) -> HashMap<usize, (Vec<u8>, Vec<Pred>)> {
    let block_of: HashMap<usize, usize> = cfg
        .blocks
        .iter()
        .enumerate()
        .flat_map(|(b, blk)| blk.instructions.iter().map(move |&i| (i, b)))
        .collect();
    let mut by_join: HashMap<usize, Vec<(usize, u8)>> = HashMap::new();
    for &w in waits {
        let b = block_of[&w];
        if let ([e], Some(n)) = (cfg.blocks[b].edges.as_slice(), wait_count(&cfg.ops[w])) {
            by_join.entry(e.to).or_default().push((w, n));
        }
    }
    let mut out = HashMap::new();
    for list in by_join.into_values() {
        let counts: BTreeSet<u8> = list.iter().map(|x| x.1).collect();
        if counts.len() < 2 {
            continue;
        }
        for (w, _) in &list {
            let b = block_of[w];
            let selectors: Vec<Pred> = cfg
                .blocks
                .iter()
                .flat_map(|blk| &blk.edges)
                .filter(|e| e.to == b)
                .filter_map(|e| e.when.map(|(p, _)| p))
                .collect();
            out.insert(*w, (counts.iter().copied().collect(), selectors));
        }
    }
    out
}

fn is_read(op: &Op) -> bool {
    matches!(op.base(), "LDS" | "LDSM")
}

/// A read made before any wait completed a group, with what was in flight.
struct Early {
    read: usize,
    at: paths::Witness,
    groups: Groups,
    access: address::Access,
}

pub fn check(c: &Ctx) -> super::Check {
    let copies = c.live(|i| base(&i.opcode) == "LDGSTS");
    if copies.is_empty() {
        return c.check(NAME, Status::NotApplicable, "no cp.async (LDGSTS)".into());
    }
    if let Some(&arrive) = c
        .live(|i| i.opcode.starts_with("ARRIVES.LDGSTSBAR"))
        .first()
    {
        return c.check(
            NAME,
            Status::NotApplicable,
            format!(
                "cp.async completes on an mbarrier (cp.async.mbarrier.arrive, ARRIVES.LDGSTSBAR at {}), not through commit groups: its wait is the mbarrier's",
                c.at(arrive)
            ),
        );
    }
    let ops = &c.cfg.ops;
    let commits = c.live(|i| base(&i.opcode) == "LDGDEPBAR");
    let waits: Vec<usize> = c
        .live(|i| base(&i.opcode) == "DEPBAR")
        .into_iter()
        .filter(|&i| wait_count(&ops[i]).is_some())
        .collect();
    let proto = CpAsync {
        ops,
        switch: switches(c.cfg, &waits),
    };
    let table = Table::of(ops);
    // where each copy writes, on every path that issues it
    let mut written: HashMap<usize, Vec<address::Access>> = HashMap::new();
    let mut early: Vec<Early> = Vec::new();
    let run = paths::run(c.cfg, &proto, |v| {
        let op = &ops[v.i];
        if v.preds.guard(op.guard) == Some(false) {
            return;
        }
        if op.base() == "LDGSTS" {
            let a = address::access(op, v.values, address::bytes(op), &table);
            address::remember(written.entry(v.i).or_default(), a);
        } else if is_read(op)
            && !v.state.waited
            && !(v.state.in_flight.is_empty() && v.state.pending.is_empty())
        {
            early.push(Early {
                read: v.i,
                at: v.at,
                groups: v.state.clone(),
                access: address::access(op, v.values, address::bytes(op), &table),
            });
        }
    });
    let run = run.map(|paths| {
        let mut found = Vec::new();
        for e in &early {
            let met: Vec<(usize, Relation)> = e
                .groups
                .in_flight
                .iter()
                .chain(&e.groups.pending)
                .filter_map(|cp| {
                    let seen = written.get(cp).map_or(&[][..], Vec::as_slice);
                    let r = address::relate_any(seen, &e.access, address::relate);
                    (r != Relation::Disjoint).then_some((*cp, r))
                })
                .collect();
            if !met.is_empty() {
                found.push(finding(c, &paths, &proto, e, &met, waits.is_empty()));
            }
        }
        (found, paths)
    });
    c.verdict(
        NAME,
        run,
        format!(
            "every shared read that may touch a cp.async destination follows a wait_group that completes a committed group, on every feasible path ({} LDGSTS, {} commits, {} waits)",
            copies.len(),
            commits.len(),
            waits.len()
        ),
    )
}

fn finding(
    c: &Ctx,
    paths: &paths::Paths,
    proto: &CpAsync,
    e: &Early,
    met: &[(usize, Relation)],
    no_waits: bool,
) -> Raw {
    let (read, at, g) = (e.read, e.at, &e.groups);
    let ops = &c.cfg.ops;
    let (copy, relation) = met
        .iter()
        .find(|(_, r)| *r == Relation::Overlap)
        .unwrap_or(&met[0]);
    let run = witness::executed(c, paths, at, read);
    // the commit on the path after the copy was last issued
    let from = run.iter().rposition(|&i| i == *copy).unwrap_or(0);
    let commit = run[from..]
        .iter()
        .copied()
        .find(|&i| ops[i].base() == "LDGDEPBAR");
    let wait = g.idle.map(|x| x.wait);
    let mut status = match relation {
        Relation::Overlap => Status::Hazard,
        _ => Status::Undecided,
    };
    let uncommitted = g.pending.contains(copy);
    let why = match (wait, uncommitted) {
        (Some(w), true) => format!(
            "it was not committed (cp.async.commit_group, LDGDEPBAR) before the wait at {}: wait_group does not wait for it",
            c.at(w)
        ),
        (None, true) => {
            "it was not committed (cp.async.commit_group, LDGDEPBAR) and no wait_group follows it"
                .to_string()
        }
        (Some(w), false) => {
            let n = wait_count(&ops[w]).unwrap_or(0);
            let idle = g.idle.expect("a wait on the path is the idle one");
            let mut s = format!(
                "the wait at {} (wait_group {n}) leaves all {} committed group(s) in flight",
                c.at(w),
                idle.groups
            );
            if let Some((counts, _)) = proto.switch.get(&w)
                && idle.guessed
                && counts.iter().any(|&k| k < idle.groups)
            {
                status = Status::Undecided;
                s.push_str(&format!(
                    "; its count is chosen at run time among wait_group {} and which one runs is not known here",
                    counts
                        .iter()
                        .map(u8::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            s
        }
        (None, false) if no_waits => "the kernel has no wait_group (DEPBAR) at all".into(),
        (None, false) => "no wait_group stands between them on that path".into(),
    };
    let address = match relation {
        Relation::Overlap => String::new(),
        Relation::Unknown(r) => {
            format!("; whether the read touches the copied bytes is not known: {r}")
        }
        Relation::Disjoint => unreachable!("disjoint copies are not findings"),
    };
    let mut sites = vec![("cp.async", *copy)];
    sites.extend(commit.map(|i| ("commit", i)));
    sites.extend(wait.map(|i| ("wait", i)));
    sites.push(("read", read));
    Raw {
        status,
        at: read,
        witness: at,
        sites,
        detail: format!(
            "the shared read {} at {} can run while the cp.async at {} is in flight: {why}{address}",
            ops[read].opcode,
            c.at(read),
            c.at(*copy)
        ),
    }
}
