//! The main job: build every variant for this GPU, validate each before any timing, record the
//! evidence, time device execution (and host submission, apart), compare against the copy
//! ceiling and the sequential baseline.

use crate::bench::{self, TimingOptions};
use crate::check::cases::{self, Case, Grid};
use crate::dtype::DType;
use crate::harness::{self, DeviceData, Harness, Prepared, tiles};
use crate::kernels::Built;
use crate::report::{
    BuildRecord, CacheRecord, CaseResult, Perf, RunResults, SCHEMA_VERSION, Status,
    VariantResult, Workload,
};
use crate::variant::{BuildConfig, Variant};
use crate::workload::{HostData, View};
use crate::{Error, Result};
use rayon::prelude::*;

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub view: View,
    pub dtype: DType,
    pub seed: u64,
    pub tile_rows: Option<usize>,
    pub variants: Option<String>,
    pub timing: TimingOptions,
    /// Bytes copied for the device-to-device ceiling (at least this, or the input's size).
    pub ceiling_bytes: usize,
    /// Also measure the host submission interval of a burst of launches against its device time.
    pub explain_timing: bool,
    pub command: Vec<String>,
}

/// What a run produced, and the fault that stopped it early, if one did. Results gathered before
/// a fault are kept so that nothing already measured is lost.
pub struct RunOutcome {
    pub results: RunResults,
    pub fatal: Option<Error>,
}

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

    fn fail(&mut self, status: Status, detail: String) {
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
        match h.unsupported_here(v, &cfg).or_else(|| {
            views
                .iter()
                .find_map(|view| h.workload.can_implement(v, view, &cfg).err())
        }) {
            Some(why) => results[i].fail(Status::Skipped, why),
            None => jobs.push((i, v.clone(), cfg)),
        }
    }
    let builds = h.build_all(
        &jobs
            .iter()
            .map(|(_, v, cfg)| (v.clone(), *cfg))
            .collect::<Vec<_>>(),
    );
    // disassembly runs a tool per build: in parallel
    let evidence: Vec<Option<Result<crate::sass::SassEvidence>>> = jobs
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

/// Validates every ready variant on one case (baseline first, the rest bit for bit against it).
/// Returns the device data so the caller may time on the validated input.
pub fn validate_case(
    h: &Harness,
    ready: &[&Ready],
    results: &mut [VariantResult],
    case: &Case,
    dtype: DType,
    seed: u64,
) -> Result<(HostData, DeviceData)> {
    let data = HostData::generate(h.workload, case.view, dtype, seed);
    let mut dd = DeviceData::upload(&h.gpu, &data)?;
    let mut baseline: Option<(Vec<u8>, crate::check::Verdict)> = None;
    for r in ready {
        let p = &r.prepared;
        let res = &mut results[r.index];
        h.progress
            .step(&format!("{} / {}", p.variant.name, case.name));
        if res.status != Status::Passed {
            continue;
        }
        let grid = grid_for(h, p, case);
        match h.run_checked(p, &mut dd, grid, seed as u32) {
            Ok(out) => {
                let b = baseline.as_ref().map(|(o, v)| (o.as_slice(), v));
                let verdict = harness::verdict(&out, &data, p.cfg.tile_rows, b);
                if !verdict.passed {
                    res.fail(
                        Status::Failed,
                        format!(
                            "{}: {}",
                            case.name,
                            verdict.failure.clone().unwrap_or_default()
                        ),
                    );
                }
                let passed = verdict.passed;
                res.validation.push(CaseResult {
                    case: case.name.clone(),
                    view: case.view,
                    grid: case.grid,
                    blocks: grid,
                    verdict: verdict.clone(),
                });
                if p.variant.is_baseline() && passed {
                    baseline = Some((out, verdict));
                }
            }
            Err(e @ Error::WaitTimeout { .. }) => {
                res.fail(Status::Failed, format!("{}: {e}", case.name))
            }
            // a kernel that never ended still holds the GPU: nothing after it can run
            Err(e @ Error::Hung { .. }) => {
                res.fail(Status::Failed, format!("{}: {e}", case.name));
                return Err(e);
            }
            Err(e) => {
                res.fail(Status::Error, format!("{}: {e}", case.name));
                if !h.healthy() {
                    return Err(e);
                }
            }
        }
    }
    Ok((data, dd))
}

