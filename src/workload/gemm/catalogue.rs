//! GEMM variants: a pipeline (mechanism, stages, copy width, control) on a block tile. Within a
//! precision family every mechanism runs the same tile, so only movement differs; a tuned tile per
//! family shows what the fastest configuration reaches.

use super::tile::{GemmVariant, Tile, on_tile, split_k_on_tile, tuned};
use super::{Layout, Problem};
use crate::dtype::DType;
use crate::pipeline::{
    Control, Instrument, McaForm, Mechanism, Pipe, PipeBuild, Variant, handover,
};

/// The correct variants for `dtype`, `sync` first.
pub fn catalogue(dtype: DType) -> Vec<GemmVariant> {
    let fam = Tile::family(dtype);
    let mut v: Vec<GemmVariant> = [
        Pipe::with_stages(Mechanism::Sync, 1, false),
        Pipe::with_stages(Mechanism::Regprefetch, 2, false),
    ]
    .into_iter()
    .chain((2..=5).map(|s| Pipe::cpasync(s, 16)))
    .chain([Pipe::mca(
        Mechanism::MemcpyAsyncPipeline,
        McaForm::Aligned16,
        3,
    )])
    .map(|p| on_tile(p, fam, false))
    .collect();
    if dtype == DType::F32 {
        v.push(on_tile(Pipe::cpasync(3, 4), fam, false));
    }
    for t in Tile::tuned(dtype) {
        v.push(on_tile(Pipe::cpasync(4, 16), t, true));
        v.push(on_tile(Pipe::cpasync(3, 16), t, true));
    }
    if dtype != DType::F32 {
        // decode: a few rows of A on tiles of their size, split-K filling the GPU
        for t in Tile::decode() {
            v.extend([4, 6].map(|s| split_k_on_tile(Pipe::cpasync(s, 16), t)));
        }
        v.extend(super::hopper::catalogue());
    }
    v
}

/// Deliberately broken pipelines, never timed or ranked: cp.async on the family tile, and in
/// bf16 the Hopper ring (the ring and its boxes are f16's too, only the MMA's type differs;
/// most of these fault the GPU, and each fault costs a new process).
pub fn controls(dtype: DType) -> Vec<GemmVariant> {
    use Control::*;
    let s3 = on_tile(Pipe::cpasync(3, 16), Tile::family(dtype), false);
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
    .map(|(c, name)| Variant::control(s3.clone(), c, name))
    .chain(
        (dtype == DType::Bf16)
            .then(super::hopper::controls)
            .into_iter()
            .flatten(),
    )
    .collect()
}

/// The widest copy unit (16, 8, 4 bytes; 2 for the register-staged baselines) that every row of
/// A and B allows in every one of `problems`: a unit never straddles a row end. The variant's own
/// width if it fits; a narrowed cp.async variant is renamed for its width (cpasync-cg16-s3 ->
/// cpasync-ca8-s3).
pub fn fit(v: &GemmVariant, problems: &[&Problem]) -> GemmVariant {
    if matches!(v.mechanism, Mechanism::Tma | Mechanism::MemcpyAsyncPipeline) {
        return v.clone(); // a box; a memcpy_async spelled for 16 bytes
    }
    let fits = |b: u32| {
        problems.iter().all(|p| {
            let es = p.dtype.size() as u32;
            b >= es
                && [p.lda(), p.ldb()]
                    .iter()
                    .all(|&ld| (ld as u32 * es).is_multiple_of(b))
        })
    };
    if fits(v.copy_bytes) {
        return v.clone();
    }
    let staged = matches!(v.mechanism, Mechanism::Sync | Mechanism::Regprefetch);
    let narrower = [8u32, 4, 2]
        .into_iter()
        .filter(|&b| b < v.copy_bytes && (staged || b >= 4))
        .find(|&b| fits(b));
    match narrower {
        Some(b) => {
            // a cp.async variant is named for its width, so the name says what runs
            let pipe = match v.mechanism {
                Mechanism::Cpasync if v.control.is_none() => Pipe::cpasync(v.stages, b),
                _ => Variant {
                    copy_bytes: b,
                    bypass_l1: false,
                    ..v.pipe()
                },
            };
            let shape = v.shape;
            let named = match shape.split_k {
                true => split_k_on_tile(pipe, shape.tile),
                false => on_tile(pipe, shape.tile, tuned(v)),
            };
            Variant { shape, ..named }
        }
        None => v.clone(),
    }
}

