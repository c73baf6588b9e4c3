//! The GEMM sweep: the same-tile family (sync, regprefetch, cp.async with 2 to 5 stages) over K,
//! each point validated before it is timed. Two plots: TFLOP/s against the K trip count (where
//! fill and drain dominate) and against the stage count (where stages stop paying, with the
//! resident blocks and their limiter beside each point).

use super::kernel::{self, Buffers, Job};
use super::{judge, unsupported};
use crate::bench::{TimingOptions, time_with};
use crate::harness::Engine;
use crate::pipeline::Mechanism;
use crate::plot::{Scale, Series, lines};
use crate::workload::gemm::catalogue::GemmVariant;
use crate::workload::gemm::data::Inputs;
use crate::workload::gemm::reference::{self, Verdict};
use crate::workload::gemm::{Layout, Problem};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
pub struct GemmSweepOptions {
    pub m: usize,
    pub n: usize,
    pub ks: Vec<usize>,
    pub layout: Layout,
    pub dtype: crate::dtype::DType,
    pub seed: u64,
    pub timing: TimingOptions,
}

/// One measured point (a line of gemm-sweep.jsonl).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GemmPoint {
    pub variant: String,
    pub stages: u32,
    pub problem: Problem,
    /// K slices each block walks: the pipeline's trip count.
    pub k_steps: usize,
    pub median_ms: f64,
    pub tflops: f64,
    pub blocks_per_sm: u32,
    pub limiter: String,
    pub dynamic_smem: u32,
    pub registers: u32,
}

/// The family's variants: sync, regprefetch and 16-byte cp.async on the family tile.
fn family(dtype: crate::dtype::DType) -> Vec<GemmVariant> {
    GemmVariant::catalogue(dtype)
        .into_iter()
        .filter(|v| {
            !v.name.contains('x')
                && v.pipe.copy_bytes == 16
                && matches!(
                    v.pipe.mechanism,
                    Mechanism::Sync | Mechanism::Regprefetch | Mechanism::Cpasync
                )
        })
        .collect()
}

/// Measures every family variant at every K, validating each point (sampled f64 reference and
/// `sync` bit for bit) before timing it. A point that fails validation is an error: a sweep of
/// wrong results would plot nonsense.
pub fn sweep(
    e: &Engine,
    o: &GemmSweepOptions,
    mut emit: impl FnMut(&GemmPoint) -> Result<()>,
) -> Result<Vec<GemmPoint>> {
    let variants = family(o.dtype);
    let first = Problem::new(o.m, o.n, o.ks[0], o.layout, o.dtype)?;
    let jobs: Vec<Job> = variants.iter().map(|v| Job::clean(v, &first)).collect();
    let mut kernels = Vec::new();
    for (job, built) in jobs.iter().zip(kernel::build_all(e, &jobs)) {
        kernels.push(kernel::prepare(e, job.clone(), built?, true)?);
    }
    // every point judged before any is measured: a sweep never stops halfway on a refusal
    for &k in &o.ks {
        let p = Problem::new(o.m, o.n, k, o.layout, o.dtype)?;
        if let Some((g, why)) = kernels
            .iter()
            .find_map(|g| unsupported(e, &g.job.variant, &p).map(|w| (g, w)))
        {
            return Err(Error::Unsupported {
                variant: format!("{} at K={k}", g.name()),
                reason: why,
            });
        }
    }
    let mut points = Vec::new();
    e.progress
        .stage("sweep", (o.ks.len() * kernels.len()) as u64);
    for (i, &k) in o.ks.iter().enumerate() {
        let p = Problem::new(o.m, o.n, k, o.layout, o.dtype)?;
        let seed = o.seed ^ (i as u64 + 1) << 32;
        let x = Inputs::new(p, seed);
        let mut d = Buffers::upload(&e.gpu, &x)?;
        let elements = reference::checked_elements(&p, seed);
        let mut base: Option<Vec<u8>> = None;
        for g in &kernels {
            crate::interrupt::check()?;
            e.progress.step(&format!("{} K={k}", g.name()));
            let (c, verdicts) = judge(
                e,
                g,
                &mut d,
                &x,
                &elements,
                (None, base.as_deref()),
                seed as u32,
            )?;
            if let Some(bad) = verdicts.iter().find(|v| !v.passed()) {
                return Err(Error::InvalidArgument(format!(
                    "{} at K={k} failed validation: {}",
                    g.name(),
                    Verdict::summary(bad)
                )));
            }
            base.get_or_insert(c);
            let params = d.params(&e.gpu, g, 0)?;
            let t = time_with(e, g.name(), 1, &o.timing, |_| g.launch(&e.gpu, &params))?;
            let r = &g.resources;
            let point = GemmPoint {
                variant: g.name().into(),
                stages: g.job.variant.pipe.stages,
                problem: p,
                k_steps: k.div_ceil(g.job.variant.tile.bk as usize),
                median_ms: t.device.median,
                tflops: crate::report::gemm::tflops(p.flops(), t.device.median),
                blocks_per_sm: r.occupancy.blocks_per_sm,
                limiter: r.occupancy.limiter.name().into(),
                dynamic_smem: r.dynamic_smem,
                registers: r.function.registers,
            };
            emit(&point)?;
            points.push(point);
        }
    }
    e.progress.done();
    Ok(points)
}

