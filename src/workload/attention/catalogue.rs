//! Attention's variants: one tile (64 query rows on four warps, 64 keys a step) for every
//! mechanism, so only movement differs, on mma.sync; the same tile on Hopper's wgmma behind the
//! TMA ring, so only the instruction differs; and the controls that break a pipeline's protocol
//! or the compute body's numbers.

use super::Problem;
use crate::dtype::DType;
use crate::pipeline::{Control, Instrument, Mechanism, Pipe, PipeBuild, Variant, handover};
use serde::{Deserialize, Serialize};

/// A block's tile: BM query rows (16 a consumer warp) by BN keys a step; `wgmma`: both GEMMs on
/// Hopper's warpgroup MMA (kernels/attention/wgmma.cuh), else on mma.sync; `pingpong`: its two
/// consumer warpgroups take turns at the MMAs, one's softmax beside the other's GEMMs; `overlap`:
/// each warpgroup issues a tile's S = Q K^T beside the previous tile's P V and runs the softmax
/// while P V does (the ring releases a slot a step late); `persistent`: the blocks resident at
/// once walk the query tiles, the producer loading the next tile's keys while the consumers end
/// the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AttnTile {
    pub bm: u32,
    pub bn: u32,
    #[serde(default)]
    pub wgmma: bool,
    #[serde(default)]
    pub pingpong: bool,
    #[serde(default)]
    pub overlap: bool,
    #[serde(default)]
    pub persistent: bool,
}

pub type AttnVariant = Variant<AttnTile>;

/// Every mechanism's tile: 64 query rows on four warps, 64 keys a step.
pub const TILE: AttnTile = AttnTile {
    bm: 64,
    bn: 64,
    wgmma: false,
    pingpong: false,
    overlap: false,
    persistent: false,
};

/// The tile on wgmma: one consumer warpgroup's 64 rows.
pub const TILE_WGMMA: AttnTile = AttnTile {
    wgmma: true,
    ..TILE
};

/// FlashAttention-3's tile for a producer warpgroup: two consumer warpgroups of 64 rows, 128 keys
/// a step (S and O both 64 x 128 per warpgroup at head dim 128).
pub const TILE_WGMMA_WS: AttnTile = AttnTile {
    bm: 128,
    bn: 128,
    wgmma: true,
    pingpong: false,
    overlap: false,
    persistent: false,
};

/// The same, its consumer warpgroups in ping-pong.
pub const TILE_WGMMA_PP: AttnTile = AttnTile {
    pingpong: true,
    ..TILE_WGMMA_WS
};

/// The warp-specialised tile, each warpgroup's softmax beside its own P V.
pub const TILE_WGMMA_OV: AttnTile = AttnTile {
    overlap: true,
    ..TILE_WGMMA_WS
};

/// The overlapped tile in persistent blocks: the ring runs on from one query tile into the next.
pub const TILE_WGMMA_OV_PERSIST: AttnTile = AttnTile {
    persistent: true,
    ..TILE_WGMMA_OV
};

/// Both: ping-pong turns, each covering a tile's S = Q K^T and the previous tile's P V.
pub const TILE_WGMMA_PP_OV: AttnTile = AttnTile {
    overlap: true,
    ..TILE_WGMMA_PP
};

fn on_tile(p: Pipe) -> AttnVariant {
    p.shaped(TILE)
}

/// A TMA ring of `stages` feeding wgmma on `tile`: warp 0 produces and consumes one warpgroup's
/// rows, or (two warpgroups' rows) a producer warpgroup hands its registers to the consumers.
fn wgmma(stages: u32, tile: AttnTile) -> AttnVariant {
    let ws = tile.bm > TILE_WGMMA.bm;
    let tag = match (ws, tile.pingpong, tile.overlap) {
        (false, _, _) => "",
        (true, false, false) => "-ws",
        (true, true, false) => "-pp",
        (true, false, true) => "-ws-ov",
        (true, true, true) => "-pp-ov",
    };
    let persist = if tile.persistent { "-persist" } else { "" };
    Variant {
        name: format!("tma-wgmma{tag}{persist}-s{stages}"),
        ..Pipe::ring(Mechanism::Tma, stages, ws).shaped(tile)
    }
}

