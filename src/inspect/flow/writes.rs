//! What an instruction writes: the registers (a vector load's width of them) and predicates it
//! sets, read from its decoded operands.

use super::decode::{Op, Operand, Pred, RZ, Reg, URZ, always, is_zero};

/// Instructions whose first operand is read, not written (stores, copies to shared memory,
/// barriers, branches).
fn writes_nothing(op: &Op) -> bool {
    let b = op.base();
    matches!(
        b,
        "ST" | "STS"
            | "STG"
            | "STL"
            | "STSM"
            | "STAS"
            | "STTM"
            | "RED"
            | "REDG"
            | "REDAS"
            | "LDGSTS"
            | "BAR"
            | "BRA"
            | "BRX"
            | "JMP"
            | "JMX"
            | "CALL"
            | "RET"
            | "EXIT"
            | "BSSY"
            | "BSYNC"
            | "WARPSYNC"
            | "DEPBAR"
            | "LDGDEPBAR"
            | "ARRIVES"
            | "MEMBAR"
            | "FENCE"
            | "CCTL"
            | "ERRBAR"
            | "NOP"
            | "YIELD"
            | "NANOSLEEP"
            | "UTMALDG"
            | "UTMASTG"
            | "UTMAREDG"
            | "UTMAPF"
            | "UTMACCTL"
            | "UBLKCP"
            | "UBLKRED"
            | "UBLKPF"
            | "UTCHMMA"
            | "UTCQMMA"
            | "UTCIMMA"
            | "UTCOMMA"
            | "UTCMMA"
            | "UTCBAR"
            | "UTCCP"
            | "UCGABAR_ARV"
            | "UCGABAR_WAIT"
            | "PREEXIT"
            | "ACQBULK"
            | "BPT"
            | "KILL"
            | "WARPGROUP"
    ) || (b == "SYNCS" && !op.opcode.contains("PHASECHK"))
}

/// How many consecutive registers the first operand names: `.64` two, `.128` four, MMA
/// accumulators and tensor-memory loads as many as their shape says.
fn width(op: &Op) -> u16 {
    let b = op.base();
    let mods: Vec<&str> = op.opcode.split('.').skip(1).collect();
    if b.ends_with("GMMA") {
        // m64nNk*: N/2 accumulator registers per thread for 32-bit accumulators
        let n = mods
            .iter()
            .find_map(|m| m.strip_prefix("64x").and_then(|r| r.split('x').next()))
            .and_then(|n| n.parse::<u16>().ok())
            .unwrap_or(256);
        return n / 2;
    }
    if matches!(b, "LDTM") {
        return mods
            .iter()
            .find_map(|m| m.strip_prefix('x').and_then(|n| n.parse().ok()))
            .unwrap_or(128);
    }
    if matches!(b, "HMMA" | "IMMA" | "DMMA" | "BMMA" | "QMMA" | "OMMA") {
        return 4;
    }
    if b == "LDSM" {
        return match mods.last() {
            Some(&"2") => 2,
            Some(&"1") => 1,
            _ => 4,
        };
    }
    if mods.contains(&"256") {
        8
    } else if mods.contains(&"128") {
        4
    } else if mods.contains(&"64")
        || mods.contains(&"WIDE")
        || matches!(b, "CS2R" | "DADD" | "DMUL" | "DFMA" | "F2F64" | "I2F64")
    {
        2
    } else {
        1
    }
}

/// Registers and predicates an instruction may write. `all_preds` when it may write any
/// predicate (`R2P`, `P2R` with a mask we do not read).
#[derive(Debug, Clone, Default)]
pub struct Writes {
    pub regs: Vec<Reg>,
    pub preds: Vec<Pred>,
    pub all_preds: bool,
}

pub fn writes(op: &Op) -> Writes {
    let mut w = Writes::default();
    if op.base() == "R2P" {
        w.all_preds = true;
        return w;
    }
    if writes_nothing(op) {
        return w;
    }
    let mut it = op.ops.iter().peekable();
    // `LOP3.LUT P0, R2, ...` and `SHFL.IDX PT, R22, ...` write a predicate, then a register
    if let (Some(Operand::Pred { .. }), Some(Operand::Reg { r, .. })) =
        (op.ops.first(), op.ops.get(1))
    {
        if !is_zero(*r) {
            w.regs = vec![*r];
        }
        w.preds = pred_outputs_from(&op.ops[..1])
            .into_iter()
            .filter(|&p| !always(p))
            .collect();
        return w;
    }
    if let Some(Operand::Reg { r, .. }) = it.peek() {
        let r = *r;
        it.next();
        if !is_zero(r) {
            let limit = if r >= 256 { URZ } else { RZ };
            w.regs = (r..(r + width(op)).min(limit)).collect();
        }
    }
    w.preds = pred_outputs_from(it.cloned().collect::<Vec<_>>().as_slice())
        .into_iter()
        .filter(|&p| !always(p))
        .collect();
    w
}

/// The predicates an instruction writes, PT included: up to two leading predicate operands
/// (`ISETP P0, PT, ...`, `PLOP3 P2, PT, <inputs>`, `IADD3 R6, P0, P1, ...`).
pub fn pred_outputs(op: &Op) -> Vec<Pred> {
    let rest = match op.ops.first() {
        Some(Operand::Reg { .. }) => &op.ops[1..],
        _ => &op.ops[..],
    };
    pred_outputs_from(rest)
}

fn pred_outputs_from(ops: &[Operand]) -> Vec<Pred> {
    ops.iter()
        .take(2)
        .map_while(|o| match o {
            Operand::Pred { p, not: false } => Some(*p),
            _ => None,
        })
        .collect()
}
