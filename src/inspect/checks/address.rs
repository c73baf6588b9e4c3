//! Whether two shared-memory accesses can touch the same bytes: one made by some thread at one
//! point of the kernel, the other by some (maybe other) thread at another. Their addresses are
//! linear forms; what both name and every thread reads the same all along (kernel parameters,
//! the block's shared window) cancels, each thread index ranges over what its side's path
//! allowed, and a value the analysis only names must have a bound, else the answer is "cannot
//! tell", with the reason. Meeting is only claimed when the difference depends on thread indices
//! alone (some pair of threads does meet); bounds can only tell accesses apart.

use crate::inspect::flow::decode::{Op, Operand};
use crate::inspect::flow::lin::{Kind, SPECIALS, Sym, Val};
use crate::inspect::flow::values::{SymInfo, Values};

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
        _ => i64::from(crate::evidence::sass::census::access_width(&op.opcode)),
    }
}

/// An access: its first byte and how many bytes it covers (at least), with the ranges its
/// address's unknowns had on the path that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub addr: Val,
    pub bytes: i64,
    /// Per symbol of `addr` (block-uniform ones aside).
    pub ranges: Vec<SymRange>,
}

/// A symbol, its range on the path, and whether the range is exact (a thread index, every value
/// of which some thread has) or only a bound.
pub type SymRange = (Sym, Option<(i64, i64)>, bool);

/// The shared-memory access of instruction `op` under `v`: its first memory operand, with the
/// registers written under the instruction's own guard as they were written.
pub fn access(op: &Op, v: &Values, covers: i64, info: &dyn SymInfo) -> Access {
    at(
        op.mem().and_then(|m| v.address_under(m, op.guard)),
        covers,
        v,
        info,
    )
}