pub fn run(h: &Harness, o: &RunOptions) -> Result<RunOutcome> {
    let cfg = BuildConfig::new(o.dtype, o.view.hidden, o.tile_rows);
    let mut variants = Variant::select(h.workload.catalogue(), o.variants.as_deref())?;
    if !variants.iter().any(Variant::is_baseline) {
        variants.insert(0, h.workload.catalogue().remove(0));
    }
    let cases = {
        // the user's view last, so its validated buffers stay for timing
        let mut c = cases::run_cases(o.view, o.dtype, cfg.tile_rows)?;
        c.rotate_left(1);
        c
    };
    let mut results: Vec<VariantResult> = variants
        .iter()
        .map(|v| VariantResult::new(v, &cfg))
        .collect();
    let views: Vec<View> = cases.iter().map(|c| c.view).collect();
    let ready = prepare_all(h, &variants, &cfg, &views, &mut results);
    if let Some(b) = results
        .iter()
        .find(|r| r.mechanism == crate::variant::Mechanism::Sync)
        && b.status == Status::Skipped
    {
        return Err(Error::Unsupported {
            variant: "sync (the baseline)".into(),
            reason: b.detail.clone().unwrap_or_default(),
        });
    }
    if ready.is_empty() {
        let why: Vec<String> = results
            .iter()
            .map(|r| format!("{}: {}", r.name, r.detail.clone().unwrap_or_default()))
            .collect();
        return Err(Error::Unsupported {
            variant: "every selected variant".into(),
            reason: why.join("; "),
        });
    }
    let mut out = RunResults {
        schema_version: SCHEMA_VERSION,
        tilepipe_version: env!("CARGO_PKG_VERSION").into(),
        created_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        command: o.command.clone(),
        device: h.info().clone(),
        toolchain: h.tc.clone(),
        workload: Workload {
            name: h.workload.name().into(),
            formula: h.workload.formula().into(),
            view: o.view,
            dtype: o.dtype,
            tile_rows: cfg.tile_rows,
            consumers: cfg.consumers,
            seed: o.seed,
            eps: h.workload.eps(),
            bytes_moved: h.workload.traffic(&o.view, o.dtype).bytes,
        },
        ceiling: None,
        cache: h.cache_stats().into(),
        variants: Vec::new(),
        timelines: Vec::new(),
        repeat: None,
        notes: Vec::new(),
    };
    let fatal = measure(h, o, &cases, &ready, &mut results, &mut out).err();
    out.variants = results;
    Ok(RunOutcome {
        results: out,
        fatal,
    })
}

