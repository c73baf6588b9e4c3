//! The timeline of an instrumented build: per sampled block and tile, when the copy was issued,
//! when the consumer saw it ready, when compute began and ended, when the slot was released; and,
//! where the compute body records them (attention's wgmma body), per consumer warpgroup when its
//! MMAs were issued and retired around its softmax. Decoded from the device buffer, exported as a
//! Chrome trace, drawn as SVG, and reduced to overlap figures: the share of copy-in-flight time
//! that ran under compute, and of softmax time that ran under MMAs in flight.

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
    /// Where the compute body records its MMAs and softmax: how much of the softmax they hid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub softmax: Option<SoftmaxOverlap>,
}

/// Each timeline's variant name and decoded blocks, as the renderers take them.
pub fn named(tl: &[TimelineResult]) -> Vec<(String, Vec<BlockTrace>)> {
    tl.iter()
        .map(|t| (t.variant.clone(), t.blocks.clone()))
        .collect()
}

/// Events per tile, in the order the kernel records them (EV_* in kernels/rmsnorm.cu).
pub const EVENTS: [&str; 5] = ["issue", "ready", "compute_begin", "compute_end", "release"];
/// The compute body's events per consumer warpgroup, after the ring's (EV_BODY in
/// kernels/common/hooks.cuh; attention's wgmma body records them).
pub const BODY: [&str; 5] = [
    "s_issued",
    "s_retired",
    "softmax_end",
    "pv_issued",
    "pv_retired",
];
/// Consumer warpgroups whose body events the buffer holds.
pub const WARPGROUPS: usize = 2;
/// Events a tile holds in the device buffer.
pub const SLOTS: usize = EVENTS.len() + WARPGROUPS * BODY.len();
/// Words per event: %globaltimer (ns) and clock64 (cycles).
pub const WORDS: usize = 2;

/// An event: (globaltimer ns, clock64 cycles), None where not recorded.
pub type At = Option<(u64, u64)>;

/// One tile's events: the ring's, and the body's per consumer warpgroup where it records them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TileEvents {
    pub k: usize,
    pub at: [At; 5],
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub body: Vec<[At; 5]>,
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

