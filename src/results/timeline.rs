//! The timeline of an instrumented build: per sampled block and tile, when the copy was issued,
//! when the consumer saw it ready, when compute began and ended, when the slot was released.
//! Decoded from the device buffer, exported as a Chrome trace, drawn as SVG, and reduced to one
//! overlap figure: the share of copy-in-flight time that ran under compute.

use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// One variant's timeline from an instrumented build, beside its clean and instrumented times.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimelineResult {
    pub variant: String,
    pub overlap: Overlap,
    /// Median device time of the clean build and of the instrumented one (ms).
    pub clean_ms: f64,
    pub instrumented_ms: f64,
    pub overhead: f64,
    /// The instrumented build's output checked against the reference.
    pub verdict: Verdict,
    pub blocks: Vec<BlockTrace>,
}

/// Each timeline's variant name and decoded blocks, as the renderers take them.
pub fn named(tl: &[TimelineResult]) -> Vec<(String, Vec<BlockTrace>)> {
    tl.iter()
        .map(|t| (t.variant.clone(), t.blocks.clone()))
        .collect()
}

/// Events per tile, in the order the kernel records them (EV_* in kernels/rmsnorm.cu).
pub const EVENTS: [&str; 5] = ["issue", "ready", "compute_begin", "compute_end", "release"];
/// Words per event: %globaltimer (ns) and clock64 (cycles).
pub const WORDS: usize = 2;

/// One tile's events; each is (globaltimer ns, clock64 cycles), None where not recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TileEvents {
    pub k: usize,
    pub at: [Option<(u64, u64)>; 5],
}

impl TileEvents {
    fn cycles(&self, ev: usize) -> Option<u64> {
        self.at[ev].map(|(_, c)| c)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockTrace {
    pub block: usize,
    pub tiles: Vec<TileEvents>,
}

/// Decodes the device buffer: blocks x tiles x events x WORDS u64, 0 meaning "not recorded".
pub fn decode(raw: &[u64], blocks: usize, tiles: usize) -> Vec<BlockTrace> {
    assert_eq!(raw.len(), blocks * tiles * EVENTS.len() * WORDS);
    (0..blocks)
        .map(|b| BlockTrace {
            block: b,
            tiles: (0..tiles)
                .map(|k| {
                    let mut t = TileEvents {
                        k,
                        ..TileEvents::default()
                    };
                    for (ev, slot) in t.at.iter_mut().enumerate() {
                        let i = ((b * tiles + k) * EVENTS.len() + ev) * WORDS;
                        if raw[i] != 0 {
                            *slot = Some((raw[i], raw[i + 1]));
                        }
                    }
                    t
                })
                .filter(|t| t.at.iter().any(Option::is_some))
                .collect(),
        })
        .filter(|b| !b.tiles.is_empty())
        .collect()
}

/// Total length of the union of intervals.
fn union_len(mut iv: Vec<(u64, u64)>) -> u64 {
    iv.retain(|(a, b)| b > a);
    iv.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(u64, u64)> = None;
    for (a, b) in iv {
        cur = match cur {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

/// Length of (union of a) intersected with (union of b).
fn overlap_len(a: &[(u64, u64)], b: &[(u64, u64)]) -> u64 {
    // |A n B| = |A| + |B| - |A u B|
    let ua = union_len(a.to_vec());
    let ub = union_len(b.to_vec());
    let uab = union_len(a.iter().chain(b).copied().collect());
    ua + ub - uab
}

/// Closed-open spans [start, end) in one SM's cycles.
pub type Spans = Vec<(u64, u64)>;

/// Copy-in-flight [issue, ready] and compute [begin, end] intervals of a block, in its SM's cycles.
pub fn intervals(b: &BlockTrace) -> (Spans, Spans) {
    let copy = b
        .tiles
        .iter()
        .filter_map(|t| Some((t.cycles(0)?, t.cycles(1)?)))
        .collect();
    let compute = b
        .tiles
        .iter()
        .filter_map(|t| Some((t.cycles(2)?, t.cycles(3)?)))
        .collect();
    (copy, compute)
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Overlap {
    /// Share of copy-in-flight time that coincided with compute in the same block (0..1).
    pub share: f64,
    pub copy_cycles: u64,
    pub compute_cycles: u64,
    pub overlapped_cycles: u64,
}

/// The overlap figure over all sampled blocks (each block measured on its own SM clock).
pub fn overlap(blocks: &[BlockTrace]) -> Overlap {
    let (mut copy, mut compute, mut both) = (0, 0, 0);
    for b in blocks {
        let (c, k) = intervals(b);
        copy += union_len(c.clone());
        compute += union_len(k.clone());
        both += overlap_len(&c, &k);
    }
    Overlap {
        share: if copy > 0 {
            both as f64 / copy as f64
        } else {
            0.0
        },
        copy_cycles: copy,
        compute_cycles: compute,
        overlapped_cycles: both,
    }
}

/// A tile whose five events are `ev` cycles after a common start, for tests.
#[cfg(test)]
pub(crate) fn tile(k: usize, ev: [u64; 5]) -> TileEvents {
    TileEvents {
        k,
        at: ev.map(|c| Some((1000 + c, c))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_and_overlap_by_hand() {
        assert_eq!(union_len(vec![(0, 10), (5, 15), (20, 25)]), 20);
        assert_eq!(union_len(vec![(3, 3), (7, 5)]), 0);
        assert_eq!(overlap_len(&[(0, 10)], &[(5, 20)]), 5);
        assert_eq!(overlap_len(&[(0, 10), (30, 40)], &[(5, 35)]), 10);
    }

    #[test]
    fn sequential_trace_has_no_overlap_and_pipelined_has_some() {
        // sequential: copy 0..10, compute 10..30, copy 30..40, compute 40..60
        let seq = BlockTrace {
            block: 0,
            tiles: vec![tile(0, [0, 10, 10, 30, 30]), tile(1, [30, 40, 40, 60, 60])],
        };
        let o = overlap(&[seq]);
        assert_eq!((o.share, o.copy_cycles, o.compute_cycles), (0.0, 20, 40));
        // pipelined: tile 1 issued at 12 (during compute of tile 0, 10..30), ready at 22
        let pipe = BlockTrace {
            block: 0,
            tiles: vec![tile(0, [0, 10, 10, 30, 30]), tile(1, [12, 22, 30, 50, 50])],
        };
        let o = overlap(&[pipe]);
        assert_eq!(o.overlapped_cycles, 10);
        assert!((o.share - 0.5).abs() < 1e-12);
    }

    #[test]
    fn decode_skips_unrecorded_slots() {
        let (blocks, tiles) = (2, 3);
        let mut raw = vec![0u64; blocks * tiles * 5 * WORDS];
        // block 1, tile 2, event "ready"
        let i = ((tiles + 2) * 5 + 1) * WORDS;
        raw[i] = 777;
        raw[i + 1] = 42;
        let d = decode(&raw, blocks, tiles);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].block, 1);
        assert_eq!(d[0].tiles[0].k, 2);
        assert_eq!(d[0].tiles[0].at[1], Some((777, 42)));
        assert_eq!(d[0].tiles[0].at[0], None);
    }
}
