//! Measures a sweep on the GPU: builds validated before any point is timed, the input generated
//! once at the largest size and timed through prefixes of it, each point appended as it lands.

use super::{PointId, Provenance, Record, SweepOptions, append, key, resume};
use crate::bench;
use crate::check::cases;
use crate::harness::{DeviceData, Harness, tiles};
use crate::pipeline::{BuildConfig, Mechanism, Variant};
use crate::report::{Status, VariantResult};
use crate::run::{Ready, case_seed, prepare_all, validate_case};
use crate::workload::View;
use crate::{Error, Result};

const VALIDATED: &str = "build validated before timing on 4 shapes (small as-given, tail, fewer tiles than stages, strided + offset)";
/// The timing inputs' random block: larger than the L2 many times over, so that its period never
/// shows in a timing, and generated in a fraction of a second.
const TIMING_BLOCK: usize = 256 << 20;
const PROBE: &str = "stage probe: one stage only, output meaningless, not validated";

/// What can be judged without a GPU, so that it is refused before any GPU work: the file (there
/// already, without resume), each dtype's rows and tile heights, the largest point's view, and the
/// host memory its input takes (`available` bytes; None: not known).
pub fn check(o: &SweepOptions, available: Option<u64>) -> Result<()> {
    if !o.resume && o.jsonl.exists() {
        return Err(Error::InvalidArgument(format!(
            "{} exists: pass --resume to continue it, or another --out",
            o.jsonl.display()
        )));
    }
    let max_tiles = o.spec.tiles.iter().copied().max().unwrap_or(1);
    for &dtype in &o.spec.dtypes {
        for tile_rows in o.spec.heights(o.hidden, dtype) {
            let tokens = max_tiles
                .checked_mul(tile_rows)
                .filter(|&t| t <= View::MAX_TOKENS)
                .ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "{max_tiles} tiles of {tile_rows} rows are more rows than the kernels' 32-bit counts hold; \
                         allowed: tiles x tile_rows <= {}",
                        View::MAX_TOKENS
                    ))
                })?;
            let view = View::new(tokens, o.hidden, None, 0, None, dtype)?;
            BuildConfig::checked(dtype, o.hidden, Some(tile_rows))?;
            crate::meminfo::check(
                &format!(
                    "the sweep's largest input ({max_tiles} tiles of {tile_rows} {dtype} rows)"
                ),
                (view.alloc * dtype.size()) as u64,
                available,
            )?;
        }
    }
    Ok(())
}

/// What one configuration builds: the variants whole and, with `probes`, each staged variant's
/// copy stage alone and the baseline's compute stage alone. Direct has no copy stage apart: its
/// copy is its compute body's own loads.
fn build_sets(
    full: BuildConfig,
    variants: &[Variant],
    probes: bool,
) -> Vec<(BuildConfig, Vec<Variant>)> {
    let mut sets = vec![(full, variants.to_vec())];
    if probes {
        let staged = variants.iter().filter(|v| v.mechanism != Mechanism::Direct);
        sets.push((BuildConfig { only: 1, ..full }, staged.cloned().collect()));
        sets.push((
            BuildConfig { only: 2, ..full },
            vec![Variant::catalogue().remove(0)],
        ));
    }
    sets
}

