//! Register values as linear forms over named unknowns (`2 * tid.x + 0x400`, `φ + 3`): enough to
//! tell two shared-memory addresses apart, to follow a pipeline's head and tail counters, and to
//! decide a comparison whose operands differ by a constant. 32-bit wrap-around is kept by
//! comparing constants as the hardware does.

use super::decode::Reg;

/// A value the analysis names but does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sym(u64);

const KIND: u64 = 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A special register (`SR_TID.X`, ...), by its index in SPECIALS.
    Special(usize),
    /// A word of a constant bank: kernel parameters, the same for every thread all along.
    Param { bank: u32, offset: u32 },
    /// What instruction `index` wrote into its `slot`-th destination register.
    Def { index: u32, slot: u16 },
    /// What register `reg` holds on entry to block `block`.
    Phi { block: u32, reg: Reg },
}

/// Special registers: name, range, whether every thread of the block reads the same value.
pub const SPECIALS: [(&str, i64, i64, bool); 12] = [
    ("SR_TID.X", 0, 1023, false),
    ("SR_TID.Y", 0, 1023, false),
    ("SR_TID.Z", 0, 63, false),
    ("SR_LANEID", 0, 31, false),
    ("SR_CTAID.X", 0, i32::MAX as i64, true),
    ("SR_CTAID.Y", 0, 65535, true),
    ("SR_CTAID.Z", 0, 65535, true),
    ("SR_CgaCtaId", 0, 15, true),
    ("SR_CTARANK", 0, 15, true),
    ("SR_SWINHI", 0, i32::MAX as i64, true),
    ("SR_SWINLO", 0, i32::MAX as i64, true),
    ("SR_CLUSTERID.X", 0, i32::MAX as i64, true),
];

impl Sym {
    pub fn special(name: &str) -> Option<Sym> {
        SPECIALS
            .iter()
            .position(|s| s.0 == name)
            .map(|i| Sym(i as u64))
    }
    pub fn param(bank: u32, offset: u32) -> Sym {
        Sym((1 << KIND) | (u64::from(bank) << 32) | u64::from(offset))
    }
    pub fn def(index: u32, slot: u16) -> Sym {
        Sym((2 << KIND) | (u64::from(slot) << 32) | u64::from(index))
    }
    pub fn phi(block: u32, reg: Reg) -> Sym {
        Sym((3 << KIND) | (u64::from(reg) << 32) | u64::from(block))
    }
    pub fn kind(self) -> Kind {
        let low = (self.0 & 0xffff_ffff) as u32;
        let mid = ((self.0 >> 32) & 0x0fff_ffff) as u32;
        match self.0 >> KIND {
            0 => Kind::Special(low as usize),
            1 => Kind::Param {
                bank: mid,
                offset: low,
            },
            2 => Kind::Def {
                index: low,
                slot: mid as u16,
            },
            _ => Kind::Phi {
                block: low,
                reg: mid as Reg,
            },
        }
    }
    /// The same for every thread of the block for the whole kernel.
    pub fn uniform(self) -> bool {
        match self.kind() {
            Kind::Special(i) => SPECIALS[i].3,
            Kind::Param { .. } => true,
            _ => false,
        }
    }
    /// What instruction `index` wrote, into any of its destinations.
    pub fn is_def_of(self, index: u32) -> bool {
        self.0 >> KIND == 2 && self.0 as u32 == index
    }
    pub fn phi_of(self, b: u32) -> bool {
        matches!(self.kind(), Kind::Phi { block, .. } if block == b)
    }
}

const TERMS: usize = 4;

/// `k + Σ coef * sym`, terms sorted by symbol, no zero coefficient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lin {
    pub k: i64,
    n: u8,
    t: [(Sym, i64); TERMS],
}

impl Lin {
    pub fn konst(k: i64) -> Lin {
        Lin {
            k: wrap(k),
            n: 0,
            t: [(Sym(0), 0); TERMS],
        }
    }
    pub fn sym(s: Sym) -> Lin {
        let mut l = Lin::konst(0);
        l.t[0] = (s, 1);
        l.n = 1;
        l
    }
    pub fn terms(&self) -> &[(Sym, i64)] {
        &self.t[..self.n as usize]
    }
    pub fn as_const(&self) -> Option<i64> {
        (self.n == 0).then_some(self.k)
    }
    pub fn mentions(&self, f: impl Fn(Sym) -> bool) -> bool {
        self.terms().iter().any(|&(s, _)| f(s))
    }

