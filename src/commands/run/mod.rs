//! The main job, for any workload: build every variant for this GPU, validate each before any
//! timing (on the workload's run cases, then again under stress), record the evidence, time
//! device execution (and host submission, apart) against the run's ceiling (the device copy, or
//! the vendor library on the same problem) and the sequential baseline, and the peers beside them.

mod isolate;
mod measure;
mod plan;

pub use isolate::{ChildRun, run_isolated};
pub use plan::selected;

use crate::engine::validate::{CaseOutcome, Lineup, validate_case};
use crate::engine::{Engine, Ready, TimingOptions, case_seed, prepare_all};
use crate::evidence::sass::Attestation;
use crate::pipeline::{Claim, Instrument};
use crate::results::{
    BuildRecord, CacheRecord, RunResults, SCHEMA_VERSION, Status, VariantResult, WorkloadInfo,
};
use crate::workload::{Problem, Vendor, Workload};
use crate::{Error, Result};
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct RunOptions<P> {
    pub problem: P,
    pub seed: u64,
    /// Names or prefixes, comma-separated; the baseline is always added.
    pub variants: Option<String>,
    pub timing: TimingOptions,
    /// Bytes copied for the device-to-device ceiling (at least this, or the input's size).
    pub ceiling_bytes: usize,
    /// Also measure the host submission interval of a burst of launches against its device time.
    pub explain_timing: bool,
    pub command: Vec<String>,
    /// Variants left out by name (those that faulted an earlier context).
    pub exclude: Vec<String>,
    /// Run the PyTorch peers with this Python after the variants.
    pub torch_python: Option<PathBuf>,
}

/// What a run produced, and the fault that stopped it early, if one did. Results gathered before
/// a fault are kept so that nothing already measured is lost.
pub struct RunOutcome<P> {
    pub results: RunResults<P>,
    pub fatal: Option<Error>,
    /// A variant faulted this process's GPU context: no more GPU work can be done here.
    pub poisoned: bool,
}

/// Launches per stress case for each variant: fewer than `check`'s 20, enough to catch a race
/// that needs perturbation to show before the variant is timed as a pass.
pub const STRESS_RUNS: usize = 3;

/// The ready builds of a run: clean (validated, timed) and stressed, with their result slots.
pub struct Builds<W: Workload> {
    pub clean: Vec<(usize, Ready<W>)>,
    pub stressed: Vec<(usize, Ready<W>)>,
}

impl<W: Workload> Builds<W> {
    fn lineup<'a>(
        list: &'a [(usize, Ready<W>)],
        results: &[VariantResult],
        correct: &'a [crate::pipeline::Variant<W::Shape>],
    ) -> Lineup<'a, W> {
        Lineup {
            ready: list
                .iter()
                .filter(|(i, _)| results[*i].status == Status::Passed)
                .map(|(i, r)| (*i, r))
                .collect(),
            correct,
        }
    }
}