pub fn sweep(h: &Harness, o: &SweepOptions) -> Result<Vec<Record>> {
    check(o, crate::meminfo::available())?;
    let done = if o.worker.is_some() {
        // siblings append to the same file: read it, never cut it (the parent did, if needed)
        super::measured(&o.jsonl)?
    } else if o.resume {
        let resumed = resume(&o.jsonl)?;
        for w in &resumed.warnings {
            h.progress.note(w);
        }
        resumed.done
    } else {
        Default::default()
    };
    let ceiling = bench::copy_ceiling(h, 1 << 30, 10)?.gbps;
    let mut records = Vec::new();
    for &dtype in &o.spec.dtypes {
        for tile_rows in o.spec.heights(o.hidden, dtype) {
            let full = BuildConfig::new(dtype, o.hidden, Some(tile_rows));
            let variants = super::shard::workers_variants(o.spec.variants(), o.worker);
            let probes = o.spec.probes && o.worker.is_none_or(|w| w.index == 0);
            let sets = build_sets(full, &variants, probes);
            let small = View::new(tile_rows * 64 + 1, o.hidden, None, 0, None, dtype)?;
            let mut ready: Vec<Ready> = Vec::new();
            for (cfg, vs) in &sets {
                let mut res: Vec<VariantResult> =
                    vs.iter().map(|v| VariantResult::new(v, cfg)).collect();
                ready.extend(prepare_all(h, vs, cfg, &[small], &mut res));
            }
            // validate the whole-pipeline builds; probes are not meant to be correct
            let full_ready: Vec<&Ready> =
                ready.iter().filter(|r| r.prepared.cfg.only == 0).collect();
            let mut res: Vec<VariantResult> = variants
                .iter()
                .map(|v| VariantResult::new(v, &full))
                .collect();
            h.progress.stage("validate", 4 * full_ready.len() as u64);
            for (i, case) in cases::run_cases(small, dtype, tile_rows)?
                .iter()
                .enumerate()
            {
                validate_case(h, &full_ready, &mut res, case, dtype, case_seed(o.seed, i))?;
            }
            h.progress.done();
            for r in res.iter().filter(|r| r.status != Status::Passed) {
                h.progress.note(&format!(
                    "not timed: {} {}",
                    r.name,
                    r.detail.clone().unwrap_or_default()
                ));
            }
            let max_tiles = *o.spec.tiles.iter().max().expect("tiles axis has values");
            let view = View::new(max_tiles * tile_rows, o.hidden, None, 0, None, dtype)?;
            let need = 2 * view.elements() * dtype.size();
            let free = h.gpu.free_memory()? as usize;
            if need > free * 3 / 4 {
                return Err(Error::OutOfMemory {
                    what: format!("the sweep's largest point ({max_tiles} tiles)"),
                    needed: need as u64,
                    free: free as u64,
                });
            }
            h.progress.note(&format!(
                "{} MiB of inputs for up to {max_tiles} tiles: a seeded random block of {} MiB, \
                 repeated on the device",
                (need / 2) >> 20,
                ((need / 2).min(TIMING_BLOCK)) >> 20
            ));
            let dd = DeviceData::repeated(&h.gpu, h.workload, view, dtype, o.seed, TIMING_BLOCK)?;
            let mut tile_counts = o.spec.tiles.clone();
            tile_counts.sort_unstable();
            let timed: Vec<&Ready> = ready
                .iter()
                .filter(|r| {
                    r.prepared.cfg.only != 0
                        || res.iter().any(|v| {
                            v.name == r.prepared.variant.name && v.status == Status::Passed
                        })
                })
                .collect();
            h.progress.stage(
                &format!("sweep {dtype} r{tile_rows}"),
                (tile_counts.len() * timed.len()) as u64,
            );
            let mut rot = Vec::new();
            for &n in &tile_counts {
                let v = View::new(n * tile_rows, o.hidden, None, 0, None, dtype)?;
                for r in &timed {
                    crate::interrupt::check()?;
                    let p = &r.prepared;
                    let k = key(&p.variant.name, p.cfg.only, dtype, o.hidden, tile_rows, n);
                    h.progress.step(&k);
                    if done.contains(&k) || o.shard.is_some_and(|s| !s.owns(&k)) {
                        continue;
                    }
                    let params = dd.rotated(&h.gpu, p, &v, &mut rot)?;
                    // a variant with a tile size of its own walks its own tiles of these rows
                    let own_tiles = tiles(&v, p.cfg.tile_rows);
                    let grid = h.persistent_grid(p, own_tiles);
                    let t = bench::time_kernel(h, p, grid, &params, &o.timing)?;
                    let id = PointId {
                        key: k,
                        variant: p.variant.name.clone(),
                        mechanism: Some(p.variant.mechanism),
                        stages: p.variant.stages,
                        only: p.cfg.only,
                        dtype,
                        hidden: o.hidden,
                        tile_rows,
                        tiles: n,
                        blocks: grid,
                        tiles_per_block: own_tiles.div_ceil(grid as usize),
                    };
                    let from = Provenance {
                        validated: if p.cfg.only == 0 { VALIDATED } else { PROBE }.into(),
                        gpu: super::peers::gpu_of(h),
                        peer: None,
                    };
                    let rec = Record::measured(id, &t, v.bytes_moved(dtype), ceiling, from);
                    append(&o.jsonl, &rec)?;
                    records.push(rec);
                }
            }
            h.progress.done();
            // the GPU memory of this height's timing inputs goes back before torch takes its own
            drop(rot);
            drop(dd);
            if let Some(python) = o.torch_python.as_deref()
                && o.worker.is_none_or(|w| w.index == 0)
            {
                let slice = super::peers::Slice {
                    dtype,
                    tile_rows,
                    tiles: &tile_counts,
                    ceiling_gbps: ceiling,
                };
                let ctx = super::peers::Context::of(h);
                super::peers::measure(&ctx, o, python, &slice, &done, &mut records)?;
            }
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    #[test]
    fn probes_leave_direct_whole_only_and_time_the_baselines_compute() {
        let full = BuildConfig::new(DType::Bf16, 4096, None);
        let vs = vec![
            Variant::direct(1),
            Variant::cpasync(2, 16),
            Variant::catalogue().remove(0),
        ];
        let names = |v: &[Variant]| v.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
        let sets = build_sets(full, &vs, true);
        let only: Vec<u32> = sets.iter().map(|(c, _)| c.only).collect();
        assert_eq!(only, [0, 1, 2]);
        assert_eq!(names(&sets[0].1), ["direct", "cpasync-cg16-s2", "sync"]);
        assert_eq!(names(&sets[1].1), ["cpasync-cg16-s2", "sync"]);
        assert_eq!(names(&sets[2].1), ["sync"]);
        // without probes: the whole builds alone
        let sets = build_sets(full, &vs, false);
        assert_eq!(sets.len(), 1);
        assert_eq!(names(&sets[0].1), ["direct", "cpasync-cg16-s2", "sync"]);
    }
}
