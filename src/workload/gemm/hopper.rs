//! The Hopper GEMM: TMA boxes into the mbarrier ring feeding wgmma (kernels/gemm/wgmma.cuh), one
//! consumer warpgroup or two beside a producer warpgroup that hands its registers over, one tile
//! per block or persistent blocks; and the controls that break its ring.

use super::tile::{GemmShape, GemmVariant, Tile};
use crate::pipeline::{Control, Mechanism, Pipe, Variant};

impl Tile {
    /// The Hopper tiles (16-bit, 64-wide K slices of 128-byte swizzled rows as TMA lands them):
    /// one consumer warpgroup on 128 x 128 (two 64-row wgmma blocks of N = 128), or, beside a
    /// producer warpgroup, two on 128 x 256 (one 64-row block of N = 256 each).
    pub fn hopper(producer_warpgroup: bool) -> Tile {
        let t = if producer_warpgroup {
            Tile::new(128, 256, 64, 8, 1, 1)
        } else {
            Tile::new(128, 128, 64, 4, 1, 1)
        };
        Tile { wgmma: true, ..t }
    }

    /// A Hopper tile of 64 rows (one wgmma block of N = 128 on one warpgroup) for a few rows of
    /// A (decode): a 128-row tile would hold mostly zeros.
    pub fn hopper_short() -> Tile {
        Tile {
            wgmma: true,
            ..Tile::new(64, 128, 64, 4, 1, 1)
        }
    }

    /// 128 x 128 on two consumer warpgroups beside a producer: split-K's, each warpgroup on 64
    /// rows, 64 accumulators a thread, so the reduction's loads have registers beside them (on
    /// 128 x 256, 128 accumulators left room for one load at a time, and a tile of two parts ran
    /// slower than one of one part); ping-pong's, each warpgroup on tiles of its own.
    pub fn hopper_square() -> Tile {
        Tile {
            wgmma: true,
            ..Tile::new(128, 128, 64, 8, 1, 1)
        }
    }

    /// A Hopper tile of `rows` rows of A (16 or 32) by 128 of B, operands swapped: one warpgroup's
    /// wgmma m64n`rows`k16 on two 64-row blocks of B's rows, so no MMA computes rows past a
    /// decode step's tokens.
    pub fn hopper_swapped(rows: u32) -> Tile {
        Tile {
            wgmma: true,
            swap_ab: true,
            ..Tile::new(rows, 128, 64, 4, 1, 1)
        }
    }
}

/// The steps of the Hopper ladder as built, in order: what each adds over the one before.
pub const LADDER: [&str; 6] = [
    "TMA + wgmma, one consumer warpgroup",
    "warp-specialised: a producer warpgroup hands registers to two consumers",
    "persistent: one block per SM walks tiles",
    "2-CTA clusters: B's slices multicast to both CTAs",
    "TMA-store epilogue: C staged in shared memory, stored by TMA",
    "ping-pong: each consumer warpgroup on tiles of its own, one's epilogue beside the other's MMAs",
];

/// The ladder step (an index into `LADDER`) a Hopper variant stands on: the last of the steps
/// it is built with.
pub fn ladder_step(v: &GemmVariant) -> Option<usize> {
    let s = &v.shape;
    s.tile.wgmma.then(|| {
        [
            true,
            v.warp_specialized,
            s.persistent,
            s.cluster > 1,
            s.tma_store,
            s.pingpong,
        ]
        .iter()
        .rposition(|&on| on)
        .unwrap_or(0)
    })
}

/// What a Hopper variant is built with beyond TMA + wgmma on one consumer warpgroup: `ws`, a
/// producer warpgroup handing its registers to two consumer warpgroups; `persistent`, as many
/// blocks as fit on the GPU at once, each walking tiles, so the producer loads the next tile's
/// slices while the consumers store the last; `multicast`, clusters of two CTAs on vertically
/// adjacent tiles, each loading half of their common B slice and multicasting it to both;
/// `tma_store`, C staged in shared memory and stored by TMA while the next part is staged;
/// `pingpong`, persistent blocks whose two consumer warpgroups each compute whole 128 x 128
/// tiles, taking turns at the MMAs, so one stores its tile while the other computes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Build {
    pub ws: bool,
    pub persistent: bool,
    pub multicast: bool,
    pub tma_store: bool,
    pub pingpong: bool,
}