/// Why `v` cannot take `p`, if it cannot.
pub fn can_implement(v: &GemmVariant, p: &Problem) -> Result<(), String> {
    let es = p.dtype.size() as u32;
    if let Some(why) = v
        .shape
        .split_k
        .then(|| super::data::split_k_unfit(p))
        .flatten()
    {
        return Err(why);
    }
    if v.shape.tile.swap_ab && p.layout != Layout::Nk {
        return Err("the swapped tile reads B's rows as wgmma's K-major A operand: B must be [N x K] (--layout nk)".into());
    }
    if v.mechanism == Mechanism::Tma {
        let stored = v.shape.tma_store.then_some(("C (N)", p.ldc()));
        for (name, ld) in [("A (K)", p.lda()), ("B", p.ldb())]
            .into_iter()
            .chain(stored)
        {
            if !(ld as u32 * es).is_multiple_of(16) {
                return Err(format!(
                    "rows of {name} are {ld} elements = {} bytes: a TMA tensor map needs row strides that are multiples of 16 bytes",
                    ld as u32 * es
                ));
            }
        }
        return Ok(());
    }
    let unit = v.copy_bytes;
    let why = match v.mechanism {
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

/// Slot 0's alignment: a 128-byte-swizzled box starts on a whole 1024-byte swizzle pattern.
fn smem_align(v: &GemmVariant) -> u32 {
    if v.shape.tile.wgmma { 1024 } else { 128 }
}

/// Bytes of a TMA-store epilogue's staging: two 64 x 64 boxes of C per consumer warpgroup
/// (kernels/gemm/wgmma.cuh), after the slots.
pub fn staging_bytes(v: &GemmVariant, p: &Problem) -> u32 {
    match v.shape.tma_store {
        true => v.shape.tile.threads() / 128 * 2 * 64 * 64 * p.dtype.size() as u32,
        false => 0,
    }
}

/// The slots and the epilogue's staging, plus the slack to align slot 0 beyond the 128 bytes
/// dynamic shared memory has.
pub fn dynamic_smem(v: &GemmVariant, p: &Problem) -> u32 {
    v.stages * v.shape.tile.slot_bytes(p.dtype, p.layout) + staging_bytes(v, p) + smem_align(v)
        - 128
}

/// The block: the tile's consumer warps, plus the producer (a warp, or a warpgroup that hands
/// its registers over) when warp-specialised.
pub fn threads(v: &GemmVariant) -> u32 {
    let producer = match (v.warp_specialized, v.shape.tile.wgmma) {
        (false, _) => 0,
        (true, false) => 32,
        (true, true) => 128,
    };
    v.shape.tile.threads() + producer
}

/// Every -D option of the build: the pipeline's (with the instrumentation), then the GEMM's.
pub fn defines(v: &GemmVariant, p: &Problem, instrument: Instrument) -> Vec<String> {
    let t = v.shape.tile;
    let mut d = v.defines(&PipeBuild {
        dtype: p.dtype,
        consumers: t.threads(),
        instrument,
        fold: 1,
        split: 1,
    });
    d.extend([
        format!("-DBM={}", t.bm),
        format!("-DBN={}", t.bn),
        format!("-DBK={}", t.bk),
        format!("-DWARPS_M={}", t.warps_m),
        format!("-DWARPS_N={}", t.warps_n),
        format!("-DMIN_BLOCKS={}", t.min_blocks),
        format!("-DB_NK={}", u32::from(p.layout == Layout::Nk)),
        format!("-DWGMMA={}", u32::from(t.wgmma)),
        format!("-DPERSISTENT={}", u32::from(v.shape.persistent)),
        format!("-DPINGPONG={}", u32::from(v.shape.pingpong)),
        format!("-DMMA_LAG={}", u32::from(v.shape.pingpong)),
        format!("-DCLUSTER={}", v.shape.cluster),
        format!("-DTMA_STORE={}", u32::from(v.shape.tma_store)),
        format!("-DSPLIT_K={}", u32::from(v.shape.split_k)),
        format!("-DSWAP_AB={}", u32::from(t.swap_ab)),
        format!("-DSMEM_ALIGN={}", smem_align(v)),
    ]);
    if registers_handed_over(v).is_some() {
        d.extend(handover::defines());
    }
    d
}

/// The registers a block hands between its warpgroups after `setmaxnreg` (a producer
/// warpgroup's and the consumers'), where it does: the block must have been launched with
/// at least as many.
pub fn registers_handed_over(v: &GemmVariant) -> Option<u32> {
    (v.shape.tile.wgmma && v.warp_specialized).then(|| handover::registers(v.shape.tile.threads()))
}

pub fn completion(v: &GemmVariant) -> String {
    // the consumer threads that read each step: in ping-pong, one warpgroup's
    let readers = match v.shape.pingpong {
        true => 128,
        false => v.shape.tile.threads(),
    };
    let mut ring = v.with_policy(v.protocol(readers * v.shape.cluster));
    if v.shape.persistent {
        ring.push_str("; persistent: the ring runs on across the tiles a block walks, the producer loading the next tile's slices while the consumers store the last");
    }
    if v.shape.pingpong {
        ring.push_str("; ping-pong: each consumer warpgroup computes the tiles of its turns, waiting for its turn (named barrier 8 or 9) before its MMAs and passing it on once they are issued (before they retire, so the other's queue behind them), then storing its tile while the other's MMAs run; within a turn a step's MMAs run on while the next slot is awaited, wgmma.wait_group 1 retiring the previous step's before its slot is released (a step late), 0 at the turn's end");
    }
    if v.shape.cluster > 1 {
        ring.push_str(&format!("; clusters of {} CTAs: each multicasts its part of B's slice into every CTA's slot, so empty[s] counts the consumer warps of the whole cluster and the producer waits for their last releases before its block exits", v.shape.cluster));
    }
    if v.shape.split_k {
        ring.push_str("; split-K: the blocks beyond one per tile each take a part of K, write its partial sums, and the last of a tile's blocks to count itself in (an atomic counter after a fence) adds the parts in split order and stores C");
    }
    if v.shape.tma_store {
        ring.push_str("; C staged in shared memory: each writer fences (fence.proxy.async), a named barrier, then one thread's TMA store; cp.async.bulk.wait_group.read before a buffer is staged again");
    }
    // ping-pong's wait, a step late, is said with its turns
    let retired = match v.shape.pingpong {
        true => "",
        false => "; wgmma.wait_group 0 retires the slot's reads before its release",
    };
    match (v.shape.tile.wgmma, v.warp_specialized) {
        (false, _) => ring,
        (true, false) => format!("{ring}{retired}"),
        (true, true) => format!(
            "{ring} (of a producer warpgroup){retired}; setmaxnreg: producer warpgroup {}, each consumer warpgroup {} registers per thread",
            handover::REGS_PRODUCER,
            handover::REGS_CONSUMER
        ),
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
            let mut all = catalogue(dt);
            assert!(all[0].is_baseline());
            all.extend(controls(dt));
            // direct reads row tiles in place; a GEMM step stages slices of A and B
            assert!(all.iter().all(|v| v.mechanism != Mechanism::Direct));
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
            for v in catalogue(dt)
                .iter()
                .filter(|v| !v.name.contains('x') && !v.shape.tile.wgmma)
            {
                assert_eq!(v.shape.tile, fam, "{}", v.name);
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
        let cp = &catalogue(DType::F32)[2];
        assert_eq!(cp.copy_bytes, 16);
        let f = fit(cp, &[&p(1002, DType::F32)]);
        assert_eq!((f.copy_bytes, f.name.as_str()), (8, "cpasync-ca8-s2"));
        let tuned = catalogue(DType::F32)
            .into_iter()
            .find(|v| v.name == "cpasync-cg16-s3-128x256x16-8w")
            .unwrap();
        let tuned = fit(&tuned, &[&p(1002, DType::F32)]);
        assert_eq!(tuned.name, "cpasync-ca8-s3-128x256x16-8w");
        assert!(can_implement(&f, &p(1002, DType::F32)).is_ok());
        let odd = p(1001, DType::Bf16);
        let f = fit(cp, &[&odd]);
        let why = can_implement(&f, &odd).unwrap_err();
        assert!(
            why.contains("1001 elements") && why.contains("copy unit"),
            "{why}"
        );
        let sync = fit(&catalogue(DType::Bf16)[0], &[&odd]);
        assert_eq!(sync.copy_bytes, 2);
        assert!(can_implement(&sync, &odd).is_ok());
    }

    #[test]
    fn decode_tiles_split_k_on_cp_async_and_keep_it_when_narrowed() {
        assert!(catalogue(DType::F32).iter().all(|v| !v.shape.split_k));
        let sk: Vec<GemmVariant> = catalogue(DType::Bf16)
            .into_iter()
            .filter(|v| v.shape.split_k && !v.shape.tile.wgmma)
            .collect();
        let names: Vec<&str> = sk.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "cpasync-cg16-s4-sk-16x128x64-4w",
                "cpasync-cg16-s6-sk-16x128x64-4w",
                "cpasync-cg16-s4-sk-32x128x64-4w",
                "cpasync-cg16-s6-sk-32x128x64-4w",
                "cpasync-cg16-s4-sk-64x128x64-4w",
                "cpasync-cg16-s6-sk-64x128x64-4w"
            ]
        );
        let decode = Problem::new(16, 14336, 4096, Layout::Nk, DType::Bf16).unwrap();
        let d = defines(&sk[0], &decode, Instrument::CLEAN);
        for want in [
            "-DSPLIT_K=1",
            "-DBM=16",
            "-DWARPS_M=1",
            "-DWARPS_N=4",
            "-DWGMMA=0",
        ] {
            assert!(d.contains(&want.to_string()), "{want} in {d:?}");
        }
        // rows of 1002 elements take 4-byte copies: the name says so and keeps its split
        let odd = Problem::new(16, 64, 1002, Layout::Nk, DType::Bf16).unwrap();
        let f = fit(&sk[0], &[&odd]);
        assert_eq!(f.name, "cpasync-ca4-s4-sk-16x128x64-4w");
        assert!(f.shape.split_k && f.copy_bytes == 4);
        assert!(can_implement(&f, &odd).is_ok());
        // every split-K tile of every problem has its counter (the suite's tails among them)
        for p in [
            odd,
            decode,
            Problem::new(257, 392, 1000, Layout::Nk, DType::Bf16).unwrap(),
        ] {
            for v in catalogue(DType::Bf16).iter().filter(|v| v.shape.split_k) {
                let t = v.shape.tile;
                let tiles = p.m.div_ceil(t.bm as usize) * p.n.div_ceil(t.bn as usize);
                assert!(
                    tiles <= super::super::data::counters(&p),
                    "{} on {p:?}",
                    v.name
                );
            }
        }
    }

    #[test]
    fn the_memcpy_async_pipeline_takes_16_byte_rows_or_says_why_not() {
        let mca = catalogue(DType::F32)
            .into_iter()
            .find(|v| v.mechanism == Mechanism::MemcpyAsyncPipeline)
            .expect("an fp32 memcpy_async + cuda::pipeline variant");
        assert_eq!(
            (mca.name.as_str(), mca.shape.tile),
            ("mca-pipeline-a16-s3", Tile::family(DType::F32))
        );
        let odd = p(1002, DType::F32);
        assert_eq!(
            fit(&mca, &[&odd]),
            mca,
            "never narrowed: its spelling is for 16 bytes"
        );
        let why = can_implement(&mca, &odd).unwrap_err();
        assert!(
            why.contains("4008 bytes") && why.contains("16-byte units"),
            "{why}"
        );
        assert!(can_implement(&mca, &p(1024, DType::F32)).is_ok());
        assert!(
            defines(&mca, &p(64, DType::F32), Instrument::CLEAN)
                .contains(&"-DMCA_FORM=0".to_string())
        );
    }

    #[test]
    fn defines_carry_tile_layout_and_control() {
        let c = &controls(DType::Bf16)[0];
        let d = defines(
            c,
            &Problem::new(8, 8, 8, Layout::Nk, DType::Bf16).unwrap(),
            Instrument::CLEAN,
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
