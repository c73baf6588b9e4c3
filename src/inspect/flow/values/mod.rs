//! What one path knows about registers and predicates: each register's value as a linear form,
//! the comparison each predicate holds, and the comparisons the path has taken as true. Joined
//! where paths meet: a register that differs becomes a new unknown of that block (with its
//! distance to another such register kept when both paths agree on it: a pipeline's head stays
//! three ahead of its tail however many times the loop ran).

mod decide;

use super::chunk::{self, Chunk};
use super::decode::{self, Guard, Operand, Pred, REGS, Reg};
use super::lin::{self, Cond, Derived, Kind, Lin, Rel, Sym, Val};
use foldhash::{HashMap, HashMapExt};
use std::collections::BTreeMap;
use std::sync::Arc;

const CHUNK: usize = chunk::LEN;
const CHUNKS: usize = REGS / CHUNK;
const FACTS: usize = 24;
/// Derived values followed back through at most this many others.
const DERIVED_DEPTH: u32 = 4;

/// What the analysis knows of symbols apart from any path: ranges and trailing zero bits of the
/// values some instructions make (a mask, a byte insert).
pub trait SymInfo {
    fn range(&self, s: Sym) -> Option<(i64, i64)>;
    fn align(&self, s: Sym) -> u32;
}

#[derive(Debug, Clone, PartialEq)]
pub struct Values {
    regs: [Arc<Chunk>; CHUNKS],
    /// The comparison each predicate holds; shared until a path writes one (it is big, and
    /// states are copied at every edge).
    conds: Arc<[Option<Cond>; 16]>,
    facts: Arc<Vec<Cond>>,
    /// Bounds of values the analysis only names, from their operands' bounds on this path (an
    /// XOR of two thread indices, a shift of a masked value).
    pub(super) bounds: Arc<BTreeMap<Sym, (i64, i64)>>,
    guarded: Arc<Vec<Guarded>>,
    /// Values the analysis only names, with the form each was made of (`tid >> 2`).
    derived: Arc<BTreeMap<Sym, Derived>>,
}

/// What a register holds where a predicate has a value. An instruction under a guard the path
/// does not know leaves its register unknown, yet one under the same guard, with neither the
/// predicate nor the register written since, reads what it wrote (`@!P4 LEA R19, ...` then
/// `@!P4 LDGSTS [R19+0x8800]`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Guarded {
    reg: Reg,
    guard: Guard,
    val: Lin,
}

impl Default for Values {
    /// The entry of a kernel: RZ is zero, every other register an unknown of the entry block.
    fn default() -> Values {
        let mut v = Values {
            regs: std::array::from_fn(|_| Arc::new(Chunk::default())),
            conds: Arc::new([None; 16]),
            facts: Arc::new(Vec::new()),
            bounds: Arc::new(BTreeMap::new()),
            guarded: Arc::new(Vec::new()),
            derived: Arc::new(BTreeMap::new()),
        };
        for r in 0..REGS as Reg {
            v.put(r, Some(Lin::sym(Sym::phi(0, r))));
        }
        v
    }
}

impl Values {
    pub fn get(&self, r: Reg) -> Val {
        if decode::is_zero(r) {
            return Some(Lin::konst(0));
        }
        self.regs[r as usize / CHUNK].get(r as usize % CHUNK)
    }
    pub(super) fn put(&mut self, r: Reg, v: Val) {
        if decode::is_zero(r) {
            return;
        }
        Arc::make_mut(&mut self.regs[r as usize / CHUNK]).put(r as usize % CHUNK, v);
        if self.guarded.iter().any(|g| g.reg == r) {
            Arc::make_mut(&mut self.guarded).retain(|g| g.reg != r);
        }
    }
    /// `r`, just written under a `guard` the path does not know, holds `val` where it holds.
    pub(super) fn put_guarded(&mut self, reg: Reg, guard: Guard, val: Lin) {
        Arc::make_mut(&mut self.guarded).push(Guarded { reg, guard, val });
    }
    /// Predicate `p` is written: the comparison it held and what registers hold under it go.
    pub(super) fn pred_written(&mut self, p: Pred) {
        self.set_cond(p, None);
        let under = |g: &Guarded| matches!(g.guard, Guard::If { p: q, .. } if q == p);
        if self.guarded.iter().any(under) {
            Arc::make_mut(&mut self.guarded).retain(|g| !under(g));
        }
    }
    /// Every predicate may have been written.
    pub(super) fn all_preds_written(&mut self) {
        if self.conds.iter().any(Option::is_some) {
            self.conds = Arc::new([None; 16]);
        }
        if !self.guarded.is_empty() {
            self.guarded = Arc::new(Vec::new());
        }
    }
    pub fn cond(&self, p: Pred) -> Option<Cond> {
        self.conds[p as usize]
    }
    pub(super) fn set_cond(&mut self, p: Pred, c: Option<Cond>) {
        if self.conds[p as usize] != c {
            Arc::make_mut(&mut self.conds)[p as usize] = c;
        }
    }

