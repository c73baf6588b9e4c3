//! The commands of the main job, for any workload (the command line visits the one the user
//! named): `run`, `check`, `probe`, `sass`, `sweep`, `timeline`. They return results; the command line
//! prints them.

pub mod check;
pub mod probe;
pub mod run;
pub mod sass;
pub mod sweep;
pub mod timeline;