/// The correct variants, `sync` first: register staging, cp.async at 2 and 3 stages, the TMA
/// ring (sm_90) at 2 and 3, the TMA ring feeding wgmma (sm_90a) at 2 and 3, warp-specialised
/// with two consumer warpgroups at 2 and 3, those in ping-pong at 2 and 3, each with the
/// softmax overlapping P V at 2 and 3, and the overlapped one in persistent blocks at 2 and 3.
pub fn catalogue(_dtype: DType) -> Vec<AttnVariant> {
    let mut all: Vec<AttnVariant> = [
        Pipe::with_stages(Mechanism::Sync, 1, false),
        Pipe::with_stages(Mechanism::Regprefetch, 2, false),
        Pipe::cpasync(2, 16),
        Pipe::cpasync(3, 16),
        Pipe::ring(Mechanism::Tma, 2, false),
        Pipe::ring(Mechanism::Tma, 3, false),
    ]
    .into_iter()
    .map(on_tile)
    .collect();
    all.extend([
        wgmma(2, TILE_WGMMA),
        wgmma(3, TILE_WGMMA),
        wgmma(2, TILE_WGMMA_WS),
        wgmma(3, TILE_WGMMA_WS),
        wgmma(2, TILE_WGMMA_PP),
        wgmma(3, TILE_WGMMA_PP),
        wgmma(2, TILE_WGMMA_OV),
        wgmma(3, TILE_WGMMA_OV),
        wgmma(2, TILE_WGMMA_PP_OV),
        wgmma(3, TILE_WGMMA_PP_OV),
        wgmma(2, TILE_WGMMA_OV_PERSIST),
        wgmma(3, TILE_WGMMA_OV_PERSIST),
    ]);
    all
}

/// Deliberately broken variants, never timed or ranked: K or V read before its copy lands, a
/// slot refilled while the P V MMAs still read it, a wrong phase on wrap, a rescale skipped when a
/// row's maximum moves, the causal mask one key late, a tensor map's stride wrong; on the wgmma
/// body, a slot released before its MMAs read it and a rescale skipped; on the overlapped body, a
/// slot released after its tile's softmax, while the next step's P V is still to read its V.
pub fn controls(_dtype: DType) -> Vec<AttnVariant> {
    use Control::*;
    let cp = Pipe::cpasync(2, 16);
    let tma = Pipe::ring(Mechanism::Tma, 2, false);
    let mut all: Vec<AttnVariant> = [
        (cp.clone(), SkipWait, "ctl-skip-wait"),
        (cp.clone(), EarlyRelease, "ctl-early-release"),
        (cp.clone(), NoRescale, "ctl-no-rescale"),
        (cp, MaskShifted, "ctl-mask-shifted"),
        (tma.clone(), WrongParity, "ctl-tma-wrong-parity"),
        (tma, WrongStride, "ctl-tma-wrong-stride"),
    ]
    .into_iter()
    .map(|(p, c, name)| on_tile(Variant::control(p, c, name)))
    .collect();
    let wg = wgmma(2, TILE_WGMMA);
    all.extend(
        [
            (EarlyRelease, "ctl-tma-wgmma-early-release"),
            (NoRescale, "ctl-tma-wgmma-no-rescale"),
        ]
        .map(|(c, name)| Variant::control(wg.clone(), c, name)),
    );
    all.push(Variant::control(
        wgmma(2, TILE_WGMMA_OV),
        EarlyRelease,
        "ctl-tma-wgmma-ov-early-release",
    ));
    all
}

/// The ladder of attention's forward pass: what each step adds over the one before.
pub const LADDER: [&str; 7] = [
    "sync: K and V tiles staged through registers, a block barrier a tile",
    "cp.async: the next tiles in flight while mma.sync computes",
    "TMA + wgmma: an mbarrier ring feeding warpgroup MMAs",
    "warp-specialised: a producer warpgroup, two consumer warpgroups",
    "ping-pong: the consumer warpgroups take turns at S = Q K^T",
    "softmax beside P V: a tile's softmax while the last tile's P V runs",
    "persistent: blocks walk query tiles, the ring running on across them",
];

/// The ladder step (an index into `LADDER`) a variant stands on: the last of the steps it is
/// built with; none for the mechanisms off the ladder (register prefetch, TMA into mma.sync).
pub fn ladder_step(v: &AttnVariant) -> Option<usize> {
    let s = &v.shape;
    if !s.wgmma {
        return match v.mechanism {
            Mechanism::Sync => Some(0),
            Mechanism::Cpasync => Some(1),
            _ => None,
        };
    }
    let last = [v.warp_specialized, s.pingpong, s.overlap, s.persistent]
        .iter()
        .rposition(|&built| built);
    Some(last.map_or(2, |i| 3 + i))
}