    /// The range of a symbol: what its instruction alone says, what this path bounds, and for
    /// a value derived from a form, what that form takes with its thread indices over the
    /// ranges this path allows them.
    pub fn range(&self, s: Sym, info: &dyn SymInfo) -> Option<(i64, i64)> {
        self.range_within(s, info, DERIVED_DEPTH)
    }

    fn range_within(&self, s: Sym, info: &dyn SymInfo, depth: u32) -> Option<(i64, i64)> {
        let derived = self.derived.get(&s).filter(|_| depth > 0).and_then(|d| {
            d.range(|x| {
                lin::interval(x, |t| match t.kind() {
                    Kind::Special(_) => self.thread_range(t, info),
                    _ => self.range_within(t, info, depth - 1),
                })
            })
        });
        [info.range(s), self.bounds.get(&s).copied(), derived]
            .into_iter()
            .flatten()
            .reduce(|a, b| (a.0.max(b.0), a.1.min(b.1)))
    }

    /// `s`, a value the analysis only names, was made of a form as `d` says.
    pub(super) fn derive(&mut self, s: Sym, d: Derived) {
        Arc::make_mut(&mut self.derived).insert(s, d);
    }

    /// The range of a thread index on this path: its bounds narrowed by the comparisons the path
    /// took (`tid.x < 256` on the side of a branch).
    pub fn thread_range(&self, s: Sym, info: &dyn SymInfo) -> Option<(i64, i64)> {
        let (mut lo, mut hi) = info.range(s)?;
        for f in self.facts.iter() {
            let Some(d) = f.a.sub(&f.b) else { continue };
            let [(t, c @ (1 | -1))] = d.terms() else {
                continue;
            };
            // c * s + k rel 0, i.e. s rel' -k / c
            let (rel, bound) = if *c == 1 {
                (f.rel, -d.k)
            } else {
                (f.rel.swap(), d.k)
            };
            if *t != s || (f.unsigned && (lo < 0 || bound < 0)) {
                continue;
            }
            match rel {
                Rel::Eq => (lo, hi) = (lo.max(bound), hi.min(bound)),
                Rel::Lt => hi = hi.min(bound - 1),
                Rel::Le => hi = hi.min(bound),
                Rel::Gt => lo = lo.max(bound + 1),
                Rel::Ge => lo = lo.max(bound),
                Rel::Ne => {}
            }
        }
        (lo <= hi).then_some((lo, hi))
    }

    /// The interval a form takes on this path, every thread index over its range.
    pub fn span(&self, l: &Lin, info: &dyn SymInfo) -> Option<(i64, i64)> {
        lin::interval(l, |s| self.range(s, info))
    }

    /// The value an operand reads.
    pub fn operand(&self, o: &Operand) -> Val {
        match *o {
            Operand::Reg {
                r,
                neg,
                not,
                whole: true,
            } => {
                let v = self.get(r)?;
                let v = if not { v.scale(-1)?.plus(-1) } else { v };
                if neg { v.scale(-1) } else { Some(v) }
            }
            Operand::Imm(k) => Some(Lin::konst(k)),
            Operand::Const { bank, offset } => Some(Lin::sym(Sym::param(bank, offset))),
            Operand::Special(ref s) if s == "SRZ" => Some(Lin::konst(0)),
            Operand::Special(ref s) => Sym::special(s).map(Lin::sym),
            _ => None,
        }
    }

    /// The address a memory operand names.
    pub fn address(&self, m: &decode::Mem) -> Val {
        self.address_under(m, Guard::Always)
    }

    /// The address a memory operand of an instruction under `guard` names: a register written
    /// under the same guard holds what was written there.
    pub fn address_under(&self, m: &decode::Mem, guard: Guard) -> Val {
        let mut a = Lin::konst(m.imm);
        for &(r, scale) in &m.regs {
            let under = self.guarded.iter().find(|g| g.reg == r && g.guard == guard);
            let v = match under {
                Some(g) => g.val,
                None => self.get(r)?,
            };
            a = a.add_scaled(&v, scale)?;
        }
        Some(a)
    }