/// An access at `addr` covering `bytes`, its unknowns bounded as far as `v` says.
pub fn at(addr: Val, bytes: i64, v: &Values, info: &dyn SymInfo) -> Access {
    let ranges = addr
        .iter()
        .flat_map(|a| a.terms().to_vec())
        .filter(|(s, _)| !s.uniform())
        .map(|(s, _)| match s.kind() {
            Kind::Special(_) => (s, v.thread_range(s, info), true),
            _ => (s, v.range(s, info), false),
        })
        .collect();
    Access {
        addr,
        bytes,
        ranges,
    }
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

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// Whether `a` (made by some thread) and `b` (by some thread, maybe another, maybe later) can
/// touch common bytes. Block-uniform unknowns must cancel; every other unknown is its own on
/// either side (another thread's, or another time's), ranging over what its side knew.
pub fn relate(a: &Access, b: &Access) -> Relation {
    let (Some(x), Some(y)) = (a.addr, b.addr) else {
        return Relation::Unknown("an address is not known".into());
    };
    let Some(base) = x.sub(&y) else {
        return Relation::Unknown("the addresses are too involved".into());
    };
    if let Some(&(s, _)) = base.terms().iter().find(|(s, _)| s.uniform()) {
        return Relation::Unknown(format!("they differ by {}, not known here", describe(s)));
    }
    // d = x - y, over both sides' unknowns
    let (mut lo, mut hi, mut g, mut exact) = (x.k - y.k, x.k - y.k, 0i64, true);
    let sides = [(a, &x, 1i64), (b, &y, -1i64)];
    for (acc, form, sign) in sides {
        for &(s, c) in form.terms().iter().filter(|(s, _)| !s.uniform()) {
            let Some(&(_, range, is_exact)) = acc.ranges.iter().find(|r| r.0 == s) else {
                return Relation::Unknown(format!("{} is not known here", describe(s)));
            };
            let Some((rlo, rhi)) = range else {
                return Relation::Unknown(format!(
                    "they depend on {}, not known here",
                    describe(s)
                ));
            };
            let c = c * sign;
            let (p, q) = (rlo.saturating_mul(c), rhi.saturating_mul(c));
            lo = lo.saturating_add(p.min(q));
            hi = hi.saturating_add(p.max(q));
            g = gcd(g, c);
            exact &= is_exact;
        }
    }
    // x covers [x, x + a.bytes), y covers [y, y + b.bytes): they meet when -a.bytes < d < b.bytes
    let (wlo, whi) = (lo.max(1 - a.bytes), hi.min(b.bytes - 1));
    if wlo > whi {
        return Relation::Disjoint;
    }
    if !exact {
        return Relation::Unknown(
            "their addresses are only bounded here, and the bounds meet".into(),
        );
    }
    // d takes k + g * m: is one of those inside the window?
    let k = x.k - y.k;
    let reach = if g == 0 {
        (wlo..=whi).contains(&k)
    } else {
        wlo + (k - wlo).rem_euclid(g) <= whi
    };
    if reach {
        Relation::Overlap
    } else {
        Relation::Disjoint
    }
}

/// `relate` for an access `b` whose extent is only known to be at least `b.bytes` (a TMA box
/// set by its tensor map, a bulk copy of a size in a register).
pub fn relate_open(a: &Access, b: &Access) -> Relation {
    match relate(a, b) {
        Relation::Overlap => Relation::Overlap,
        Relation::Unknown(why) => Relation::Unknown(why),
        Relation::Disjoint => {
            let open = Access {
                bytes: 1 << 40,
                ..b.clone()
            };
            match relate(a, &open) {
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
pub fn relate_any(seen: &[Access], b: &Access, how: fn(&Access, &Access) -> Relation) -> Relation {
    if seen.is_empty() {
        return Relation::Unknown("its address is not known".into());
    }
    let mut out = Relation::Disjoint;
    for a in seen {
        match how(a, b) {
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
    use crate::inspect::flow::lin::Lin;

    fn tid() -> Sym {
        Sym::special("SR_TID.X").unwrap()
    }

    /// `k + c * tid.x` above the block's shared window, tid.x over `threads`.
    fn access(c: i64, k: i64, bytes: i64, threads: (i64, i64)) -> Access {
        let base = Lin::sym(Sym::special("SR_CgaCtaId").unwrap())
            .scale(1 << 24)
            .unwrap()
            .plus(0x400);
        Access {
            addr: Lin::sym(tid())
                .scale(c)
                .and_then(|l| l.add(&base))
                .map(|l| l.plus(k)),
            bytes,
            ranges: vec![(tid(), Some(threads), true)],
        }
    }

    #[test]
    fn thread_indices_range_and_bases_cancel() {
        let all = (0, 1023);
        let tile = access(16, 0, 16, all);
        // another thread's element of the same tile
        assert_eq!(
            relate(&tile, &access(-16, 0xff0, 16, all)),
            Relation::Overlap
        );
        // a table past the tile's 16 KiB
        assert_eq!(
            relate(&tile, &access(4, 0x4000, 4, all)),
            Relation::Disjoint
        );
        // the odd words of a tile written in even ones: the strides never meet
        assert_eq!(
            relate(&access(8, 0, 4, all), &access(8, 4, 4, all)),
            Relation::Disjoint
        );
        // a read by threads the path limits to the first 64 of the tile's 256 elements
        assert_eq!(
            relate(&access(16, 0x1000, 16, all), &access(16, 0, 16, (0, 63))),
            Relation::Disjoint
        );
        let param = Access {
            addr: access(0, 0, 4, all)
                .addr
                .and_then(|b| b.add(&Lin::sym(Sym::param(0, 0x170)))),
            bytes: 4,
            ranges: vec![],
        };
        match relate(&tile, &param) {
            Relation::Unknown(why) => assert!(why.contains("c[0x0][0x170]"), "{why}"),
            r => panic!("{r:?}"),
        }
        // a value only bounded can tell accesses apart, never make them meet
        let bounded = |lo, hi| Access {
            addr: access(0, 0, 4, all)
                .addr
                .and_then(|b| b.add(&Lin::sym(Sym::def(7, 0)))),
            bytes: 4,
            ranges: vec![(Sym::def(7, 0), Some((lo, hi)), false)],
        };
        assert_eq!(relate(&bounded(0x8000, 0x9000), &tile), Relation::Disjoint);
        assert!(matches!(
            relate(&bounded(0, 0x100), &tile),
            Relation::Unknown(_)
        ));
    }
}
