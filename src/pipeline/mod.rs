//! The pipelines: the movement mechanisms as data (what each needs, claims and relies on), the
//! controls that break one protocol step on purpose, the control block every pipeline kernel
//! shares, what an instrumented build adds, and the variants built from them. The loops
//! themselves are `kernels/pipeline/<mechanism>.cuh`, one per mechanism, shared by every workload.

pub mod handover;
mod instrument;
mod mechanism;
mod variant;

pub use instrument::{Instrument, STRESS_BOTH};
pub use mechanism::{Claim, Control, Ctl, McaForm, Mechanism};
pub use variant::{Pipe, PipeBuild, Variant};