    /// Everything that names a value instruction `index` made forgets it: the instruction runs
    /// again and makes a new one. (This runs at every instruction of a loop's every turn, so the
    /// registers are passed over in runs whose summary says they cannot name it, and the
    /// bounds, kept for first destinations only, are looked up rather than walked.)
    pub(super) fn invalidate(&mut self, index: u32) {
        let gone = move |s: Sym| s.is_def_of(index);
        for chunk in self.regs.iter_mut() {
            if chunk.names(index) {
                Arc::make_mut(chunk).forget(index);
            }
        }
        for p in 0..16 {
            if self.conds[p].is_some_and(|c| c.mentions(gone)) {
                Arc::make_mut(&mut self.conds)[p] = None;
            }
        }
        if self.facts.iter().any(|f| f.mentions(gone)) {
            Arc::make_mut(&mut self.facts).retain(|f| !f.mentions(gone));
        }
        if self.bounds.contains_key(&Sym::def(index, 0)) {
            Arc::make_mut(&mut self.bounds).remove(&Sym::def(index, 0));
        }
        if self.guarded.iter().any(|g| g.val.mentions(gone)) {
            Arc::make_mut(&mut self.guarded).retain(|g| !g.val.mentions(gone));
        }
        let stale = |(s, d): (&Sym, &Derived)| gone(*s) || d.form().mentions(gone);
        if self.derived.iter().any(stale) {
            Arc::make_mut(&mut self.derived).retain(|s, d| !stale((s, d)));
        }
    }

    /// The path assumes predicate `p` is `v`: what it held becomes a known comparison.
    pub fn assume(&mut self, p: Pred, v: bool) {
        if let Some(c) = self.conds[p as usize] {
            let c = if v { c } else { c.negate() };
            let facts = Arc::make_mut(&mut self.facts);
            if !facts.contains(&c) {
                if facts.len() == FACTS {
                    facts.remove(0);
                }
                facts.push(c);
            }
        }
    }

