//! fence.proxy.async: an async-proxy read of shared memory (a TMA or bulk store, a wgmma or
//! tcgen05 MMA operand) must not run after a thread's shared store (`STS`, `STSM`) to the bytes
//! it reads unless a `fence.proxy.async` (`FENCE.VIEW.ASYNC`) stands between them, on every
//! feasible path: the threads' writes may not be visible to it. A TMA store covers at least its
//! first 16 bytes, a bulk store the size in its register; a store past that, or an MMA operand
//! (read through a descriptor this check does not decode), is undecided.

use super::address::{self, Access, Relation};
use super::{Ctx, Raw, Status};
use crate::inspect::flow::decode::{Mem, Op, Operand};
use crate::inspect::flow::paths::{self, Outstanding, Protocol, Relevance, Table, Witness};
use crate::inspect::flow::preds::Preds;
use crate::inspect::flow::values::Values;
use std::collections::{BTreeSet, HashMap};

pub const NAME: &str = "fence.proxy.async";

/// The smallest TMA box: 16 bytes.
const MIN_BOX: i64 = 16;

/// Reads shared memory through the async proxy: TMA and bulk stores and reductions (shared ->
/// global), warpgroup and tcgen05 MMA with shared-memory descriptors, tcgen05.cp.
pub fn async_read(op: &Op) -> bool {
    let b = op.base();
    matches!(b, "UTMASTG" | "UTMAREDG" | "UBLKRED")
        || (b == "UBLKCP" && op.opcode.contains(".G.S"))
        || b.ends_with("GMMA")
        || matches!(
            b,
            "UTCHMMA" | "UTCQMMA" | "UTCIMMA" | "UTCOMMA" | "UTCMMA" | "UTCCP"
        )
}

fn is_store(op: &Op) -> bool {
    matches!(op.base(), "STS" | "STSM")
}

fn is_fence(op: &Op) -> bool {
    op.opcode.starts_with("FENCE.VIEW.ASYNC")
}

/// The shared bytes an async read starts at and covers at least; None when it reads through a
/// descriptor.
fn read_access(op: &Op, v: &Values, table: &Table) -> Option<Access> {
    let mems: Vec<&Mem> = op
        .ops
        .iter()
        .filter_map(|o| match o {
            Operand::Mem(m) => Some(m),
            _ => None,
        })
        .collect();
    match op.base() {
        "UTMASTG" | "UTMAREDG" => mems
            .first()
            .map(|m| address::at(v.address(m), MIN_BOX, v, table)),
        "UBLKCP" | "UBLKRED" => mems.get(1).map(|m| {
            let bytes = address::size_operand(op, v)
                .filter(|&n| n > 0)
                .unwrap_or(MIN_BOX);
            address::at(v.address(m), bytes, v, table)
        }),
        _ => None,
    }
}

struct Fenced<'a> {
    ops: &'a [Op],
}

impl Protocol for Fenced<'_> {
    /// Shared stores not yet fenced.
    type State = Outstanding;
    fn start(&self) -> Outstanding {
        Outstanding::default()
    }
    fn relevance(&self, i: usize) -> Relevance {
        if is_store(&self.ops[i]) {
            Relevance::Adds
        } else if is_fence(&self.ops[i]) {
            Relevance::Splits
        } else {
            Relevance::None
        }
    }
    fn step(&self, i: usize, s: &mut Outstanding, _: &Values, _: &Preds) {
        if is_store(&self.ops[i]) {
            s.0.insert(i);
        } else if is_fence(&self.ops[i]) {
            s.0.clear();
        }
    }
    fn absorb(&self, into: &mut Outstanding, from: &Outstanding) -> bool {
        into.absorb(from)
    }
}

pub fn check(c: &Ctx) -> super::Check {
    let ops = &c.cfg.ops;
    let readers: Vec<usize> = (0..ops.len())
        .filter(|&i| async_read(&ops[i]))
        .filter(|&i| c.cfg.blocks.iter().any(|b| b.instructions.contains(&i)))
        .collect();
    let Some(&first) = readers.first() else {
        return c.check(
            NAME,
            Status::NotApplicable,
            "no async-proxy read of shared memory (TMA or bulk store, wgmma, tcgen05)".into(),
        );
    };
    let table = Table::of(ops);
    let mut stored: HashMap<usize, Vec<Access>> = HashMap::new();
    let mut early: Vec<(usize, Witness, BTreeSet<usize>, Option<Access>)> = Vec::new();
    let run = paths::run(c.cfg, &Fenced { ops }, |v| {
        let op = &ops[v.i];
        if v.preds.guard(op.guard) == Some(false) {
            return;
        }
        if is_store(op) {
            let a = address::access(op, v.values, address::bytes(op), &table);
            address::remember(stored.entry(v.i).or_default(), a);
        } else if async_read(op) && !v.state.0.is_empty() {
            early.push((
                v.i,
                v.at,
                v.state.0.clone(),
                read_access(op, v.values, &table),
            ));
        }
    });
    let run = run.map(|paths| {
        let mut found = Vec::new();
        for (r, at, pending, read) in &early {
            let mut best: Option<(Status, usize, String)> = None;
            for &w in pending {
                let seen = stored.get(&w).map_or(&[][..], Vec::as_slice);
                let rel = match read {
                    Some(a) => address::relate_any(seen, a, address::relate_open),
                    None => Relation::Unknown(
                        "it reads through a descriptor whose address this check does not decode".into(),
                    ),
                };
                let (status, why) = match rel {
                    Relation::Disjoint => continue,
                    Relation::Overlap => (Status::Hazard, String::new()),
                    Relation::Unknown(w) => (
                        Status::Undecided,
                        format!("; whether it reads the stored bytes is not known: {w}"),
                    ),
                };
                if best.as_ref().is_none_or(|b| status > b.0) {
                    best = Some((status, w, why));
                }
            }
            if let Some((status, w, why)) = best {
                found.push(Raw {
                    status,
                    at: *r,
                    witness: *at,
                    sites: vec![("store", w), ("async read", *r)],
                    detail: format!(
                        "{} at {} reads shared memory through the async proxy and can follow the shared store at {} with no fence.proxy.async (FENCE.VIEW.ASYNC) between them: the threads' writes may not be visible to it{why}",
                        ops[*r].opcode,
                        c.at(*r),
                        c.at(w)
                    ),
                });
            }
        }
        (found, paths)
    });
    c.verdict(
        NAME,
        run,
        format!(
            "no thread's shared store reaches any of the {} async-proxy read(s) (first {} at {}) without fence.proxy.async, on every feasible path",
            readers.len(),
            ops[first].opcode,
            c.at(first)
        ),
    )
}