    /// `self + c * other`; None when the result has too many terms. Both term lists are sorted,
    /// so they merge on the stack: this runs at every join of every register.
    pub fn add_scaled(&self, other: &Lin, c: i64) -> Option<Lin> {
        let (x, y) = (self.terms(), other.terms());
        let mut out = [(Sym(0), 0i64); 2 * TERMS];
        let (mut i, mut j, mut n) = (0, 0, 0);
        while i < x.len() || j < y.len() {
            let (s, v) = match (x.get(i), y.get(j)) {
                (Some(a), Some(b)) if a.0 == b.0 => {
                    i += 1;
                    j += 1;
                    (a.0, a.1.checked_add(b.1.checked_mul(c)?)?)
                }
                (Some(a), Some(b)) if a.0 < b.0 => {
                    i += 1;
                    *a
                }
                (Some(a), None) => {
                    i += 1;
                    *a
                }
                (_, Some(b)) => {
                    j += 1;
                    (b.0, b.1.checked_mul(c)?)
                }
                (None, None) => unreachable!("the loop runs while a list has terms"),
            };
            if wrap(v) != 0 {
                out[n] = (s, wrap(v));
                n += 1;
            }
        }
        if n > TERMS {
            return None;
        }
        let mut l = Lin::konst(self.k.wrapping_add(other.k.wrapping_mul(c)));
        l.n = n as u8;
        l.t[..n].copy_from_slice(&out[..n]);
        Some(l)
    }
    pub fn add(&self, o: &Lin) -> Option<Lin> {
        self.add_scaled(o, 1)
    }
    pub fn sub(&self, o: &Lin) -> Option<Lin> {
        self.add_scaled(o, -1)
    }
    pub fn scale(&self, c: i64) -> Option<Lin> {
        Lin::konst(0).add_scaled(self, c)
    }
    pub fn plus(&self, k: i64) -> Lin {
        let mut l = *self;
        l.k = wrap(l.k.wrapping_add(k));
        l
    }
    /// Trailing zero bits every value of the form has, given those of its symbols.
    pub fn alignment(&self, of: impl Fn(Sym) -> u32) -> u32 {
        let mut a = if self.k == 0 {
            64
        } else {
            self.k.trailing_zeros()
        };
        for &(s, c) in self.terms() {
            a = a.min(c.trailing_zeros() + of(s));
        }
        a
    }
    /// The form with terms whose every value is a multiple of 2^bits dropped.
    pub fn modulo(&self, bits: u32, of: impl Fn(Sym) -> u32) -> Lin {
        let mut l = Lin::konst(self.k & ((1i64 << bits) - 1));
        let kept: Vec<(Sym, i64)> = self
            .terms()
            .iter()
            .copied()
            .filter(|&(s, c)| c.trailing_zeros() + of(s) < bits)
            .collect();
        l.n = kept.len() as u8;
        l.t[..kept.len()].copy_from_slice(&kept);
        l
    }
}

/// Sign-extends the low 32 bits: register arithmetic wraps at 32 bits.
pub fn wrap(v: i64) -> i64 {
    v as i32 as i64
}

/// A register's value: a linear form, or not known at all.
pub type Val = Option<Lin>;

/// The comparisons of ISETP, on `a - b` against zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rel {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Rel {
    pub fn parse(m: &str) -> Option<Rel> {
        Some(match m {
            "EQ" => Rel::Eq,
            "NE" => Rel::Ne,
            "LT" => Rel::Lt,
            "LE" => Rel::Le,
            "GT" => Rel::Gt,
            "GE" => Rel::Ge,
            _ => return None,
        })
    }
    pub fn negate(self) -> Rel {
        match self {
            Rel::Eq => Rel::Ne,
            Rel::Ne => Rel::Eq,
            Rel::Lt => Rel::Ge,
            Rel::Le => Rel::Gt,
            Rel::Gt => Rel::Le,
            Rel::Ge => Rel::Lt,
        }
    }
    /// The same relation with its operands swapped (`a < b` is `b > a`).
    pub fn swap(self) -> Rel {
        match self {
            Rel::Lt => Rel::Gt,
            Rel::Le => Rel::Ge,
            Rel::Gt => Rel::Lt,
            Rel::Ge => Rel::Le,
            r => r,
        }
    }
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            Rel::Eq => a == b,
            Rel::Ne => a != b,
            Rel::Lt => a < b,
            Rel::Le => a <= b,
            Rel::Gt => a > b,
            Rel::Ge => a >= b,
        }
    }
}

