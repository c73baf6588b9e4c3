//! The control-flow graph of one kernel's SASS and a forward "may" dataflow over it, so that a
//! protocol check holds on every path (loops, early exits, out-of-line retry blocks) rather
//! than in listing order.
//!
//! Edges: a branch goes to its target and, when predicated or divergence-conditional, also on;
//! an unpredicated EXIT, RET or BPT.TRAP ends its path; an indirect branch (BRX, JMX) may reach
//! every labelled instruction; a CALL to a label in the same function enters it and every RET
//! returns after every such CALL (context-insensitive). A CALL to another function is taken as
//! falling through: the callee's instructions are not seen. `@!PT` instructions never execute
//! and are left out.

use super::listing::Kernel;
use crate::evidence::sass::parse::Instruction;
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone)]
pub struct Block {
    /// Indices into the function's instructions, in order; only instructions that can execute.
    pub instructions: Vec<usize>,
    pub successors: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Cfg {
    pub blocks: Vec<Block>,
}

fn base(opcode: &str) -> &str {
    opcode.split('.').next().unwrap_or(opcode)
}

/// Never executes: the compiler's `@!PT` placeholders.
pub fn dead(i: &Instruction) -> bool {
    i.predicate.as_deref() == Some("@!PT")
}

/// Guarded by a predicate that may be false.
pub fn conditional(i: &Instruction) -> bool {
    i.predicate.as_deref().is_some_and(|p| p != "@PT")
}

/// The operand a branch jumps to: nvdisasm's `` `(.L_x_3) `` or cuobjdump's `0x1a0`.
enum Target {
    Label(String),
    Offset(u32),
}

fn target(operands: &str) -> Option<Target> {
    let last = operands.rsplit(',').next()?.trim();
    if let Some(l) = last.strip_prefix("`(").and_then(|l| l.strip_suffix(')')) {
        return Some(Target::Label(l.to_string()));
    }
    let hex = last.strip_prefix("0x")?;
    u32::from_str_radix(hex, 16).ok().map(Target::Offset)
}

enum Kind {
    Plain,
    Jump { to: Option<usize>, fall: bool },
    Indirect { fall: bool },
    Call { to: Option<usize> },
    End { fall: bool },
}

fn kind(i: &Instruction, at: &dyn Fn(&Target) -> Option<usize>) -> Kind {
    let cond = conditional(i);
    match base(&i.opcode) {
        "BRA" | "JMP" => {
            let extra = i.operands.contains(',');
            let divergent = i.opcode.contains(".DIV") || i.opcode.contains(".CONV");
            Kind::Jump {
                to: target(&i.operands).as_ref().and_then(at),
                fall: cond || extra || divergent,
            }
        }
        "BRX" | "JMX" => Kind::Indirect { fall: cond },
        "CALL" => Kind::Call {
            to: target(&i.operands).as_ref().and_then(at),
        },
        "EXIT" | "RET" | "KILL" => Kind::End { fall: cond },
        "BPT" if i.opcode.contains("TRAP") => Kind::End { fall: cond },
        _ => Kind::Plain,
    }
}

impl Cfg {
    pub fn of(k: &Kernel) -> Cfg {
        let ins = &k.function.instructions;
        let live: Vec<usize> = (0..ins.len()).filter(|&i| !dead(&ins[i])).collect();
        if live.is_empty() {
            return Cfg { blocks: Vec::new() };
        }
        // offsets -> the first live instruction at or after them
        let by_offset: Vec<(u32, usize)> = live.iter().map(|&i| (ins[i].offset, i)).collect();
        let at_offset = |off: u32| -> Option<usize> {
            let p = by_offset.partition_point(|(o, _)| *o < off);
            by_offset.get(p).map(|(_, i)| *i)
        };
        let at = |t: &Target| match t {
            Target::Label(l) => k.labels.get(l).and_then(|&o| at_offset(o)),
            Target::Offset(o) => at_offset(*o),
        };
        let kinds: HashMap<usize, Kind> = live
            .iter()
            .map(|&i| (i, kind(&ins[i], &at)))
            .filter(|(_, k)| !matches!(k, Kind::Plain))
            .collect();
        let labelled: BTreeSet<usize> = k.labels.values().filter_map(|&o| at_offset(o)).collect();
        // leaders: the entry, every target, every instruction after a control transfer
        let mut leaders: BTreeSet<usize> = BTreeSet::from([live[0]]);
        let next_live = |i: usize| live.get(live.partition_point(|&x| x <= i)).copied();
        for (&i, kd) in &kinds {
            if let Some(n) = next_live(i) {
                leaders.insert(n);
            }
            match kd {
                Kind::Jump { to: Some(t), .. } | Kind::Call { to: Some(t) } => {
                    leaders.insert(*t);
                }
                Kind::Indirect { .. } => leaders.extend(&labelled),
                _ => {}
            }
        }
        let starts: Vec<usize> = leaders.iter().copied().collect();
        let block_of = |i: usize| starts.partition_point(|&s| s <= i) - 1;
        let mut blocks: Vec<Block> = Vec::with_capacity(starts.len());
        for &i in &live {
            if leaders.contains(&i) {
                blocks.push(Block {
                    instructions: Vec::new(),
                    successors: Vec::new(),
                });
            }
            blocks
                .last_mut()
                .expect("the entry leads")
                .instructions
                .push(i);
        }
        let returns: Vec<usize> = kinds
            .iter()
            .filter(|(_, kd)| matches!(kd, Kind::Call { to: Some(_) }))
            .filter_map(|(&i, _)| next_live(i))
            .map(block_of)
            .collect();
        for block in &mut blocks {
            let last = *block.instructions.last().expect("blocks are not empty");
            let fall = next_live(last).map(block_of);
            let mut succ: Vec<usize> = match kinds.get(&last) {
                None | Some(Kind::Plain) => fall.into_iter().collect(),
                Some(Kind::Jump { to, fall: f }) => match to {
                    Some(t) => std::iter::once(block_of(*t))
                        .chain(fall.filter(|_| *f))
                        .collect(),
                    // a target that cannot be read may be anywhere
                    None => (0..starts.len()).collect(),
                },
                Some(Kind::Indirect { fall: f }) => labelled
                    .iter()
                    .map(|&t| block_of(t))
                    .chain(fall.filter(|_| *f))
                    .collect(),
                Some(Kind::Call { to: Some(t) }) => vec![block_of(*t)],
                Some(Kind::Call { to: None }) => fall.into_iter().collect(),
                Some(Kind::End { fall: f }) => {
                    let ret = base(&ins[last].opcode) == "RET";
                    let mut s: Vec<usize> = fall.filter(|_| *f).into_iter().collect();
                    if ret {
                        s.extend(&returns);
                    }
                    s
                }
            };
            succ.sort_unstable();
            succ.dedup();
            block.successors = succ;
        }
        Cfg { blocks }
    }

