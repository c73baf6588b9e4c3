//! Validation shapes: the edges a pipeline schedule breaks on (tails, fewer tiles than stages, a
//! single tile, strided and offset views, blocks that own no tile, random trip counts), at a
//! given hidden size, each laid out against 16-byte chunks as the problem it stands for is (a view
//! whose rows start inside chunks is validated on views whose rows do, at the same offsets).

use super::{RowProblem, View};
use crate::dtype::DType;
use crate::workload::{Case, Grid};
use crate::{Error, Result};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// The problem `p` with another view.
fn on(p: &RowProblem, view: View) -> RowProblem {
    RowProblem { view, ..*p }
}

/// `p` on `tokens` rows with X's row stride and offset as given (plus `p`'s own remainders past
/// whole chunks, for X and its output: `View::like`).
fn like(p: &RowProblem, tokens: usize, stride: Option<usize>, offset: usize) -> Result<RowProblem> {
    Ok(on(
        p,
        View::like(&p.view, p.dtype, (tokens, stride, offset))?,
    ))
}

/// The shapes `run` validates at the user's hidden size before timing, the user's own view last
/// (its validated buffers stay for timing).
pub fn run_cases(p: &RowProblem) -> Result<Vec<Case<RowProblem>>> {
    let (h, tile_rows) = (p.view.hidden, p.tile_rows);
    let pad = 64 / p.dtype.size(); // 64 bytes: keeps every copy width aligned
    Ok(vec![
        Case::new(
            "tail tile, 8 blocks",
            like(p, tile_rows * 37 + 1, None, 0)?,
            Grid::Fixed(8),
        ),
        Case::new(
            "fewer tiles than stages",
            like(p, tile_rows + 1, None, 0)?,
            Grid::Persistent,
        ),
        Case::new(
            "strided + offset view",
            like(p, tile_rows * 20 + 1, Some(h + pad), pad)?,
            Grid::Fixed(4),
        ),
        Case::new("as given", *p, Grid::Persistent),
    ])
}

/// The hidden sizes the GPU suite covers: 4096 (rows of whole 16-byte vectors per thread) and
/// 1544 (a column tail: 1544 is not a multiple of 256 threads x 16 bytes).
pub const SUITE_HIDDEN: [usize; 2] = [4096, 1544];

/// The suite's groups of views whose rows start inside 16-byte chunks, at hidden `h`, each a
/// pattern its cases copy (`View::like`): X one element into a chunk with whole-chunk row strides
/// (every row at the same offset: TMA's case) writing an output three elements in; and row strides
/// one element past whole chunks for X and three for its output, so that their rows start at
/// every offset a chunk has (no tensor map describes them).
pub fn misaligned_groups(h: usize, dtype: DType) -> Result<Vec<(&'static str, View)>> {
    Ok(vec![
        (
            "rows inside chunks",
            View::new(1, h, None, 1, None, dtype)?.with_out(None, 3, dtype)?,
        ),
        (
            "rows of every alignment",
            View::new(1, h, Some(h + 1), 2, None, dtype)?.with_out(Some(h + 3), 5, dtype)?,
        ),
    ])
}

/// Random trip counts per block drawn for the suite (1 to 1000 tiles per block).
pub const TRIP_COUNTS: usize = 3;