impl Build {
    pub const PLAIN: Build = Build {
        ws: false,
        persistent: false,
        multicast: false,
        tma_store: false,
        pingpong: false,
    };
    pub const WS: Build = Build {
        ws: true,
        ..Build::PLAIN
    };
    pub const PINGPONG: Build = Build {
        persistent: true,
        pingpong: true,
        ..Build::WS
    };
}

/// A Hopper variant: TMA boxes into an mbarrier ring feeding wgmma, built with `b`.
pub(super) fn variant(stages: u32, b: Build) -> GemmVariant {
    let flag = |on: bool, text: &'static str| if on { text } else { "" };
    let name = format!(
        "tma-wgmma{}{}{}{}{}-s{stages}",
        flag(b.ws, "-ws"),
        flag(b.persistent && !b.pingpong, "-persist"),
        flag(b.pingpong, "-pp"),
        flag(b.multicast, "-mc2"),
        flag(b.tma_store, "-st"),
    );
    Variant {
        name,
        ..Pipe::ring(Mechanism::Tma, stages, b.ws).shaped(GemmShape {
            tile: match b.pingpong {
                true => Tile::hopper_square(),
                false => Tile::hopper(b.ws),
            },
            persistent: b.persistent,
            pingpong: b.pingpong,
            cluster: if b.multicast { 2 } else { 1 },
            tma_store: b.tma_store,
            split_k: false,
        })
    }
}

/// A split-K variant: the ring on `tile` (warp-specialised where `ws`), the grid's blocks beyond
/// one per tile each taking a part of K (a problem of few tiles, such as a decode step's, then
/// fills the GPU), their partial sums added in split order by the last of a tile's blocks. Named
/// for its tile where it is not that ring's own.
pub(super) fn split_k(stages: u32, tile: Tile, ws: bool) -> GemmVariant {
    let mut name = format!("tma-wgmma{}-sk-s{stages}", if ws { "-ws" } else { "" });
    if tile != Tile::hopper(ws) {
        name = format!("{name}-{}", tile.label());
    }
    Variant {
        name,
        ..Pipe::ring(Mechanism::Tma, stages, ws).shaped(GemmShape {
            split_k: true,
            ..GemmShape::plain(tile)
        })
    }
}

/// The Hopper variants of a 16-bit catalogue: the plain ring at 2..6 stages, warp-specialised at
/// 2..4, persistent at 3 and 4, the cluster and TMA-store rungs at 4, ping-pong at 4 and 5 and
/// with the TMA store at 5, and split-K for few tiles
/// (on 128-row tiles, on 64, on 16 and 32 with the operands swapped, and warp-specialised on
/// 128 x 256).
pub(super) fn catalogue() -> Vec<GemmVariant> {
    let persistent = Build {
        persistent: true,
        ..Build::WS
    };
    let rungs = [
        Build {
            multicast: true,
            ..Build::WS
        },
        Build {
            tma_store: true,
            ..Build::WS
        },
        Build {
            multicast: true,
            tma_store: true,
            ..Build::WS
        },
        Build {
            multicast: true,
            ..persistent
        },
        Build {
            multicast: true,
            tma_store: true,
            ..persistent
        },
    ];
    (2..=6)
        .map(|s| variant(s, Build::PLAIN))
        .chain((2..=4).map(|s| variant(s, Build::WS)))
        .chain((3..=4).map(|s| variant(s, persistent)))
        .chain(rungs.map(|b| variant(4, b)))
        .chain([
            variant(4, Build::PINGPONG),
            variant(5, Build::PINGPONG),
            variant(
                5,
                Build {
                    tma_store: true,
                    ..Build::PINGPONG
                },
            ),
        ])
        .chain([
            split_k(3, Tile::hopper(false), false),
            split_k(4, Tile::hopper_short(), false),
            split_k(6, Tile::hopper_short(), false),
            split_k(6, Tile::hopper_swapped(16), false),
            split_k(8, Tile::hopper_swapped(16), false),
            split_k(6, Tile::hopper_swapped(32), false),
            split_k(4, Tile::hopper_square(), true),
            split_k(6, Tile::hopper_square(), true),
        ])
        .collect()
}

