//! The rows of O the reference checks: every row of a small problem, a sample of a large one.

use super::Problem;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// Problems up to this many multiply-adds (b h s^2 d) are checked on every row.
const FULL_CHECK_MACS: u64 = 1 << 27;
/// Heads and rows per head a sampled check visits.
const SAMPLED_HEADS: usize = 8;
const SAMPLED_ROWS: usize = 64;

/// The (head, query row) pairs the reference checks: all of them when small; else the first and
/// last heads and random ones, and in each the first and last 8 rows (tails), the rows on either
/// side of a 64-row tile edge and random ones.
pub fn checked_rows(p: &Problem, seed: u64) -> Vec<(usize, usize)> {
    let (heads, s) = (p.heads_total(), p.seqlen);
    let macs = heads as u64 * s as u64 * s as u64 * p.head_dim as u64;
    if macs <= FULL_CHECK_MACS {
        return (0..heads)
            .flat_map(|h| (0..s).map(move |i| (h, i)))
            .collect();
    }
    let mut rng = SmallRng::seed_from_u64(seed ^ 0xA77E);
    let mut hs: Vec<usize> = vec![0, heads - 1];
    while hs.len() < SAMPLED_HEADS.min(heads) {
        hs.push(rng.random_range(0..heads));
    }
    hs.sort_unstable();
    hs.dedup();
    let mut out = Vec::new();
    for h in hs {
        let mut rows: Vec<usize> = (0..8.min(s)).chain(s.saturating_sub(8)..s).collect();
        rows.extend([63, 64, 127, 128].into_iter().filter(|&r| r < s));
        while rows.len() < SAMPLED_ROWS.min(s) {
            rows.push(rng.random_range(0..s));
        }
        rows.sort_unstable();
        rows.dedup();
        out.extend(rows.into_iter().map(|i| (h, i)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    #[test]
    fn large_problems_sample_tails_and_tile_edges_of_the_first_and_last_heads() {
        let p = Problem::new(4, 8, 4099, 128, false, DType::F16).unwrap();
        let rows = checked_rows(&p, 3);
        for want in [(0, 0), (0, 4098), (31, 63), (31, 64), (31, 4091)] {
            assert!(rows.contains(&want), "{want:?}");
        }
        assert!(rows.len() <= SAMPLED_HEADS * SAMPLED_ROWS);
        assert_eq!(rows, checked_rows(&p, 3));
    }
}