pub fn run<W: Workload>(
    e: &Engine,
    w: &W,
    o: &RunOptions<W::Problem>,
) -> Result<RunOutcome<W::Problem>> {
    let p = &o.problem;
    let mut variants = selected(w, p.dtype(), o.variants.as_deref())?;
    variants.retain(|v| !o.exclude.contains(&v.name));
    let cases = w.run_cases(p)?;
    let stress_cases = w.stress_cases(p, &variants[0], e.info())?;
    let problems: Vec<&W::Problem> = stress_cases
        .iter()
        .chain(&cases)
        .map(|c| &c.problem)
        .collect();
    let (mut results, jobs) = plan::plan(
        e,
        w,
        &variants,
        &problems,
        &[Instrument::CLEAN, Instrument::STRESSED],
    );
    plan::runnable(&results)?;
    let builds = prepare(e, w, jobs, &mut results);
    if builds.clean.is_empty() {
        let why: Vec<String> = results
            .iter()
            .map(|r| format!("{}: {}", r.name, r.detail.clone().unwrap_or_default()))
            .collect();
        return Err(Error::Unsupported {
            variant: "every selected variant".into(),
            reason: why.join("; "),
        });
    }
    let traffic = w.traffic(p);
    let mut out = RunResults {
        schema_version: SCHEMA_VERSION,
        tilepipe_version: crate::VERSION.into(),
        created_unix_s: crate::results::now_unix_s(),
        command: o.command.clone(),
        device: e.info().clone(),
        toolchain: e.tc.clone(),
        workload: WorkloadInfo {
            name: w.name().into(),
            formula: w.formula().into(),
            bound: w.bound(),
            problem: p.label(),
            dtype: p.dtype(),
            eps: w.eps(),
            bytes_moved: traffic.bytes,
            flops: traffic.flops,
        },
        problem: p.clone(),
        seed: o.seed,
        ceiling: None,
        vendor: None,
        ceiling_peer: None,
        cache: CacheRecord::default(),
        variants: Vec::new(),
        timelines: Vec::new(),
        repeat: None,
        peers: Vec::new(),
        ladder: Vec::new(),
        notes: crate::engine::build::source_dir()
            .map(|d| crate::engine::sources_note(&d))
            .into_iter()
            .collect(),
    };
    let vendor = match w.vendor(&e.gpu) {
        Some(Ok(lib)) => {
            out.vendor = Some(lib.peer());
            Some(lib)
        }
        Some(Err(skipped)) => {
            out.vendor = Some(skipped);
            None
        }
        None => None,
    };
    let correct = w.catalogue(p.dtype());
    let fatal = (|| {
        let user = validate_all(
            e,
            w,
            o,
            &builds,
            &correct,
            vendor.as_deref(),
            &mut results,
            &mut out,
        )?;
        under_stress(e, w, &builds, &correct, &stress_cases, o.seed, &mut results)?;
        measure::measure(
            e,
            w,
            o,
            &builds,
            vendor.as_deref(),
            user,
            &mut results,
            &mut out,
        )
    })()
    .err();
    if let Some(err) = &fatal {
        if let Error::ContextLost { variant, .. } = err
            && let Some(r) = results.iter_mut().find(|r| &r.name == variant)
        {
            r.status = Status::Failed;
            r.detail = Some(err.to_string());
        }
        // never shown as passed: a result counts only once it is validated and timed
        for r in results.iter_mut().filter(|r| r.timing.is_none()) {
            r.fail(Status::Unfinished, format!("the run stopped first: {err}"));
        }
    }
    let stats = e.cache_stats();
    out.cache = CacheRecord {
        hits: stats.hits,
        compiled: stats.compiled,
    };
    out.variants = results;
    Ok(RunOutcome {
        results: out,
        fatal,
        poisoned: false,
    })
}

/// Builds and loads every job, recording each clean build's evidence in its result, and fails a
/// variant whose SASS contradicts a strict claim or whose math the SASS does not show.
fn prepare<W: Workload>(
    e: &Engine,
    w: &W,
    jobs: Vec<(usize, crate::engine::Job<W>)>,
    results: &mut [VariantResult],
) -> Builds<W> {
    let slots: Vec<usize> = jobs.iter().map(|(i, _)| *i).collect();
    let ready = prepare_all(e, w, jobs.into_iter().map(|(_, j)| j).collect(), true);
    let mut b = Builds {
        clean: Vec::new(),
        stressed: Vec::new(),
    };
    for (i, r) in slots.into_iter().zip(ready) {
        match r {
            Ok(r) if r.job.instrument.is_clean() => {
                let res = &mut results[i];
                res.build = Some(BuildRecord {
                    cache_hit: r.built.cache_hit,
                    options: r.built.options.clone(),
                    log: r.built.log.clone(),
                });
                res.resources = Some(r.resources.clone());
                res.sass = Some(r.sass.clone());
                res.math = r.math.clone();
                if let Some(why) = contradicted(&r) {
                    res.fail(Status::Failed, why);
                }
                b.clean.push((i, r));
            }
            Ok(r) => {
                results[i].checking = Some(r.resources.function);
                b.stressed.push((i, r))
            }
            Err(err) => results[i].fail(Status::Error, err.to_string()),
        }
    }
    b
}

/// Why a clean build's SASS contradicts what it claims, if it does: a strict movement claim (any
/// but the high-level API's, whose lowering is what it reports), or the workload's math.
fn contradicted<W: Workload>(r: &Ready<W>) -> Option<String> {
    let strict = r.variant().claim() != Claim::AnyAsync;
    if strict && r.sass.census.is_some() && !r.sass.attestation.is_attested() {
        return Some(format!("SASS: {}", r.sass.attestation.label()));
    }
    match &r.math {
        Some(Attestation::Mismatch { claimed, emitted }) => {
            Some(format!("math: claimed {claimed}, emitted {emitted}"))
        }
        _ => None,
    }
}

