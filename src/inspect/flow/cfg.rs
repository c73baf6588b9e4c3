//! The control-flow graph of one kernel's SASS, with the predicate each edge is taken under, so
//! that a path that needs `P0` both true and false is never followed.
//!
//! Edges: a branch goes to its target and, when its guard may be false, on (each edge records
//! the guard's value along it); an EXIT, RET or BPT.TRAP ends its path where its guard holds; an
//! indirect branch (BRX, JMX) reaches the targets nvdisasm lists for it, or every labelled
//! instruction when the listing lists none (cuobjdump); a CALL to a label in the same function
//! enters it and every RET may return after every such CALL (the path's return address, NVCC's
//! `MOV R26, ret` before the CALL, picks the one it does). A CALL to
//! another function falls through: the callee is not seen. `@!PT` instructions never execute and
//! are left out.

use super::decode::{self, Guard, Op, Operand, Pred};
use super::writes::Writes;
use crate::inspect::listing::Kernel;
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    pub to: usize,
    /// Taken only where this predicate has this value.
    pub when: Option<(Pred, bool)>,
}

#[derive(Debug, Clone)]
pub struct Block {
    /// Indices into the function's instructions, in order; only instructions that can execute.
    pub instructions: Vec<usize>,
    /// The SASS offset of its first instruction: where a RET whose return address is known
    /// goes.
    pub offset: u32,
    pub edges: Vec<Edge>,
    /// Lies on a cycle: its instructions may run more than once on a path.
    pub cyclic: bool,
    /// Predicates read on some path from here before they are written.
    pub live_preds: u16,
}

#[derive(Debug, Clone)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    /// Every instruction of the function, decoded.
    pub ops: Vec<Op>,
    /// What each instruction writes, read once: paths step through them many times.
    pub writes: Vec<Writes>,
}

enum Flow {
    Plain,
    Jump {
        to: Option<usize>,
        when: Option<(Pred, bool)>,
        fall: bool,
    },
    Indirect {
        to: Option<Vec<usize>>,
    },
    Call {
        to: Option<usize>,
    },
    End,
}

/// The operand a branch jumps to: nvdisasm's `` `(.L_x_3) `` or cuobjdump's `0x1a0`.
fn target(op: &Op) -> Option<&str> {
    op.ops.iter().rev().find_map(|o| match o {
        Operand::Label(l) => Some(l.as_str()),
        _ => None,
    })
}

fn flow(op: &Op, raw: &str, at: &dyn Fn(&str) -> Option<usize>) -> Flow {
    let to = || {
        if op.has("ABS") {
            return None; // an absolute call goes to another function
        }
        target(op)
            .and_then(at)
            .or_else(|| raw.rsplit(',').next().and_then(|t| at(t.trim())))
    };
    match op.base() {
        "BRA" | "JMP" => {
            let divergent = op.has("DIV") || op.has("CONV");
            // `BRA.U !UP0, target`: the predicate operand decides
            let operand = op.ops.iter().find_map(|o| match o {
                Operand::Pred { p, not } => Some((*p, !*not)),
                _ => None,
            });
            let when = match (op.guard, operand) {
                (Guard::If { p, not }, None) => Some((p, !not)),
                (Guard::Always, Some(w)) => Some(w),
                _ => None,
            };
            let fall =
                divergent || when.is_some() || op.guard != Guard::Always || operand.is_some();
            Flow::Jump {
                to: to(),
                when: if divergent { None } else { when },
                fall,
            }
        }
        "BRX" | "JMX" => Flow::Indirect {
            to: op
                .targets
                .as_ref()
                .map(|ls| ls.iter().filter_map(|l| at(l)).collect()),
        },
        "CALL" => Flow::Call { to: to() },
        "EXIT" | "RET" | "KILL" => Flow::End,
        "BPT" if op.has("TRAP") => Flow::End,
        _ => Flow::Plain,
    }
}

