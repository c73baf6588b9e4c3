//! Attention's variants: one tile (64 query rows on four warps, 64 keys a step) for every
//! mechanism, so only movement differs; and the controls that break a pipeline's protocol or the
//! compute body's numbers.

use super::Problem;
use super::data::{BM, BN};
use crate::dtype::DType;
use crate::pipeline::{Control, Instrument, Mechanism, Pipe, PipeBuild, Variant};
use serde::{Deserialize, Serialize};

/// A block's tile: BM query rows (16 a consumer warp) by BN keys a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AttnTile {
    pub bm: u32,
    pub bn: u32,
}

pub type AttnVariant = Variant<AttnTile>;

pub const TILE: AttnTile = AttnTile {
    bm: BM as u32,
    bn: BN as u32,
};

fn on_tile(p: Pipe) -> AttnVariant {
    p.shaped(TILE)
}

/// The correct variants, `sync` first: register staging, cp.async at 2 and 3 stages, and the
/// TMA ring (sm_90) at 2 and 3.
pub fn catalogue(_dtype: DType) -> Vec<AttnVariant> {
    [
        Pipe::with_stages(Mechanism::Sync, 1, false),
        Pipe::with_stages(Mechanism::Regprefetch, 2, false),
        Pipe::cpasync(2, 16),
        Pipe::cpasync(3, 16),
        Pipe::ring(Mechanism::Tma, 2, false),
        Pipe::ring(Mechanism::Tma, 3, false),
    ]
    .into_iter()
    .map(on_tile)
    .collect()
}

/// Deliberately broken variants, never timed or ranked: K or V read before its copy lands, a
/// slot refilled while the P V MMAs still read it, a wrong phase on wrap, a rescale skipped when a
/// row's maximum moves, the causal mask one key late, a tensor map's stride wrong.
pub fn controls(_dtype: DType) -> Vec<AttnVariant> {
    use Control::*;
    let cp = Pipe::cpasync(2, 16);
    let tma = Pipe::ring(Mechanism::Tma, 2, false);
    [
        (cp.clone(), SkipWait, "ctl-skip-wait"),
        (cp.clone(), EarlyRelease, "ctl-early-release"),
        (cp.clone(), NoRescale, "ctl-no-rescale"),
        (cp, MaskShifted, "ctl-mask-shifted"),
        (tma.clone(), WrongParity, "ctl-tma-wrong-parity"),
        (tma, WrongStride, "ctl-tma-wrong-stride"),
    ]
    .into_iter()
    .map(|(p, c, name)| on_tile(Variant::control(p, c, name)))
    .collect()
}

/// Bytes of one slot: a tile's rows of K and of V.
pub fn slot_bytes(p: &Problem) -> u32 {
    2 * BN as u32 * p.head_dim as u32 * p.dtype.size() as u32
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
    v.slots() * slot_bytes(p) + smem_align(v) - 128
}

/// Every -D option of the build: the pipeline's (with the instrumentation), then attention's.
pub fn defines(v: &AttnVariant, p: &Problem, instrument: Instrument) -> Vec<String> {
    let mut d = v.defines(&PipeBuild {
        dtype: p.dtype,
        consumers: threads(v),
        instrument,
        fold: 1,
        split: 1,
    });
    d.extend([
        format!("-DHEAD_DIM={}", p.head_dim),
        format!("-DBM={}", v.shape.bm),
        format!("-DBN={}", v.shape.bn),
        format!("-DSMEM_ALIGN={}", smem_align(v)),
    ]);
    d
}

/// A consumer warp per 16 query rows; the ring's producer is warp 0, which consumes too.
pub fn threads(v: &AttnVariant) -> u32 {
    v.shape.bm / 16 * 32
}

/// The correct variant a variant's O is compared with bit for bit: `sync`, which runs the same
/// compute body on the same tile.
pub fn twin<'a>(_v: &AttnVariant, catalogue: &'a [AttnVariant]) -> Option<&'a AttnVariant> {
    catalogue.first().filter(|b| b.is_baseline())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mechanism_runs_one_tile_and_every_control_has_sync_for_a_twin() {
        let all = catalogue(DType::Bf16);
        assert!(all[0].is_baseline());
        assert!(all.iter().all(|v| v.shape == TILE));
        let ctl = controls(DType::Bf16);
        let mut names: Vec<&str> = all.iter().map(|v| v.name.as_str()).collect();
        names.extend(ctl.iter().map(|v| v.name.as_str()));
        assert_eq!(
            names[..6],
            [
                "sync",
                "regprefetch",
                "cpasync-cg16-s2",
                "cpasync-cg16-s3",
                "tma-s2",
                "tma-s3"
            ]
        );
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(n, names.len(), "unique names");
        for c in controls(DType::F16) {
            assert_eq!(twin(&c, &all).unwrap().name, "sync");
        }
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
    }

    #[test]
    fn builds_carry_the_head_dim_and_their_slots_fit() {
        let p = Problem::new(1, 1, 100, 128, true, DType::Bf16).unwrap();
        let tma = &catalogue(DType::Bf16)[5];
        assert_eq!(slot_bytes(&p), 32768);
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
