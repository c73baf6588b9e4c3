//! Bounds of what instructions the linear forms only name: those some instructions give whatever
//! their inputs (a mask keeps a value within it, a byte insert from RZ clears the low half, a
//! narrow load bounds its result), and those that follow from the bounds of the inputs on a path
//! (an XOR of two thread indices, a shift, a select).

use super::decode::{Op, Operand};
use super::lin::Derived;
use super::values::{SymInfo, Values};

/// The slot of the symbol naming the low bits a mask clears (`x & ~31` is `x - low`).
pub const LOW_BITS: u16 = 0x8000;

/// The low bits `op` clears, when it is `x & ~(2^k - 1)`: [0, 2^k).
pub fn low_bits(op: &Op) -> Option<(i64, i64)> {
    if !matches!(op.base(), "LOP3" | "ULOP3") || op.ops.get(4) != Some(&Operand::Imm(0xc0)) {
        return None;
    }
    op.ops[1..3].iter().find_map(|o| match o {
        Operand::Imm(m) => {
            let m = *m as u32;
            let k = m.trailing_zeros();
            (k > 0 && k < 32 && m == u32::MAX << k).then(|| (0, (1i64 << k) - 1))
        }
        _ => None,
    })
}

/// (range, trailing zero bits) of the first destination of `op`, when `op` alone says.
pub fn of(op: &Op) -> Option<((i64, i64), u32)> {
    let full = (0, u32::MAX as i64);
    match op.base() {
        "LOP3" | "ULOP3" if !matches!(op.ops.first(), Some(Operand::Pred { .. })) => {
            let lut = match op.ops.get(4) {
                Some(Operand::Imm(l)) => *l,
                _ => return None,
            };
            // a & m, with the mask in either of the first two sources
            if lut != 0xc0 {
                return None;
            }
            let m = op.ops[1..3].iter().find_map(|o| match o {
                Operand::Imm(m) => Some(*m as u32),
                _ => None,
            })?;
            let align = m.trailing_zeros();
            let range = if m <= i32::MAX as u32 {
                (0, i64::from(m))
            } else {
                full
            };
            Some((range, align))
        }
        // `PRMT R2, RZ, 0x7610, R2`: the low half from RZ, the high half kept
        "PRMT" => match (op.ops.get(1), op.ops.get(2)) {
            (Some(Operand::Reg { r: 255, .. }), Some(Operand::Imm(0x7610))) => Some((full, 16)),
            _ => None,
        },
        "SHF" | "USHF" if op.has("R") && op.has("U32") && op.has("HI") => {
            match (op.ops.get(1), op.ops.get(2)) {
                (Some(Operand::Reg { r: 255 | 319, .. }), Some(Operand::Imm(s @ 1..=31))) => {
                    Some(((0, (1i64 << (32 - s)) - 1), 0))
                }
                _ => None,
            }
        }
        "LDS" | "LDG" | "LD" | "LDC" if op.has("U8") => Some(((0, 255), 0)),
        "LDS" | "LDG" | "LD" | "LDC" if op.has("U16") => Some(((0, 65535), 0)),
        "FLO" | "POPC" | "UFLO" | "UPOPC" => Some(((-1, 32), 0)),
        _ => None,
    }
}

