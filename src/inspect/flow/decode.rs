//! SASS operands read once per instruction: registers, predicates, immediates, constant-bank
//! words, memory references and branch targets, and what each instruction writes. The value and
//! predicate analyses work on this form, never on text.

use crate::evidence::sass::parse::Instruction;

/// R0..R254 are 0..254, RZ is 255; UR0..UR62 are 256..318, URZ is 319.
pub type Reg = u16;
pub const RZ: Reg = 255;
pub const URZ: Reg = 319;
pub const REGS: usize = 320;

/// P0..P6 are 0..6, PT is 7; UP0..UP6 are 8..14, UPT is 15.
pub type Pred = u8;
pub const PT: Pred = 7;
pub const UPT: Pred = 15;

pub fn is_zero(r: Reg) -> bool {
    r == RZ || r == URZ
}

pub fn always(p: Pred) -> bool {
    p == PT || p == UPT
}

#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A register; `neg` for `-R2`, `not` for `~R2`; `whole` when no sub-word or type selector
    /// (`.H1`, `.B2`, `.F32`) changes what is read.
    Reg {
        r: Reg,
        neg: bool,
        not: bool,
        whole: bool,
    },
    Pred {
        p: Pred,
        not: bool,
    },
    Imm(i64),
    /// `c[0x0][0x170]`: a word of a constant bank (kernel parameters live in bank 0).
    Const {
        bank: u32,
        offset: u32,
    },
    Mem(Mem),
    /// `SR_TID.X` and the other special registers.
    Special(String),
    /// A branch target `` `(.L_x_3) `` or a cuobjdump offset.
    Label(String),
    /// A dependency scoreboard, `SB0`.
    Scoreboard(u8),
    Other,
}

/// `[R2.X4+UR4+0x10]`: the address is the sum of the scaled registers and the immediate.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mem {
    pub regs: Vec<(Reg, i64)>,
    pub imm: i64,
    /// A global access through a descriptor (`desc[UR4][R2.64]`) or a 64-bit pair: not shared.
    pub wide: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    Always,
    Never,
    If { p: Pred, not: bool },
}

#[derive(Debug, Clone)]
pub struct Op {
    pub guard: Guard,
    pub opcode: String,
    pub ops: Vec<Operand>,
    /// nvdisasm's `(*"BRANCH_TARGETS .L_x_1,.L_x_2"*)` on an indirect branch.
    pub targets: Option<Vec<String>>,
}

impl Op {
    pub fn base(&self) -> &str {
        self.opcode.split('.').next().unwrap_or(&self.opcode)
    }

    pub fn has(&self, modifier: &str) -> bool {
        self.opcode.split('.').skip(1).any(|m| m == modifier)
    }

    /// The first memory operand.
    pub fn mem(&self) -> Option<&Mem> {
        self.ops.iter().find_map(|o| match o {
            Operand::Mem(m) => Some(m),
            _ => None,
        })
    }
}

fn number(s: &str) -> Option<i64> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = match s.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None if s.chars().all(|c| c.is_ascii_digit()) && !s.is_empty() => s.parse().ok()?,
        None => return None,
    };
    Some(if neg { -v } else { v })
}

/// `R12`, `RZ`, `UR4`, `URZ` -> its number.
pub fn reg(s: &str) -> Option<Reg> {
    if s == "RZ" {
        return Some(RZ);
    }
    if s == "URZ" {
        return Some(URZ);
    }
    let (uniform, digits) = match s.strip_prefix("UR") {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('R')?),
    };
    let n: u16 = digits.parse().ok()?;
    match (uniform, n) {
        (false, 0..=254) => Some(n),
        (true, 0..=62) => Some(256 + n),
        _ => None,
    }
}

/// `P3`, `PT`, `UP1`, `UPT` -> its number.
pub fn pred(s: &str) -> Option<Pred> {
    match s {
        "PT" => return Some(PT),
        "UPT" => return Some(UPT),
        _ => {}
    }
    let (uniform, digits) = match s.strip_prefix("UP") {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('P')?),
    };
    let n: u8 = digits.parse().ok()?;
    (n <= 6).then_some(if uniform { 8 + n } else { n })
}

fn mem(s: &str) -> Mem {
    let mut m = Mem {
        wide: s.starts_with("desc["),
        ..Mem::default()
    };
    let inner = s.rsplit('[').next().unwrap_or("").trim_end_matches(']');
    for part in inner.split('+') {
        let part = part.trim();
        if let Some(v) = number(part) {
            m.imm += v;
            continue;
        }
        let mut pieces = part.split('.');
        let Some(r) = pieces.next().and_then(reg) else {
            continue;
        };
        let mut scale = 1;
        for p in pieces {
            match p {
                "X4" => scale = 4,
                "X8" => scale = 8,
                "X16" => scale = 16,
                "64" => m.wide = true,
                _ => {}
            }
        }
        if !is_zero(r) {
            m.regs.push((r, scale));
        }
    }
    m
}

