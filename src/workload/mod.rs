//! Workloads: the host side of each (shapes, seeded inputs, f64 reference). The kernels live in
//! `kernels/`; only `rmsnorm` exists so far.

pub mod rmsnorm;

pub use rmsnorm::{HostData, View};
