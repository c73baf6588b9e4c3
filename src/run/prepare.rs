//! Every variant of a run built, disassembled and loaded, and its result slot.

use crate::Result;
use crate::check::cases::{Case, Grid};
use crate::harness::{self, Harness, Prepared, tiles};
use crate::kernels::Built;
use crate::pipeline::{BuildConfig, Variant};
use crate::report::{BuildRecord, CacheRecord, Status, VariantResult};
use crate::workload::View;
use rayon::prelude::*;

impl VariantResult {
    pub fn new(v: &Variant, cfg: &BuildConfig) -> VariantResult {
        VariantResult {
            name: v.name.clone(),
            mechanism: v.mechanism,
            stages: v.stages,
            bytes_per_copy: v.bytes_per_copy(&v.config(cfg)),
            control: v.control,
            warp_specialized: v.warp_specialized,
            status: Status::Passed,
            detail: None,
            build: None,
            resources: None,
            sass: None,
            completion: v.completion(&v.config(cfg)),
            validation: Vec::new(),
            timing: None,
            perf: None,
        }
    }

    pub(super) fn fail(&mut self, status: Status, detail: String) {
        if self.status == Status::Passed {
            self.status = status;
            self.detail = Some(detail);
        }
    }
}

impl From<&Built> for BuildRecord {
    fn from(b: &Built) -> BuildRecord {
        BuildRecord {
            cache_hit: b.cache_hit,
            options: b.options.clone(),
            log: b.log.clone(),
        }
    }
}

impl From<harness::CacheStats> for CacheRecord {
    fn from(c: harness::CacheStats) -> CacheRecord {
        CacheRecord {
            hits: c.hits,
            compiled: c.compiled,
        }
    }
}

/// A variant whose kernel is ready, with the index of its result.
pub struct Ready {
    pub index: usize,
    pub prepared: Prepared,
}

/// Builds and loads every variant that can run, recording skips and build errors in `results`.
pub fn prepare_all(
    h: &Harness,
    variants: &[Variant],
    cfg: &BuildConfig,
    views: &[View],
    results: &mut [VariantResult],
) -> Vec<Ready> {
    let mut jobs = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        let cfg = v.config(cfg);
        let v = h.workload.fit(v, views, &cfg);
        results[i].bytes_per_copy = v.bytes_per_copy(&cfg);
        match h.unsupported_here(&v, &cfg).or_else(|| {
            views
                .iter()
                .find_map(|view| h.workload.can_implement(&v, view, &cfg).err())
        }) {
            Some(why) => results[i].fail(Status::Skipped, why),
            None => jobs.push((i, v, cfg)),
        }
    }
    let builds = h.build_all(
        &jobs
            .iter()
            .map(|(_, v, cfg)| (v.clone(), *cfg))
            .collect::<Vec<_>>(),
    );
    // disassembly runs a tool per build: in parallel
    let evidence: Vec<Option<Result<crate::evidence::sass::SassEvidence>>> = jobs
        .par_iter()
        .zip(&builds)
        .map(|((_, v, cfg), b)| b.as_ref().ok().map(|b| h.evidence(v, cfg, b)))
        .collect();
    let mut ready = Vec::new();
    h.progress.stage("load", jobs.len() as u64);
    for (((i, v, cfg), built), ev) in jobs.into_iter().zip(builds).zip(evidence) {
        h.progress.step(&v.name);
        let prepared = built.and_then(|b| {
            results[i].build = Some(BuildRecord::from(&b));
            h.prepare(&v, &cfg, b, ev.expect("evidence exists for every build")?)
        });
        match prepared {
            Ok(p) => {
                results[i].resources = Some(p.resources.clone());
                results[i].sass = Some(p.sass.clone());
                ready.push(Ready {
                    index: i,
                    prepared: p,
                });
            }
            Err(e) => results[i].fail(Status::Error, e.to_string()),
        }
    }
    h.progress.done();
    ready
}

pub fn grid_for(h: &Harness, p: &Prepared, case: &Case) -> u32 {
    let n = tiles(&case.view, p.cfg.tile_rows) as u32;
    match case.grid {
        Grid::Persistent => h.persistent_grid(p, n as usize),
        Grid::Fixed(g) => g.min(n).max(1),
        Grid::Idle(extra) => n + extra,
    }
}

/// Seed of case `i`: every case draws fresh inputs.
pub fn case_seed(seed: u64, i: usize) -> u64 {
    seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
