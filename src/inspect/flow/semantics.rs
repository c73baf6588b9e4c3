//! What the integer instructions that build addresses, counters and conditions compute, as
//! linear forms; every other instruction makes a value the analysis only names.

use super::decode::{Op, Operand, Pred};
use super::lin::{self, Cond, Lin, Rel, Val};
use super::preds::Preds;
use super::values::{SymInfo, Values};

/// What an instruction writes into a predicate.
#[derive(Debug, Clone, Copy)]
pub enum PredOut {
    Known(bool),
    Cond(Cond),
}

/// The sources of an instruction: its operands after the destination register and the carry
/// predicates it writes.
fn sources(op: &Op) -> &[Operand] {
    let skip = 1 + op.ops[1.min(op.ops.len())..]
        .iter()
        .take_while(|o| matches!(o, Operand::Pred { not: false, .. }))
        .count();
    &op.ops[skip.min(op.ops.len())..]
}

fn lut3(a: u32, b: u32, c: u32, lut: u32) -> u32 {
    let mut out = 0;
    for bit in 0..32 {
        let i = ((a >> bit & 1) << 2) | ((b >> bit & 1) << 1) | (c >> bit & 1);
        out |= (lut >> i & 1) << bit;
    }
    out
}

/// `x & m` for a constant mask: exact for a low-bit mask when what survives of `x` modulo the
/// mask's width is known to fit in it; for a mask that clears the low k bits, `x` less its low
/// bits, a value of [0, 2^k) the analysis names (`x - x % 2^k`).
fn and_mask(values: &Values, x: &Lin, m: i64, index: u32, info: &dyn SymInfo) -> Val {
    if let Some(k) = x.as_const() {
        return Some(Lin::konst(k & m));
    }
    let m = m as u32;
    if m != 0 && (!m).wrapping_add(1) & !m == 0 && m.trailing_zeros() > 0 {
        let low = Lin::sym(lin::Sym::def(index, super::ranges::LOW_BITS));
        return x.sub(&low);
    }
    if m == 0 || m & m.wrapping_add(1) != 0 {
        return None;
    }
    let bits = 32 - m.leading_zeros();
    let kept = x.modulo(bits, |s| info.align(s));
    if let Some(k) = kept.as_const() {
        return Some(Lin::konst(k & i64::from(m)));
    }
    let (lo, hi) = values.span(&kept, info)?;
    (lo >= 0 && hi <= i64::from(m)).then_some(kept)
}

fn lop3(v: &Values, op: &Op, index: u32, info: &dyn SymInfo) -> Val {
    let s = if matches!(op.ops.first(), Some(Operand::Pred { .. })) {
        &op.ops[2.min(op.ops.len())..]
    } else {
        &op.ops[1.min(op.ops.len())..]
    };
    let lut = match s.get(3) {
        Some(Operand::Imm(l)) => *l as u32,
        _ => return None,
    };
    let (a, b, c) = (
        s.first().and_then(|o| v.operand(o)),
        s.get(1).and_then(|o| v.operand(o)),
        s.get(2).and_then(|o| v.operand(o)),
    );
    let k = |x: &Val| x.and_then(|l| l.as_const()).map(|c| c as u32);
    if let (Some(x), Some(y), Some(z)) = (k(&a), k(&b), k(&c)) {
        return Some(Lin::konst(i64::from(lut3(x, y, z, lut))));
    }
    let not = |x: Val| x.and_then(|l| l.scale(-1)).map(|l| l.plus(-1));
    match lut {
        0xf0 => a,
        0xcc => b,
        0xaa => c,
        0x0f => not(a),
        0x33 => not(b),
        0x55 => not(c),
        0xc0 | 0xa0 | 0x88 => {
            let (x, y) = match lut {
                0xc0 => (a, b),
                0xa0 => (a, c),
                _ => (b, c),
            };
            match (x, y, k(&x), k(&y)) {
                (_, Some(l), Some(m), _) | (Some(l), _, _, Some(m)) => {
                    and_mask(v, &l, i64::from(m), index, info)
                }
                _ => None,
            }
        }
        0xfc | 0x3c | 0xee | 0xfa => {
            let (x, y) = match lut {
                0xfc | 0x3c => (a, b),
                0xee => (b, c),
                _ => (a, c),
            };
            match (k(&x), k(&y)) {
                (Some(0), _) => y,
                (_, Some(0)) => x,
                _ => None,
            }
        }
        _ => None,
    }
}

