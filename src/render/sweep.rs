//! SVG plots of sweep records, whichever workload: time per step against the size axis (fill
//! and drain), the figure (GB/s or TFLOP/s) against size with the ceiling as a line, speedup (or
//! the figure) against stages; and the pipeline model against the records with stage probes.

use super::plot::{Scale, Series, lines};
use crate::model::{self, Comparison, StageTimes};
use crate::results::Bound;
use crate::results::sweep::Record;
use std::collections::BTreeMap;

/// The plots a sweep's records make, each with its file name: per bound, the three that show
/// where the pipeline pays.
pub fn plots(records: &[Record]) -> Vec<(&'static str, Result<String, String>)> {
    match records.first().map(|r| r.bound) {
        Some(Bound::Compute) => vec![
            ("figure-vs-steps.svg", figure_vs_steps(records)),
            ("figure-vs-stages.svg", figure_vs_stages(records)),
        ],
        _ => vec![
            ("time-per-tile.svg", time_per_tile(records)),
            ("bandwidth.svg", bandwidth(records)),
            ("speedup-vs-stages.svg", speedup_vs_stages(records)),
        ],
    }
}

/// The GPU model a record was measured on ("NVIDIA H200": no ordinal, no UUID), when the records
/// come from more than one model; None when they all come from one (or do not say). Identical GPUs
/// of one host that shared a sweep (`--devices`) are one group: each measured whole variants, so a
/// GPU of its own would lack the others' `sync` to divide by.
fn gpu_of<'r>(records: &[Record], r: &'r Record) -> Option<&'r str> {
    let first = records.first().map(model_of);
    let several = records.iter().any(|o| Some(model_of(o)) != first);
    several.then(|| model_of(r))
}

/// "GPU 1: NVIDIA H200 (GPU-...)" -> "NVIDIA H200".
fn model_of(r: &Record) -> &str {
    r.gpu.as_deref().map_or("GPU unknown", |g| {
        let named = g.split_once(": ").map_or(g, |(_, rest)| rest);
        named.rsplit_once(" (").map_or(named, |(name, _)| name)
    })
}

/// A series' name: the label, and the GPU where several measured the sweep.
fn named(label: &str, gpu: Option<&str>) -> String {
    match gpu {
        Some(g) => format!("{label} @ {g}"),
        None => label.to_string(),
    }
}

/// Whole-pipeline records grouped by variant (and GPU, where several measured the sweep), sorted
/// by tile count.
fn by_variant(records: &[Record]) -> BTreeMap<String, Vec<&Record>> {
    let mut m: BTreeMap<String, Vec<&Record>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.only == 0) {
        m.entry(named(&r.variant, gpu_of(records, r)))
            .or_default()
            .push(r);
    }
    for v in m.values_mut() {
        v.sort_by_key(|r| r.size);
    }
    m
}

/// Device time per tile (us) against tile count: falls while fill and drain amortise, then flattens.
pub fn time_per_tile(records: &[Record]) -> Result<String, String> {
    let series: Series = by_variant(records)
        .into_iter()
        .map(|(v, rs)| {
            (
                v,
                rs.iter()
                    .map(|r| (r.size as f64, r.median_ms * 1e3 / r.size as f64))
                    .collect(),
            )
        })
        .collect();
    lines(
        "device time per tile vs tile count",
        "tiles",
        "us per tile (median launch / tiles)",
        &series,
        None,
        Scale::LogXY,
    )
}

/// Achieved GB/s against bytes moved, with the copy ceiling measured in the same sweep.
pub fn bandwidth(records: &[Record]) -> Result<String, String> {
    let series: Series = by_variant(records)
        .into_iter()
        .map(|(v, rs)| {
            (
                v,
                rs.iter().map(|r| (r.bytes_moved as f64, r.gbps)).collect(),
            )
        })
        .collect();
    let ceiling = records.iter().map(|r| r.ceiling).fold(0.0, f64::max);
    lines(
        "achieved bandwidth vs size",
        "bytes moved (X read + Y written)",
        "GB/s",
        &series,
        Some((ceiling, "device-to-device copy")),
        Scale::LogX,
    )
}

/// Speedup over sync at the largest tile count, per mechanism, against stages.
pub fn speedup_vs_stages(records: &[Record]) -> Result<String, String> {
    let largest = records
        .iter()
        .filter(|r| r.only == 0)
        .map(|r| r.size)
        .max()
        .ok_or("no points")?;
    // the peers have no stages: they are lines of the other two plots only
    let at: Vec<&Record> = records
        .iter()
        .filter(|r| r.only == 0 && r.size == largest && r.is_own())
        .collect();
    // each GPU's points against that GPU's own sync
    let mut m: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for r in &at {
        let gpu = gpu_of(records, r);
        let base = at
            .iter()
            .find(|o| o.variant == "sync" && gpu_of(records, o) == gpu)
            .ok_or("no sync point at the largest tile count")?
            .median_ms;
        let mech = r
            .variant
            .rsplit_once("-s")
            .map_or(r.variant.clone(), |(a, _)| a.to_string());
        m.entry(named(&mech, gpu))
            .or_default()
            .push((r.stages as f64, base / r.median_ms));
    }
    let series: Series = m
        .into_iter()
        .map(|(k, mut p)| {
            p.sort_by(|a, b| a.0.total_cmp(&b.0));
            (k, p)
        })
        .collect();
    lines(
        &format!("speedup over sync at {largest} tiles"),
        "stages (log axis)",
        "speedup (sync time / time)",
        &series,
        Some((1.0, "sync")),
        Scale::LogX,
    )
}

