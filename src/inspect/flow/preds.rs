//! The predicates one path knows true or false, and which of them it only supposes (a branch or
//! a guard taken one way).

use super::decode::{self, Guard, Pred};

/// Predicates known true or false on a path (part of what tells paths apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Preds {
    known: u16,
    value: u16,
    /// Known only because the path took a branch or a guard one way, not from values.
    assumed: u16,
}

impl Preds {
    pub fn get(&self, p: Pred) -> Option<bool> {
        if decode::always(p) {
            return Some(true);
        }
        (self.known >> p & 1 == 1).then_some(self.value >> p & 1 == 1)
    }
    /// `p` is `v`, as the values say.
    pub fn set(&mut self, p: Pred, v: bool) {
        if decode::always(p) {
            return;
        }
        self.known |= 1 << p;
        self.assumed &= !(1 << p);
        self.value = (self.value & !(1 << p)) | (u16::from(v) << p);
    }
    /// `p` is taken to be `v` (a branch or guard one way); known already, nothing changes.
    pub fn suppose(&mut self, p: Pred, v: bool) {
        if self.get(p).is_none() {
            self.set(p, v);
            self.assumed |= 1 << p;
        }
    }
    pub fn supposed(&self, p: Pred) -> bool {
        self.assumed >> p & 1 == 1
    }
    pub fn forget(&mut self, p: Pred) {
        if !decode::always(p) {
            self.known &= !(1 << p);
            self.assumed &= !(1 << p);
        }
    }
    pub fn forget_all(&mut self) {
        self.known = 0;
        self.assumed = 0;
    }
    /// Keeps only the predicates in `mask`.
    pub fn keep(&mut self, mask: u16) {
        self.known &= mask;
        self.value &= mask;
        self.assumed &= mask;
    }
    /// The guard's value on this path: Some(executes) when known.
    pub fn guard(&self, g: Guard) -> Option<bool> {
        match g {
            Guard::Always => Some(true),
            Guard::Never => Some(false),
            Guard::If { p, not } => self.get(p).map(|v| v != not),
        }
    }
}