fn measure(
    h: &Harness,
    o: &RunOptions,
    cases: &[Case],
    ready: &[Ready],
    results: &mut [VariantResult],
    out: &mut RunResults,
) -> Result<()> {
    h.progress
        .stage("validate", (cases.len() * ready.len()) as u64);
    let mut last = None;
    let all: Vec<&Ready> = ready.iter().collect();
    for (i, case) in cases.iter().enumerate() {
        last = Some(validate_case(
            h,
            &all,
            results,
            case,
            o.dtype,
            case_seed(o.seed, i),
        )?);
    }
    h.progress.done();
    let (_data, dd) = last.expect("at least the user's case");
    let free = h.gpu.free_memory()? as usize;
    let bytes = o.ceiling_bytes.max(dd.x.len()).min(free / 3);
    h.progress.note(&format!(
        "measuring the device-to-device copy ceiling over {} MiB",
        bytes >> 20
    ));
    let c = bench::copy_ceiling(h, bytes, 20)?;
    let ceiling_gbps = c.gbps;
    out.ceiling = Some(c);
    let timed: Vec<&Ready> = ready
        .iter()
        .filter(|r| results[r.index].status == Status::Passed)
        .collect();
    h.progress.stage("time", timed.len() as u64);
    let mut extra = Vec::new();
    let mut baseline_ms = None;
    let first = timed.first().map(|r| r.index);
    for r in &timed {
        let p = &r.prepared;
        h.progress.step(&p.variant.name);
        let sets = dd.rotated(&h.gpu, p, &dd.view, &mut extra)?;
        let grid = h.persistent_grid(p, tiles(&dd.view, p.cfg.tile_rows));
        let t = bench::time_kernel(h, p, grid, &sets, &o.timing)?;
        let median = t.device.median;
        if p.variant.is_baseline() {
            baseline_ms = Some(median);
        }
        let gbps = bench::gbps(dd.view.bytes_moved(dd.dtype), median);
        results[r.index].perf = Some(Perf {
            gbps,
            pct_of_ceiling: Some(100.0 * gbps / ceiling_gbps),
            speedup_vs_sync: baseline_ms.map(|b| b / median),
        });
        results[r.index].timing = Some(t);
        if o.explain_timing && p.variant.is_baseline() {
            let s = bench::submit_vs_device(h, p, grid, &dd.params(&h.gpu, p, 0)?, 50)?;
            out.notes.push(format!(
                "host submission vs device time: {} launches of {} were submitted in {:.3} ms of host time, and the device took {:.3} ms to run them ({:.0}x longer); a shorter submission interval says nothing about device execution",
                s.launches, s.variant, s.host_submit_ms, s.device_ms, s.device_ms / s.host_submit_ms
            ));
        }
    }
    h.progress.done();
    // the first variant again, after all the others: do two measurements of one kernel agree?
    if let Some(i) = first {
        let r = timed[0];
        let p = &r.prepared;
        let sets = dd.rotated(&h.gpu, p, &dd.view, &mut extra)?;
        let grid = h.persistent_grid(p, tiles(&dd.view, p.cfg.tile_rows));
        let again = bench::time_kernel(h, p, grid, &sets, &o.timing)?.device;
        let before = results[i].timing.as_ref().expect("timed above").device;
        let agrees = before.indistinguishable(&again);
        out.notes.push(format!(
            "repeatability: {} measured again after every other variant: median {:.1} us (first {:.1} us, range {:.1}..{:.1}); {}",
            p.variant.name,
            again.median * 1e3,
            before.median * 1e3,
            before.min * 1e3,
            before.max * 1e3,
            if agrees { "within the reported spread" } else { "OUTSIDE the reported spread: treat differences of this size as noise" }
        ));
        out.repeat = Some(bench::Repeat {
            variant: p.variant.name.clone(),
            first: before,
            second: again,
            agrees,
        });
    }
    out.notes.push(match &h.clocks {
        Ok(_) => crate::clocks::summary(
            results
                .iter()
                .filter_map(|r| r.timing.as_ref()?.clocks.as_ref()),
        )
        .unwrap_or_else(|| "clocks: NVML gave no reading".into()),
        Err(why) => format!("clocks not recorded: {why}"),
    });
    Ok(())
}

/// Runs one variant (or control) once on fresh inputs and checks it against the f64 reference:
/// a single launch for external tools (compute-sanitizer, Nsight Compute) to observe.
#[allow(clippy::too_many_arguments)]
pub fn probe(
    h: &Harness,
    name: &str,
    view: View,
    dtype: DType,
    seed: u64,
    tile_rows: Option<usize>,
    stress: u32,
    blocks: Option<u32>,
    wait_timeout_ns: u64,
) -> Result<crate::check::Verdict> {
    let all: Vec<Variant> = h
        .workload
        .catalogue()
        .into_iter()
        .chain(h.workload.controls())
        .collect();
    let v = Variant::select(all, Some(name))?
        .into_iter()
        .find(|v| v.name == name)
        .ok_or_else(|| {
            Error::InvalidArgument(format!("probe takes one exact variant name, got '{name}'"))
        })?;
    let cfg = v.config(&BuildConfig {
        stress,
        ..BuildConfig::new(dtype, view.hidden, tile_rows)
    });
    if let Some(why) = h.unsupported(&v, &view, &cfg) {
        return Err(Error::Unsupported {
            variant: v.name,
            reason: why,
        });
    }
    let built = h.build_all(&[(v.clone(), cfg)]).remove(0)?;
    let ev = h.evidence(&v, &cfg, &built)?;
    let p = h.prepare(&v, &cfg, built, ev)?;
    let data = HostData::generate(h.workload, view, dtype, seed);
    let mut dd = DeviceData::upload(&h.gpu, &data)?;
    dd.wait_timeout_ns = wait_timeout_ns;
    let n = tiles(&view, cfg.tile_rows);
    let grid = blocks.unwrap_or_else(|| h.persistent_grid(&p, n));
    let out = h.run_checked(&p, &mut dd, grid, seed as u32)?;
    Ok(harness::verdict(&out, &data, cfg.tile_rows, None))
}
