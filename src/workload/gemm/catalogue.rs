//! GEMM variants: a pipeline (mechanism, stages, copy width, control) on a block tile. Within a
//! precision family every mechanism runs the same tile, so only movement differs; a tuned tile per
//! family shows what the fastest configuration reaches.

use super::{Layout, Problem};
use crate::dtype::DType;
use crate::pipeline::{BuildConfig, Claim, Control, McaForm, Mechanism, Variant};
use serde::{Deserialize, Serialize};

/// A block tile: BM x BN outputs, BK-wide K slices, WARPS_M x WARPS_N warps, and the blocks per SM
/// the register budget must allow (`__launch_bounds__`); `wgmma`: computed by warpgroups on
/// Hopper's wgmma (sm_90a), the warps grouped in fours.
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
    /// flop); f16/bf16 with 8 warps of 64 x 32 (two blocks per SM), or 8 warps of 64 x 64 on 128 x 256
    /// (64-wide slices). (Budgeting the family's tile for three blocks per SM spilled and ran at
    /// half its speed on the H200.)
    pub fn tuned(dtype: DType) -> Vec<Tile> {
        match dtype {
            DType::F32 => vec![
                Tile::new(128, 128, 16, 4, 2, 2),
                Tile::new(128, 128, 32, 4, 2, 1),
            ],
            _ => vec![
                Tile::new(128, 128, 32, 2, 4, 2),
                Tile::new(128, 256, 64, 2, 4, 1),
            ],
        }
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
        format!("{}x{}x{}-{warps}w{blocks}", self.bm, self.bn, self.bk)
    }
}

/// Registers per thread of a producer warpgroup and of each consumer warpgroup after the hand-over:
/// 128 x 40 + 256 x 232 = 64512 fit the SM's 64 K, and 168 a thread at launch (384 threads) holds them.
const REGS_PRODUCER: u32 = 40;
const REGS_CONSUMER: u32 = 232;

/// A GEMM variant: the pipeline that moves the slices, the tile it moves them for, and whether
/// a block per SM walks many tiles (persistent) or each block computes one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GemmVariant {
    pub name: String,
    pub pipe: Variant,
    pub tile: Tile,
    #[serde(default)]
    pub persistent: bool,
}

impl GemmVariant {
    fn new(pipe: Variant, tile: Tile, tuned: bool) -> GemmVariant {
        let name = if tuned {
            format!("{}-{}", pipe.name, tile.label())
        } else {
            pipe.name.clone()
        };
        GemmVariant {
            name,
            pipe,
            tile,
            persistent: false,
        }
    }

    pub fn is_baseline(&self) -> bool {
        self.pipe.is_baseline()
    }

    /// The correct variants for `dtype`, `sync` first.
    pub fn catalogue(dtype: DType) -> Vec<GemmVariant> {
        let fam = Tile::family(dtype);
        let mut v: Vec<GemmVariant> = [
            Variant::with_stages(Mechanism::Sync, 1, false),
            Variant::with_stages(Mechanism::Regprefetch, 2, false),
        ]
        .into_iter()
        .chain((2..=5).map(|s| Variant::cpasync(s, 16)))
        .chain([Variant::mca(
            Mechanism::MemcpyAsyncPipeline,
            McaForm::Aligned16,
            3,
        )])
        .map(|p| GemmVariant::new(p, fam, false))
        .collect();
        if dtype == DType::F32 {
            v.push(GemmVariant::new(Variant::cpasync(3, 4), fam, false));
        }
        for t in Tile::tuned(dtype) {
            v.push(GemmVariant::new(Variant::cpasync(4, 16), t, true));
            v.push(GemmVariant::new(Variant::cpasync(3, 16), t, true));
        }
        if dtype != DType::F32 {
            v.extend((2..=6).map(|s| GemmVariant::hopper(s, false, false)));
            v.extend((2..=4).map(|s| GemmVariant::hopper(s, true, false)));
            v.extend((3..=4).map(|s| GemmVariant::hopper(s, true, true)));
        }
        v
    }

