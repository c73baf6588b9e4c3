//! tilepipe: builds, validates and measures asynchronous-copy tile pipelines on NVIDIA GPUs.
//!
//! The library holds everything and never prints: progress and test lines go through
//! `progress::Progress`; the binary (`main.rs`, `src/cli/`) parses the command line and prints.
//! The `gpu` module owns all `unsafe` code. Host-only parts (reference math, comparison, SASS
//! parsing, occupancy arithmetic, statistics, the pipeline model, the queue lab, report rendering)
//! work and are tested without a GPU.

pub mod arch;
pub mod bench;
pub mod check;
pub mod child;
pub mod clocks;
pub mod dtype;
pub mod engine;
pub mod error;
pub mod fsio;
pub mod gemm;
pub mod gpu;
pub mod harness;
pub mod inspect;
pub mod interrupt;
pub mod kernels;
pub mod mechanism;
pub mod meminfo;
pub mod model;
pub mod monitor;
pub mod peers;
pub mod plot;
pub mod progress;
pub mod queue_lab;
pub mod report;
pub mod resources;
pub mod run;
pub mod sass;
pub mod sweep;
pub mod timeline;
pub mod toolchain;
pub mod variant;
pub mod workload;

pub use error::{Error, Result};