impl Cfg {
    pub fn of(k: &Kernel) -> Cfg {
        let ins = &k.function.instructions;
        let ops: Vec<Op> = ins.iter().map(decode::decode).collect();
        let writes: Vec<Writes> = ops.iter().map(super::writes::writes).collect();
        let live: Vec<usize> = (0..ins.len())
            .filter(|&i| ops[i].guard != Guard::Never)
            .collect();
        if live.is_empty() {
            return Cfg {
                blocks: Vec::new(),
                ops,
                writes,
            };
        }
        // offsets -> the first live instruction at or after them
        let by_offset: Vec<(u32, usize)> = live.iter().map(|&i| (ins[i].offset, i)).collect();
        let at_offset = |off: u32| -> Option<usize> {
            let p = by_offset.partition_point(|(o, _)| *o < off);
            by_offset.get(p).map(|(_, i)| *i)
        };
        let at = |t: &str| -> Option<usize> {
            match k.labels.get(t) {
                Some(&o) => at_offset(o),
                None => t
                    .strip_prefix("0x")
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .and_then(at_offset),
            }
        };
        let flows: HashMap<usize, Flow> = live
            .iter()
            .map(|&i| (i, flow(&ops[i], &ins[i].operands, &at)))
            .filter(|(_, f)| !matches!(f, Flow::Plain))
            .collect();
        let labelled: BTreeSet<usize> = k.labels.values().filter_map(|&o| at_offset(o)).collect();
        let mut leaders: BTreeSet<usize> = BTreeSet::from([live[0]]);
        let next_live = |i: usize| live.get(live.partition_point(|&x| x <= i)).copied();
        for (&i, f) in &flows {
            leaders.extend(next_live(i));
            match f {
                Flow::Jump { to: Some(t), .. } | Flow::Call { to: Some(t) } => {
                    leaders.insert(*t);
                }
                Flow::Indirect { to: Some(ts) } => leaders.extend(ts),
                Flow::Indirect { to: None } => leaders.extend(&labelled),
                _ => {}
            }
        }
        let starts: Vec<usize> = leaders.iter().copied().collect();
        let block_of = |i: usize| starts.partition_point(|&s| s <= i) - 1;
        let mut blocks: Vec<Block> = Vec::with_capacity(starts.len());
        for &i in &live {
            if leaders.contains(&i) {
                blocks.push(Block {
                    offset: ins[i].offset,
                    instructions: Vec::new(),
                    edges: Vec::new(),
                    cyclic: false,
                    live_preds: 0,
                });
            }
            blocks
                .last_mut()
                .expect("the entry leads")
                .instructions
                .push(i);
        }
        let returns: Vec<usize> = flows
            .iter()
            .filter(|(_, f)| matches!(f, Flow::Call { to: Some(_) }))
            .filter_map(|(&i, _)| next_live(i))
            .map(block_of)
            .collect();
        let n = blocks.len();
        for block in &mut blocks {
            let last = *block.instructions.last().expect("blocks are not empty");
            let fall = next_live(last).map(block_of);
            let plain = |to: usize| Edge { to, when: None };
            let guard = match ops[last].guard {
                Guard::If { p, not } => Some((p, not)),
                _ => None,
            };
            // where a guarded transfer does not happen, the path goes on with the guard false;
            // past an unguarded one it does not go on at all
            let on = || {
                fall.filter(|_| guard.is_some())
                    .map(|to| Edge { to, when: guard })
            };
            let mut edges: Vec<Edge> = match flows.get(&last) {
                None | Some(Flow::Plain) => fall.map(plain).into_iter().collect(),
                Some(Flow::Jump { to, when, fall: f }) => match to {
                    Some(t) => {
                        let taken = Edge {
                            to: block_of(*t),
                            when: *when,
                        };
                        let other = fall.filter(|_| *f).map(|to| Edge {
                            to,
                            when: when.map(|(p, v)| (p, !v)),
                        });
                        std::iter::once(taken).chain(other).collect()
                    }
                    // a target that cannot be read may be anywhere
                    None => (0..n).map(plain).collect(),
                },
                Some(Flow::Indirect { to }) => {
                    let targets: Vec<usize> = match to {
                        Some(ts) => ts.iter().map(|&t| block_of(t)).collect(),
                        None => labelled.iter().map(|&t| block_of(t)).collect(),
                    };
                    targets.into_iter().map(plain).chain(on()).collect()
                }
                Some(Flow::Call { to: Some(t) }) => vec![plain(block_of(*t))],
                Some(Flow::Call { to: None }) => fall.map(plain).into_iter().collect(),
                Some(Flow::End) => {
                    let mut e: Vec<Edge> = on().into_iter().collect();
                    if ops[last].base() == "RET" {
                        e.extend(returns.iter().map(|&r| plain(r)));
                    }
                    e
                }
            };
            edges.sort_by_key(|e| (e.to, e.when));
            edges.dedup();
            block.edges = edges;
        }
        let mut cfg = Cfg {
            blocks,
            ops,
            writes,
        };
        cfg.mark_cycles();
        cfg.pred_liveness();
        cfg
    }

