//! mbarrier init published: no mbarrier wait (`SYNCS.PHASECHK`) may run after an init
//! (`SYNCS.EXCH.64`) of the same mbarrier unless a block-wide barrier (`BAR.SYNC 0x0`,
//! `BAR.RED 0x0` or a cluster barrier wait) stands between them, on every feasible path: other
//! threads would wait on a barrier not yet initialised. A wait on another mbarrier (a different
//! address) is not a finding; one whose address cannot be told apart is undecided.

use super::address::{self, Access, Relation};
use super::{Ctx, Raw, Status};
use crate::inspect::flow::decode::{Op, Operand};
use crate::inspect::flow::paths::{self, Outstanding, Protocol, Relevance, Table, Witness};
use crate::inspect::flow::preds::Preds;
use crate::inspect::flow::values::Values;
use std::collections::{BTreeSet, HashMap};

pub const NAME: &str = "mbarrier init published";

/// An mbarrier is 8 bytes.
const BYTES: i64 = 8;

fn is_init(op: &Op) -> bool {
    op.opcode.starts_with("SYNCS.EXCH.64")
}

fn is_wait(op: &Op) -> bool {
    op.opcode.starts_with("SYNCS.PHASECHK")
}

/// A barrier every thread of the block takes part in (its guard is the path's business).
pub fn block_barrier(op: &Op) -> bool {
    if op.base() == "UCGABAR_WAIT" {
        return true;
    }
    (op.opcode.starts_with("BAR.SYNC") || op.opcode.starts_with("BAR.RED"))
        && op.ops.first() == Some(&Operand::Imm(0))
        && op.ops[1..]
            .iter()
            .all(|o| matches!(o, Operand::Pred { .. }))
}

struct Published<'a> {
    ops: &'a [Op],
}

impl Protocol for Published<'_> {
    /// Inits not yet published by a block barrier.
    type State = Outstanding;
    fn start(&self) -> Outstanding {
        Outstanding::default()
    }
    fn relevance(&self, i: usize) -> Relevance {
        if is_init(&self.ops[i]) || block_barrier(&self.ops[i]) {
            Relevance::Splits
        } else {
            Relevance::None
        }
    }
    fn step(&self, i: usize, s: &mut Outstanding, _: &Values, _: &Preds) {
        if is_init(&self.ops[i]) {
            s.0.insert(i);
        } else if block_barrier(&self.ops[i]) {
            s.0.clear();
        }
    }
    fn absorb(&self, into: &mut Outstanding, from: &Outstanding) -> bool {
        into.absorb(from)
    }
}

pub fn check(c: &Ctx) -> super::Check {
    let ops = &c.cfg.ops;
    let inits = c.live(|i| i.opcode.starts_with("SYNCS.EXCH.64"));
    let Some(&first) = inits.first() else {
        return c.check(
            NAME,
            Status::NotApplicable,
            "no mbarrier initialised in SASS (SYNCS.EXCH.64; sm_90 and newer)".into(),
        );
    };
    let waits = c.live(|i| i.opcode.starts_with("SYNCS.PHASECHK"));
    let table = Table::of(ops);
    let mut inited: HashMap<usize, Vec<Access>> = HashMap::new();
    let mut early: Vec<(usize, Witness, BTreeSet<usize>, Access)> = Vec::new();
    let proto = Published { ops };
    let run = paths::run(c.cfg, &proto, |v| {
        let op = &ops[v.i];
        if v.preds.guard(op.guard) == Some(false) {
            return;
        }
        let a = address::access(op, v.values, BYTES, &table);
        if is_init(op) {
            address::remember(inited.entry(v.i).or_default(), a);
        } else if is_wait(op) && !v.state.0.is_empty() {
            early.push((v.i, v.at, v.state.0.clone(), a));
        }
    });
    let run = run.map(|paths| {
        let mut found = Vec::new();
        for (wait, at, pending, a) in &early {
            for &init in pending {
                let seen = inited.get(&init).map_or(&[][..], Vec::as_slice);
                let r = address::relate_any(seen, a, address::relate);
                let (status, how) = match r {
                    Relation::Disjoint => continue,
                    Relation::Overlap => (Status::Hazard, String::new()),
                    Relation::Unknown(why) => (
                        Status::Undecided,
                        format!("; whether it is the same mbarrier is not known: {why}"),
                    ),
                };
                found.push(Raw {
                    status,
                    at: *wait,
                    witness: *at,
                    sites: vec![("init", init), ("wait", *wait)],
                    detail: format!(
                        "the mbarrier wait at {} can follow the init at {} with no block barrier (BAR.SYNC 0x0) between them on a feasible path: other threads may wait on a barrier not yet initialised{how}",
                        c.at(*wait),
                        c.at(init)
                    ),
                });
                break;
            }
        }
        (found, paths)
    });
    c.verdict(
        NAME,
        run,
        if waits.is_empty() {
            format!(
                "{} init(s) from {}; no mbarrier wait in this kernel",
                inits.len(),
                c.at(first)
            )
        } else {
            format!(
                "a block barrier stands between the {} init(s) (first at {}) and each of the {} wait(s) on the same mbarrier, on every feasible path",
                inits.len(),
                c.at(first),
                waits.len()
            )
        },
    )
}
