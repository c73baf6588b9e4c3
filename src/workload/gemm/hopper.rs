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
}

/// The steps of the Hopper ladder as built, in order: what each adds over the one before.
pub const LADDER: [&str; 3] = [
    "TMA + wgmma, one consumer warpgroup",
    "warp-specialised: a producer warpgroup hands registers to two consumers",
    "persistent: one block per SM walks tiles",
];

/// The ladder step (an index into `LADDER`) a variant of this name stands on, if it is a Hopper
/// variant: names are made in `GemmVariant::hopper`.
pub fn ladder_step(name: &str) -> Option<usize> {
    let rest = name.strip_prefix("tma-wgmma-")?;
    Some(match rest {
        r if r.starts_with("ws-persist-") => 2,
        r if r.starts_with("ws-") => 1,
        r if r.starts_with('s') => 0,
        _ => return None,
    })
}

/// A Hopper variant: TMA boxes into an mbarrier ring feeding wgmma; with `ws`, a producer
/// warpgroup hands its registers to two consumer warpgroups. `persistent`: as many blocks as fit
/// on the GPU at once, each walking tiles, so the producer loads the next tile's slices while the
/// consumers store the last one.
pub(super) fn variant(stages: u32, ws: bool, persistent: bool) -> GemmVariant {
    let name = format!(
        "tma-wgmma{}{}-s{stages}",
        if ws { "-ws" } else { "" },
        if persistent { "-persist" } else { "" }
    );
    Variant {
        name,
        ..Pipe::ring(Mechanism::Tma, stages, ws).shaped(GemmShape {
            tile: Tile::hopper(ws),
            persistent,
        })
    }
}

/// Broken Hopper pipelines, each on two stages (a released slot is refilled at once).
pub(super) fn controls() -> Vec<GemmVariant> {
    use Control::*;
    [
        (false, WrongParity, "ctl-tma-wrong-parity"),
        (false, SkipWait, "ctl-tma-skip-wait"),
        (false, TxShort, "ctl-tma-tx-short"),
        (false, TxLong, "ctl-tma-tx-long"),
        (false, WrongStride, "ctl-tma-wrong-stride"),
        (false, WrongBox, "ctl-tma-wrong-box"),
        (true, EarlyRelease, "ctl-tma-ws-early-release"),
    ]
    .into_iter()
    .map(|(ws, c, name)| Variant::control(variant(2, ws, false), c, name))
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
        for dt in DType::ALL {
            for v in super::super::catalogue::catalogue(dt) {
                let step = ladder_step(&v.name);
                assert_eq!(step.is_some(), v.shape.tile.wgmma, "{}", v.name);
                if let Some(s) = step {
                    assert_eq!(s == 1 || s == 2, v.warp_specialized, "{}", v.name);
                    assert_eq!(s == 2, v.shape.persistent, "{}", v.name);
                }
            }
        }
        assert_eq!(ladder_step("ctl-tma-wrong-parity"), None);
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
        assert_eq!(hopper.len(), 10);
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
            assert_eq!(fit(v, &[&p]), *v, "a box has no copy width to narrow");
        }
        let odd = Problem::new(64, 64, 1001, Layout::Nk, DType::Bf16).unwrap();
        let why = can_implement(&hopper[0], &odd).unwrap_err();
        assert!(why.contains("16 bytes") && why.contains("1001"), "{why}");
        assert!(completion(&hopper[0]).contains("wgmma.wait_group 0"));
        assert!(hopper.iter().any(|v| completion(v).contains("setmaxnreg")));
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
        assert_eq!(super::super::catalogue::controls(DType::Bf16).len(), 14);
    }
}
