//! The stages of straight-line code: copies issued and waited for where no loop issues them (a
//! K loop the compiler unrolled whole). There is no back edge to count at, so the count is
//! taken where each tile is read: the groups (fills) still in flight at the shared reads that
//! follow a wait, in tiles of the groups one tile commits, plus the tile read.

use super::{CAP, Event, Ring, apply, back_edges, max, reads_shared};
use crate::inspect::flow::Cfg;
use std::collections::BTreeSet;

/// Where a path stands: the groups in flight, and the groups committed since its last wait
/// (None before its first: those are the tiles issued ahead).
type At = (u32, Option<u32>);

/// What the paths from the entry show, over the graph without its back edges (a loop that
/// issues no copy adds none by going round again).
#[derive(Default)]
struct Seen {
    /// The groups in flight at each shared read that follows a wait, as a set of counts.
    at_reads: u64,
    /// The groups committed between two consecutive waits, where some were.
    per_tile: BTreeSet<u32>,
}

fn walk(cfg: &Cfg, ring: Ring) -> Seen {
    let back = back_edges(cfg);
    let n = cfg.blocks.len();
    let mut at_start: Vec<BTreeSet<At>> = vec![BTreeSet::new(); n];
    at_start[0].insert((0, None));
    let mut seen = Seen::default();
    let mut todo = vec![0usize];
    while let Some(b) = todo.pop() {
        let mut end: BTreeSet<At> = BTreeSet::new();
        for &(mut count, mut since) in &at_start[b] {
            for &i in &cfg.blocks[b].instructions {
                let op = &cfg.ops[i];
                match ring.event(op) {
                    Some(Event::Add) => {
                        count = (count + 1).min(CAP);
                        since = since.map(|s| (s + 1).min(CAP));
                    }
                    Some(e) => {
                        if let Some(s) = since.filter(|&s| s > 0) {
                            seen.per_tile.insert(s);
                        }
                        count = max(apply(1 << count, e)).unwrap_or(0);
                        since = Some(0);
                    }
                    None if since.is_some() && reads_shared(op) => seen.at_reads |= 1 << count,
                    None => {}
                }
            }
            end.insert((count, since));
        }
        for e in &cfg.blocks[b].edges {
            let t = e.to;
            if !back.contains(&(b, t)) {
                let before = at_start[t].len();
                at_start[t].extend(end.iter().copied());
                if at_start[t].len() != before {
                    todo.push(t);
                }
            }
        }
    }
    seen
}

/// The stages straight-line copies keep, with how they were read, or why they cannot be told.
/// `loops`: the kernel has loops, none of which issues these copies.
pub(super) fn depth(cfg: &Cfg, ring: Ring, loops: bool) -> Result<(u32, String), String> {
    let unit = ring.unit();
    let waits = cfg
        .blocks
        .iter()
        .flat_map(|b| &b.instructions)
        .filter(|&&i| ring.waits(&cfg.ops[i]))
        .count();
    let lead = match loops {
        false => "no loop: straight-line copies",
        true => "no loop issues the copies: straight-line copies",
    };
    let seen = walk(cfg, ring);
    let Some(most) = max(seen.at_reads) else {
        return Err(format!(
            "{lead}, {waits} wait(s), and no shared read follows a wait: what the {unit} feed is not shown"
        ));
    };
    if most >= CAP {
        return Err(format!(
            "{lead}: the {unit} in flight grow without bound: some are never waited for"
        ));
    }
    if most == 0 {
        return Ok((
            1,
            format!(
                "{lead}, {waits} wait(s), each leaves 0 {unit} in flight before the shared reads: each tile is waited for before it is read"
            ),
        ));
    }
    let per = match seen.per_tile.iter().collect::<Vec<_>>()[..] {
        [&p] => p,
        [] => {
            return Err(format!(
                "{lead}, {waits} wait(s), {most} {unit} in flight at a shared read, and no commits between consecutive waits tell how many one tile takes"
            ));
        }
        _ => {
            return Err(format!(
                "{lead}, {waits} wait(s), {most} {unit} in flight at a shared read, and the commits between consecutive waits differ ({:?}): no one size of tile",
                seen.per_tile
            ));
        }
    };
    if most % per != 0 {
        return Err(format!(
            "{lead}, {waits} wait(s): {most} {unit} in flight at a shared read, not a whole number of tiles of {per}"
        ));
    }
    let ahead = most / per;
    Ok((
        ahead + 1,
        format!(
            "{lead}, {waits} wait(s), at most {most} {unit} in flight at the shared reads after a wait, {per} per tile (the commits between consecutive waits): {ahead} tile(s) in flight ahead of the one read"
        ),
    ))
}
