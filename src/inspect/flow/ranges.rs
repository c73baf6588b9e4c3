//! The range and the trailing zero bits of what some instructions make whatever their inputs: a
//! mask keeps a value within it, a byte insert from RZ clears the low half, a narrow load or a
//! right shift bounds its result. The linear forms name such results; these facts bound them.

use super::decode::{Op, Operand};

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
