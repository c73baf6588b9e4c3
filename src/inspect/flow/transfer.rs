//! One instruction's effect on the values and predicates a path holds: the semantics and the
//! ranges of its results, put into the state (`values`), which knows nothing of instructions.

use super::cfg::Cfg;
use super::decode::{self, Guard};
use super::lin::{Lin, Sym};
use super::preds::Preds;
use super::ranges;
use super::semantics::{self, PredOut};
use super::values::{SymInfo, Values};
use std::sync::Arc;

/// Runs instruction `i` of `cfg`, whose guard holds (`maybe` when it may not execute), on `v`.
pub fn step(
    vals: &mut Values,
    cfg: &Cfg,
    i: usize,
    preds: &mut Preds,
    again: bool,
    maybe: bool,
    info: &dyn SymInfo,
) {
    let (op, w, index) = (&cfg.ops[i], &cfg.writes[i], i as u32);
    if again {
        vals.invalidate(index);
    }
    let results = semantics::results(vals, op, index, preds, info);
    let (bound, derived) = match results.first() {
        Some(Some(_)) => (None, None),
        _ => (ranges::result(vals, op, info), ranges::derived(vals, op)),
    };
    for (slot, &r) in w.regs.iter().enumerate() {
        let fresh = Some(Lin::sym(Sym::def(index, slot as u16)));
        let new = results.get(slot).copied().flatten().or(fresh);
        let v = if maybe && vals.get(r) != new {
            fresh
        } else {
            new
        };
        let v = match bound.filter(|_| slot == 0 && v == fresh && !maybe) {
            // one value: a constant after all
            Some((lo, hi)) if lo == hi => Some(Lin::konst(lo)),
            Some(b) => {
                Arc::make_mut(&mut vals.bounds).insert(Sym::def(index, 0), b);
                v
            }
            None => v,
        };
        vals.put(r, v);
        if let (0, Some(d), false) = (slot, derived, maybe || v != fresh) {
            vals.derive(Sym::def(index, 0), d);
        }
        // where the guard holds, the register holds what the instruction made
        if let (true, Guard::If { .. }, Some(made)) = (maybe && v != new, op.guard, new) {
            vals.put_guarded(r, op.guard, made);
        }
    }
    if w.all_preds {
        preds.forget_all();
        vals.all_preds_written();
    }
    for &p in &w.preds {
        vals.pred_written(p);
        preds.forget(p);
    }
    if maybe {
        return;
    }
    for (p, out) in semantics::pred_results(vals, op, preds, info) {
        if decode::always(p) {
            continue;
        }
        match out {
            PredOut::Known(v) => preds.set(p, v),
            PredOut::Cond(c) => match vals.decide(&c, info) {
                Some((v, false)) => preds.set(p, v),
                Some((v, true)) => preds.suppose(p, v),
                None => vals.set_cond(p, Some(c)),
            },
        }
    }
}