/// `a rel b` on two values, signed or unsigned, as a predicate may hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cond {
    pub a: Lin,
    pub b: Lin,
    pub rel: Rel,
    pub unsigned: bool,
}

impl Cond {
    pub fn negate(self) -> Cond {
        Cond {
            rel: self.rel.negate(),
            ..self
        }
    }
    /// The same comparison with its operands the other way round (`a < b` as `b > a`).
    pub fn swapped(self) -> Cond {
        Cond {
            a: self.b,
            b: self.a,
            rel: self.rel.swap(),
            unsigned: self.unsigned,
        }
    }
    pub fn mentions(&self, f: impl Fn(Sym) -> bool + Copy) -> bool {
        self.a.mentions(f) || self.b.mentions(f)
    }
}

/// The interval a form takes when each symbol ranges over `range(sym)`; None when a symbol has
/// none.
pub fn interval(l: &Lin, range: impl Fn(Sym) -> Option<(i64, i64)>) -> Option<(i64, i64)> {
    let (mut lo, mut hi) = (l.k, l.k);
    for &(s, c) in l.terms() {
        let (a, b) = range(s)?;
        let (x, y) = (a.checked_mul(c)?, b.checked_mul(c)?);
        lo = lo.checked_add(x.min(y))?;
        hi = hi.checked_add(x.max(y))?;
    }
    Some((lo, hi))
}

/// A value the analysis only names, kept with the form it was made of, so that its bound follows
/// what a later path knows of that form's thread indices (`(tid >> 2) & ~3` made before a branch
/// on `tid < 256` is below 64 after it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Derived {
    /// `x >> s`, logical.
    Shr(Lin, u32),
    /// `x & m`.
    And(Lin, u32),
}

impl Derived {
    /// The form it was made of.
    pub fn form(&self) -> &Lin {
        let (Derived::Shr(x, _) | Derived::And(x, _)) = self;
        x
    }
    /// Its range, from the range `span` gives its form; when that form is not negative.
    pub fn range(&self, span: impl Fn(&Lin) -> Option<(i64, i64)>) -> Option<(i64, i64)> {
        let (lo, hi) = span(self.form()).filter(|r| r.0 >= 0)?;
        Some(match *self {
            Derived::Shr(_, s) => (lo >> s, hi >> s),
            // at most the mask and the form, and a multiple of the mask's lowest bit
            Derived::And(_, m) => {
                let k = m.trailing_zeros();
                (0, (hi.min(i64::from(m)) >> k) << k)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_add_cancel_and_wrap() {
        let t = Lin::sym(Sym::special("SR_TID.X").unwrap());
        let phi = Lin::sym(Sym::phi(3, 13));
        let head = phi.plus(3);
        // head + ~tail = head - tail - 1
        let not_tail = phi.scale(-1).unwrap().plus(-1);
        assert_eq!(head.add(&not_tail).unwrap().as_const(), Some(2));
        let a = t.scale(16).unwrap().plus(0x400);
        assert_eq!(
            a.sub(&t.scale(16).unwrap()).unwrap().as_const(),
            Some(0x400)
        );
        assert_eq!(Lin::konst(0xffff_ffff).k, -1);
        assert_eq!(
            interval(&a, |_| Some((0, 1023))),
            Some((0x400, 0x400 + 16 * 1023))
        );
        assert_eq!(Sym::def(7, 2).kind(), Kind::Def { index: 7, slot: 2 });
        assert_eq!(Sym::phi(9, 300).kind(), Kind::Phi { block: 9, reg: 300 });
        assert_eq!(
            Sym::param(0, 0x170).kind(),
            Kind::Param {
                bank: 0,
                offset: 0x170
            }
        );
    }

    #[test]
    fn masks_drop_aligned_terms() {
        let h = Sym::def(1, 0);
        let v = Lin::sym(h).scale(-1).unwrap().plus(2);
        let aligned = |s: Sym| if s == h { 16 } else { 0 };
        assert_eq!(v.modulo(8, aligned).as_const(), Some(2));
        assert_eq!(v.alignment(aligned), 1);
    }
}
