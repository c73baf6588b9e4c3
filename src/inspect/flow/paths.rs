//! A forward analysis over the feasible paths of a kernel: each path carries a protocol state
//! (what a check tracks), the predicates it knows and the register values it knows. Paths that
//! agree on the protocol state and the predicates are joined at block entries; a guarded
//! instruction that changes the protocol splits a path in two (guard true, guard false), and a
//! branch follows only the edges its known predicates allow. Each path state remembers the one
//! it came from, so a finding can show the path that leads to it.

use super::cfg::Cfg;
use super::decode::{Guard, Op, Operand};
use super::lin::{Kind, SPECIALS, Sym};
use super::preds::Preds;
use super::values::{SymInfo, Values};
use foldhash::{HashMap, HashMapExt};
use std::hash::Hash;

/// What a check tracks along a path.
pub trait Protocol {
    type State: Clone + Eq + Hash + std::fmt::Debug;
    fn start(&self) -> Self::State;
    /// How a guarded instruction `i` whose guard the path does not know is followed.
    fn relevance(&self, i: usize) -> Relevance;
    /// The state after instruction `i`, which executes.
    fn step(&self, i: usize, s: &mut Self::State, v: &Values, preds: &Preds);
    /// Joins what `from` holds beyond what tells states apart (its `Eq`) into `into`, where two
    /// paths meet; true when `into` grew.
    fn absorb(&self, into: &mut Self::State, from: &Self::State) -> bool;
}

/// Instructions outstanding on a path (stores not fenced, inits not published): paths are told
/// apart by whether there are any, and where they meet the sets are joined.
#[derive(Debug, Clone, Default)]
pub struct Outstanding(pub std::collections::BTreeSet<usize>);

impl PartialEq for Outstanding {
    fn eq(&self, o: &Self) -> bool {
        self.0.is_empty() == o.0.is_empty()
    }
}

impl Eq for Outstanding {}

impl std::hash::Hash for Outstanding {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.is_empty().hash(h);
    }
}

impl Outstanding {
    /// Adds `o`'s members; true when something was new.
    pub fn absorb(&mut self, o: &Outstanding) -> bool {
        let n = self.0.len();
        self.0.extend(o.0.iter().copied());
        self.0.len() != n
    }
}

/// What an instruction is to a protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relevance {
    /// It does not change the protocol state.
    None,
    /// It adds to what is outstanding (a copy, a store): under an unknown guard it is taken as
    /// run, without splitting the path.
    Adds,
    /// It ends or counts something (a wait, a barrier, a commit): under an unknown guard the
    /// path splits, one way with it run and the guard true, one without and the guard false.
    Splits,
}

/// What a check is shown of each instruction a path reaches: the instruction, the path's
/// predicates, protocol state and values just before it, and where the path state was.
pub struct Visit<'a, S> {
    pub i: usize,
    pub preds: &'a Preds,
    pub state: &'a S,
    pub values: &'a Values,
    pub at: Witness,
}

/// A path state: the block and the index of the state among the block's entry states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Witness {
    pub block: usize,
    pub entry: usize,
}

/// Why an analysis stopped before it had followed every path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overflow(pub String);

/// Entry states per block beyond which the paths are too many to follow one by one.
const MAX_ENTRIES: usize = 256;
/// Instructions stepped (over all path states) beyond which the analysis gives up: a second or
/// so of one core, so that one kernel cannot hold a whole library's inspection up.
const MAX_STEPS: usize = 4_000_000;

struct Entry<S> {
    preds: Preds,
    state: S,
    values: Values,
    from: Option<Witness>,
    dirty: bool,
}

/// Ranges and alignment of the values some instructions make, whatever their inputs.
pub struct Table {
    defs: HashMap<Sym, ((i64, i64), u32)>,
}

impl Table {
    pub fn of(ops: &[Op]) -> Table {
        let mut defs = HashMap::new();
        for (i, op) in ops.iter().enumerate() {
            if let Some(info) = super::ranges::of(op) {
                defs.insert(Sym::def(i as u32, 0), info);
            }
            if let Some(low) = super::ranges::low_bits(op) {
                defs.insert(Sym::def(i as u32, super::ranges::LOW_BITS), (low, 0));
            }
        }
        Table { defs }
    }
}