/// The model against every whole-pipeline record, with stage times from the probes at the largest
/// tile count of the same configuration: (comparison, stage times, explanation).
pub fn model_table(records: &[Record]) -> Vec<(Comparison, StageTimes, String)> {
    let mut out = Vec::new();
    for r in records.iter().filter(|r| r.only == 0 && r.is_own()) {
        let same = |o: &&Record| o.dtype == r.dtype && o.config == r.config;
        // The largest grid a build ran with: its resident blocks (persistent grid).
        let resident = |only: u32, variant: Option<&str>| {
            records
                .iter()
                .filter(same)
                .filter(|o| o.only == only && variant.is_none_or(|v| o.variant == v))
                .max_by_key(|o| o.size)
        };
        let Some(full) = resident(0, Some(&r.variant)) else {
            continue;
        };
        // Per tile and block, rescaled to this variant's residency: a probe that ran with more
        // co-resident blocks per SM shared each SM among more blocks, so each of its blocks took
        // longer per stage than one of this variant's blocks does (and the other way round).
        let per_tile = |only: u32, variant: Option<&str>| {
            resident(only, variant).map(|o| {
                o.median_ms / o.steps_per_block as f64 * f64::from(full.blocks)
                    / f64::from(o.blocks)
            })
        };
        let (Some(copy), Some(compute)) = (per_tile(1, Some(&r.variant)), per_tile(2, None)) else {
            continue;
        };
        let t = StageTimes { copy, compute };
        let c = model::compare(
            &r.variant,
            r.stages as usize,
            t,
            r.steps_per_block,
            r.median_ms,
        );
        let why = model::explain(&c, t);
        out.push((c, t, why));
    }
    out
}

/// The figure (TFLOP/s) against the pipeline steps each block walks, one line per variant: low
/// while fill and drain (the first S-1 steps issued before any compute, the last ones computed
/// with nothing left to copy) take a large share of few steps.
pub fn figure_vs_steps(records: &[Record]) -> Result<String, String> {
    let mut by: BTreeMap<(u32, String), Vec<(f64, f64)>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.only == 0 && r.is_own()) {
        by.entry((r.stages, named(&r.variant, gpu_of(records, r))))
            .or_default()
            .push((r.steps_per_block as f64, r.figure()));
    }
    let series: Series = by.into_iter().map(|((_, v), pts)| (v, pts)).collect();
    lines(
        "TFLOP/s against the pipeline steps per block",
        "steps per block (log)",
        "TFLOP/s",
        &series,
        None,
        Scale::LogX,
    )
}