/// Bytes of one slot: a tile's rows of K and of V.
pub fn slot_bytes(v: &AttnVariant, p: &Problem) -> u32 {
    2 * v.shape.bn * p.head_dim as u32 * p.dtype.size() as u32
}

/// Slot 0's alignment: a 128-byte-swizzled TMA box starts on a whole 1024-byte pattern.
fn smem_align(v: &AttnVariant) -> u32 {
    if v.mechanism == Mechanism::Tma {
        1024
    } else {
        128
    }
}

/// The slots, plus the slack to align slot 0 beyond the 128 bytes dynamic shared memory has.
pub fn dynamic_smem(v: &AttnVariant, p: &Problem) -> u32 {
    v.slots() * slot_bytes(v, p) + smem_align(v) - 128
}

/// Every -D option of the build: the pipeline's (with the instrumentation), then attention's.
pub fn defines(v: &AttnVariant, p: &Problem, instrument: Instrument) -> Vec<String> {
    let mut d = v.defines(&PipeBuild {
        dtype: p.dtype,
        consumers: consumers(v),
        instrument,
        fold: 1,
        split: 1,
    });
    d.extend([
        format!("-DHEAD_DIM={}", p.head_dim),
        format!("-DBM={}", v.shape.bm),
        format!("-DBN={}", v.shape.bn),
        format!("-DWGMMA={}", u32::from(v.shape.wgmma)),
        format!("-DPINGPONG={}", u32::from(v.shape.pingpong)),
        format!("-DRELEASE_LAG={}", u32::from(v.shape.overlap)),
        format!("-DPERSISTENT={}", u32::from(v.shape.persistent)),
        format!("-DSMEM_ALIGN={}", smem_align(v)),
    ]);
    if v.warp_specialized {
        d.extend(handover::defines());
    }
    d
}

/// A consumer warp per 16 query rows.
pub fn consumers(v: &AttnVariant) -> u32 {
    v.shape.bm / 16 * 32
}

/// The block: its consumers, plus a producer warpgroup where warp-specialised (else the ring's
/// producer is warp 0, which consumes too).
pub fn threads(v: &AttnVariant) -> u32 {
    consumers(v)
        + if v.warp_specialized {
            handover::PRODUCER_THREADS
        } else {
            0
        }
}

/// The registers a warp-specialised block hands between its warpgroups.
pub fn registers_handed_over(v: &AttnVariant) -> Option<u32> {
    v.warp_specialized
        .then(|| handover::registers(consumers(v)))
}

/// The correct variant a variant's O is compared with bit for bit: `sync`, which runs the same
/// compute body on the same tile; on wgmma (another summation order) the first ring on its tile,
/// ping-pong's turns, the overlap and persistent blocks aside (they order the warpgroups, when
/// P V runs and which block computes a tile, not any warpgroup's sums).
pub fn twin<'a>(v: &AttnVariant, catalogue: &'a [AttnVariant]) -> Option<&'a AttnVariant> {
    let tile = AttnTile {
        pingpong: false,
        overlap: false,
        persistent: false,
        ..v.shape
    };
    match v.shape.wgmma {
        false => catalogue.first().filter(|b| b.is_baseline()),
        true => catalogue
            .iter()
            .find(|c| c.control.is_none() && c.shape == tile),
    }
}