/// The suite's shapes at one hidden size. Besides the fixed edges, `TRIP_COUNTS` launches of two
/// blocks whose trip counts k and k - 1 are drawn from 1..=1000 with `seed`: a ring that loses
/// track of its phase after some number of wraps, or drains wrongly for some remainder, shows
/// there. At hidden 1544 in 16-bit types a row has 193 vectors for 256 threads, so warp 7 owns no
/// data in any tile and still takes part in every barrier (divergent participation).
pub fn suite_cases(group: &RowProblem, seed: u64) -> Result<Vec<Case<RowProblem>>> {
    let (hidden, tile_rows) = (group.view.hidden, group.tile_rows);
    let pad = 64 / group.dtype.size();
    let v =
        |tokens: usize, stride: Option<usize>, offset: usize| like(group, tokens, stride, offset);
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x7121_C0DE ^ hidden as u64);
    let mut trips: Vec<Case<RowProblem>> = Vec::new();
    for _ in 0..TRIP_COUNTS {
        let k: usize = rng.random_range(1..=1000);
        // 2k - 1 tiles, the last one row: block 0 walks k tiles, block 1 walks k - 1
        trips.push(Case::new(
            &format!("random trip count: 2 blocks x {k} and {} tiles", k - 1),
            v(tile_rows * (2 * k - 2) + 1, None, 0)?,
            Grid::Fixed(2),
        ));
    }
    let mut cases = vec![
        Case::new(
            "tail tiles, 16 blocks walk ~30 tiles each",
            v(tile_rows * 480 + 1, None, 0)?,
            Grid::Fixed(16),
        ),
        Case::new(
            "strided + offset view",
            v(tile_rows * 64 + 3, Some(hidden + pad), pad)?,
            Grid::Fixed(8),
        ),
        Case::new("single tile", v(1, None, 0)?, Grid::Persistent),
        Case::new(
            "fewer tiles than stages",
            v(tile_rows * 2, None, 0)?,
            Grid::Fixed(1),
        ),
        Case::new(
            "blocks owning no tile",
            v(tile_rows * 5, None, 0)?,
            Grid::Idle(7),
        ),
        Case::new(
            "persistent grid",
            v(tile_rows * 4000 + 1, Some(hidden + pad), 0)?,
            Grid::Persistent,
        ),
    ];
    cases.extend(trips);
    Ok(cases)
}

/// The shapes of every stress run and control run, both strided and offset (so a wrong stride
/// shows) with a tail tile:
/// - four blocks walking ~16 tiles each, where random sleeps decide the interleaving;
/// - every SM loaded (persistent grid, about one tile per block), where the first tiles of all
///   blocks are requested at once and queue at device memory for microseconds: a read that does
///   not wait for its copy then finds the slot still unwritten, whatever the code between issue
///   and read.
///
/// Small, so that K runs on fresh inputs are cheap.
pub fn stress_cases(p: &RowProblem, sm_count: u32) -> Result<Vec<Case<RowProblem>>> {
    let (hidden, tile_rows) = (p.view.hidden, p.tile_rows);
    let pad = 64 / p.dtype.size();
    let view = |tiles: usize| like(p, tile_rows * tiles + 1, Some(hidden + pad), pad);
    Ok(vec![
        Case::new(
            "stress: strided, 4 blocks x ~16 tiles",
            view(64)?,
            Grid::Fixed(4),
        ),
        Case::new(
            "stress: strided, every SM loaded",
            view(4 * sm_count as usize)?,
            Grid::Persistent,
        ),
    ])
}

