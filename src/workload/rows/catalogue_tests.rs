//! The catalogue, its build configurations, requirements and -D selections.

use super::*;
use crate::dtype::DType;
use crate::pipeline::{Claim, Pipe};

fn cfg() -> BuildConfig {
    BuildConfig::new(DType::Bf16, 4096, None)
}

/// A known hazard (a per-stage destination not aligned for its copy) ruled out by
/// construction: every slot starts 128-byte aligned (TMA boxes need 128 B, bulk and cp.async
/// 16 B), and rows inside a slot, where bulk copies and 16-byte vectors land, stay 16-byte
/// aligned, for every variant at every hidden size a row of whole 16-byte vectors allows.
#[test]
fn every_stage_destination_is_aligned_for_its_copy() {
    for v in catalogue().iter().chain(&controls()) {
        for dt in DType::ALL {
            let vec = 16 / dt.size();
            for hidden in (vec..=8192).step_by(vec) {
                for tile_rows in 1..=8 {
                    let cfg = config(v, &BuildConfig::new(dt, hidden, Some(tile_rows)));
                    let slot = cfg.slot_bytes();
                    assert!(slot >= cfg.tile_rows as u32 * cfg.row_bytes());
                    assert_eq!(dynamic_smem(v, &cfg), v.slots() * slot);
                    for s in 0..v.stages {
                        assert_eq!((s * slot) % 128, 0, "{} {dt} {hidden} stage {s}", v.name);
                    }
                    assert_eq!(cfg.row_bytes() % 16, 0);
                    assert_eq!(cfg.row_bytes() % v.copy_bytes.max(1), 0, "{}", v.name);
                }
            }
        }
    }
}

#[test]
fn a_variant_with_its_own_tile_size_overrides_the_runs() {
    let big = catalogue()
        .into_iter()
        .find(|v| v.name == "tma-ws-s3-64k")
        .expect("the 64 KiB TMA variant is catalogued");
    assert_eq!(
        config(&big, &cfg()).tile_rows,
        8,
        "64 KiB of 8 KiB bf16 rows"
    );
    assert_eq!(dynamic_smem(&big, &config(&big, &cfg())), 3 * 65536);
    let f32_wide = BuildConfig::new(DType::F32, 16384, None);
    assert_eq!(
        config(&big, &f32_wide).tile_rows,
        1,
        "a row above 64 KiB: one row"
    );
    let plain = row(Pipe::with_stages(Mechanism::Tma, 3, true));
    assert_eq!(config(&plain, &cfg()), cfg());
}

#[test]
fn direct_reads_the_runs_tiles_in_place() {
    let all = catalogue();
    let i = all.iter().position(|v| v.name == "direct").unwrap();
    assert_eq!(all[i - 1].name, "regprefetch");
    let d = &all[i];
    assert_eq!(d, &direct(1));
    assert_eq!(d.claim(), Claim::Direct);
    assert!(!d.is_baseline() && !d.mechanism.uses_mbarrier_ring());
    // the run's tile height (two rows here), and no slot in shared memory
    let c = config(d, &cfg());
    assert_eq!(c, cfg());
    assert_eq!(c.tile_rows, 2);
    assert_eq!(dynamic_smem(d, &c), 0);
    assert_eq!(unsupported_on(d, 70, 0, &c), None);
    assert!(defines(d, &c).contains(&"-DMECH=7".to_string()));
    assert!(completion(d, &c).starts_with("no staging"));
    assert!(controls().iter().all(|v| v.mechanism != d.mechanism));
}

