//! The Hopper GEMM: TMA boxes into the mbarrier ring feeding wgmma (kernels/gemm/wgmma.cuh), one
//! consumer warpgroup or two beside a producer warpgroup that hands its registers over, one tile
//! per block or persistent blocks; and the controls that break its ring.

use super::catalogue::{GemmVariant, Tile};
use crate::pipeline::{Control, Mechanism, Variant};

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

impl GemmVariant {
    /// A Hopper variant: TMA boxes into an mbarrier ring feeding wgmma; with `ws`, a producer
    /// warpgroup hands its registers to two consumer warpgroups.
    /// `persistent`: as many blocks as fit on the GPU at once, each walking tiles, so the producer
    /// loads the next tile's slices while the consumers store the last one.
    pub(super) fn hopper(stages: u32, ws: bool, persistent: bool) -> GemmVariant {
        let ring = Variant::ring(Mechanism::Tma, stages, ws);
        let name = format!(
            "tma-wgmma{}{}-s{stages}",
            if ws { "-ws" } else { "" },
            if persistent { "-persist" } else { "" }
        );
        GemmVariant {
            name: name.clone(),
            pipe: Variant { name, ..ring },
            tile: Tile::hopper(ws),
            persistent,
        }
    }

    /// Broken Hopper pipelines, each on two stages (a released slot is refilled at once).
    pub(super) fn hopper_controls() -> Vec<GemmVariant> {
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
        .map(|(ws, c, name)| {
            let base = GemmVariant::hopper(2, ws, false);
            GemmVariant {
                name: name.into(),
                pipe: Variant::control(base.pipe, c, name),
                ..base
            }
        })
        .collect()
    }

    /// The correct variant a control's C is compared with bit for bit: the same pipeline and tile
    /// unbroken where the math differs from `sync`'s (wgmma), else `sync` (`catalogue[0]`).
    pub fn twin<'a>(&self, catalogue: &'a [GemmVariant]) -> Option<&'a GemmVariant> {
        if !self.tile.wgmma {
            return catalogue.first();
        }
        catalogue.iter().find(|v| {
            v.tile == self.tile
                && v.persistent == self.persistent
                && v.pipe.stages == self.pipe.stages
                && v.pipe.warp_specialized == self.pipe.warp_specialized
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hopper_variant_stands_on_a_ladder_step_and_no_other_does() {
        for dt in DType::ALL {
            for v in GemmVariant::catalogue(dt) {
                let step = ladder_step(&v.name);
                assert_eq!(step.is_some(), v.tile.wgmma, "{}", v.name);
                if let Some(s) = step {
                    assert_eq!(s == 1 || s == 2, v.pipe.warp_specialized, "{}", v.name);
                    assert_eq!(s == 2, v.persistent, "{}", v.name);
                }
            }
        }
        assert_eq!(ladder_step("ctl-tma-wrong-parity"), None);
    }
    use crate::dtype::DType;
    use crate::workload::gemm::{Layout, Problem};

    #[test]
    fn hopper_variants_fit_the_sm_and_say_how_they_are_built() {
        assert!(
            GemmVariant::catalogue(DType::F32)
                .iter()
                .all(|v| !v.tile.wgmma)
        );
        let p = Problem::new(4096, 4096, 4096, Layout::Nk, DType::Bf16).unwrap();
        let hopper: Vec<GemmVariant> = GemmVariant::catalogue(DType::Bf16)
            .into_iter()
            .filter(|v| v.tile.wgmma)
            .collect();
        assert_eq!(hopper.len(), 10);
        for v in &hopper {
            assert_eq!(v.tile.slot_bytes(p.dtype, p.layout) % 1024, 0, "{}", v.name);
            assert!(v.dynamic_smem(&p) <= 227 * 1024, "{}", v.name);
            let d = v.defines(&p, 0, 0);
            assert!(
                d.contains(&"-DWGMMA=1".to_string())
                    && d.contains(&"-DSMEM_ALIGN=1024".to_string())
            );
            let ws = v.pipe.warp_specialized;
            assert_eq!(v.threads(), if ws { 384 } else { 128 }, "{}", v.name);
            assert_eq!(
                d.contains(&"-DREGS_CONSUMER=232".to_string()),
                ws,
                "{}",
                v.name
            );
            assert_eq!(d.contains(&"-DPERSISTENT=1".to_string()), v.persistent);
            assert_eq!(v.fit(&p), *v, "a box has no copy width to narrow");
        }
        let odd = Problem::new(64, 64, 1001, Layout::Nk, DType::Bf16).unwrap();
        let why = hopper[0].can_implement(&odd).unwrap_err();
        assert!(why.contains("16 bytes") && why.contains("1001"), "{why}");
        assert!(hopper[0].completion(&p).contains("wgmma.wait_group 0"));
        assert!(
            hopper
                .iter()
                .any(|v| v.completion(&p).contains("setmaxnreg"))
        );
    }

    #[test]
    fn every_control_has_a_correct_twin_to_be_compared_with() {
        for dt in DType::ALL {
            let all = GemmVariant::catalogue(dt);
            for c in GemmVariant::controls(dt) {
                let twin = c.twin(&all).unwrap_or_else(|| panic!("{}", c.name));
                assert!(twin.pipe.control.is_none());
                if c.tile.wgmma {
                    assert_eq!((twin.tile, twin.pipe.stages), (c.tile, c.pipe.stages));
                    assert_eq!(twin.pipe.warp_specialized, c.pipe.warp_specialized);
                } else {
                    assert!(twin.is_baseline(), "{}", c.name);
                }
            }
        }
        assert_eq!(GemmVariant::controls(DType::F32).len(), 7);
        assert_eq!(GemmVariant::controls(DType::F16).len(), 7);
        assert_eq!(GemmVariant::controls(DType::Bf16).len(), 14);
    }
}