    /// Deliberately broken pipelines, never timed or ranked: cp.async on the family tile, and in
    /// bf16 the Hopper ring (the ring and its boxes are f16's too, only the MMA's type differs;
    /// most of these fault the GPU, and each fault costs a new process).
    pub fn controls(dtype: DType) -> Vec<GemmVariant> {
        use Control::*;
        let fam = Tile::family(dtype);
        let s3 = Variant::cpasync(3, 16);
        [
            (SkipWait, "ctl-skip-wait"),
            (EarlyRelease, "ctl-early-release"),
            (WaitShort, "ctl-wait-short"),
            (NoBarrier, "ctl-no-barrier"),
            (Overfill, "ctl-overfill"),
            (CommitAfterWait, "ctl-commit-after-wait"),
            (DrainNoCommit, "ctl-drain-no-commit"),
        ]
        .into_iter()
        .map(|(c, name)| GemmVariant {
            name: name.into(),
            pipe: Variant::control(s3.clone(), c, name),
            tile: fam,
            persistent: false,
        })
        .chain(
            (dtype == DType::Bf16)
                .then(Self::hopper_controls)
                .into_iter()
                .flatten(),
        )
        .collect()
    }

    /// The widest copy unit (16, 8, 4 bytes; 2 for the register-staged baselines) that every row of
    /// A and B allows in `p`: a unit never straddles a row end. The variant's own width if it fits;
    /// a narrowed cp.async variant is renamed for its width (cpasync-cg16-s3 -> cpasync-ca8-s3).
    pub fn fit(&self, p: &Problem) -> GemmVariant {
        if matches!(
            self.pipe.mechanism,
            Mechanism::Tma | Mechanism::MemcpyAsyncPipeline
        ) {
            return self.clone(); // a box; a memcpy_async spelled for 16 bytes
        }
        let es = p.dtype.size() as u32;
        let fits = |b: u32| {
            b >= es
                && [p.lda(), p.ldb()]
                    .iter()
                    .all(|&ld| (ld as u32 * es).is_multiple_of(b))
        };
        if fits(self.pipe.copy_bytes) {
            return self.clone();
        }
        let staged = matches!(
            self.pipe.mechanism,
            Mechanism::Sync | Mechanism::Regprefetch
        );
        let narrower = [8u32, 4, 2]
            .into_iter()
            .filter(|&b| b < self.pipe.copy_bytes && (staged || b >= 4))
            .find(|&b| fits(b));
        match narrower {
            Some(b) => {
                // a cp.async variant is named for its width, so the name says what runs
                let pipe = match self.pipe.mechanism {
                    Mechanism::Cpasync if self.pipe.control.is_none() => {
                        Variant::cpasync(self.pipe.stages, b)
                    }
                    _ => Variant {
                        copy_bytes: b,
                        bypass_l1: false,
                        ..self.pipe.clone()
                    },
                };
                GemmVariant::new(pipe, self.tile, self.name != self.pipe.name)
            }
            None => self.clone(),
        }
    }

    /// Why this variant cannot take `p`, if it cannot.
    pub fn can_implement(&self, p: &Problem) -> Result<(), String> {
        let es = p.dtype.size() as u32;
        if self.pipe.mechanism == Mechanism::Tma {
            for (name, ld) in [("A (K)", p.lda()), ("B", p.ldb())] {
                if !(ld as u32 * es).is_multiple_of(16) {
                    return Err(format!(
                        "rows of {name} are {ld} elements = {} bytes: a TMA tensor map needs row strides that are multiples of 16 bytes",
                        ld as u32 * es
                    ));
                }
            }
            return Ok(());
        }
        let unit = self.pipe.copy_bytes;
        let why = match self.pipe.mechanism {
            Mechanism::MemcpyAsyncPipeline => "this memcpy_async is spelled for 16-byte units",
            _ => {
                "cp.async copies 4, 8 or 16 bytes, so rows that take none of them run on sync and regprefetch only"
            }
        };
        for (name, ld) in [("A (K)", p.lda()), ("B", p.ldb())] {
            if !(ld as u32 * es).is_multiple_of(unit) {
                return Err(format!(
                    "rows of {name} are {ld} elements = {} bytes, not a multiple of the {unit}-byte copy unit; {why}",
                    ld as u32 * es
                ));
            }
        }
        Ok(())
    }

