//! The build configuration of a row variant in a run: precision, row shape, tile height, threads
//! and what an instrumented build adds (stress, timeline, stage probes).

use crate::dtype::DType;
use crate::pipeline::Instrument;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Elements a box of a window map holds: the largest divisor of hidden that fits a box (<= 256)
/// and lands at 128-byte-aligned places (a tensor copy's shared-memory address must be), so that a
/// row is whole boxes.
pub fn window_chunk(hidden: usize, dtype: DType) -> Option<usize> {
    (1..=256usize.min(hidden))
        .rev()
        .find(|&c| hidden.is_multiple_of(c) && (c * dtype.size()).is_multiple_of(128))
}

/// The most shared memory one block can use on any GPU tilepipe knows (H100/H200: 227 KiB): one
/// slot must fit in it, or no variant can build.
pub const MAX_SLOT_BYTES: usize = 227 * 1024;

/// Everything that shapes one kernel build besides the variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BuildConfig {
    pub dtype: DType,
    pub hidden: usize,
    pub tile_rows: usize,
    /// Threads that compute (the block, plus one producer warp when warp-specialised).
    pub consumers: u32,
    pub instrument: Instrument,
    /// Bytes a slot row holds beyond the row where it holds a window (`WINDOW_PAD`,
    /// kernels/common/rows.cuh): a 16-byte chunk for the copies, a box for TMA; 0 for rows.
    #[serde(default)]
    pub window_pad: u32,
}

impl BuildConfig {
    pub const DEFAULT_CONSUMERS: u32 = 256;

    /// Tiles of about 16 KB: big enough to keep bytes in flight, small enough for 4 stages and
    /// several blocks per SM.
    pub fn default_tile_rows(hidden: usize, dtype: DType) -> usize {
        Self::rows_for(hidden, dtype, 16)
    }

    /// Whole rows in about `kib` KiB, 1 to 8 (the box and the unrolled compute body take 8 at most).
    pub fn rows_for(hidden: usize, dtype: DType, kib: u32) -> usize {
        let row = hidden.saturating_mul(dtype.size()).max(1);
        (kib as usize * 1024 / row).clamp(1, 8)
    }

    /// `new`, once the row and the tile height are checked: a row of at least one element and a
    /// slot (tile rows x hidden x element size) of at most `MAX_SLOT_BYTES`, with at least one row.
    pub fn checked(dtype: DType, hidden: usize, tile_rows: Option<usize>) -> Result<Self> {
        let row = hidden
            .checked_mul(dtype.size())
            .filter(|&b| (1..=MAX_SLOT_BYTES).contains(&b))
            .ok_or_else(|| {
                Error::InvalidShape(format!(
                    "hidden {hidden}: a row of {dtype} must hold at least one element and fit in the \
                     {MAX_SLOT_BYTES} bytes of shared memory a block can have (H100/H200); allowed: hidden = 1..={}",
                    MAX_SLOT_BYTES / dtype.size()
                ))
            })?;
        let max_rows = MAX_SLOT_BYTES / row;
        if let Some(rows) = tile_rows
            && !(1..=max_rows).contains(&rows)
        {
            return Err(Error::InvalidArgument(format!(
                "--tile-rows {rows}: a slot holds tile rows x hidden {hidden} x {} bytes and must fit in the \
                 {MAX_SLOT_BYTES} bytes of shared memory a block can have (H100/H200); allowed: 1..={max_rows}",
                dtype.size()
            )));
        }
        Ok(Self::new(dtype, hidden, tile_rows))
    }

    pub fn new(dtype: DType, hidden: usize, tile_rows: Option<usize>) -> Self {
        BuildConfig {
            dtype,
            hidden,
            tile_rows: tile_rows.unwrap_or_else(|| Self::default_tile_rows(hidden, dtype)),
            consumers: Self::DEFAULT_CONSUMERS,
            instrument: Instrument::CLEAN,
            window_pad: 0,
        }
    }

    pub fn row_bytes(&self) -> u32 {
        (self.hidden * self.dtype.size()) as u32
    }

    /// Bytes of one slot (rounded to 128 as the kernel does).
    pub fn slot_bytes(&self) -> u32 {
        let pitch = self.row_bytes() + self.window_pad;
        (self.tile_rows as u32 * pitch).div_ceil(128) * 128
    }
}