fn operand(text: &str) -> Operand {
    let t = text.trim();
    if t.contains('[') {
        if let Some(rest) = t.strip_prefix("c[")
            && let Some((bank, off)) = rest.split_once("][")
            && let (Some(b), Some(o)) = (number(bank), number(off.trim_end_matches(']')))
        {
            return Operand::Const {
                bank: b as u32,
                offset: o as u32,
            };
        }
        return Operand::Mem(mem(t));
    }
    if let Some(l) = t.strip_prefix("`(").and_then(|l| l.strip_suffix(')')) {
        return Operand::Label(l.to_string());
    }
    if let Some(v) = number(t) {
        return Operand::Imm(v);
    }
    if let Some(n) = t.strip_prefix("SB").and_then(|n| n.parse().ok()) {
        return Operand::Scoreboard(n);
    }
    if t.starts_with("SR_") || t == "SRZ" {
        return Operand::Special(t.to_string());
    }
    let (not, body) = match t.strip_prefix('!') {
        Some(b) => (true, b),
        None => (false, t),
    };
    if let Some(p) = pred(body) {
        return Operand::Pred { p, not };
    }
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t),
    };
    let (bnot, body) = match body.strip_prefix('~') {
        Some(b) => (true, b),
        None => (false, body),
    };
    let mut pieces = body.trim_matches('|').split('.');
    if let Some(r) = pieces.next().and_then(reg) {
        let whole = !body.starts_with('|') && pieces.all(|p| p == "reuse");
        return Operand::Reg {
            r,
            neg,
            not: bnot,
            whole,
        };
    }
    Operand::Other
}

fn guard(predicate: Option<&str>) -> Guard {
    let Some(p) = predicate.and_then(|p| p.strip_prefix('@')) else {
        return Guard::Always;
    };
    let (not, name) = match p.strip_prefix('!') {
        Some(n) => (true, n),
        None => (false, p),
    };
    match pred(name) {
        Some(p) if always(p) => {
            if not {
                Guard::Never
            } else {
                Guard::Always
            }
        }
        Some(p) => Guard::If { p, not },
        None => Guard::Always,
    }
}

pub fn decode(i: &Instruction) -> Op {
    let mut text = i.operands.as_str();
    let mut targets = None;
    if let Some(at) = text.find("(*") {
        let note = &text[at..];
        if let Some(list) = note
            .split("BRANCH_TARGETS")
            .nth(1)
            .map(|l| l.trim_end_matches([')', '*', '"', ' ']))
        {
            targets = Some(
                list.split(',')
                    .map(|l| l.trim().to_string())
                    .filter(|l| !l.is_empty())
                    .collect(),
            );
        }
        text = &text[..at];
    }
    let ops = if text.trim().is_empty() {
        Vec::new()
    } else {
        // `RET.REL.NODEC R26 `(k)`: the register and the function, with no comma between
        text.split(',')
            .flat_map(|t| match t.trim().split_once(" `(") {
                Some((r, l)) => vec![operand(r), operand(&format!("`({l}"))],
                None => vec![operand(t)],
            })
            .collect()
    };
    Op {
        guard: guard(i.predicate.as_deref()),
        opcode: i.opcode.clone(),
        ops,
        targets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::sass::parse::parse;
    use crate::inspect::flow::writes::writes;

    fn one(line: &str) -> Op {
        let f = parse(&format!(".text.k:\n        /*0000*/ {line} ;\n"));
        decode(&f[0].instructions[0])
    }

    #[test]
    fn operands_and_writes() {
        let o = one("@!P1 LDS.128 R8, [R18.X4+UR8+-0x10]");
        assert_eq!(o.guard, Guard::If { p: 1, not: true });
        assert_eq!(writes(&o).regs, [8, 9, 10, 11]);
        let m = o.mem().unwrap();
        assert_eq!((m.regs.clone(), m.imm), (vec![(18, 4), (264, 1)], -0x10));
        let o = one("ISETP.GE.AND P0, PT, R14, c[0x0][0x170], PT");
        let w = writes(&o);
        assert_eq!((w.regs.len(), w.preds.clone()), (0, vec![0]));
        assert_eq!(
            o.ops[3],
            Operand::Const {
                bank: 0,
                offset: 0x170
            }
        );
        let o = one("IADD3.X R7, PT, PT, R3, R5, RZ, P0, !PT");
        assert_eq!(writes(&o).preds, Vec::<Pred>::new());
        assert_eq!(writes(&o).regs, [7]);
        let o = one("IADD3 R6, P1, R4, c[0x0][0x160], RZ");
        assert_eq!(writes(&o).preds, [1]);
        assert!(
            writes(&one("LDGSTS.E.BYPASS.128 [R9], [R6.64]"))
                .regs
                .is_empty()
        );
        let o = one("LOP3.LUT R9, RZ, -R13, RZ, 0x33, !PT");
        assert!(matches!(
            o.ops[2],
            Operand::Reg {
                r: 13,
                neg: true,
                ..
            }
        ));
        assert_eq!(one("@!PT LDS RZ, [RZ]").guard, Guard::Never);
        assert_eq!(
            writes(&one("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ"))
                .regs
                .len(),
            64
        );
    }

    #[test]
    fn indirect_branch_targets() {
        let o = one(
            "BRX R4 -0x12b0                      (*\"BRANCH_TARGETS .L_x_353,.L_x_354,.L_x_361\"*)",
        );
        assert_eq!(
            o.targets.unwrap(),
            [".L_x_353", ".L_x_354", ".L_x_361"].map(String::from)
        );
    }
}