/// What the first destination of `op` derives from the values it reads under `v`, when it is
/// a logical shift right or a mask by constants.
pub fn derived(v: &Values, op: &Op) -> Option<Derived> {
    match op.base() {
        "SHF" | "USHF" if op.has("R") && op.has("U32") && op.has("HI") => {
            match (op.ops.get(1), op.ops.get(2), op.ops.get(3)) {
                (
                    Some(Operand::Reg { r: 255 | 319, .. }),
                    Some(Operand::Imm(s @ 0..=31)),
                    Some(x),
                ) => Some(Derived::Shr(v.operand(x)?, *s as u32)),
                _ => None,
            }
        }
        "LOP3" | "ULOP3" if op.ops.get(4) == Some(&Operand::Imm(0xc0)) => {
            match (op.ops.get(1), op.ops.get(2)) {
                (Some(Operand::Imm(m)), Some(x)) | (Some(x), Some(Operand::Imm(m))) => {
                    Some(Derived::And(v.operand(x)?, *m as u32))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The smallest all-ones mask covering `hi`.
fn cover(hi: i64) -> i64 {
    if hi <= 0 {
        0
    } else {
        (1i64 << (64 - hi.leading_zeros())) - 1
    }
}

/// The range of the first destination of `op` on this path, from its operands' ranges.
pub fn result(v: &Values, op: &Op, info: &dyn SymInfo) -> Option<(i64, i64)> {
    let span = |o: &Operand| v.operand(o).and_then(|l| v.span(&l, info));
    let src = &op.ops[1.min(op.ops.len())..];
    let at = |k: usize| src.get(k).and_then(span);
    let hull = |a: (i64, i64), b: (i64, i64)| (a.0.min(b.0), a.1.max(b.1));
    match op.base() {
        "LOP3" | "ULOP3" if !matches!(op.ops.first(), Some(Operand::Pred { .. })) => {
            let lut = match src.get(3) {
                Some(Operand::Imm(l)) => *l,
                _ => return None,
            };
            let ins = [at(0), at(1), at(2)];
            // a & b: below whichever operand is known not negative
            if lut == 0xc0 {
                return ins[..2]
                    .iter()
                    .flatten()
                    .filter(|r| r.0 >= 0)
                    .map(|r| (0, r.1))
                    .min_by_key(|r| r.1);
            }
            // any bitwise function of values below 2^k that maps zeros to zero stays below 2^k
            let ins = [ins[0]?, ins[1]?, ins[2]?];
            let nonneg = ins.iter().all(|r| r.0 >= 0);
            (nonneg && lut & 1 == 0).then(|| (0, cover(ins.iter().map(|r| r.1).max().unwrap_or(0))))
        }
        "SHF" | "USHF" if op.has("R") && op.has("HI") => {
            let (Some(Operand::Imm(s @ 0..=31)), Some(a)) = (src.get(1), at(2)) else {
                return None;
            };
            (a.0 >= 0 || op.has("S32")).then(|| (a.0 >> s, a.1 >> s))
        }
        "LEA" | "ULEA" if op.has("HI") && !op.has("X") => {
            let (b, high) = (at(1)?, lea_high(v, op, info)?);
            Some((b.0 + high.0, b.1 + high.1))
        }
        "SEL" | "USEL" | "IMNMX" | "VIMNMX" | "UIMNMX" => Some(hull(at(0)?, at(1)?)),
        "IABS" => {
            let a = at(0)?;
            Some((0, a.0.abs().max(a.1.abs())))
        }
        // `SHFL.IDX PT, R22, R82, ...`: one of the values the lanes hold in R82
        "SHFL" => op.ops.get(2).and_then(span),
        _ => None,
    }
}

/// `LEA.HI d, a, b, [c,] s` adds the high word of `a << s` to b: `a >> (32 - s)`, sign-extended
/// for `.SX32`. Its range.
pub fn lea_high(v: &Values, op: &Op, info: &dyn SymInfo) -> Option<(i64, i64)> {
    let src = &op.ops[1.min(op.ops.len())..];
    let Some(Operand::Imm(s @ 1..=31)) = src.last() else {
        return None;
    };
    let signed = op.has("SX32");
    let a = src
        .first()
        .and_then(|o| v.operand(o))
        .and_then(|l| v.span(&l, info));
    Some(match a {
        Some(a) if signed || a.0 >= 0 => (a.0 >> (32 - s), a.1 >> (32 - s)),
        _ if signed => (-(1i64 << (s - 1)), (1i64 << (s - 1)) - 1),
        _ => (0, (1i64 << s) - 1),
    })
}
