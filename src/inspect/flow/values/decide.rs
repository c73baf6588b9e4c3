//! Whether a comparison holds on a path: from the values alone (constants, the ranges their
//! unknowns take) or from the comparisons the path took.

use super::super::lin::{Cond, Lin, Rel};
use super::{SymInfo, Values};

impl Values {
    /// Whether `c` holds on this path, and whether that rests on the comparisons the path took
    /// (`by_path`) rather than on the values alone; None when it cannot be told. A fact is
    /// matched with its operands either way round (`UR15 != 0` then `0 != UR15`).
    pub fn decide(&self, c: &Cond, info: &dyn SymInfo) -> Option<(bool, bool)> {
        if let Some(v) = self.by_values(c, info, false) {
            return Some((v, false));
        }
        self.by_values(c, info, true)
            .or_else(|| self.by_values(&c.swapped(), info, true))
            .map(|v| (v, true))
    }

    fn by_values(&self, c: &Cond, info: &dyn SymInfo, facts: bool) -> Option<bool> {
        if let (Some(a), Some(b)) = (c.a.as_const(), c.b.as_const()) {
            return Some(if c.unsigned {
                c.rel.holds(a as u32 as i64, b as u32 as i64)
            } else {
                c.rel.holds(a, b)
            });
        }
        let d = c.a.sub(&c.b)?;
        if c.unsigned {
            // only equality survives without knowing the operands' magnitudes
            return match (d.as_const(), c.rel) {
                (Some(0), Rel::Eq | Rel::Le | Rel::Ge) => Some(true),
                (Some(0), _) => Some(false),
                (Some(_), Rel::Eq) => Some(false),
                (Some(_), Rel::Ne) => Some(true),
                _ if facts => self.by_facts(c, &d),
                _ => None,
            };
        }
        let (mut lo, mut hi) = self.span(&d, info).unwrap_or((i64::MIN, i64::MAX));
        for f in self.facts.iter().filter(|f| facts && !f.unsigned) {
            let Some(df) = f.a.sub(&f.b) else { continue };
            let Some(shift) = df.sub(&d).and_then(|x| x.as_const()) else {
                continue;
            };
            // d = df - shift, and df rel 0
            let (a, b) = match f.rel {
                Rel::Eq => (0, 0),
                Rel::Lt => (i64::MIN, -1),
                Rel::Le => (i64::MIN, 0),
                Rel::Gt => (1, i64::MAX),
                Rel::Ge => (0, i64::MAX),
                Rel::Ne if shift == 0 => match c.rel {
                    Rel::Eq => return Some(false),
                    Rel::Ne => return Some(true),
                    _ => continue,
                },
                Rel::Ne => continue,
            };
            lo = lo.max(a.saturating_sub(shift));
            hi = hi.min(b.saturating_sub(shift));
        }
        let all = |f: &dyn Fn(i64) -> bool| f(lo) && f(hi) && (lo..=hi).size_hint().0 > 0;
        let test = |x: i64| c.rel.holds(x, 0);
        if lo > hi {
            return None;
        }
        match c.rel {
            Rel::Eq | Rel::Ne if lo == hi => Some(test(lo)),
            Rel::Eq if lo > 0 || hi < 0 => Some(false),
            Rel::Ne if lo > 0 || hi < 0 => Some(true),
            Rel::Eq | Rel::Ne => None,
            _ if all(&test) => Some(true),
            _ if !test(lo) && !test(hi) => Some(false),
            _ => None,
        }
    }

    fn by_facts(&self, c: &Cond, d: &Lin) -> Option<bool> {
        self.facts.iter().find_map(|f| {
            let same = f.unsigned == c.unsigned && f.a.sub(&f.b).as_ref() == Some(d);
            if !same {
                return None;
            }
            if f.rel == c.rel {
                Some(true)
            } else if f.rel == c.rel.negate() {
                Some(false)
            } else {
                None
            }
        })
    }
}
