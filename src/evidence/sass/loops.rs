//! A kernel's main loop as its SASS lays it out (a loop: a branch back to a label, and the
//! instructions from that label to the branch), and the instructions one pass through it holds,
//! by opcode: what a pipeline issues per step in its steady state beside the MMAs or FMAs it is
//! there for.

use super::parse::{Function, Instruction};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MainLoop {
    /// SASS offsets of its first instruction and of its branch back.
    pub first: u32,
    pub last: u32,
    /// Instructions in one pass, those of loops nested in it and `@!PT` placeholders (never
    /// executed) left out.
    pub total: u32,
    /// Base opcodes (`LDS` for `LDS.128`) and their counts, the most frequent first.
    pub mix: Vec<(String, u32)>,
}

impl MainLoop {
    /// "2244 instructions a pass (0x1890..0xa4c0): FFMA 2048, LDS 102, IADD3 23, ...".
    pub fn describe(&self, shown: usize) -> String {
        let mut kinds: Vec<String> = self
            .mix
            .iter()
            .take(shown)
            .map(|(op, n)| format!("{op} {n}"))
            .collect();
        if self.mix.len() > shown {
            kinds.push(format!("{} more kinds", self.mix.len() - shown));
        }
        format!(
            "{} instructions a pass ({:#06x}..{:#06x}): {}",
            self.total,
            self.first,
            self.last,
            kinds.join(", ")
        )
    }
}

/// The offset each `.L_x_N:` label of the listing marks: that of the next instruction of `f`.
fn labels(listing: &str, f: &Function) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    for (line, text) in listing.lines().enumerate() {
        let Some(name) = text.trim().strip_suffix(':') else {
            continue;
        };
        if !name.starts_with(".L") {
            continue;
        }
        if let Some(i) = f.instructions.iter().find(|i| i.line > line) {
            out.insert(name.to_string(), i.offset);
        }
    }
    out
}

/// Where a branch goes back to: the offset of its label, when that is at or before the branch.
fn back_target(i: &Instruction, labels: &BTreeMap<String, u32>) -> Option<u32> {
    if !i.opcode.starts_with("BRA") {
        return None;
    }
    let label = i.operands.split(['(', ')']).nth(1)?.trim();
    labels.get(label).copied().filter(|&t| t <= i.offset)
}

/// Opcodes that do a kernel's arithmetic: the main loop is the one that issues most of them.
const MATH: [&str; 9] = [
    "HGMMA", "HMMA", "IMMA", "FFMA", "FMUL", "FADD", "HFMA2", "DFMA", "MUFU",
];

/// The loop of `f` in `listing` whose own instructions (those of the loops nested in it left
/// out: waits that spin, inner steps) hold the most arithmetic, the most instructions on a tie;
/// None when `f` has no branch back.
pub fn main_loop(listing: &str, f: &Function) -> Option<MainLoop> {
    let labels = labels(listing, f);
    let backs: Vec<(u32, u32)> = f
        .instructions
        .iter()
        .filter_map(|i| back_target(i, &labels).map(|t| (t, i.offset)))
        .collect();
    let inside = |at: u32, (first, last): (u32, u32)| (first..=last).contains(&at);
    let mut best: Option<(usize, MainLoop)> = None;
    for &outer in &backs {
        let nested: Vec<(u32, u32)> = backs
            .iter()
            .copied()
            .filter(|&l| l != outer && outer.0 <= l.0 && l.1 <= outer.1)
            .collect();
        let own: Vec<&Instruction> = f
            .instructions
            .iter()
            .filter(|i| inside(i.offset, outer) && !nested.iter().any(|&l| inside(i.offset, l)))
            .filter(|i| i.predicate.as_deref() != Some("@!PT"))
            .collect();
        let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
        for i in &own {
            *counts
                .entry(i.opcode.split('.').next().unwrap_or(""))
                .or_default() += 1;
        }
        let math: usize = MATH
            .iter()
            .map(|m| counts.get(m).copied().unwrap_or(0) as usize)
            .sum();
        if best
            .as_ref()
            .is_some_and(|(m, b)| (*m, b.total as usize) >= (math, own.len()))
        {
            continue;
        }
        let mut mix: Vec<(String, u32)> = counts
            .into_iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect();
        mix.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let l = MainLoop {
            first: outer.0,
            last: outer.1,
            total: own.len() as u32,
            mix,
        };
        best = Some((math, l));
    }
    best.map(|(_, l)| l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::sass::parse::parse;

    const LISTING: &str = "\t.text.k:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_0:
        /*0010*/                   LDS.128 R4, [R2] ;
.L_x_1:
        /*0020*/                   FFMA R8, R4, R5, R8 ;
        /*0030*/                   FFMA R9, R4, R6, R9 ;
        /*0040*/              @!PT LDS RZ, [RZ] ;
        /*0050*/                   IADD3 R2, R2, 0x10, RZ ;
        /*0060*/               @P0 BRA `(.L_x_1) ;
        /*0070*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0080*/               @P1 BRA `(.L_x_0) ;
.L_x_2:
        /*0090*/                   FFMA R10, R4, R7, R10 ;
        /*00a0*/                   BRA `(.L_x_3) ;
.L_x_3:
        /*00b0*/                   EXIT ;
";

    #[test]
    fn the_loop_with_the_most_arithmetic_is_found_and_counted_by_opcode() {
        let f = &parse(LISTING)[0];
        let l = main_loop(LISTING, f).unwrap();
        // the outer loop's own instructions (0x10..0x80 less the inner loop) hold no FFMA; the
        // forward branch to .L_x_3 is no loop; the @!PT placeholder never executes
        assert_eq!((l.first, l.last, l.total), (0x20, 0x60, 4));
        assert_eq!(
            l.mix,
            vec![("FFMA".into(), 2), ("BRA".into(), 1), ("IADD3".into(), 1)]
        );
        assert_eq!(
            l.describe(2),
            "4 instructions a pass (0x0020..0x0060): FFMA 2, BRA 1, 1 more kinds"
        );
    }

    #[test]
    fn a_spin_loop_inside_the_main_loop_is_left_out_of_it() {
        // the inner loop becomes a wait that spins (no FFMA); the outer one holds the FMAs
        let spin = LISTING
            .replace(
                "FFMA R8, R4, R5, R8",
                "SYNCS.PHASECHK.TRANS64 P0, [UR4], R3",
            )
            .replace("FFMA R9, R4, R6, R9", "NOP")
            .replace("BAR.SYNC.DEFER_BLOCKING 0x0", "FFMA R9, R4, R6, R9");
        let f = &parse(&spin)[0];
        let l = main_loop(&spin, f).unwrap();
        assert_eq!((l.first, l.last, l.total), (0x10, 0x80, 3));
        assert_eq!(
            l.mix,
            vec![("BRA".into(), 1), ("FFMA".into(), 1), ("LDS".into(), 1)]
        );
    }

    #[test]
    fn a_kernel_without_a_branch_back_has_no_main_loop() {
        let straight = LISTING
            .replace("`(.L_x_1)", "`(.L_x_2)")
            .replace("`(.L_x_0)", "`(.L_x_3)");
        let f = &parse(&straight)[0];
        assert_eq!(main_loop(&straight, f), None);
    }
}
