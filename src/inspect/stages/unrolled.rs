//! The tiles one trip around a loop consumes, which is more than one where the compiler
//! unrolled the loop: each tile is waited for before its shared memory is read, so a tile is a
//! wait that a shared read follows before the next wait (a run of waits with no read between,
//! such as an mbarrier try-wait and its retry, is one), counted around the trip.

use super::{CAP, Loop, Ring, reads_shared};
use crate::inspect::flow::Cfg;
use std::collections::BTreeSet;

/// Where a path around a loop stands between the ring's waits and the shared reads they guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Walk {
    /// Waits (runs of waits) that a shared read followed: the tiles consumed so far.
    tiles: u32,
    /// A wait that no shared read has followed yet.
    waiting: bool,
    /// What the trip met first: a wait (true) or a shared read (false).
    first: Option<bool>,
}

/// The tiles each path around the loop consumes: its waits that a shared read follows, a run
/// of waits with no read between counting once, around the trip (a wait at the end of a trip
/// that starts with its reads is the next trip's tile).
pub(super) fn tiles_per_trip(cfg: &Cfg, ring: Ring, l: &Loop) -> BTreeSet<u32> {
    let n = cfg.blocks.len();
    let mut at_start: Vec<BTreeSet<Walk>> = vec![BTreeSet::new(); n];
    let mut at_end: Vec<BTreeSet<Walk>> = vec![BTreeSet::new(); n];
    at_start[l.header].insert(Walk {
        tiles: 0,
        waiting: false,
        first: None,
    });
    let mut todo = vec![l.header];
    while let Some(b) = todo.pop() {
        let end: BTreeSet<Walk> = at_start[b]
            .iter()
            .map(|&w| {
                cfg.blocks[b].instructions.iter().fold(w, |mut w, &i| {
                    let op = &cfg.ops[i];
                    if ring.waits(op) {
                        w.waiting = true;
                        w.first.get_or_insert(true);
                    } else if reads_shared(op) {
                        if w.waiting {
                            w.tiles = (w.tiles + 1).min(CAP);
                            w.waiting = false;
                        }
                        w.first.get_or_insert(false);
                    }
                    w
                })
            })
            .collect();
        for e in &cfg.blocks[b].edges {
            let t = e.to;
            if l.body.contains(&t) && t != l.header {
                let before = at_start[t].len();
                at_start[t].extend(end.iter().copied());
                if at_start[t].len() != before {
                    todo.push(t);
                }
            }
        }
        at_end[b] = end;
    }
    l.latches
        .iter()
        .flat_map(|&b| &at_end[b])
        .map(|w| w.tiles + u32::from(w.waiting && w.first == Some(false)))
        .collect()
}
