//! tilepipe: builds, validates and measures asynchronous-copy tile pipelines on NVIDIA GPUs.
//!
//! The library holds everything and never prints: progress and test lines go through
//! `progress::Progress`; the binary (`main.rs`, `src/cli/`) parses the command line and prints.
//! The `gpu` module owns all `unsafe` code. Layers, top down: `commands` (the main job's steps
//! for any workload) over `engine` (build, prepare, validate, time, isolate, trace) over
//! `workload` (each workload's problem, variants, data, judgement) and `pipeline` (mechanisms,
//! controls, variants), `evidence` (SASS, resources) and `gpu`; `results` (plain data),
//! `render` (every output format, reading results only) and `verdict` (pure judgements and
//! statistics) stand apart. Host-only parts work and are tested without a GPU.

pub mod arch;
pub mod clocks;
pub mod commands;
pub mod dtype;
pub mod engine;
pub mod error;
pub mod evidence;
pub mod fsio;
pub mod gpu;
pub mod inspect;
pub mod interrupt;
pub mod meminfo;
pub mod model;
pub mod monitor;
pub mod peers;
pub mod pipeline;
pub mod progress;
pub mod queue_lab;
pub mod render;
pub mod results;
pub mod toolchain;
pub mod verdict;
pub mod workload;

pub use error::{Error, Result};

/// The package version and the commit it was built from: "0.1.0 (930eb83)", with "+changes"
/// when the built sources differed from that commit, "unknown" when built outside a checkout.
pub const VERSION: &str = env!("TILEPIPE_VERSION");