/// Broken Hopper pipelines: the ring's on two stages (a released slot is refilled at once), the
/// cluster's, the TMA store's and ping-pong's on their correct twins' four.
pub(super) fn controls() -> Vec<GemmVariant> {
    use Control::*;
    let multicast = Build {
        multicast: true,
        ..Build::WS
    };
    let staged = Build {
        tma_store: true,
        ..Build::WS
    };
    [
        (2, Build::PLAIN, WrongParity, "ctl-tma-wrong-parity"),
        (2, Build::PLAIN, SkipWait, "ctl-tma-skip-wait"),
        (2, Build::PLAIN, TxShort, "ctl-tma-tx-short"),
        (2, Build::PLAIN, TxLong, "ctl-tma-tx-long"),
        (2, Build::PLAIN, WrongStride, "ctl-tma-wrong-stride"),
        (2, Build::PLAIN, WrongBox, "ctl-tma-wrong-box"),
        (2, Build::WS, EarlyRelease, "ctl-tma-ws-early-release"),
        (4, multicast, ReleaseLocal, "ctl-tma-mc2-release-local"),
        (4, staged, StoreUnfenced, "ctl-tma-st-unfenced"),
        (4, Build::PINGPONG, TurnSkipped, "ctl-tma-pp-turn-skipped"),
    ]
    .into_iter()
    .map(|(s, b, c, name)| Variant::control(variant(s, b), c, name))
    .collect()
}