    /// The pipeline's build configuration: the tile's threads compute.
    fn pipe_config(&self, dtype: DType, stress: u32, trace_tiles: u32) -> BuildConfig {
        BuildConfig {
            consumers: self.tile.threads(),
            stress,
            trace_tiles,
            ..BuildConfig::new(dtype, 1, Some(1))
        }
    }

    /// Slot 0's alignment: a 128-byte-swizzled box starts on a whole 1024-byte swizzle pattern.
    fn smem_align(&self) -> u32 {
        if self.tile.wgmma { 1024 } else { 128 }
    }

    /// The slots, plus the slack to align slot 0 beyond the 128 bytes dynamic shared memory has.
    pub fn dynamic_smem(&self, p: &Problem) -> u32 {
        self.pipe.stages * self.tile.slot_bytes(p.dtype, p.layout) + self.smem_align() - 128
    }

    /// The block: the tile's consumer warps, plus the producer (a warp, or a warpgroup that hands
    /// its registers over) when warp-specialised.
    pub fn threads(&self) -> u32 {
        let producer = match (self.pipe.warp_specialized, self.tile.wgmma) {
            (false, _) => 0,
            (true, false) => 32,
            (true, true) => 128,
        };
        self.tile.threads() + producer
    }

    /// Every -D option of the build: the pipeline's (with STRESS bits and the steps each sampled
    /// block records for a timeline, 0 for none), then the GEMM's.
    pub fn defines(&self, p: &Problem, stress: u32, trace_tiles: u32) -> Vec<String> {
        let t = self.tile;
        let mut d = self
            .pipe
            .defines(&self.pipe_config(p.dtype, stress, trace_tiles));
        d.extend([
            format!("-DBM={}", t.bm),
            format!("-DBN={}", t.bn),
            format!("-DBK={}", t.bk),
            format!("-DWARPS_M={}", t.warps_m),
            format!("-DWARPS_N={}", t.warps_n),
            format!("-DMIN_BLOCKS={}", t.min_blocks),
            format!("-DB_NK={}", u32::from(p.layout == Layout::Nk)),
            format!("-DWGMMA={}", u32::from(t.wgmma)),
            format!("-DPERSISTENT={}", u32::from(self.persistent)),
            format!("-DSMEM_ALIGN={}", self.smem_align()),
        ]);
        if self.registers_handed_over().is_some() {
            d.extend([
                "-DPRODUCER_THREADS=128".to_string(),
                format!("-DREGS_PRODUCER={REGS_PRODUCER}"),
                format!("-DREGS_CONSUMER={REGS_CONSUMER}"),
            ]);
        }
        d
    }

    /// The registers a block hands between its warpgroups after `setmaxnreg` (a producer
    /// warpgroup's and the consumers'), where it does: the block must have been launched with
    /// at least as many.
    pub fn registers_handed_over(&self) -> Option<u32> {
        (self.tile.wgmma && self.pipe.warp_specialized)
            .then(|| 128 * REGS_PRODUCER + self.tile.threads() * REGS_CONSUMER)
    }

    /// What the SASS must show of the movement (the pipeline's claim).
    pub fn claim(&self) -> Claim {
        self.pipe.claim()
    }