/// TFLOP/s against the K trip count, one line per variant: low while fill and drain (the first
/// S-1 slices issued before any compute, the last ones computed with nothing left to copy) take a
/// large share of few slices.
pub fn plot_k(points: &[GemmPoint]) -> Result<String, String> {
    let mut by: BTreeMap<(u32, String), Vec<(f64, f64)>> = BTreeMap::new();
    for p in points {
        by.entry((p.stages, p.variant.clone()))
            .or_default()
            .push((p.k_steps as f64, p.tflops));
    }
    let series: Series = by.into_iter().map(|((_, v), pts)| (v, pts)).collect();
    lines(
        "GEMM: TFLOP/s against the K trip count",
        "K slices per block (log)",
        "TFLOP/s",
        &series,
        None,
        Scale::LogX,
    )
}

/// TFLOP/s against stages at each K, each line labelled with the blocks per SM (and limiter) of
/// its stage counts: a stage that costs a resident block shows as a drop.
pub fn plot_stages(points: &[GemmPoint]) -> Result<String, String> {
    let mut by: BTreeMap<usize, Vec<(f64, f64)>> = BTreeMap::new();
    let mut resident: BTreeMap<u32, String> = BTreeMap::new();
    for p in points.iter().filter(|p| p.variant.starts_with("cpasync")) {
        by.entry(p.problem.k)
            .or_default()
            .push((p.stages as f64, p.tflops));
        resident.insert(
            p.stages,
            format!("S{} {} ({})", p.stages, p.blocks_per_sm, p.limiter),
        );
    }
    let occupancy: Vec<String> = resident.into_values().collect();
    let series: Series = by
        .into_iter()
        .map(|(k, pts)| (format!("K={k}"), pts))
        .collect();
    let x_desc = format!("stages; blocks/SM: {}", occupancy.join(", "));
    lines(
        "GEMM cp.async: TFLOP/s against stages",
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

    /// Points an H200 measured (bf16, 4096 x 4096, K 32..8192).
    fn h200() -> Vec<GemmPoint> {
        include_str!("../../tests/fixtures/gemm-sweep-bf16.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a gemm sweep point"))
            .collect()
    }

    #[test]
    fn the_k_plot_draws_a_line_per_variant() {
        let svg = plot_k(&h200()).unwrap();
        for v in ["sync", "regprefetch", "cpasync-cg16-s2", "cpasync-cg16-s5"] {
            assert!(svg.contains(&format!("\n{v}\n")), "{v} in the legend");
        }
        assert!(svg.contains("K slices per block"));
    }

    #[test]
    fn the_stage_plot_names_each_stage_counts_residency() {
        let svg = plot_stages(&h200()).unwrap();
        assert!(
            svg.contains("S2 2 (registers)") && svg.contains("S5 2 (registers)"),
            "occupancy per stage count"
        );
        for k in [32, 1024, 8192] {
            assert!(svg.contains(&format!("\nK={k}\n")), "K={k} in the legend");
        }
        assert!(plot_stages(&[]).is_err(), "no points, no plot");
    }

    #[test]
    fn the_family_is_one_tile_and_full_width_copies() {
        for dt in crate::dtype::DType::ALL {
            let f = family(dt);
            assert_eq!(f.len(), 6, "{dt}: sync, regprefetch, cp.async S = 2..5");
            assert!(
                f.iter()
                    .all(|v| v.tile == f[0].tile && v.pipe.copy_bytes == 16)
            );
        }
    }
}