/// What retires a slot's reads before its release, beyond the pipeline's protocol.
pub fn completion(v: &AttnVariant) -> String {
    let ring = v.protocol(consumers(v));
    let ws = match v.warp_specialized {
        true => format!(
            " (of a producer warpgroup); setmaxnreg: producer warpgroup {}, each consumer warpgroup {} registers per thread",
            handover::REGS_PRODUCER,
            handover::REGS_CONSUMER
        ),
        false => String::new(),
    };
    let turns = match v.shape.pingpong {
        true => {
            "; the consumer warpgroups take turns at issuing S = Q K^T (named barriers 8 and 9)"
        }
        false => "",
    };
    let turns = match v.shape.persistent {
        true => format!(
            "{turns}; persistent: the ring runs on across the query tiles a block walks, the producer loading the next tile's keys while the consumers end the last"
        ),
        false => turns.to_string(),
    };
    match (v.shape.wgmma, v.shape.overlap) {
        (false, _) => ring,
        (true, false) => format!(
            "{ring}{ws}; wgmma.wait_group 0 before the softmax reads S and before the slot's release{turns}"
        ),
        (true, true) => format!(
            "{ring}{ws}; a tile's S = Q K^T and the previous tile's P V in flight together, wgmma.wait_group 1 before the softmax reads S, 0 before O is rescaled and the previous tile's slot is released (a step late){turns}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mechanism_runs_one_tile_and_every_control_has_sync_for_a_twin() {
        let all = catalogue(DType::Bf16);
        assert!(all[0].is_baseline());
        // the family's tile on every mechanism and on wgmma; FlashAttention-3's on the ws ring alone
        for v in &all {
            let want = match (v.shape.wgmma, v.warp_specialized) {
                (false, _) => TILE,
                (true, false) => TILE_WGMMA,
                (true, true) if v.name.contains("-pp-ov-") => TILE_WGMMA_PP_OV,
                (true, true) if v.name.contains("-ws-ov-persist-") => TILE_WGMMA_OV_PERSIST,
                (true, true) if v.name.contains("-ws-ov-") => TILE_WGMMA_OV,
                (true, true) if v.name.contains("-pp-") => TILE_WGMMA_PP,
                (true, true) => TILE_WGMMA_WS,
            };
            assert_eq!(v.shape, want, "{}", v.name);
        }
        let ctl = controls(DType::Bf16);
        let mut names: Vec<&str> = all.iter().map(|v| v.name.as_str()).collect();
        names.extend(ctl.iter().map(|v| v.name.as_str()));
        assert_eq!(
            names[..9],
            [
                "sync",
                "regprefetch",
                "cpasync-cg16-s2",
                "cpasync-cg16-s3",
                "tma-s2",
                "tma-s3",
                "tma-wgmma-s2",
                "tma-wgmma-s3",
                "tma-wgmma-ws-s2"
            ]
        );
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(n, names.len(), "unique names");
        for c in controls(DType::F16) {
            let want = match (c.shape.wgmma, c.warp_specialized) {
                (false, _) => "sync",
                (true, false) => "tma-wgmma-s2",
                (true, true) => "tma-wgmma-ws-s2",
            };
            assert_eq!(twin(&c, &all).unwrap().name, want, "{}", c.name);
        }
        // wgmma sums in another order: its rings are compared with the first on their tile, the
        // ping-pong rings with the warp-specialised one they reorder
        for v in all.iter().filter(|v| v.shape.wgmma) {
            assert_eq!(v.mechanism, Mechanism::Tma);
            let want = if v.warp_specialized {
                "tma-wgmma-ws-s2"
            } else {
                "tma-wgmma-s2"
            };
            assert_eq!(twin(v, &all).unwrap().name, want);
        }
        // the warp-specialised block: two consumer warpgroups and the producer's, registers handed over
        let ws = all.iter().find(|v| v.warp_specialized).unwrap();
        assert_eq!((consumers(ws), threads(ws)), (256, 384));
        assert_eq!(registers_handed_over(ws), Some(64512));
        let p = Problem::new(1, 1, 100, 128, false, DType::Bf16).unwrap();
        assert_eq!(slot_bytes(ws, &p), 2 * 128 * 128 * 2);
        let d = defines(ws, &p, Instrument::CLEAN);
        for want in [
            "-DBM=128",
            "-DBN=128",
            "-DWGMMA=1",
            "-DWS=1",
            "-DCONSUMERS=256",
            "-DREGS_CONSUMER=232",
        ] {
            assert!(d.contains(&want.to_string()), "{want} in {d:?}");
        }
        assert!(completion(ws).contains("setmaxnreg"));
        assert_eq!(registers_handed_over(&all[0]), None);
    }

    #[test]
    fn every_ladder_step_is_built_and_each_variant_stands_on_its_last() {
        let all = catalogue(DType::Bf16);
        let step = |name: &str| ladder_step(all.iter().find(|v| v.name == name).unwrap());
        assert_eq!(step("sync"), Some(0));
        assert_eq!(step("regprefetch"), None);
        assert_eq!(step("cpasync-cg16-s3"), Some(1));
        assert_eq!(step("tma-s2"), None);
        assert_eq!(step("tma-wgmma-s3"), Some(2));
        assert_eq!(step("tma-wgmma-ws-s2"), Some(3));
        assert_eq!(step("tma-wgmma-pp-s3"), Some(4));
        assert_eq!(step("tma-wgmma-ws-ov-s3"), Some(5));
        assert_eq!(step("tma-wgmma-pp-ov-s2"), Some(5));
        assert_eq!(step("tma-wgmma-ws-ov-persist-s3"), Some(6));
        let mut steps: Vec<usize> = all.iter().filter_map(ladder_step).collect();
        steps.sort();
        steps.dedup();
        assert_eq!(steps.len(), LADDER.len(), "every step is built");
    }

    #[test]
    fn a_causal_walk_counts_each_query_tile_up_to_its_last_query() {
        use crate::workload::{Grid, Workload};
        let a = crate::workload::attention::Attention;
        let v = &catalogue(DType::F16)[0];
        // the suite's causal stress case: 16 heads of 18 query tiles, 17 + 1/5 key tiles
        let p = Problem::new(2, 8, 1100, 64, true, DType::F16).unwrap();
        let blocks = a.grid(v, &p, Grid::Persistent, 0);
        let w = a.walk(v, &p, blocks);
        // each head: tiles 0..16 walk 1..17 key tiles, the last (a tail) all 18
        assert_eq!((w.blocks, w.steps, w.longest), (288, 16 * (153 + 18), 18));
        let full = a.walk(v, &Problem { causal: false, ..p }, blocks);
        assert_eq!((full.blocks, full.steps, full.longest), (288, 288 * 18, 18));
        // persistent blocks: as many as are resident, or the stress runs' 7, never more than the
        // pairs of tiles (16 heads of 9 tiles of 128 rows); block b walks pairs b, b + 7, ...
        let all = catalogue(DType::F16);
        let persist = all.iter().find(|v| v.shape.persistent).unwrap();
        assert_eq!(a.grid(persist, &p, Grid::Persistent, 132), 72);
        assert_eq!(a.grid(persist, &p, Grid::Persistent, 60), 60);
        assert_eq!(a.grid(persist, &p, Grid::Fixed(7), 132), 7);
        assert_eq!(a.grid(&all[0], &p, Grid::Fixed(7), 132), 288);
        let w = a.walk(persist, &p, 7);
        // a head of 9 walks its query tiles 8, 0, 7, 1, 6, 2, 5, 3, 4, tile q walking
        // min(1100, 128 (q + 1)) / 128 key tiles: 9 (a tail), 1, 8, 2, 7, 3, 6, 4, 5
        let order = [9, 1, 8, 2, 7, 3, 6, 4, 5];
        let steps = |t: u64| order[(t % 9) as usize];
        let per_block = |b: u64| (0..144).filter(|t| t / 2 % 7 == b).map(steps).sum::<u64>();
        assert_eq!(w.blocks, 7);
        assert_eq!(w.steps, 16 * 45);
        assert_eq!(w.longest, (0..7).map(per_block).max().unwrap());
        // the pairs even the blocks out: at 16 heads of 16384 causal, on 132 blocks, 1024 pairs of
        // 129 key tiles each, 8 pairs at most a block; striding single tiles, block 0 took the
        // longest of each head, 16 tiles of 68..128 key tiles
        let long = Problem::new(1, 16, 16384, 128, true, DType::F16).unwrap();
        let w = a.walk(persist, &long, 132);
        assert_eq!(
            (w.blocks, w.steps, w.longest),
            (132, 16 * 128 * 129 / 2, 8 * 129)
        );
        let single = (0..16).map(|j| 128 - (4 * j) % 128).sum::<u64>();
        assert_eq!(single, (68..=128).step_by(4).sum::<u64>());
        assert!(single > 3 * w.longest / 2, "{single} {}", w.longest);
        let stress = super::super::cases::stress_cases(&p, persist).unwrap();
        assert_eq!(stress[0].grid, Grid::Fixed(7));
    }

    #[test]
    fn builds_carry_the_head_dim_and_their_slots_fit() {
        let p = Problem::new(1, 1, 100, 128, true, DType::Bf16).unwrap();
        let tma = &catalogue(DType::Bf16)[5];
        assert_eq!(slot_bytes(tma, &p), 32768);
        assert_eq!(dynamic_smem(tma, &p), 3 * 32768 + 896);
        let d = defines(tma, &p, Instrument::CLEAN);
        for want in [
            "-DHEAD_DIM=128",
            "-DBM=64",
            "-DBN=64",
            "-DSMEM_ALIGN=1024",
            "-DCONSUMERS=128",
        ] {
            assert!(d.contains(&want.to_string()), "{want} in {d:?}");
        }
        let ctl = controls(DType::Bf16)
            .into_iter()
            .find(|c| c.name == "ctl-no-rescale")
            .unwrap();
        assert!(defines(&ctl, &p, Instrument::CLEAN).contains(&"-DCONTROL=14".to_string()));
    }
}