    /// Blocks on a cycle, by Tarjan's strongly connected components (iteratively: kernels have
    /// thousands of blocks).
    fn mark_cycles(&mut self) {
        let n = self.blocks.len();
        let succ: Vec<Vec<usize>> = self
            .blocks
            .iter()
            .map(|b| b.edges.iter().map(|e| e.to).collect())
            .collect();
        let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
        let (mut stack, mut next) = (Vec::new(), 0);
        for root in 0..n {
            if index[root] != usize::MAX {
                continue;
            }
            let mut work = vec![(root, 0usize)];
            while let Some(&mut (v, ref mut child)) = work.last_mut() {
                if *child == 0 {
                    index[v] = next;
                    low[v] = next;
                    next += 1;
                    stack.push(v);
                    on[v] = true;
                }
                if let Some(&w) = succ[v].get(*child) {
                    *child += 1;
                    if index[w] == usize::MAX {
                        work.push((w, 0));
                    } else if on[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                work.pop();
                if let Some(&(u, _)) = work.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut scc = Vec::new();
                    while let Some(w) = stack.pop() {
                        on[w] = false;
                        scc.push(w);
                        if w == v {
                            break;
                        }
                    }
                    let cyclic = scc.len() > 1 || succ[v].contains(&v);
                    for w in scc {
                        self.blocks[w].cyclic = cyclic;
                    }
                }
            }
        }
    }

    /// Backward liveness of predicates: a path only needs to know a predicate some later
    /// instruction reads.
    fn pred_liveness(&mut self) {
        let (ops, writes) = (&self.ops, &self.writes);
        let summary: Vec<(u16, u16)> = self
            .blocks
            .iter()
            .map(|b| {
                let (mut uses, mut defs) = (0u16, 0u16);
                for &i in b.instructions.iter().rev() {
                    let (op, w) = (&ops[i], &writes[i]);
                    if op.guard == Guard::Always {
                        let d = if w.all_preds {
                            u16::MAX
                        } else {
                            w.preds.iter().fold(0, |m, p| m | 1 << p)
                        };
                        defs |= d;
                        uses &= !d;
                    }
                    if let Guard::If { p, .. } = op.guard {
                        uses |= 1 << p;
                    }
                    for o in &op.ops {
                        if let Operand::Pred { p, .. } = o
                            && !w.preds.contains(p)
                        {
                            uses |= 1 << p;
                        }
                    }
                }
                (uses, defs)
            })
            .collect();
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..self.blocks.len()).rev() {
                let out = self.blocks[b]
                    .edges
                    .iter()
                    .fold(0u16, |m, e| m | self.blocks[e.to].live_preds);
                let (uses, defs) = summary[b];
                let live = uses | (out & !defs);
                if live != self.blocks[b].live_preds {
                    self.blocks[b].live_preds = live;
                    changed = true;
                }
            }
        }
        // the predicate a branch took into a block is kept through it: a check may ask how the
        // path got there (which count of a wait switch runs)
        let entering: Vec<(usize, Pred)> = self
            .blocks
            .iter()
            .flat_map(|b| &b.edges)
            .filter_map(|e| e.when.map(|(p, _)| (e.to, p)))
            .collect();
        for (b, p) in entering {
            self.blocks[b].live_preds |= 1 << p;
        }
    }
}
