//! The main job: build every variant for this GPU, validate each before any timing, record the
//! evidence, time device execution (and host submission, apart), compare against the copy
//! ceiling and the sequential baseline.

use crate::bench::{self, TimingOptions};
use crate::check::cases::{self, Case};
use crate::dtype::DType;
use crate::harness::{Harness, rotation_sets, tiles};
use crate::peers::TorchRequest;
use crate::pipeline::{BuildConfig, STRESS_BOTH, Variant};
use crate::report::{Perf, RunResults, SCHEMA_VERSION, Status, VariantResult, Workload};
use crate::workload::View;
use crate::{Error, Result};

pub mod isolate;
mod prepare;
mod probe;
mod validate;

pub use isolate::{ChildRun, run_isolated};
pub use prepare::{Ready, case_seed, grid_for, prepare_all};
pub use probe::probe;
pub use validate::{Stress, sticky, under_stress, validate_case};

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
    /// Variants left out by name (those that faulted an earlier context).
    pub exclude: Vec<String>,
    /// Run the PyTorch peers (eager, torch.compile) with this Python after the variants.
    pub torch_python: Option<std::path::PathBuf>,
}

/// What a run produced, and the fault that stopped it early, if one did. Results gathered before
/// a fault are kept so that nothing already measured is lost.
pub struct RunOutcome {
    pub results: RunResults,
    pub fatal: Option<Error>,
    /// A variant faulted this process's GPU context: no more GPU work can be done here.
    pub poisoned: bool,
}

/// The variants `o` names, with the sequential baseline first if it was not named.
pub fn selected(w: &dyn crate::workload::Workload, o: &RunOptions) -> Result<Vec<Variant>> {
    let mut variants = Variant::select(w.catalogue(), o.variants.as_deref())?;
    if !variants.iter().any(Variant::is_baseline) {
        variants.insert(0, w.catalogue().remove(0));
    }
    Ok(variants)
}

pub fn run(h: &Harness, o: &RunOptions) -> Result<RunOutcome> {
    let cfg = BuildConfig::new(o.dtype, o.view.hidden, o.tile_rows);
    let mut variants = selected(h.workload, o)?;
    variants.retain(|v| !o.exclude.contains(&v.name));
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
    // the same kernels with random sleeps in producer and consumer, for the stress validation
    let stress_cases =
        cases::stress_cases(o.view.hidden, o.dtype, cfg.tile_rows, h.info().sm_count)?;
    let shaken = {
        let stressed = BuildConfig {
            stress: STRESS_BOTH,
            ..cfg
        };
        let mut all_views = views.clone();
        all_views.extend(stress_cases.iter().map(|c| c.view));
        let mut scratch = results.clone();
        prepare_all(h, &variants, &stressed, &all_views, &mut scratch)
    };
    if let Some(b) = results
        .iter()
        .find(|r| r.mechanism == crate::pipeline::Mechanism::Sync)
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
        created_unix_s: crate::report::now_unix_s(),
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
        peers: Vec::new(),
        notes: crate::kernels::source_dir()
            .map(|d| crate::harness::sources_note(&d))
            .into_iter()
            .collect(),
    };
    let stress = Stress {
        ready: &shaken,
        cases: &stress_cases,
    };
    let fatal = measure(h, o, &cases, &ready, &stress, &mut results, &mut out).err();
    if let Some(e) = &fatal {
        if let Error::ContextLost { variant, .. } = e
            && let Some(r) = results.iter_mut().find(|r| &r.name == variant)
        {
            r.status = Status::Failed;
            r.detail = Some(e.to_string());
        }
        // never shown as passed: a result counts only once it is validated and timed
        for r in results.iter_mut().filter(|r| r.timing.is_none()) {
            r.fail(Status::Unfinished, format!("the run stopped first: {e}"));
        }
    }
    out.variants = results;
    Ok(RunOutcome {
        results: out,
        fatal,
        poisoned: false,
    })
}

fn measure(
    h: &Harness,
    o: &RunOptions,
    cases: &[Case],
    ready: &[Ready],
    stress: &Stress,
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
    under_stress(h, stress, results, o.dtype, o.seed)?;
    let (data, dd) = last.expect("at least the user's case");
    let free = h.gpu.free_memory()? as usize;
    let bytes = o.ceiling_bytes.max(dd.x.len()).min(free / 3);
    h.progress.note(&format!(
        "measuring the device-to-device copy ceiling over {} MiB",
        bytes >> 20
    ));
    let mut c = bench::copy_ceiling(h, bytes, 20)?;
    // a small problem also gets the copy of its own size: launch and ramp-up weigh there
    let own_size = (h.workload.traffic(&dd.view, o.dtype).bytes / 2) as usize / 16 * 16;
    if own_size < 4 * h.info().l2_bytes as usize {
        c.at_problem_size = Some(bench::copy_at_size(h, own_size, &o.timing)?);
    }
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
        crate::interrupt::check()?;
        let p = &r.prepared;
        h.progress.step(&p.variant.name);
        let sets = dd.rotated(&h.gpu, p, &dd.view, &mut extra)?;
        let grid = h.persistent_grid(p, tiles(&dd.view, p.cfg.tile_rows));
        let t = match bench::time_kernel(h, p, grid, &sets, &o.timing) {
            Ok(t) => t,
            Err(e) => match sticky(h, &p.variant.name, "timing", e) {
                e @ Error::ContextLost { .. } => {
                    results[r.index].fail(Status::Failed, format!("timing: {e}"));
                    return Err(e);
                }
                e => {
                    results[r.index].fail(Status::Error, format!("timing: {e}"));
                    continue;
                }
            },
        };
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
        let repeat = bench::Repeat::new(&p.variant.name, before, again);
        out.notes.push(repeat.note("every other variant"));
        out.repeat = Some(repeat);
    }
    if let Some(python) = &o.torch_python {
        crate::interrupt::check()?;
        h.progress
            .note("running the same problem through torch eager and torch.compile");
        let es = o.dtype.size();
        let v = &dd.view;
        let set_bytes =
            (View::extent(v.tokens, v.hidden, v.row_stride, v.offset) + v.elements()) * es;
        let req = TorchRequest {
            python: python.clone(),
            device: h.info().ordinal,
            workload: h.workload.name(),
            eps: h.workload.eps(),
            buffer_sets: rotation_sets(h.info().l2_bytes as usize, set_bytes),
            timing: o.timing,
            ceiling_gbps: Some(ceiling_gbps),
            baseline_ms,
        };
        let tile_rows = ready.first().map_or(1, |r| r.prepared.cfg.tile_rows);
        out.peers = crate::peers::torch(&req, &data, tile_rows, &|| h.clock());
    }
    let timed = results
        .iter()
        .filter_map(|r| Some((r.name.as_str(), r.timing.as_ref()?)))
        .chain(
            out.peers
                .iter()
                .filter_map(|p| Some((p.name.as_str(), p.timing.as_ref()?))),
        );
    out.notes
        .extend(crate::bench::stats::host_bound_note(timed));
    let sized = out
        .ceiling
        .as_ref()
        .and_then(|c| c.at_problem_size.as_ref());
    let own = results
        .iter()
        .filter_map(|r| Some((r.name.as_str(), r.timing.as_ref()?)));
    out.notes
        .extend(sized.and_then(|c| crate::bench::stats::sized_copy_note(c, own)));
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