/// Decodes the device buffer: blocks x tiles x SLOTS events x WORDS u64, 0 meaning "not
/// recorded". A tile keeps the body events of the warpgroups up to the last that recorded any.
pub fn decode(raw: &[u64], blocks: usize, tiles: usize) -> Vec<BlockTrace> {
    assert_eq!(raw.len(), blocks * tiles * SLOTS * WORDS);
    (0..blocks)
        .map(|b| BlockTrace {
            block: b,
            tiles: (0..tiles)
                .map(|k| {
                    let event = |ev: usize| {
                        let i = ((b * tiles + k) * SLOTS + ev) * WORDS;
                        (raw[i] != 0).then(|| (raw[i], raw[i + 1]))
                    };
                    let mut body: Vec<[At; 5]> = (0..WARPGROUPS)
                        .map(|g| std::array::from_fn(|e| event(EVENTS.len() + g * BODY.len() + e)))
                        .collect();
                    while body.last().is_some_and(|g| g.iter().all(Option::is_none)) {
                        body.pop();
                    }
                    TileEvents {
                        k,
                        at: std::array::from_fn(event),
                        body,
                    }
                })
                .filter(|t| t.at.iter().any(Option::is_some) || !t.body.is_empty())
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

/// A warpgroup's spans in a block, in its SM's cycles: its MMAs in flight (S = Q K^T from issue
/// to retirement, P V likewise) and its softmax (S retired to the softmax's end).
pub fn body_spans(b: &BlockTrace, g: usize) -> (Spans, Spans) {
    let span = |t: &TileEvents, from: usize, to: usize| {
        let e = t.body.get(g)?;
        Some((e[from]?.1, e[to]?.1))
    };
    let mma = b
        .tiles
        .iter()
        .flat_map(|t| [span(t, 0, 1), span(t, 3, 4)])
        .flatten()
        .collect();
    let softmax = b.tiles.iter().filter_map(|t| span(t, 1, 2)).collect();
    (mma, softmax)
}

/// How much of the consumer warpgroups' softmax time ran while MMAs were in flight: their own
/// (a tile's softmax beside the previous tile's P V, inside one warpgroup) or the other
/// warpgroup's (ping-pong, or two warpgroups that merely drift apart).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SoftmaxOverlap {
    pub softmax_cycles: u64,
    pub under_own_mma: u64,
    pub under_other_mma: u64,
}

impl SoftmaxOverlap {
    pub fn own_share(&self) -> f64 {
        self.under_own_mma as f64 / self.softmax_cycles.max(1) as f64
    }
    pub fn other_share(&self) -> f64 {
        self.under_other_mma as f64 / self.softmax_cycles.max(1) as f64
    }
}

/// The softmax figure over all sampled blocks, None where no body recorded a softmax.
pub fn softmax_overlap(blocks: &[BlockTrace]) -> Option<SoftmaxOverlap> {
    let mut o = SoftmaxOverlap {
        softmax_cycles: 0,
        under_own_mma: 0,
        under_other_mma: 0,
    };
    for b in blocks {
        let spans: Vec<(Spans, Spans)> = (0..WARPGROUPS).map(|g| body_spans(b, g)).collect();
        for (g, (mma, softmax)) in spans.iter().enumerate() {
            o.softmax_cycles += union_len(softmax.clone());
            o.under_own_mma += overlap_len(softmax, mma);
            let others: Spans = spans
                .iter()
                .enumerate()
                .filter(|(h, _)| *h != g)
                .flat_map(|(_, (m, _))| m.iter().copied())
                .collect();
            o.under_other_mma += overlap_len(softmax, &others);
        }
    }
    (o.softmax_cycles > 0).then_some(o)
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
        body: Vec::new(),
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
        let mut raw = vec![0u64; blocks * tiles * SLOTS * WORDS];
        // block 1, tile 2, event "ready"
        let i = ((tiles + 2) * SLOTS + 1) * WORDS;
        raw[i] = 777;
        raw[i + 1] = 42;
        let d = decode(&raw, blocks, tiles);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].block, 1);
        assert_eq!(d[0].tiles[0].k, 2);
        assert_eq!(d[0].tiles[0].at[1], Some((777, 42)));
        assert_eq!(d[0].tiles[0].at[0], None);
        assert!(d[0].tiles[0].body.is_empty(), "no body events recorded");
        // warpgroup 0's softmax end of block 0, tile 1: its body, none of warpgroup 1's
        let i = (SLOTS + EVENTS.len() + 2) * WORDS;
        raw[i] = 900;
        raw[i + 1] = 50;
        let d = decode(&raw, blocks, tiles);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].tiles[0].k, 1);
        assert_eq!(d[0].tiles[0].body.len(), 1);
        assert_eq!(d[0].tiles[0].body[0][2], Some((900, 50)));
    }

    /// A tile whose warpgroups' body events are `g[w]` cycles (S issued, S retired, softmax end,
    /// P V issued, P V retired).
    fn body(k: usize, g: &[[u64; 5]]) -> TileEvents {
        TileEvents {
            k,
            at: [None; 5],
            body: g.iter().map(|e| e.map(|c| Some((c, c)))).collect(),
        }
    }

    #[test]
    fn the_softmax_is_hidden_only_by_mmas_in_flight_beside_it() {
        // in turn: S 0..10, softmax 10..30, P V 30..40; no MMA of its own under the softmax
        let seq = BlockTrace {
            block: 0,
            tiles: vec![
                body(0, &[[0, 10, 30, 30, 40]]),
                body(1, &[[40, 50, 70, 70, 80]]),
            ],
        };
        let o = softmax_overlap(&[seq]).unwrap();
        assert_eq!(
            (o.softmax_cycles, o.under_own_mma, o.under_other_mma),
            (40, 0, 0)
        );
        // overlapped: tile 0's P V issued at 42 beside tile 1's S and retired at 75, inside
        // tile 1's softmax 50..70; tile 1's own P V (85..95) after it
        let ov = BlockTrace {
            block: 0,
            tiles: vec![
                body(0, &[[0, 10, 30, 42, 75]]),
                body(1, &[[40, 50, 70, 85, 95]]),
            ],
        };
        let o = softmax_overlap(&[ov]).unwrap();
        assert_eq!((o.softmax_cycles, o.under_own_mma), (40, 20));
        assert!((o.own_share() - 0.5).abs() < 1e-12);
        // two warpgroups in turns: one's softmax under the other's MMAs
        let pp = BlockTrace {
            block: 0,
            tiles: vec![body(0, &[[0, 10, 30, 30, 40], [10, 20, 40, 40, 50]])],
        };
        let o = softmax_overlap(&[pp]).unwrap();
        assert_eq!(
            (o.softmax_cycles, o.under_own_mma, o.under_other_mma),
            (40, 0, 10 + 10)
        );
        // no body events: no figure
        let ring = BlockTrace {
            block: 0,
            tiles: vec![tile(0, [0, 10, 10, 30, 30])],
        };
        assert_eq!(softmax_overlap(&[ring]), None);
    }
}