/// The values an instruction writes into its destination registers, in order; None where the
/// analysis only names the result.
pub fn results(v: &Values, op: &Op, index: u32, preds: &Preds, info: &dyn SymInfo) -> Vec<Val> {
    let base = op.base();
    let src = sources(op);
    let s = |k: usize| src.get(k).and_then(|o| v.operand(o));
    let imm = |k: usize| match src.get(k) {
        Some(Operand::Imm(x)) => Some(*x),
        _ => None,
    };
    let exact = !(op.has("HI") || op.has("X") || op.has("WIDE") || op.has("64"));
    let one = |x: Val| vec![x];
    match base {
        "MOV" | "UMOV" | "MOV32I" | "IMOV" | "R2UR" | "S2R" | "S2UR" => one(s(0)),
        "CS2R" => vec![s(0), s(0)],
        "LDC" | "ULDC" | "LDCU" => match src.first() {
            Some(&Operand::Const { bank, offset }) => vec![
                Some(Lin::sym(lin::Sym::param(bank, offset))),
                Some(Lin::sym(lin::Sym::param(bank, offset + 4))),
            ],
            _ => vec![],
        },
        "IADD3" | "UIADD3" if exact => one(s(0).and_then(|a| a.add(&s(1)?)?.add(&s(2)?))),
        "VIADD" | "UVIADD" | "IADD" | "UIADD" | "IADD32I" if exact => {
            one(s(0).and_then(|a| a.add(&s(1)?)))
        }
        "IMAD" | "UIMAD" if op.has("MOV") => one(s(2)),
        "IMAD" | "UIMAD" if exact => {
            let (a, b, c) = (s(0), s(1), s(2));
            let prod = match (a, b) {
                (Some(x), Some(y)) => match (x.as_const(), y.as_const()) {
                    (Some(k), _) => y.scale(k),
                    (_, Some(k)) => x.scale(k),
                    _ => None,
                },
                _ => None,
            };
            one(prod.and_then(|p| p.add(&c?)))
        }
        // `LEA.HI d, a, b, [c,] s`: b plus the high word of a << s, when that is one value
        "LEA" | "ULEA" if op.has("HI") && !op.has("X") => {
            let high = super::ranges::lea_high(v, op, info);
            match (high, s(1)) {
                (Some((h, h2)), Some(b)) if h == h2 => one(Some(b.plus(h))),
                _ => vec![],
            }
        }
        "LEA" | "ULEA" if exact => match imm(2) {
            Some(sh @ 0..=31) => one(s(0).and_then(|a| a.scale(1 << sh)?.add(&s(1)?))),
            _ => vec![],
        },
        "SHF" | "USHF" if op.has("L") && op.has("U32") && !op.has("HI") => match imm(1) {
            Some(sh @ 0..=31) => one(s(0).and_then(|a| a.scale(1 << sh))),
            _ => vec![],
        },
        "SHL" | "USHL" => match imm(1) {
            Some(sh @ 0..=31) => one(s(0).and_then(|a| a.scale(1 << sh))),
            _ => vec![],
        },
        "LOP3" | "ULOP3" => one(lop3(v, op, index, info)),
        "SEL" | "USEL" => match src.get(2) {
            Some(&Operand::Pred { p, not }) => match preds.get(p) {
                Some(t) => one(if t != not { s(0) } else { s(1) }),
                None => vec![],
            },
            _ => vec![],
        },
        _ => vec![],
    }
}

fn truth(preds: &Preds, o: Option<&Operand>) -> Option<bool> {
    match o {
        Some(&Operand::Pred { p, not }) => preds.get(p).map(|v| v != not),
        _ => None,
    }
}

