//! A run of registers' values with a summary of the instructions whose results they name, so that
//! forgetting one instruction's results (at every instruction of a loop's every turn) passes over
//! the runs that cannot name them.

use super::lin::{Kind, Val};

pub const LEN: usize = 32;

#[derive(Debug, Clone)]
pub struct Chunk {
    vals: [Val; LEN],
    /// Bit `i % 256` is set when a value here may name a result of instruction i: set as values
    /// are put, exact again after a forget that changed something.
    defs: [u64; 4],
}

/// Two runs are equal when their values are: the summary is only a hint.
impl PartialEq for Chunk {
    fn eq(&self, o: &Self) -> bool {
        self.vals == o.vals
    }
}

fn bits(v: &Val, into: &mut [u64; 4]) {
    for &(s, _) in v.iter().flat_map(|l| l.terms()) {
        if let Kind::Def { index, .. } = s.kind() {
            into[(index as usize >> 6) & 3] |= 1 << (index & 63);
        }
    }
}

impl Default for Chunk {
    fn default() -> Chunk {
        Chunk {
            vals: [None; LEN],
            defs: [0; 4],
        }
    }
}

impl Chunk {
    pub fn get(&self, i: usize) -> Val {
        self.vals[i]
    }
    pub fn put(&mut self, i: usize, v: Val) {
        bits(&v, &mut self.defs);
        self.vals[i] = v;
    }
    /// Whether a value here may name a result of instruction `index`.
    pub fn may_name(&self, index: u32) -> bool {
        self.defs[(index as usize >> 6) & 3] & (1 << (index & 63)) != 0
    }
    /// Whether a value here does name a result of instruction `index`.
    pub fn names(&self, index: u32) -> bool {
        self.may_name(index)
            && self
                .vals
                .iter()
                .any(|v| v.is_some_and(|l| l.mentions(|s| s.is_def_of(index))))
    }
    /// Whether a value here names a symbol `f` picks.
    pub fn mentions(&self, f: impl Fn(super::lin::Sym) -> bool + Copy) -> bool {
        self.vals.iter().any(|v| v.is_some_and(|l| l.mentions(f)))
    }
    /// Every value naming a result of instruction `index` becomes unknown.
    pub fn forget(&mut self, index: u32) {
        self.defs = [0; 4];
        for v in self.vals.iter_mut() {
            if v.is_some_and(|l| l.mentions(|s| s.is_def_of(index))) {
                *v = None;
            }
            bits(v, &mut self.defs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::flow::lin::{Lin, Sym};

    #[test]
    fn a_forget_passes_over_what_no_value_names_and_clears_what_one_does() {
        let mut c = Chunk::default();
        c.put(0, Some(Lin::sym(Sym::def(7, 0)).plus(4)));
        c.put(1, Some(Lin::sym(Sym::phi(0, 1))));
        // 263 shares 7's bit: the summary may say yes, the values say no
        assert!(c.may_name(263) && !c.names(263));
        assert!(!c.may_name(8) && !c.names(8));
        assert!(c.names(7));
        c.forget(7);
        assert_eq!(c.get(0), None);
        assert_eq!(c.get(1), Some(Lin::sym(Sym::phi(0, 1))));
        assert!(!c.may_name(7), "exact again after the forget");
        // equal values, different hints
        let mut d = Chunk::default();
        d.put(1, Some(Lin::sym(Sym::phi(0, 1))));
        assert_eq!(c, d);
    }
}