    /// Runs `step` (given an instruction's index) to a fixpoint from `entry` at the first block, then calls `visit` with each
    /// instruction and the fact that holds just before it on some path (the join over paths).
    pub fn forward<F: Fact>(
        &self,
        entry: F,
        step: impl Fn(usize, &mut F),
        mut visit: impl FnMut(usize, &F),
    ) {
        if self.blocks.is_empty() {
            return;
        }
        let mut input: Vec<Option<F>> = vec![None; self.blocks.len()];
        input[0] = Some(entry);
        let mut work: BTreeSet<usize> = BTreeSet::from([0]);
        while let Some(b) = work.pop_first() {
            let mut fact = input[b].clone().expect("queued blocks have a fact");
            for &i in &self.blocks[b].instructions {
                step(i, &mut fact);
            }
            for &s in &self.blocks[b].successors {
                let changed = match &mut input[s] {
                    Some(old) => old.join(&fact),
                    slot @ None => {
                        *slot = Some(fact.clone());
                        true
                    }
                };
                if changed {
                    work.insert(s);
                }
            }
        }
        for (b, block) in self.blocks.iter().enumerate() {
            let Some(mut fact) = input[b].clone() else {
                continue; // unreachable from the entry
            };
            for &i in &block.instructions {
                visit(i, &fact);
                step(i, &mut fact);
            }
        }
    }
}

/// A dataflow fact: joining at a merge point must only grow it, so the fixpoint is reached.
pub trait Fact: Clone {
    /// Adds `other` into `self`; true when `self` changed.
    fn join(&mut self, other: &Self) -> bool;
}

impl<T: Ord + Clone> Fact for BTreeSet<T> {
    fn join(&mut self, other: &Self) -> bool {
        let before = self.len();
        self.extend(other.iter().cloned());
        self.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::listing::kernels;

    fn cfg(listing: &str) -> (Kernel, Cfg) {
        let k = kernels(listing).remove(0);
        let c = Cfg::of(&k);
        (k, c)
    }

    /// Offsets reachable from the entry.
    fn reached(k: &Kernel, c: &Cfg) -> BTreeSet<u32> {
        let mut seen = BTreeSet::new();
        c.forward(
            BTreeSet::<u32>::new(),
            |_, _| {},
            |i, _| {
                seen.insert(k.function.instructions[i].offset);
            },
        );
        seen
    }

    #[test]
    fn branches_exits_and_dead_code() {
        let (k, c) = cfg(".text.k:
        /*0000*/              @P0 BRA `(.L_x_1) ;
        /*0010*/                   BRA `(.L_x_2) ;
        /*0020*/                   NOP ;
.L_x_1:
        /*0030*/              @!PT LDS RZ, [RZ] ;
        /*0040*/              @P1 EXIT ;
.L_x_2:
        /*0050*/                   EXIT ;
.L_x_3:
        /*0060*/                   BRA `(.L_x_3);
");
        let r = reached(&k, &c);
        assert_eq!(r, BTreeSet::from([0x00, 0x10, 0x40, 0x50]));
    }

    #[test]
    fn cuobjdump_offsets_and_loops_reach_a_fixpoint() {
        let (k, c) = cfg("\t\tFunction : k
        /*0000*/                   MOV R0, RZ ;
        /*0010*/                   IADD3 R0, R0, 0x1, RZ ;
        /*0020*/              @P0 BRA 0x10 ;
        /*0030*/                   EXIT ;
");
        assert_eq!(c.blocks.len(), 3);
        // count the distinct facts reaching the loop head: the entry's and the back edge's
        let mut at_head = BTreeSet::new();
        let ins = &k.function.instructions;
        c.forward(
            BTreeSet::from([0u32]),
            |i, f: &mut BTreeSet<u32>| {
                if ins[i].opcode == "IADD3" {
                    *f = f.iter().map(|x| (x + 1).min(3)).collect();
                }
            },
            |i, f| {
                if i == 1 {
                    at_head = f.clone();
                }
            },
        );
        assert_eq!(at_head, BTreeSet::from([0, 1, 2, 3]));
    }

    #[test]
    fn local_calls_return_after_each_call() {
        let (k, c) = cfg(".text.k:
        /*0000*/                   CALL.REL.NOINC `(.L_x_9) ;
        /*0010*/                   EXIT ;
.L_x_9:
        /*0020*/                   NOP ;
        /*0030*/                   RET.REL.NODEC R20 `(k) ;
");
        assert_eq!(reached(&k, &c), BTreeSet::from([0x00, 0x10, 0x20, 0x30]));
    }
}