/// Every clean build on every run case, the user's last (its buffers stay for timing).
#[allow(clippy::too_many_arguments)]
fn validate_all<W: Workload>(
    e: &Engine,
    w: &W,
    o: &RunOptions<W::Problem>,
    b: &Builds<W>,
    correct: &[crate::pipeline::Variant<W::Shape>],
    vendor: Option<&dyn Vendor<W::Buffers>>,
    results: &mut [VariantResult],
    out: &mut RunResults<W::Problem>,
) -> Result<CaseOutcome<W>> {
    let cases = w.run_cases(&o.problem)?;
    e.progress
        .stage("validate", (cases.len() * b.clean.len()) as u64);
    let mut last = None;
    for (ci, case) in cases.iter().enumerate() {
        let lineup = Builds::lineup(&b.clean, results, correct);
        let outcome = validate_case(e, w, &lineup, vendor, results, case, case_seed(o.seed, ci))?;
        if let (Some(why), Some(v)) = (&outcome.vendor_failure, out.vendor.as_mut()) {
            v.fail(why.clone());
        }
        last = Some(outcome);
    }
    e.progress.done();
    Ok(last.expect("the user's problem is validated last"))
}

/// Every variant that passed validation, again with its stressed build on the stress cases,
/// `STRESS_RUNS` times with fresh inputs: a failure there fails the variant, so it is not timed.
fn under_stress<W: Workload>(
    e: &Engine,
    w: &W,
    b: &Builds<W>,
    correct: &[crate::pipeline::Variant<W::Shape>],
    cases: &[crate::workload::Case<W::Problem>],
    seed: u64,
    results: &mut [VariantResult],
) -> Result<()> {
    let lineup = Builds::lineup(&b.stressed, results, correct);
    e.progress.stage(
        "validate under stress",
        (lineup.ready.len() * cases.len() * STRESS_RUNS) as u64,
    );
    for run in 0..STRESS_RUNS {
        for (ci, case) in cases.iter().enumerate() {
            let mut scratch = results.to_vec();
            let s = seed ^ 0x57E5_5000 ^ ((run * cases.len() + ci) as u64 + 1) << 20;
            validate_case(e, w, &lineup, None, &mut scratch, case, s)?;
            for &(i, _) in &lineup.ready {
                if let (Status::Passed, Some(why)) = (results[i].status, scratch[i].detail.clone())
                {
                    results[i].fail(Status::Failed, format!("under stress (run {run}): {why}"));
                }
            }
        }
    }
    e.progress.done();
    match cases.first() {
        Some(case) => name_broken_rules(e, w, b, correct, case, seed, results),
        None => Ok(()),
    }
}

/// Every variant whose output failed a verdict or whose in-kernel wait timed out, once more with
/// its monitored build on `case`: a broken protocol rule the monitor records is added to why it
/// failed, so the report names it. (Those that faulted the context or hung are not run again here.)
fn name_broken_rules<W: Workload>(
    e: &Engine,
    w: &W,
    b: &Builds<W>,
    correct: &[crate::pipeline::Variant<W::Shape>],
    case: &crate::workload::Case<W::Problem>,
    seed: u64,
    results: &mut [VariantResult],
) -> Result<()> {
    let wrong = |r: &VariantResult| {
        r.status == Status::Failed
            && (r
                .validation
                .iter()
                .any(|c| c.verdicts.iter().any(|v| !v.passed))
                || r.detail.as_deref().is_some_and(Error::names_wait_timeout))
    };
    let mut scratch: Vec<VariantResult> = results.to_vec();
    let ready: Vec<(usize, &Ready<W>)> = b
        .stressed
        .iter()
        .filter(|(i, _)| wrong(&results[*i]))
        .map(|(i, r)| {
            scratch[*i].status = Status::Passed;
            (*i, r)
        })
        .collect();
    if ready.is_empty() {
        return Ok(());
    }
    let lineup = Lineup { ready, correct };
    validate_case(e, w, &lineup, None, &mut scratch, case, seed ^ 0x4D0E)?;
    for &(i, _) in &lineup.ready {
        if let Some(why) = scratch[i]
            .detail
            .as_ref()
            .filter(|d| d.contains("monitor ("))
        {
            let was = results[i].detail.take().unwrap_or_default();
            results[i].detail = Some(format!("{was}; its monitored build: {why}"));
        }
    }
    Ok(())
}
