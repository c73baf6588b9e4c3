//! Runs instrumented builds and gathers their timelines. Instrumented timings are kept apart from
//! clean ones: each variant is timed clean and instrumented, and the overhead is reported.

pub use super::TimelineResult;
use super::{TIMING, decode, overlap, trace_buffer};
use crate::bench;
use crate::dtype::DType;
use crate::harness::{self, DeviceData, Harness, tiles};
use crate::pipeline::{BuildConfig, Variant};
use crate::report::Status;
use crate::run::prepare_all;
use crate::workload::{HostData, View};
use crate::{Error, Result};

pub struct TimelineOptions {
    pub view: View,
    pub dtype: DType,
    pub seed: u64,
    pub tile_rows: Option<usize>,
    pub blocks: u32,
    pub tiles: u32,
}

pub fn capture(
    h: &Harness,
    variants: &[Variant],
    o: &TimelineOptions,
) -> Result<Vec<TimelineResult>> {
    let clean_cfg = BuildConfig::new(o.dtype, o.view.hidden, o.tile_rows);
    let traced_cfg = BuildConfig {
        trace_tiles: o.tiles,
        ..clean_cfg
    };
    let mut res_c: Vec<_> = variants
        .iter()
        .map(|v| crate::report::VariantResult::new(v, &clean_cfg))
        .collect();
    let mut res_t = res_c.clone();
    let clean = prepare_all(h, variants, &clean_cfg, &[o.view], &mut res_c);
    let traced = prepare_all(h, variants, &traced_cfg, &[o.view], &mut res_t);
    if let Some(bad) = res_c
        .iter()
        .chain(&res_t)
        .find(|r| r.status != Status::Passed)
    {
        return Err(Error::Unsupported {
            variant: bad.name.clone(),
            reason: bad.detail.clone().unwrap_or_default(),
        });
    }
    let data = HostData::generate(h.workload, o.view, o.dtype, o.seed);
    let mut dd = DeviceData::upload(&h.gpu, &data)?;
    let mut trace = trace_buffer(&h.gpu, o.blocks, o.tiles)?;
    let timing = TIMING;
    let mut out = Vec::new();
    h.progress.stage("timeline", variants.len() as u64);
    for (c, t) in clean.iter().zip(&traced) {
        let (c, t) = (&c.prepared, &t.prepared);
        h.progress.step(&t.variant.name);
        let grid = h.persistent_grid(t, tiles(&o.view, t.cfg.tile_rows));
        let clean_ms = bench::time_kernel(h, c, grid, &[dd.params(&h.gpu, c, 0)?], &timing)?
            .device
            .median;
        let mut params = dd.params(&h.gpu, t, 0)?;
        params.ctl.trace = h.gpu.ptr(&trace);
        params.ctl.trace_blocks = o.blocks;
        let instrumented_ms = bench::time_kernel(h, t, grid, &[params], &timing)?
            .device
            .median;
        h.gpu.fill(&mut trace, 0)?;
        // one more, validated, launch whose trace is kept
        h.gpu.fill(&mut dd.y, DType::POISON_BYTE)?;
        h.launch(t, grid, &params)?;
        h.gpu.finish(&t.variant.name, harness::HANG_LIMIT)?;
        dd.check_status(&h.gpu, &t.variant.name)?;
        let verdict = harness::verdict(&h.gpu.download(&dd.y)?, &data, t.cfg.tile_rows, None);
        let raw: Vec<u64> = h
            .gpu
            .download(&trace)?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let blocks = decode(&raw, o.blocks as usize, o.tiles as usize);
        out.push(TimelineResult {
            variant: t.variant.name.clone(),
            overlap: overlap(&blocks),
            clean_ms,
            instrumented_ms,
            overhead: instrumented_ms / clean_ms - 1.0,
            verdict,
            blocks,
        });
    }
    h.progress.done();
    Ok(out)
}
