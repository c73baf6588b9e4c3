//! Whether two shared-memory accesses can touch the same bytes: one made by some thread at one
//! point of the kernel, the other by some (maybe other) thread at another. Their addresses are
//! linear forms; what both name and every thread reads the same all along (kernel parameters,
//! the block's shared window) cancels, each thread index ranges over its bounds on either side,
//! and a value the analysis only names must have a known range, else the answer is "cannot
//! tell", with the reason.

use crate::inspect::flow::decode::{Op, Operand};
use crate::inspect::flow::lin::{self, Kind, Lin, SPECIALS, Sym, Val};
use crate::inspect::flow::values::{SymInfo, Values};

/// An access: its first byte and how many bytes it covers (at least), and the interval that
/// first byte takes apart from its block-uniform base, on the path that made it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Access {
    pub addr: Val,
    pub bytes: i64,
    pub span: Option<(i64, i64)>,
}

/// The part of a form every thread of the block reads the same all along.
fn uniform(l: &Lin) -> Lin {
    let mut u = Lin::konst(0);
    for &(s, c) in l.terms().iter().filter(|(s, _)| s.uniform()) {
        u = u.add(&Lin::sym(s).scale(c).unwrap_or(u)).unwrap_or(u);
    }
    u
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Relation {
    Disjoint,
    /// Some pair of threads touches common bytes.
    Overlap,
    /// Why it cannot be told.
    Unknown(String),
}

/// Bytes an LDS/STS/LDSM/LDGSTS moves per thread, from its modifiers.
pub fn bytes(op: &Op) -> i64 {
    match op.base() {
        "LDSM" | "STSM" => 16,
        _ => i64::from(crate::sass::census::access_width(&op.opcode)),
    }
}

/// The shared-memory access of instruction `op` under `v`: its first memory operand.
pub fn access(op: &Op, v: &Values, covers: i64, info: &dyn SymInfo) -> Access {
    at(op.mem().and_then(|m| v.address(m)), covers, v, info)
}

/// An access at `addr` covering `bytes`, bounded as far as `v` says.
pub fn at(addr: Val, bytes: i64, v: &Values, info: &dyn SymInfo) -> Access {
    let span = addr
        .and_then(|a| a.sub(&uniform(&a)))
        .and_then(|rest| v.span(&rest, info));
    Access { addr, bytes, span }
}

/// The bytes a bulk copy's size register says, when it is a known constant.
pub fn size_operand(op: &Op, v: &Values) -> Option<i64> {
    op.ops
        .iter()
        .rev()
        .find(|o| matches!(o, Operand::Reg { .. } | Operand::Imm(_)))
        .and_then(|o| v.operand(o))
        .and_then(|l| l.as_const())
}

fn describe(s: Sym) -> String {
    match s.kind() {
        Kind::Special(i) => SPECIALS[i].0.to_string(),
        Kind::Param { bank, offset } => format!("c[{bank:#x}][{offset:#x}]"),
        Kind::Def { index, .. } => format!("the value made by instruction {index}"),
        Kind::Phi { .. } => "a value that changes along the loop".into(),
    }
}

pub fn relate(a: &Access, b: &Access, info: &dyn SymInfo) -> Relation {
    match by_form(a, b, info) {
        Relation::Unknown(why) => match (a.addr, b.addr, a.span, b.span) {
            // the same base, and the rest of each bounded on its own path: apart or not known
            (Some(x), Some(y), Some(p), Some(q))
                if uniform(&x) == uniform(&y) && (p.1 + a.bytes <= q.0 || q.1 + b.bytes <= p.0) =>
            {
                Relation::Disjoint
            }
            _ => Relation::Unknown(why),
        },
        r => r,
    }
}

/// `relate` by the difference of the two forms.
fn by_form(a: &Access, b: &Access, info: &dyn SymInfo) -> Relation {
    let (Some(x), Some(y)) = (a.addr, b.addr) else {
        return Relation::Unknown("an address is not known".into());
    };
    // the other side's thread indices are another thread's
    let mut y2 = Lin::konst(y.k);
    for &(s, c) in y.terms() {
        let s2 = s.other_thread().unwrap_or(s);
        match y2.add(&Lin::sym(s2).scale(c).unwrap_or(Lin::konst(0))) {
            Some(l) => y2 = l,
            None => return Relation::Unknown("the addresses are too involved".into()),
        }
    }
    let Some(d) = x.sub(&y2) else {
        return Relation::Unknown("the addresses are too involved".into());
    };
    let stable = |s: Sym| s.uniform() || matches!(s.kind(), Kind::Special(_));
    let range = |s: Sym| info.range(s);
    let Some((lo, hi)) = lin::interval(&d, range) else {
        let why = d
            .terms()
            .iter()
            .find(|&&(s, _)| range(s).is_none())
            .map_or("an unbounded value".into(), |&(s, _)| describe(s));
        let what = if d
            .terms()
            .iter()
            .all(|&(s, _)| stable(s) || range(s).is_some())
        {
            "they differ by"
        } else {
            "they depend on"
        };
        return Relation::Unknown(format!("{what} {why}, not known here"));
    };
    // x covers [x, x + a.bytes), y2 covers [y2, y2 + b.bytes): they meet when -a.bytes < d < b.bytes
    if hi <= -a.bytes || lo >= b.bytes {
        Relation::Disjoint
    } else {
        Relation::Overlap
    }
}

/// `relate` for an access `b` whose extent is only known to be at least `b.bytes` (a TMA box
/// set by its tensor map, a bulk copy of a size in a register).
pub fn relate_open(a: &Access, b: &Access, info: &dyn SymInfo) -> Relation {
    match relate(a, b, info) {
        Relation::Overlap => Relation::Overlap,
        Relation::Unknown(why) => Relation::Unknown(why),
        Relation::Disjoint => {
            let open = Access {
                bytes: 1 << 40,
                ..*b
            };
            match relate(a, &open, info) {
                Relation::Disjoint => Relation::Disjoint,
                _ => Relation::Unknown(format!(
                    "it lies past the first {} bytes the async read covers, and how far that read reaches is not known here",
                    b.bytes
                )),
            }
        }
    }
}

/// How `b` relates to an access seen at several addresses (one per path that made it): meeting
/// when one meets, disjoint when all are, else not known; `how` relates one pair.
pub fn relate_any(
    seen: &[Access],
    b: &Access,
    info: &dyn SymInfo,
    how: fn(&Access, &Access, &dyn SymInfo) -> Relation,
) -> Relation {
    if seen.is_empty() {
        return Relation::Unknown("its address is not known".into());
    }
    let mut out = Relation::Disjoint;
    for a in seen {
        match how(a, b, info) {
            Relation::Overlap => return Relation::Overlap,
            Relation::Disjoint => {}
            unknown => out = unknown,
        }
    }
    out
}

/// Records one more address an access was seen at (a few per access).
pub fn remember(seen: &mut Vec<Access>, a: Access) {
    if !seen.contains(&a) && seen.len() < 8 {
        seen.push(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoInfo;
    impl SymInfo for NoInfo {
        fn range(&self, s: Sym) -> Option<(i64, i64)> {
            match s.kind() {
                Kind::Special(i) => Some((SPECIALS[i].1, SPECIALS[i].2)),
                _ => None,
            }
        }
        fn align(&self, _: Sym) -> u32 {
            0
        }
    }

    fn tid() -> Lin {
        Lin::sym(Sym::special("SR_TID.X").unwrap())
    }

    #[test]
    fn thread_indices_range_and_bases_cancel() {
        let base = Lin::sym(Sym::special("SR_CgaCtaId").unwrap())
            .scale(1 << 24)
            .unwrap()
            .plus(0x400);
        let tile = |k: i64| Access {
            addr: tid().scale(16).unwrap().add(&base).map(|l| l.plus(k)),
            bytes: 16,
            span: None,
        };
        // another thread's element of the same tile
        assert_eq!(relate(&tile(0), &tile(0), &NoInfo), Relation::Overlap);
        // a table past the tile's 16 KiB
        let table = Access {
            addr: tid().scale(4).unwrap().add(&base).map(|l| l.plus(0x4000)),
            bytes: 4,
            span: None,
        };
        assert_eq!(relate(&tile(0), &table, &NoInfo), Relation::Disjoint);
        let param = Access {
            addr: Some(Lin::sym(Sym::param(0, 0x170))),
            bytes: 4,
            span: None,
        };
        match relate(&tile(0), &param, &NoInfo) {
            Relation::Unknown(why) => assert!(why.contains("c[0x0][0x170]"), "{why}"),
            r => panic!("{r:?}"),
        }
    }
}