    pub fn completion(&self, p: &Problem) -> String {
        let mut ring = self.pipe.completion(&self.pipe_config(p.dtype, 0, 0));
        if self.persistent {
            ring.push_str("; persistent: the ring runs on across the tiles a block walks, the producer loading the next tile's slices while the consumers store the last");
        }
        match (self.tile.wgmma, self.pipe.warp_specialized) {
            (false, _) => ring,
            (true, false) => {
                format!("{ring}; wgmma.wait_group 0 retires the slot's reads before its release")
            }
            (true, true) => format!(
                "{ring} (of a producer warpgroup); wgmma.wait_group 0 retires the slot's reads before its release; setmaxnreg: producer warpgroup 40, each consumer warpgroup 232 registers per thread"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(k: usize, dtype: DType) -> Problem {
        Problem::new(64, 64, k, Layout::Kn, dtype).unwrap()
    }

    #[test]
    fn names_are_unique_and_sync_first() {
        for dt in DType::ALL {
            let mut all = GemmVariant::catalogue(dt);
            assert!(all[0].is_baseline());
            all.extend(GemmVariant::controls(dt));
            // direct reads row tiles in place; a GEMM step stages slices of A and B
            assert!(all.iter().all(|v| v.pipe.mechanism != Mechanism::Direct));
            let mut names: Vec<&str> = all.iter().map(|v| v.name.as_str()).collect();
            let n = names.len();
            names.sort();
            names.dedup();
            assert_eq!(n, names.len(), "{dt}");
        }
    }

    #[test]
    fn the_family_shares_one_tile_and_slots_stay_aligned() {
        for dt in DType::ALL {
            let fam = Tile::family(dt);
            for v in GemmVariant::catalogue(dt)
                .iter()
                .filter(|v| !v.name.contains('x') && !v.tile.wgmma)
            {
                assert_eq!(v.tile, fam, "{}", v.name);
            }
            for layout in [Layout::Kn, Layout::Nk] {
                for t in std::iter::once(fam).chain(Tile::tuned(dt)) {
                    assert_eq!(t.slot_bytes(dt, layout) % 128, 0);
                    assert!(5 * t.slot_bytes(dt, layout) <= 227 * 1024 || t != fam);
                }
            }
        }
    }

    #[test]
    fn odd_rows_narrow_the_copy_or_say_why_not() {
        let cp = &GemmVariant::catalogue(DType::F32)[2];
        assert_eq!(cp.pipe.copy_bytes, 16);
        let f = cp.fit(&p(1002, DType::F32));
        assert_eq!((f.pipe.copy_bytes, f.name.as_str()), (8, "cpasync-ca8-s2"));
        let tuned = GemmVariant::catalogue(DType::F32)
            .pop()
            .unwrap()
            .fit(&p(1002, DType::F32));
        assert_eq!(tuned.name, "cpasync-ca8-s3-128x128x32-8w");
        assert!(f.can_implement(&p(1002, DType::F32)).is_ok());
        let odd = p(1001, DType::Bf16);
        let f = cp.fit(&odd);
        let why = f.can_implement(&odd).unwrap_err();
        assert!(
            why.contains("1001 elements") && why.contains("copy unit"),
            "{why}"
        );
        let sync = GemmVariant::catalogue(DType::Bf16)[0].fit(&odd);
        assert_eq!(sync.pipe.copy_bytes, 2);
        assert!(sync.can_implement(&odd).is_ok());
    }

    #[test]
    fn the_memcpy_async_pipeline_takes_16_byte_rows_or_says_why_not() {
        let mca = GemmVariant::catalogue(DType::F32)
            .into_iter()
            .find(|v| v.pipe.mechanism == Mechanism::MemcpyAsyncPipeline)
            .expect("an fp32 memcpy_async + cuda::pipeline variant");
        assert_eq!(
            (mca.name.as_str(), mca.tile),
            ("mca-pipeline-a16-s3", Tile::family(DType::F32))
        );
        let odd = p(1002, DType::F32);
        assert_eq!(
            mca.fit(&odd),
            mca,
            "never narrowed: its spelling is for 16 bytes"
        );
        let why = mca.can_implement(&odd).unwrap_err();
        assert!(
            why.contains("4008 bytes") && why.contains("16-byte units"),
            "{why}"
        );
        assert!(mca.can_implement(&p(1024, DType::F32)).is_ok());
        assert!(
            mca.defines(&p(64, DType::F32), 0, 0)
                .contains(&"-DMCA_FORM=0".to_string())
        );
    }

    #[test]
    fn defines_carry_tile_layout_and_control() {
        let c = &GemmVariant::controls(DType::Bf16)[0];
        let d = c.defines(
            &Problem::new(8, 8, 8, Layout::Nk, DType::Bf16).unwrap(),
            0,
            0,
        );
        for want in [
            "-DB_NK=1",
            "-DBK=32",
            "-DCONSUMERS=128",
            "-DCONTROL=1",
            "-DDTYPE=2",
        ] {
            assert!(d.contains(&want.to_string()), "{want} in {d:?}");
        }
    }
}