/// Parses a user's --hidden list for the suite.
pub fn parse_hidden(list: &str) -> Result<Vec<usize>> {
    list.split(',')
        .map(|s| {
            s.trim().parse::<usize>().map_err(|_| {
                Error::InvalidArgument(format!(
                    "--suite-hidden: '{s}' is not a number (allowed: e.g. 4096,1544)"
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    fn group(h: usize, dt: DType, tile_rows: usize) -> RowProblem {
        RowProblem::new(
            View::new(1, h, None, 0, None, dt).unwrap(),
            dt,
            Some(tile_rows),
        )
    }

    #[test]
    fn cases_cover_the_edges() {
        for dt in DType::ALL {
            for h in SUITE_HIDDEN {
                let tr = super::super::BuildConfig::default_tile_rows(h, dt);
                let cases = suite_cases(&group(h, dt, tr), 1).unwrap();
                let tiles = |c: &Case<RowProblem>| c.problem.view.tokens.div_ceil(tr);
                assert!(
                    cases
                        .iter()
                        .any(|c| c.problem.view.tokens % tr != 0 || tr == 1),
                    "a tail tile"
                );
                assert!(cases.iter().any(|c| tiles(c) == 1));
                assert!(cases.iter().any(|c| tiles(c) < 3));
                assert!(
                    cases
                        .iter()
                        .any(|c| c.problem.view.is_strided() && c.problem.view.offset > 0)
                );
                assert!(cases.iter().any(|c| matches!(c.grid, Grid::Idle(_))));
                assert!(
                    cases
                        .iter()
                        .any(|c| matches!(c.grid, Grid::Fixed(g) if tiles(c) / g as usize >= 20))
                );
            }
        }
    }

    #[test]
    fn trip_counts_are_random_from_one_to_a_thousand_and_seeded() {
        let trips = |seed| -> Vec<usize> {
            suite_cases(&group(4096, DType::Bf16, 2), seed)
                .unwrap()
                .into_iter()
                .filter(|c| c.name.starts_with("random trip count"))
                .map(|c| {
                    assert_eq!(c.grid, Grid::Fixed(2));
                    let tiles = c.problem.view.tokens.div_ceil(2);
                    assert_eq!(tiles % 2, 1, "blocks walk k and k - 1 tiles");
                    tiles.div_ceil(2)
                })
                .collect()
        };
        let a = trips(1);
        assert_eq!(a.len(), TRIP_COUNTS);
        assert!(a.iter().all(|k| (1..=1000).contains(k)), "{a:?}");
        assert_eq!(a, trips(1), "the suite's seed decides the draws");
        assert_ne!(a, trips(2));
    }

    #[test]
    fn stress_cases_are_strided_with_a_tail_and_one_loads_every_sm() {
        let c = stress_cases(&group(4096, DType::F16, 2), 132).unwrap();
        assert_eq!(c.len(), 2);
        for case in &c {
            let v = case.problem.view;
            assert!(v.is_strided() && v.offset > 0);
            assert_eq!(v.tokens % 2, 1, "a tail tile");
        }
        assert_eq!(c[0].grid, Grid::Fixed(4));
        assert_eq!(c[1].grid, Grid::Persistent);
        assert!(c[1].problem.view.tokens.div_ceil(2) > 4 * 132);
    }

    #[test]
    fn run_cases_end_with_the_users_view() {
        let v = View::new(1000, 4096, Some(4160), 64, None, DType::Bf16).unwrap();
        let p = RowProblem::new(v, DType::Bf16, Some(2));
        let c = run_cases(&p).unwrap();
        assert_eq!(c[3].problem, p);
        assert_eq!(c.len(), 4);
        assert_eq!(parse_hidden("4096, 1544").unwrap(), vec![4096, 1544]);
        assert!(parse_hidden("4k").unwrap_err().to_string().contains("'4k'"));
    }

    /// The suite's views groups: every case (validation, stress, run) keeps its group's offsets
    /// inside chunks, so every build they make is the one fitted to such rows; the first group's
    /// rows share one offset (TMA's case), the second's take every offset a chunk has.
    #[test]
    fn the_views_groups_keep_their_offsets_in_every_case() {
        for dt in DType::ALL {
            let vec = 16 / dt.size();
            let groups = misaligned_groups(4096, dt).unwrap();
            assert_eq!(groups.len(), 2);
            for (i, (tag, view)) in groups.into_iter().enumerate() {
                let g = RowProblem::new(view, dt, None);
                let mut all = suite_cases(&g, 1).unwrap();
                all.extend(stress_cases(&g, 132).unwrap());
                all.extend(run_cases(&g).unwrap());
                for c in &all {
                    let v = c.problem.view;
                    assert!(
                        !v.rows_aligned(dt) && !v.out_aligned(dt),
                        "{tag}: {}",
                        c.name
                    );
                    assert_eq!(v.offset % vec, view.offset % vec, "{tag}: {}", c.name);
                    let one_offset = (v.row_stride * dt.size()).is_multiple_of(16);
                    assert_eq!(one_offset, i == 0, "{tag}: {}", c.name);
                    let phases: std::collections::BTreeSet<usize> = (0..v.tokens.min(vec))
                        .map(|r| v.index(r, 0) * dt.size() % 16)
                        .collect();
                    if v.tokens >= vec {
                        assert_eq!(
                            phases.len(),
                            if i == 0 { 1 } else { vec },
                            "{tag}: {}",
                            c.name
                        );
                    }
                }
            }
        }
        // an aligned group's cases stay aligned, as they were
        let g = group(4096, DType::Bf16, 2);
        assert!(
            suite_cases(&g, 1).unwrap().iter().all(|c| {
                c.problem.view.rows_aligned(DType::Bf16) && c.problem.view.out.is_none()
            })
        );
    }
}