/// `x bop p` for a comparison `x` and a known predicate value `p`.
fn combine(x: PredOut, bop: &str, p: bool) -> PredOut {
    match (bop, p) {
        ("AND", true) | ("OR", false) => x,
        ("AND", false) => PredOut::Known(false),
        ("OR", true) => PredOut::Known(true),
        (_, false) => x,
        (_, true) => match x {
            PredOut::Known(v) => PredOut::Known(!v),
            PredOut::Cond(c) => PredOut::Cond(c.negate()),
        },
    }
}

/// What an instruction writes into predicates, by predicate.
pub fn pred_results(
    v: &Values,
    op: &Op,
    preds: &Preds,
    info: &dyn SymInfo,
) -> Vec<(Pred, PredOut)> {
    let outs = super::writes::pred_outputs(op);
    let mods: Vec<&str> = op.opcode.split('.').skip(1).collect();
    match op.base() {
        "ISETP" | "UISETP" if !mods.contains(&"EX") && outs.len() == 2 => {
            let rel = mods.iter().find_map(|m| Rel::parse(m));
            let bop = mods
                .iter()
                .copied()
                .find(|m| matches!(*m, "AND" | "OR" | "XOR"))
                .unwrap_or("AND");
            let (Some(rel), Some(a), Some(b)) = (
                rel,
                op.ops.get(2).and_then(|o| v.operand(o)),
                op.ops.get(3).and_then(|o| v.operand(o)),
            ) else {
                return vec![];
            };
            let Some(p) = truth(preds, op.ops.get(4)) else {
                return vec![];
            };
            let c = Cond {
                a,
                b,
                rel,
                unsigned: mods.contains(&"U32"),
            };
            vec![
                (outs[0], combine(PredOut::Cond(c), bop, p)),
                (outs[1], combine(PredOut::Cond(c.negate()), bop, p)),
            ]
        }
        "PLOP3" | "UPLOP3" if outs.len() == 2 => plop3(v, op, preds, &outs),
        "LOP3" | "ULOP3" if !outs.is_empty() => {
            match lop3(v, op, 0, info).and_then(|l| l.as_const()) {
                Some(x) => vec![(outs[0], PredOut::Known(x != 0))],
                None => vec![],
            }
        }
        _ => vec![],
    }
}

/// A PLOP3's outputs: known when its inputs are, and when only one input is unknown but holds a
/// comparison, that comparison or its negation (`P0 = !UP3` keeps what UP3 compared, so a later
/// guard on P0 is decided by the branch the path took on UP3).
fn plop3(v: &Values, op: &Op, preds: &Preds, outs: &[Pred]) -> Vec<(Pred, PredOut)> {
    let ins: Vec<Option<bool>> = (2..5).map(|k| truth(preds, op.ops.get(k))).collect();
    let luts: Vec<u32> = op.ops[5.min(op.ops.len())..]
        .iter()
        .filter_map(|o| match o {
            Operand::Imm(l) => Some(*l as u32),
            _ => None,
        })
        .collect();
    let [l1, l2, ..] = luts.as_slice() else {
        return vec![];
    };
    let unknown: Vec<usize> = (0..3).filter(|&k| ins[k].is_none()).collect();
    let eval = |x: bool, lut: u32| {
        let bit = |k: usize| u32::from(ins[k].unwrap_or(x));
        lut3(bit(0), bit(1), bit(2), lut) & 1 == 1
    };
    let cond = match unknown.as_slice() {
        [] => None,
        &[k] => match op.ops.get(2 + k) {
            Some(&Operand::Pred { p, not }) => match v.cond(p) {
                Some(c) => Some(if not { c.negate() } else { c }),
                None => return vec![],
            },
            _ => return vec![],
        },
        _ => return vec![],
    };
    [(outs[0], *l1), (outs[1], *l2)]
        .into_iter()
        .map(|(out, lut)| {
            let (t, f) = (eval(true, lut), eval(false, lut));
            let r = match (cond, t, f) {
                (Some(c), true, false) => PredOut::Cond(c),
                (Some(c), false, true) => PredOut::Cond(c.negate()),
                _ => PredOut::Known(t),
            };
            (out, r)
        })
        .collect()
}
