//! A GEMM variant's shape: the block tile it moves slices for and the computation over it.

use super::Layout;
use crate::dtype::DType;
use crate::pipeline::{Pipe, Variant};
use serde::{Deserialize, Serialize};

/// A block tile: BM x BN outputs, BK-wide K slices, WARPS_M x WARPS_N warps, and the blocks per SM
/// the register budget must allow (`__launch_bounds__`); `wgmma`: computed by warpgroups on
/// Hopper's wgmma (sm_90a), the warps grouped in fours; `swap_ab`: wgmma computes C^T = B A^T, its
/// 64-row side along B's rows and its N along the tile's few rows of A (decode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Tile {
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    pub warps_m: u32,
    pub warps_n: u32,
    pub min_blocks: u32,
    #[serde(default)]
    pub wgmma: bool,
    #[serde(default)]
    pub swap_ab: bool,
}

impl Tile {
    /// The same-tile comparison: f32 128 x 128 x 16 (8 warps of 32 x 64, FFMA on 8 x 8 per
    /// thread), f16/bf16 128 x 128 x 32 (4 warps of 64 x 64 on mma.sync).
    pub fn family(dtype: DType) -> Tile {
        match dtype {
            DType::F32 => Tile::new(128, 128, 16, 4, 2, 1),
            _ => Tile::new(128, 128, 32, 2, 2, 1),
        }
    }

    /// The tuned tiles: f32 with two blocks per SM, or 32-wide slices (half the barriers per
    /// flop), or warp tiles of 64 x 64 (16 x 8 outputs a thread: 0.75 bytes of shared memory
    /// read per FFMA where 8 x 8 reads 1) on four warps, two blocks per SM, or on eight; f16/bf16 with
    /// 8 warps of 64 x 32 (two blocks per SM), or 8 warps of 64 x 64 on 128 x 256 (64-wide
    /// slices). (Budgeting the family's tile for three blocks per SM spilled and ran at half its
    /// speed on the H200; the family's 4 warps on 64-wide slices ran no faster than on 32-wide
    /// ones on the H100, nor f32's 128 x 256 on 32-wide slices than on 16-wide ones: 75.9 against
    /// 86.8 % of cuBLAS.)
    pub fn tuned(dtype: DType) -> Vec<Tile> {
        match dtype {
            DType::F32 => vec![
                Tile::new(128, 128, 16, 4, 2, 2),
                Tile::new(128, 128, 32, 4, 2, 1),
                Tile::new(128, 128, 16, 2, 2, 2),
                Tile::new(128, 256, 16, 2, 4, 1),
            ],
            _ => vec![
                Tile::new(128, 128, 32, 2, 4, 2),
                Tile::new(128, 256, 64, 2, 4, 1),
            ],
        }
    }

    /// The decode tiles (f16/bf16, mma.sync): 16 and 32 rows of A on four warps side by side
    /// along N (warp tiles 16 x 32 and 32 x 32), and 64 rows on 2 x 2 warps of 32 x 64, each 128
    /// columns of B by 64-wide slices: a few rows of A (a decode step's tokens) fill a tile of
    /// their own size instead of a 128-row tile that is mostly zeros.
    pub fn decode() -> [Tile; 3] {
        [
            Tile::new(16, 128, 64, 1, 4, 1),
            Tile::new(32, 128, 64, 1, 4, 1),
            Tile::new(64, 128, 64, 2, 2, 1),
        ]
    }

    pub(super) const fn new(
        bm: u32,
        bn: u32,
        bk: u32,
        warps_m: u32,
        warps_n: u32,
        min_blocks: u32,
    ) -> Tile {
        Tile {
            bm,
            bn,
            bk,
            warps_m,
            warps_n,
            min_blocks,
            wgmma: false,
            swap_ab: false,
        }
    }

    pub fn threads(&self) -> u32 {
        32 * self.warps_m * self.warps_n
    }

    /// Bytes of one slot as kernels/gemm.cu lays it out: A's slice then B's, f32 K-major rows
    /// padded by 16 bytes, rounded up to 128.
    pub fn slot_bytes(&self, dtype: DType, layout: Layout) -> u32 {
        let es = dtype.size() as u32;
        let pad = if dtype == DType::F32 { 16 } else { 0 };
        let a = self.bm * (self.bk * es + pad);
        let b = match layout {
            Layout::Nk => self.bn * (self.bk * es + pad),
            Layout::Kn => self.bk * self.bn * es,
        };
        (a + b).div_ceil(128) * 128
    }

    /// "BMxBNxBK-Ww" (W warps), with "-2b" where the registers are budgeted for two blocks per SM.
    pub fn label(&self) -> String {
        let blocks = if self.min_blocks > 1 {
            format!("-{}b", self.min_blocks)
        } else {
            String::new()
        };
        let warps = self.warps_m * self.warps_n;
        let swap = if self.swap_ab { "-swap" } else { "" };
        format!("{}x{}x{}-{warps}w{blocks}{swap}", self.bm, self.bn, self.bk)
    }
}

/// A GEMM variant's shape: the block tile it moves slices for, whether a block per SM walks many
/// tiles (persistent) or each block computes one, whether a persistent block's two consumer
/// warpgroups each compute tiles of their own in turns (ping-pong), the CTAs of a cluster that
/// share B's slices by TMA multicast (1: none), whether C leaves through shared memory by TMA
/// stores, and whether a problem of few tiles splits K over the GPU's other blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GemmShape {
    pub tile: Tile,
    #[serde(default)]
    pub persistent: bool,
    #[serde(default)]
    pub pingpong: bool,
    #[serde(default = "one")]
    pub cluster: u32,
    #[serde(default)]
    pub tma_store: bool,
    /// Beyond a block per tile, the grid's blocks split K, their partial sums reduced in order.
    #[serde(default)]
    pub split_k: bool,
}

fn one() -> u32 {
    1
}

impl GemmShape {
    /// A block tile computed one tile per block, no cluster, C stored from registers.
    pub fn plain(tile: Tile) -> GemmShape {
        GemmShape {
            tile,
            persistent: false,
            pingpong: false,
            cluster: 1,
            tma_store: false,
            split_k: false,
        }
    }
}

pub type GemmVariant = Variant<GemmShape>;

/// `pipe` on `tile`, named for the tile where it is one of the tuned tiles.
pub fn on_tile(pipe: Pipe, tile: Tile, tuned: bool) -> GemmVariant {
    let name = match tuned {
        true => format!("{}-{}", pipe.name, tile.label()),
        false => pipe.name.clone(),
    };
    Variant {
        name,
        ..pipe.shaped(GemmShape::plain(tile))
    }
}

/// Whether `v`'s name carries its tile (a tuned tile's variant).
pub(super) fn tuned(v: &GemmVariant) -> bool {
    v.name.ends_with(&format!("-{}", v.shape.tile.label()))
}

/// `pipe` on `tile` with split-K, named for both: cpasync-cg16-s4 -> cpasync-cg16-s4-sk-16x128x64-4w.
pub fn split_k_on_tile(pipe: Pipe, tile: Tile) -> GemmVariant {
    Variant {
        name: format!("{}-sk-{}", pipe.name, tile.label()),
        ..pipe.shaped(GemmShape {
            split_k: true,
            ..GemmShape::plain(tile)
        })
    }
}