    /// The facts this path holds on value `x` against a constant, as (relation, constant,
    /// unsigned), with `x` on the left.
    fn facts_on(&self, x: Lin) -> impl Iterator<Item = (Rel, i64, bool)> + '_ {
        self.facts.iter().filter_map(move |f| {
            let f = if f.b.as_const().is_some() {
                *f
            } else {
                f.swapped()
            };
            let k = f.b.as_const().filter(|_| f.a == x)?;
            Some((f.rel, k, f.unsigned))
        })
    }

    /// Joins `other` into `self` at the entry of `block`; true when `self` changed. A fact both
    /// paths hold on a register's value against a constant stays, on the joined value (`UR15 ==
    /// 0` where UR15 held one symbol on one path and another on the other).
    pub fn join(&mut self, other: &Values, block: u32) -> bool {
        let mut changed = false;
        let ours = |s: Sym| s.phi_of(block);
        // registers whose two values differ alike (a - b) are named from the first of them, so
        // a pointer and its offsets stay related; keyed by a - b, since only those can match
        let mut anchors: HashMap<Val, Vec<(Reg, Lin, Lin)>> = HashMap::new();
        let mut renamed: Vec<Cond> = Vec::new();
        // a run both paths share untouched holds equal values, of which only those naming this
        // block's own unknowns change (this runs at every join of every path)
        let skip: [bool; CHUNKS] = std::array::from_fn(|c| {
            Arc::ptr_eq(&self.regs[c], &other.regs[c]) && !self.regs[c].mentions(ours)
        });
        for r in 0..REGS as Reg {
            if decode::is_zero(r) || skip[r as usize / CHUNK] {
                continue;
            }
            let (a, b) = (self.get(r), other.get(r));
            if a == b && !a.is_some_and(|l| l.mentions(ours)) {
                continue;
            }
            let new = match (a, b) {
                (Some(a), Some(b)) => {
                    let alike = anchors.entry(a.sub(&b)).or_default();
                    let anchored = alike.iter().find_map(|(ar, aa, ab)| {
                        let da = a.sub(aa)?;
                        let db = b.sub(ab)?;
                        (da == db && !da.mentions(ours))
                            .then(|| Lin::sym(Sym::phi(block, *ar)).add(&da))
                            .flatten()
                    });
                    anchored.or_else(|| {
                        alike.push((r, a, b));
                        Some(Lin::sym(Sym::phi(block, r)))
                    })
                }
                _ => None,
            };
            if let (Some(a), Some(b), Some(n)) = (a, b, new) {
                renamed.extend(
                    self.facts_on(a)
                        .filter(|f| other.facts_on(b).any(|g| g == *f))
                        .map(|(rel, k, unsigned)| Cond {
                            a: n,
                            b: Lin::konst(k),
                            rel,
                            unsigned,
                        }),
                );
            }
            if new != a {
                self.put(r, new);
                changed = true;
            }
        }
        for p in 0..16 {
            let keep =
                self.conds[p] == other.conds[p] && !self.conds[p].is_some_and(|c| c.mentions(ours));
            if !keep && self.conds[p].is_some() {
                Arc::make_mut(&mut self.conds)[p] = None;
                changed = true;
            }
        }
        let mut both: Vec<Cond> = self
            .facts
            .iter()
            .filter(|f| other.facts.contains(f) && !f.mentions(ours))
            .copied()
            .collect();
        for f in renamed {
            if !both.contains(&f) && both.len() < FACTS {
                both.push(f);
            }
        }
        if both != *self.facts {
            self.facts = Arc::new(both);
            changed = true;
        }
        // a bound both paths agree on stays; one that differs is dropped (no widening ladder)
        // what a value was derived from stays where both paths say it
        let same =
            |(s, d): (&Sym, &Derived)| other.derived.get(s) == Some(d) && !d.form().mentions(ours);
        if !Arc::ptr_eq(&self.derived, &other.derived) && !self.derived.iter().all(same) {
            let kept = self.derived.iter().filter(|&e| same(e));
            self.derived = Arc::new(kept.map(|(s, d)| (*s, *d)).collect());
            changed = true;
        }
        // what a register holds under a guard stays where both paths say it
        let kept = |g: &&Guarded| other.guarded.contains(g) && !g.val.mentions(ours);
        if !Arc::ptr_eq(&self.guarded, &other.guarded) && !self.guarded.iter().all(|g| kept(&g)) {
            self.guarded = Arc::new(self.guarded.iter().filter(kept).copied().collect());
            changed = true;
        }
        let agrees = |(s, b): (&Sym, &(i64, i64))| other.bounds.get(s) == Some(b);
        if !Arc::ptr_eq(&self.bounds, &other.bounds) && !self.bounds.iter().all(agrees) {
            let agreed = self.bounds.iter().filter(|&e| agrees(e));
            self.bounds = Arc::new(agreed.map(|(s, b)| (*s, *b)).collect());
            changed = true;
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Unknown;
    impl SymInfo for Unknown {
        fn range(&self, _: Sym) -> Option<(i64, i64)> {
            None
        }
        fn align(&self, _: Sym) -> u32 {
            0
        }
    }

    const UR15: Reg = 256 + 15;

    /// A path on which UR15 holds `x` and a branch on `UR15 != 0` went the `== 0` way.
    fn zero_on(x: Sym) -> Values {
        let mut v = Values::default();
        v.put(UR15, Some(Lin::sym(x)));
        v.set_cond(
            8,
            Some(Cond {
                a: Lin::sym(x),
                b: Lin::konst(0),
                rel: Rel::Ne,
                unsigned: false,
            }),
        );
        v.assume(8, false);
        v
    }

    /// `0 != UR15`, as the exit after the join tests it.
    fn nonzero(v: &Values) -> Cond {
        Cond {
            a: Lin::konst(0),
            b: v.get(UR15).unwrap(),
            rel: Rel::Ne,
            unsigned: false,
        }
    }

    #[test]
    fn a_fact_both_paths_hold_on_a_register_survives_a_join_that_renames_it() {
        let mut v = zero_on(Sym::def(10, 0));
        v.join(&zero_on(Sym::def(20, 0)), 7);
        assert!(v.get(UR15).unwrap().mentions(|s| s.phi_of(7)));
        assert_eq!(v.decide(&nonzero(&v), &Unknown), Some((false, true)));
        // where only one of the paths took that branch, nothing is known after the join
        let mut v = zero_on(Sym::def(10, 0));
        let mut other = Values::default();
        other.put(UR15, Some(Lin::sym(Sym::def(20, 0))));
        v.join(&other, 7);
        assert_eq!(v.decide(&nonzero(&v), &Unknown), None);
    }
}
