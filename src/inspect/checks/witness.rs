//! A finding's path, from the path states the analysis linked: the blocks it runs through, and
//! the instructions it runs (for naming the copy, commit and wait on it).

use super::Ctx;
use crate::inspect::flow::paths::{Paths, Witness};

/// The offset of each block on the path to `w`.
pub fn offsets(c: &Ctx, paths: &Paths, w: Witness) -> Vec<u32> {
    paths
        .chain(w)
        .iter()
        .map(|x| c.ins()[c.cfg.blocks[x.block].instructions[0]].offset)
        .collect()
}

/// The instructions the path to `w` runs, up to (not including) `upto` in the last block; an
/// instruction whose guard the path does not know is taken as run.
pub fn executed(c: &Ctx, paths: &Paths, w: Witness, upto: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for x in paths.chain(w) {
        let preds = paths.preds(x);
        for &i in &c.cfg.blocks[x.block].instructions {
            if x == w && i == upto {
                return out;
            }
            if preds.guard(c.cfg.ops[i].guard) != Some(false) {
                out.push(i);
            }
        }
    }
    out
}
