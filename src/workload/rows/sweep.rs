//! What a sweep of a row workload varies: the row tiles (the trip count a pipeline fills and
//! drains over), the tile height, and the mechanism and stages by name; and the block of random
//! timing data every point's rows are a prefix of.

use super::catalogue::{self, RowVariant, row};
use super::{BuildConfig, RowProblem, View};
use crate::dtype::DType;
use crate::pipeline::{Mechanism, Pipe};
use crate::{Error, Result};

/// The tile counts swept by default: 4 to 2^20.
pub const TILES: [usize; 10] = [4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576];

/// The `-el` forms are the same pipelines with their copies carrying the L2 evict-last policy.
pub const MECHANISMS: [&str; 13] = [
    "sync",
    "regprefetch",
    "direct",
    "cpasync",
    "mca-pipeline",
    "mca-barrier",
    "bulk",
    "tma",
    "tma-ws",
    "cpasync-el",
    "bulk-el",
    "tma-el",
    "tma-ws-el",
];

/// The timing inputs' random block: larger than the L2 many times over, so that its period never
/// shows in a timing, and generated in a fraction of a second.
pub const TIMING_BLOCK: usize = 256 << 20;

/// The variant a mechanism (without its `-el`) and a stage count name. Single-stage mechanisms
/// ignore stages; one stage of a pipelined mechanism is the sequential baseline.
pub fn variant(mechanism: &str, stages: u32) -> Option<RowVariant> {
    let all = catalogue::catalogue();
    Some(match (mechanism, stages) {
        ("direct", _) => catalogue::direct(1),
        ("sync", _) | (_, 1) => all[0].clone(),
        ("regprefetch", _) => all[1].clone(),
        (m, s) => {
            let (m, ws) = Mechanism::pipelined(m)?;
            row(Pipe::with_stages(m, s, ws))
        }
    })
}

/// `tiles` dense tiles of `tile_rows` rows (the default height where none is given) of `hidden`.
pub fn problem(
    hidden: usize,
    dtype: DType,
    tiles: usize,
    tile_rows: Option<usize>,
) -> Result<RowProblem> {
    let rows = tile_rows.unwrap_or_else(|| BuildConfig::default_tile_rows(hidden, dtype));
    let tokens = tiles
        .checked_mul(rows)
        .filter(|&t| t <= View::MAX_TOKENS)
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{tiles} tiles of {rows} rows are more rows than the kernels' 32-bit counts hold; \
                 allowed: tiles x tile_rows <= {}",
                View::MAX_TOKENS
            ))
        })?;
    BuildConfig::checked(dtype, hidden, Some(rows))?;
    let view = View::new(tokens, hidden, None, 0, None, dtype)?;
    Ok(RowProblem::new(view, dtype, Some(rows)))
}
