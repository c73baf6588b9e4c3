//! Control flow and values of one kernel's SASS: the graph with the predicate each edge needs
//! (`cfg`), operands decoded once (`decode`) and what each instruction writes (`writes`),
//! register values as linear forms (`lin`, `semantics`, `ranges`, `values`, one instruction's
//! effect on them in `transfer`), and the analysis over feasible paths the checks run on
//! (`paths`).

pub mod cfg;
pub mod chunk;
pub mod decode;
pub mod lin;
pub mod paths;
pub mod preds;
pub mod ranges;
pub mod semantics;
pub mod transfer;
pub mod values;
pub mod writes;

pub use cfg::Cfg;