impl SymInfo for Table {
    fn range(&self, s: Sym) -> Option<(i64, i64)> {
        match s.kind() {
            Kind::Special(i) => Some((SPECIALS[i].1, SPECIALS[i].2)),
            Kind::Def { .. } => self.defs.get(&s).map(|d| d.0),
            _ => None,
        }
    }
    fn align(&self, s: Sym) -> u32 {
        self.defs.get(&s).map_or(0, |d| d.1)
    }
}

/// The path states at each block's entry: how each was reached and the predicates it knew.
pub struct Paths {
    from: Vec<Vec<(Option<Witness>, Preds)>>,
}

impl Paths {
    /// The path states from the kernel's entry to `w`, in order.
    pub fn chain(&self, w: Witness) -> Vec<Witness> {
        let mut out = vec![w];
        let mut at = self.from[w.block][w.entry].0;
        while let Some(p) = at {
            out.push(p);
            at = self.from[p.block][p.entry].0;
        }
        out.reverse();
        out
    }

    pub fn preds(&self, w: Witness) -> Preds {
        self.from[w.block][w.entry].1
    }
}

struct Run<'a, P: Protocol> {
    cfg: &'a Cfg,
    check: &'a P,
    table: &'a Table,
}

type State<S> = (Preds, S, Values);

impl<P: Protocol> Run<'_, P> {
    /// Runs block `b` from one entry state: the states at its end (a guarded instruction
    /// that splits makes two of one), calling `visit` before each instruction.
    fn block(
        &self,
        b: usize,
        start: State<P::State>,
        mut visit: impl FnMut(usize, &Preds, &P::State, &Values),
    ) -> Vec<State<P::State>> {
        let block = &self.cfg.blocks[b];
        let mut states = vec![start];
        for &i in &block.instructions {
            let op = &self.cfg.ops[i];
            let mut next = Vec::with_capacity(states.len());
            for (mut preds, mut s, mut v) in states {
                visit(i, &preds, &s, &v);
                match preds.guard(op.guard) {
                    Some(true) => {
                        super::transfer::step(
                            &mut v,
                            self.cfg,
                            i,
                            &mut preds,
                            block.cyclic,
                            false,
                            self.table,
                        );
                        self.check.step(i, &mut s, &v, &preds);
                        next.push((preds, s, v));
                    }
                    Some(false) => next.push((preds, s, v)),
                    None => {
                        let Guard::If { p, not } = op.guard else {
                            unreachable!("only a predicate guard is unknown")
                        };
                        match self.check.relevance(i) {
                            r @ (Relevance::None | Relevance::Adds) => {
                                super::transfer::step(
                                    &mut v,
                                    self.cfg,
                                    i,
                                    &mut preds,
                                    block.cyclic,
                                    true,
                                    self.table,
                                );
                                if r == Relevance::Adds {
                                    self.check.step(i, &mut s, &v, &preds);
                                }
                            }
                            Relevance::Splits => {
                                let (mut p2, mut s2, mut v2) = (preds, s.clone(), v.clone());
                                p2.suppose(p, !not);
                                v2.assume(p, !not);
                                super::transfer::step(
                                    &mut v2,
                                    self.cfg,
                                    i,
                                    &mut p2,
                                    block.cyclic,
                                    false,
                                    self.table,
                                );
                                self.check.step(i, &mut s2, &v2, &p2);
                                next.push((p2, s2, v2));
                                preds.suppose(p, not);
                                v.assume(p, not);
                            }
                        }
                        next.push((preds, s, v));
                    }
                }
            }
            states = next;
        }
        states
    }
}

/// The register holding the return address of the RET that ends block `b`, if it does.
fn returns_through(cfg: &Cfg, b: usize) -> Option<super::decode::Reg> {
    let op = &cfg.ops[*cfg.blocks[b].instructions.last()?];
    if op.base() != "RET" {
        return None;
    }
    op.ops.iter().find_map(|o| match o {
        Operand::Reg { r, .. } => Some(*r),
        _ => None,
    })
}