#[test]
fn direct_x2_and_split2_regroup_threads_and_keep_the_runs_reduction() {
    let all = catalogue();
    let x2 = all.iter().find(|v| v.name == "direct-x2").unwrap();
    assert_eq!(x2, &direct(2));
    assert_eq!((x2.mechanism, x2.shape.fold), (Mechanism::Direct, 2));
    // a block of 128 threads, each doing the work of two of the run's 256: the kernel lays its
    // reduction out for CONSUMERS x FOLD = 256 threads, as sync does
    let c = config(x2, &cfg());
    assert_eq!(c.consumers, cfg().consumers / 2);
    assert_eq!(threads(x2, &c), 128);
    let d = defines(x2, &c);
    assert!(d.contains(&"-DCONSUMERS=128".to_string()) && d.contains(&"-DFOLD=2".to_string()));
    assert!(completion(x2, &c).contains("a block of 128 threads, each doing the work of 2"));
    // direct-split2: a block of 512 threads, each holding half of one reduction thread's vectors
    let s2 = all.iter().find(|v| v.name == "direct-split2").unwrap();
    assert_eq!(s2, &direct_split(2));
    assert_eq!((s2.shape.fold, s2.shape.split), (1, 2));
    let c = config(s2, &cfg());
    assert_eq!(threads(s2, &c), 512);
    let d = defines(s2, &c);
    assert!(d.contains(&"-DCONSUMERS=512".to_string()) && d.contains(&"-DSPLIT=2".to_string()));
    assert!(completion(s2, &c).contains("a block of 512 threads, each holding 1/2 of one"));
    // every other variant regroups nothing
    assert!(
        all.iter()
            .filter(|v| !["direct-x2", "direct-split2"].contains(&v.name.as_str()))
            .all(|v| v.shape.fold == 1
                && v.shape.split == 1
                && defines(v, &cfg()).contains(&"-DFOLD=1".to_string())
                && defines(v, &cfg()).contains(&"-DSPLIT=1".to_string()))
    );
    // a variant recorded before the field existed reads back unfolded
    let mut j = serde_json::to_value(direct(1)).unwrap();
    j.as_object_mut().unwrap().remove("fold");
    j.as_object_mut().unwrap().remove("split");
    let back = serde_json::from_value::<RowVariant>(j).unwrap();
    assert_eq!((back.shape.fold, back.shape.split), (1, 1));
}

#[test]
fn launch_bounds_reach_the_kernel_only_where_the_catalogue_sets_them() {
    let all = catalogue();
    let bound = |name: &str| all.iter().find(|v| v.name == name).unwrap().min_blocks;
    assert_eq!(bound("mca-pipeline-a16-s2"), 4);
    assert_eq!(bound("mca-pipeline-elem-s2"), 8);
    assert_eq!(bound("sync"), 0);
    for v in &all {
        let d = defines(v, &cfg());
        assert!(
            d.contains(&format!("-DMIN_BLOCKS={}", v.min_blocks)),
            "{}",
            v.name
        );
    }
    // the sweep's variants keep ptxas's own choice
    assert_eq!(
        row(Pipe::with_stages(Mechanism::Cpasync, 3, false)).min_blocks,
        0
    );
    // a variant recorded before the field existed reads back unbounded
    let mut j = serde_json::to_value(row(Pipe::cpasync(3, 16)).bounded(4)).unwrap();
    j.as_object_mut().unwrap().remove("min_blocks");
    assert_eq!(
        serde_json::from_value::<RowVariant>(j).unwrap().min_blocks,
        0
    );
}

#[test]
fn catalogue_names_are_unique_and_baseline_first() {
    let mut all = catalogue();
    assert!(all[0].is_baseline());
    all.extend(controls());
    let mut names: Vec<&str> = all.iter().map(|v| v.name.as_str()).collect();
    names.sort();
    let n = names.len();
    names.dedup();
    assert_eq!(n, names.len());
    assert!(controls().iter().all(Variant::is_control));
}

#[test]
fn default_tiles_are_about_16k() {
    assert_eq!(cfg().tile_rows, 2);
    assert_eq!(BuildConfig::default_tile_rows(4096, DType::F32), 1);
    assert_eq!(BuildConfig::default_tile_rows(64, DType::F32), 8);
    assert_eq!(cfg().slot_bytes(), 16384);
}

#[test]
fn requirements_name_what_is_wrong() {
    let c = cfg();
    let cp = row(Pipe::cpasync(2, 16));
    assert_eq!(unsupported_on(&cp, 90, 232448, &c), None);
    let why = unsupported_on(&cp, 75, 232448, &c).unwrap();
    assert!(why.contains("needs sm_80"), "{why}");
    let tma = row(Pipe::ring(Mechanism::Tma, 4, false));
    assert!(
        unsupported_on(&tma, 86, 232448, &c)
            .unwrap()
            .contains("sm_90")
    );
    let why = unsupported_on(&tma, 90, 32768, &c).unwrap();
    assert!(why.contains("exceeds"), "{why}");
}