/// The figure against stages at each size, the x axis naming the resident blocks (and limiter)
/// of each stage count: a stage that costs a resident block shows as a drop.
pub fn figure_vs_stages(records: &[Record]) -> Result<String, String> {
    let mut by: BTreeMap<usize, Vec<(f64, f64)>> = BTreeMap::new();
    let mut resident: BTreeMap<u32, String> = BTreeMap::new();
    let staged = records
        .iter()
        .filter(|r| r.only == 0 && r.is_own() && r.stages > 1);
    for r in staged {
        by.entry(r.size)
            .or_default()
            .push((r.stages as f64, r.figure()));
        if let Some(res) = &r.resources {
            resident.insert(
                r.stages,
                format!("S{} {} ({})", r.stages, res.blocks_per_sm, res.limiter),
            );
        }
    }
    let axis = records.first().map_or("size", |r| r.axis.as_str());
    let series: Series = by
        .into_iter()
        .map(|(n, mut pts)| {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (format!("{axis}={n}"), pts)
        })
        .collect();
    let occupancy: Vec<String> = resident.into_values().collect();
    let x_desc = format!("stages; blocks/SM: {}", occupancy.join(", "));
    lines(
        "TFLOP/s against stages",
        &x_desc,
        "TFLOP/s",
        &series,
        None,
        Scale::Linear,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::sweep::tests::record;

    fn sample() -> Vec<Record> {
        let mut v = Vec::new();
        for t in [64usize, 1024, 65536].iter() {
            v.push(record("sync", 0, 1, *t, 0.01 + 0.002 * *t as f64 / 64.0));
            v.push(record(
                "cpasync-cg16-s2",
                0,
                2,
                *t,
                0.009 + 0.0017 * *t as f64 / 64.0,
            ));
            v.push(record(
                "cpasync-cg16-s2",
                1,
                2,
                *t,
                0.0015 * *t as f64 / 64.0,
            ));
            v.push(record("sync", 1, 1, *t, 0.0015 * *t as f64 / 64.0));
            v.push(record("sync", 2, 1, *t, 0.0009 * *t as f64 / 64.0));
        }
        v
    }

    #[test]
    fn plots_render_with_every_series() {
        let r = sample();
        for svg in [
            time_per_tile(&r).unwrap(),
            bandwidth(&r).unwrap(),
            speedup_vs_stages(&r).unwrap(),
        ] {
            assert!(
                svg.starts_with("<svg") && svg.contains("<polyline"),
                "no lines"
            );
        }
        let t = time_per_tile(&r).unwrap();
        assert!(t.contains("cpasync-cg16-s2") && t.contains("sync"));
        assert!(bandwidth(&r).unwrap().contains("device-to-device copy"));
        assert!(time_per_tile(&[]).is_err());
    }

    /// A sweep measured on two GPU models: one line per variant and model, each model's speedups
    /// against its own sync; a sweep on one model keeps plain names.
    #[test]
    fn points_of_several_gpu_models_are_plotted_per_model() {
        let mut r = sample();
        assert!(!time_per_tile(&r).unwrap().contains(" @ "));
        let mut second: Vec<Record> = sample()
            .into_iter()
            .map(|mut x| {
                x.median_ms *= 2.0;
                x.gpu = Some("GPU 1: NVIDIA H100 80GB HBM3 (GPU-beef)".into());
                x
            })
            .collect();
        for rec in r.iter_mut() {
            rec.gpu = Some("GPU 0: NVIDIA H200 (GPU-cafe)".into());
        }
        r.append(&mut second);
        let t = time_per_tile(&r).unwrap();
        for name in [
            "sync @ NVIDIA H200",
            "sync @ NVIDIA H100 80GB HBM3",
            "cpasync-cg16-s2 @ NVIDIA H100 80GB HBM3",
        ] {
            assert!(t.contains(name), "{name}");
        }
        assert!(!t.contains("GPU-cafe"), "no UUIDs in the legend");
        // each model against its own sync (the H100 points alone have no H200 sync to divide)
        let s = speedup_vs_stages(&r).unwrap();
        assert!(
            s.contains("cpasync-cg16 @ NVIDIA H200") && s.contains("cpasync-cg16 @ NVIDIA H100")
        );
    }

    /// `--devices all` on two identical GPUs deals whole variants out: `sync` ran on GPU 0 only,
    /// and the speedups of GPU 1's variants are still drawn against it, under plain names.
    #[test]
    fn identical_gpus_sharing_a_sweep_are_one_group() {
        let mut r = sample();
        for rec in r.iter_mut() {
            let ordinal = usize::from(rec.variant != "sync");
            rec.gpu = Some(format!("GPU {ordinal}: NVIDIA H200 (GPU-{ordinal}cafe)"));
        }
        let s = speedup_vs_stages(&r).unwrap();
        assert!(s.contains("cpasync-cg16") && !s.contains(" @ "));
        assert!(!time_per_tile(&r).unwrap().contains(" @ "));
        r[0].gpu = Some("GPU 2: NVIDIA A100-SXM4-80GB (GPU-f00d)".into());
        assert!(
            time_per_tile(&r)
                .unwrap()
                .contains(" @ NVIDIA A100-SXM4-80GB")
        );
    }

    #[test]
    fn model_uses_probes_of_the_same_configuration() {
        let rows = model_table(&sample());
        assert_eq!(rows.len(), 6, "every whole-pipeline record is compared");
        let (c, t, _) = rows
            .iter()
            .find(|(c, _, _)| c.variant == "sync" && c.tiles_per_block == 65536 / 528 + 1)
            .unwrap();
        // copy probe: 0.0015 ms x 1024 / 125 tiles per block; compute probe alike
        assert!((t.copy - 0.0015 * 1024.0 / 125.0).abs() < 1e-12);
        assert!((t.compute - 0.0009 * 1024.0 / 125.0).abs() < 1e-12);
        assert_eq!(c.stages, 1);
        assert!((c.predicted - 125.0 * (t.copy + t.compute)).abs() < 1e-9);
    }

    #[test]
    fn stage_times_scale_with_the_blocks_sharing_each_sm() {
        let mut r = sample();
        // the same pipeline on a grid of 792 blocks (6 per SM instead of 4)
        let mut wide = record("cpasync-cg16-s2", 0, 2, 65536, 0.5);
        wide.variant = "wide".into();
        wide.blocks = 792;
        wide.steps_per_block = 65536usize.div_ceil(792);
        let mut probe = record("cpasync-cg16-s2", 1, 2, 65536, 0.0015 * 1024.0);
        probe.variant = "wide".into();
        probe.blocks = 792;
        probe.steps_per_block = 65536usize.div_ceil(792);
        r.extend([wide, probe]);
        let rows = model_table(&r);
        let (_, t, _) = rows.iter().find(|(c, _, _)| c.variant == "wide").unwrap();
        // the compute probe ran on 528 blocks: each of 792 resident blocks computes 1.5x slower
        assert!((t.compute - 0.0009 * 1024.0 / 125.0 * 1.5).abs() < 1e-12);
        // its own copy probe ran on the same grid: unscaled
        assert!((t.copy - 0.0015 * 1024.0 / 83.0).abs() < 1e-12);
    }
}