/// The correct variant whose C `v`'s is compared with bit for bit (the same products in the same
/// order): the same pipeline and tile unbroken where the math differs from `sync`'s (wgmma), else
/// `sync` on the same tile (`catalogue[0]`; none for a tuned tile).
pub fn twin<'a>(v: &GemmVariant, catalogue: &'a [GemmVariant]) -> Option<&'a GemmVariant> {
    if !v.shape.tile.wgmma {
        return catalogue
            .first()
            .filter(|b| b.is_baseline() && b.shape.tile == v.shape.tile);
    }
    catalogue.iter().find(|c| {
        c.control.is_none()
            && c.shape == v.shape
            && c.stages == v.stages
            && c.warp_specialized == v.warp_specialized
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hopper_variant_stands_on_a_ladder_step_and_no_other_does() {
        let mut steps = std::collections::BTreeSet::new();
        for dt in DType::ALL {
            for v in super::super::catalogue::catalogue(dt) {
                let step = ladder_step(&v);
                assert_eq!(step.is_some(), v.shape.tile.wgmma, "{}", v.name);
                if let Some(s) = step {
                    steps.insert(s);
                    assert_eq!(s >= 1, v.warp_specialized, "{}", v.name);
                    assert_eq!(s == 3, v.name.contains("-mc2") && !v.name.contains("-st"));
                    assert_eq!(s == 4, v.shape.tma_store && !v.shape.pingpong, "{}", v.name);
                    assert_eq!(s == 5, v.shape.pingpong, "{}", v.name);
                    assert!(!v.shape.pingpong || v.shape.persistent, "{}", v.name);
                    assert_eq!(v.name.contains("-mc2"), v.shape.cluster == 2);
                }
            }
        }
        assert_eq!(steps.len(), LADDER.len(), "every step is built");
        let plain = super::super::catalogue::catalogue(DType::F32).remove(0);
        assert_eq!(ladder_step(&plain), None);
    }
    use super::super::catalogue::{can_implement, completion, defines, dynamic_smem, fit, threads};
    use crate::dtype::DType;
    use crate::pipeline::Instrument;
    use crate::workload::gemm::{Layout, Problem};

    #[test]
    fn hopper_variants_fit_the_sm_and_say_how_they_are_built() {
        assert!(
            super::super::catalogue::catalogue(DType::F32)
                .iter()
                .all(|v| !v.shape.tile.wgmma)
        );
        let p = Problem::new(4096, 4096, 4096, Layout::Nk, DType::Bf16).unwrap();
        let hopper: Vec<GemmVariant> = super::super::catalogue::catalogue(DType::Bf16)
            .into_iter()
            .filter(|v| v.shape.tile.wgmma)
            .collect();
        assert_eq!(hopper.len(), 26);
        for v in &hopper {
            assert_eq!(
                v.shape.tile.slot_bytes(p.dtype, p.layout) % 1024,
                0,
                "{}",
                v.name
            );
            assert!(dynamic_smem(v, &p) <= 227 * 1024, "{}", v.name);
            let d = defines(v, &p, Instrument::CLEAN);
            assert!(
                d.contains(&"-DWGMMA=1".to_string())
                    && d.contains(&"-DSMEM_ALIGN=1024".to_string())
            );
            let ws = v.warp_specialized;
            assert_eq!(threads(v), if ws { 384 } else { 128 }, "{}", v.name);
            assert_eq!(
                d.contains(&"-DREGS_CONSUMER=232".to_string()),
                ws,
                "{}",
                v.name
            );
            assert_eq!(
                d.contains(&"-DPERSISTENT=1".to_string()),
                v.shape.persistent
            );
            assert_eq!(d.contains(&"-DCLUSTER=2".to_string()), v.shape.cluster == 2);
            assert_eq!(d.contains(&"-DTMA_STORE=1".to_string()), v.shape.tma_store);
            assert_eq!(fit(v, &[&p]), *v, "a box has no copy width to narrow");
        }
        let odd = Problem::new(64, 64, 1001, Layout::Nk, DType::Bf16).unwrap();
        let why = can_implement(&hopper[0], &odd).unwrap_err();
        assert!(why.contains("16 bytes") && why.contains("1001"), "{why}");
        assert!(completion(&hopper[0]).contains("wgmma.wait_group 0"));
        assert!(hopper.iter().any(|v| completion(v).contains("setmaxnreg")));
        // ping-pong: persistent, a whole 128 x 128 tile per consumer warpgroup, its slots
        // released by one warpgroup's 4 warps
        let pp = hopper.iter().find(|v| v.shape.pingpong).unwrap();
        assert_eq!(pp.name, "tma-wgmma-ws-pp-s4");
        assert!(pp.shape.persistent && pp.shape.tile == Tile::hopper_square());
        let d = defines(pp, &p, Instrument::CLEAN);
        assert!(
            d.contains(&"-DPINGPONG=1".to_string()) && d.contains(&"-DPERSISTENT=1".to_string())
        );
        assert!(!defines(&hopper[0], &p, Instrument::CLEAN).contains(&"-DPINGPONG=1".to_string()));
        let said = completion(pp);
        assert!(
            said.contains("arrive count 4") && said.contains("named barrier 8 or 9"),
            "{said}"
        );
    }

    #[test]
    fn every_control_has_a_correct_twin_to_be_compared_with() {
        for dt in DType::ALL {
            let all = super::super::catalogue::catalogue(dt);
            for c in super::super::catalogue::controls(dt) {
                let twin = twin(&c, &all).unwrap_or_else(|| panic!("{}", c.name));
                assert!(twin.control.is_none());
                if c.shape.tile.wgmma {
                    assert_eq!((twin.shape, twin.stages), (c.shape, c.stages));
                    assert_eq!(twin.warp_specialized, c.warp_specialized);
                } else {
                    assert!(twin.is_baseline(), "{}", c.name);
                }
            }
        }
        assert_eq!(super::super::catalogue::controls(DType::F32).len(), 7);
        assert_eq!(super::super::catalogue::controls(DType::F16).len(), 7);
        assert_eq!(super::super::catalogue::controls(DType::Bf16).len(), 17);
    }

    #[test]
    fn split_k_fills_the_resident_blocks_of_a_few_tiles_problem_and_no_more() {
        use crate::workload::{Grid, Workload};
        let gemm = crate::workload::gemm::Gemm;
        let short = split_k(4, Tile::hopper_short(), false);
        assert_eq!(short.name, "tma-wgmma-sk-s4-64x128x64-4w");
        assert_eq!(
            split_k(3, Tile::hopper(false), false).name,
            "tma-wgmma-sk-s3"
        );
        // warp-specialised, on 128 x 128: 32 tiles of a 128-row decode step, 4 parts each
        let ws = split_k(4, Tile::hopper_square(), true);
        assert_eq!(ws.name, "tma-wgmma-ws-sk-s4-128x128x64-8w");
        assert!(ws.warp_specialized && ws.shape.split_k);
        let d128 = Problem::new(128, 4096, 14336, Layout::Nk, DType::Bf16).unwrap();
        assert_eq!(gemm.grid(&ws, &d128, Grid::Persistent, 132), 32 * 4);
        // a decode step: 16 x 14336 x 4096, 112 tiles of 64 x 128, 264 blocks resident
        let decode = Problem::new(16, 14336, 4096, Layout::Nk, DType::Bf16).unwrap();
        assert_eq!(gemm.grid(&short, &decode, Grid::Persistent, 264), 224);
        // no more parts than K has slices, nor than MAX_SPLITS
        let short_k = Problem::new(16, 14336, 128, Layout::Nk, DType::Bf16).unwrap();
        assert_eq!(
            gemm.grid(&short, &short_k, Grid::Persistent, 264 * 8),
            112 * 2
        );
        assert_eq!(
            gemm.grid(&short, &decode, Grid::Persistent, 264 * 100),
            112 * 16
        );
        // more tiles than resident blocks: one block a tile
        let big = Problem::new(4096, 512, 4096, Layout::Nk, DType::Bf16).unwrap();
        assert_eq!(gemm.grid(&short, &big, Grid::Persistent, 132), 64 * 4);
        assert!(can_implement(&short, &decode).is_ok());
        let square = Problem::new(4096, 4096, 4096, Layout::Nk, DType::Bf16).unwrap();
        let why = can_implement(&short, &square).unwrap_err();
        assert!(
            why.contains("split-K") && why.contains("4096 x 4096"),
            "{why}"
        );
        assert!(defines(&short, &decode, Instrument::CLEAN).contains(&"-DSPLIT_K=1".to_string()));
        assert!(completion(&short).contains("split order"));
        // 16 rows of A, operands swapped: B's 128 rows on wgmma's side of 64, A's 16 on its N
        let swapped = split_k(6, Tile::hopper_swapped(16), false);
        assert_eq!(swapped.name, "tma-wgmma-sk-s6-16x128x64-4w-swap");
        let d = defines(&swapped, &decode, Instrument::CLEAN);
        for want in ["-DSWAP_AB=1", "-DBM=16", "-DBN=128", "-DSPLIT_K=1"] {
            assert!(d.contains(&want.to_string()), "{want} in {d:?}");
        }
        assert_eq!(
            swapped.shape.tile.slot_bytes(DType::Bf16, Layout::Nk),
            144 * 128
        );
        assert!(can_implement(&swapped, &decode).is_ok());
        let kn = Problem::new(16, 14336, 4096, Layout::Kn, DType::Bf16).unwrap();
        let why = can_implement(&swapped, &kn).unwrap_err();
        assert!(
            why.contains("[N x K]") && why.contains("--layout nk"),
            "{why}"
        );
        assert!(!defines(&short, &decode, Instrument::CLEAN).contains(&"-DSWAP_AB=1".to_string()));
    }

    #[test]
    fn a_split_k_walk_has_every_block_of_the_grid_own_a_part_of_k() {
        use crate::workload::{Grid, Workload};
        let gemm = crate::workload::gemm::Gemm;
        // the stress case the monitor once miscounted: 12 tiles of 128 x 128, 16 K slices
        let p = Problem::new(257, 392, 1000, Layout::Nk, DType::Bf16).unwrap();
        let v = split_k(3, Tile::hopper(false), false);
        let blocks = gemm.grid(&v, &p, Grid::Persistent, 264);
        assert_eq!(blocks, 12 * 16);
        let w = gemm.walk(&v, &p, blocks);
        assert_eq!((w.blocks, w.steps, w.longest), (192, 12 * 16, 1));
        // fewer parts than slices: the parts walk the slices once between them
        let decode = Problem::new(16, 14336, 4096, Layout::Nk, DType::Bf16).unwrap();
        let short = split_k(4, Tile::hopper_short(), false);
        let w = gemm.walk(&short, &decode, 224);
        assert_eq!((w.blocks, w.steps, w.longest), (224, 112 * 64, 32));
        // without split-K a block per tile
        let plain = gemm.walk(&variant(4, Build::PLAIN), &p, 12);
        assert_eq!(
            (plain.blocks, plain.steps, plain.longest),
            (12, 12 * 16, 16)
        );
    }
}