/// Follows every feasible path of `cfg` with `check`, then shows `visit` each instruction with
/// each state that reaches it.
pub fn run<P: Protocol>(
    cfg: &Cfg,
    check: &P,
    mut visit: impl FnMut(Visit<P::State>),
) -> Result<Paths, Overflow> {
    let n = cfg.blocks.len();
    let mut entries: Vec<Vec<Entry<P::State>>> = (0..n).map(|_| Vec::new()).collect();
    let mut index: Vec<HashMap<(Preds, P::State), usize>> = vec![HashMap::new(); n];
    if n == 0 {
        return Ok(Paths { from: Vec::new() });
    }
    let table = Table::of(&cfg.ops);
    let start = check.start();
    index[0].insert((Preds::default(), start.clone()), 0);
    entries[0].push(Entry {
        preds: Preds::default(),
        state: start,
        values: Values::default(),
        from: None,
        dirty: true,
    });
    let mut work: std::collections::BTreeSet<usize> = std::collections::BTreeSet::from([0]);
    let mut steps = 0usize;
    while let Some(b) = work.pop_first() {
        for e in 0..entries[b].len() {
            if !entries[b][e].dirty {
                continue;
            }
            if steps > MAX_STEPS {
                return Err(Overflow(format!(
                    "the paths did not settle within {MAX_STEPS} instruction steps"
                )));
            }
            entries[b][e].dirty = false;
            let en = &entries[b][e];
            let start = (en.preds, en.state.clone(), en.values.clone());
            let r = Run {
                cfg,
                check,
                table: &table,
            };
            let ends = r.block(b, start, |_, _, _, _| steps += 1);
            let ret = returns_through(cfg, b);
            for (preds, s, v) in ends {
                let back_to = ret.and_then(|r| v.get(r)).and_then(|l| l.as_const());
                for edge in &cfg.blocks[b].edges {
                    // a RET whose return address the path knows goes back to that call only
                    if let Some(at) = back_to
                        && edge.when.is_none()
                        && i64::from(cfg.blocks[edge.to].offset) != at
                    {
                        continue;
                    }
                    let (mut p, mut v) = (preds, v.clone());
                    if let Some((q, want)) = edge.when {
                        if p.get(q).is_some_and(|have| have != want) {
                            continue;
                        }
                        p.suppose(q, want);
                        v.assume(q, want);
                    }
                    let to = edge.to;
                    p.keep(cfg.blocks[to].live_preds);
                    let key = (p, s.clone());
                    match index[to].get(&key) {
                        Some(&k) => {
                            let e = &mut entries[to][k];
                            let grew = check.absorb(&mut e.state, &s);
                            if e.values.join(&v, to as u32) | grew {
                                entries[to][k].dirty = true;
                                work.insert(to);
                            }
                        }
                        None => {
                            if entries[to].len() == MAX_ENTRIES {
                                let at = cfg.blocks[to].instructions[0];
                                return Err(Overflow(format!(
                                    "more than {MAX_ENTRIES} distinct path states reach instruction {at}"
                                )));
                            }
                            index[to].insert(key, entries[to].len());
                            entries[to].push(Entry {
                                preds: p,
                                state: s.clone(),
                                values: v,
                                from: Some(Witness { block: b, entry: e }),
                                dirty: true,
                            });
                            work.insert(to);
                        }
                    }
                }
            }
        }
    }
    let r = Run {
        cfg,
        check,
        table: &table,
    };
    for (b, list) in entries.iter().enumerate() {
        for (e, en) in list.iter().enumerate() {
            let start = (en.preds, en.state.clone(), en.values.clone());
            let at = Witness { block: b, entry: e };
            r.block(b, start, |i, preds, state, values| {
                visit(Visit {
                    i,
                    preds,
                    state,
                    values,
                    at,
                })
            });
        }
    }
    Ok(Paths {
        from: entries
            .iter()
            .map(|l| l.iter().map(|e| (e.from, e.preds)).collect())
            .collect(),
    })
}