#[test]
fn select_by_prefix_and_reject_unknown() {
    let v = Variant::select(catalogue(), Some("sync,cpasync-cg")).unwrap();
    let names: Vec<&str> = v.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "sync",
            "cpasync-cg16-s2",
            "cpasync-cg16-s2-el",
            "cpasync-cg16-s3",
            "cpasync-cg16-s4"
        ]
    );
    let e = Variant::select(catalogue(), Some("warp-magic"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("warp-magic") && e.contains("allowed"), "{e}");
}

#[test]
fn the_evict_last_twins_are_their_bases_with_an_l2_policy() {
    let all = catalogue();
    let twins: Vec<&RowVariant> = all.iter().filter(|v| v.l2_evict_last).collect();
    let names: Vec<&str> = twins.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cpasync-cg16-s2-el",
            "bulk-s2-el",
            "tma-s4-el",
            "tma-ws-s3-64k-el"
        ]
    );
    for t in twins {
        let base = all
            .iter()
            .find(|v| Some(v.name.as_str()) == t.name.strip_suffix("-el"))
            .unwrap();
        // the same build in every other respect, so the pair measures the policy alone
        let unhinted = Variant {
            name: base.name.clone(),
            l2_evict_last: false,
            ..t.clone()
        };
        assert_eq!(&unhinted, base);
        assert!(t.takes_l2_policy());
        assert!(defines(t, &cfg()).contains(&"-DL2_EVICT_LAST=1".to_string()));
        assert!(defines(base, &cfg()).contains(&"-DL2_EVICT_LAST=0".to_string()));
        assert!(completion(t, &cfg()).ends_with("its copies mark their L2 lines evict-last"));
        assert!(!completion(base, &cfg()).contains("evict-last"));
    }
    // copies that take no policy are refused the flag
    for v in [
        row(Pipe::cpasync(2, 8)),
        row(Pipe::new("sync", Mechanism::Sync, 1, 16)),
        row(Pipe::mca(
            Mechanism::MemcpyAsyncPipeline,
            McaForm::Aligned16,
            2,
        )),
        direct(1),
    ] {
        assert!(!v.takes_l2_policy(), "{}", v.name);
        let refused = std::panic::catch_unwind(|| v.clone().evict_last());
        assert!(refused.is_err(), "{}", v.name);
    }
    // a variant recorded before the field existed reads back without the policy
    let mut j = serde_json::to_value(row(Pipe::cpasync(2, 16))).unwrap();
    j.as_object_mut().unwrap().remove("l2_evict_last");
    assert!(
        !serde_json::from_value::<RowVariant>(j)
            .unwrap()
            .l2_evict_last
    );
}

/// A view's windows and split stores reach the kernel only where `fit` set them: an aligned
/// build's options are those it had; a windowed staged build's slot rows hold a chunk more; a
/// windowed TMA build names its box and its slot rows hold a box more (boxes start aligned).
#[test]
fn windows_and_split_stores_reach_the_kernel_only_where_set() {
    let c = cfg();
    let window = |v: &RowVariant| RowVariant {
        shape: RowShape {
            x_window: true,
            y_split: true,
            ..v.shape
        },
        ..v.clone()
    };
    let has = |d: &[String], s: &str| d.iter().any(|x| x.starts_with(s));
    for v in catalogue() {
        let d = defines(&v, &config(&v, &c));
        assert!(!has(&d, "-DX_WINDOW") && !has(&d, "-DY_SPLIT") && !has(&d, "-DTMA_CHUNK"));
        let w = window(&v);
        let (plain, wide) = (config(&v, &c), config(&w, &c));
        let d = defines(&w, &wide);
        assert!(
            has(&d, "-DX_WINDOW=1") && has(&d, "-DY_SPLIT=1"),
            "{}",
            v.name
        );
        assert_eq!(
            has(&d, "-DTMA_CHUNK=256"),
            v.mechanism == Mechanism::Tma,
            "{}",
            v.name
        );
        let pad = match v.mechanism {
            Mechanism::Direct => 0,
            Mechanism::Tma => 256 * c.dtype.size() as u32,
            _ => 16,
        };
        let want = (plain.tile_rows as u32 * (plain.row_bytes() + pad)).div_ceil(128) * 128;
        assert_eq!(wide.slot_bytes(), want, "{}", v.name);
        assert!(completion(&w, &wide).contains("rows that start inside a 16-byte chunk"));
        assert!(!completion(&v, &plain).contains("16-byte chunk"));
    }
}
