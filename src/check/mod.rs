//! Validation: comparison of GPU outputs with the f64 reference and with the sequential baseline,
//! and the suite that `tilepipe check` runs.

pub mod cases;
pub mod compare;
pub mod outcome;
mod probe_runs;
pub mod sanitize;
pub mod suite;

pub use compare::{Verdict, WrongElement};
