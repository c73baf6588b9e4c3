//! The GPU suite behind `tilepipe check`, for any workload: in every group (a precision and the
//! workload's own suite axis), every correct variant on every suite case, bit for bit against its
//! twin; stress runs with random sleeps; the negative controls, each of which must be caught on
//! every run; the SASS attestation of every strict claim (and of the workload's math); the
//! mbarrier initialisation; the occupancy cross-check. The command prints `N passed, N failed`.

mod evidence;
mod plan;

use crate::engine::controls::{monitored_once, runs_here, runs_in_children};
use crate::engine::record;
use crate::engine::validate::{Lineup, validate_case};
use crate::engine::{Engine, Ready, case_seed, isolate, prepare_all};
use crate::pipeline::Variant;
use crate::results::{ControlRuns, Status, SuiteReport};
use crate::workload::{Case, Workload};
use crate::{Error, Result};
use plan::GroupPlan;

#[derive(Debug, Clone)]
pub struct SuiteOptions {
    pub dtypes: Vec<crate::dtype::DType>,
    /// The workload's own suite axis (rows: hidden sizes; GEMM: B's layouts), as given.
    pub axis: Option<String>,
    pub variants: Option<String>,
    /// Runs per control, each on fresh inputs (and the workload's share of them per stressed build).
    pub runs: usize,
    pub seed: u64,
    /// Variants left out (they faulted the process that started this one).
    pub exclude: Vec<String>,
    /// The group, in order, to start at (those before ran in that process).
    pub from_group: usize,
    /// This process's argv, handed to a new process after a fault.
    pub command: Vec<String>,
}

/// At most this many variants may fault one suite (each costs a new process).
const MAX_FAULTS: usize = 8;

/// The suite. A variant that faults the context (a sticky error) has that as its failure, recorded
/// with its case; this process can do no more GPU work, so the suite goes on in a new process
/// from the same group without it, and its report is merged in. The report records why the suite
/// ended early if it did (a hang, Ctrl-C, too many faults); what was tested before stands. The
/// flag says whether this process's context was lost.
pub fn run_suite<W: Workload>(e: &Engine, w: &W, o: &SuiteOptions) -> Result<(SuiteReport, bool)> {
    let mut report = SuiteReport::default();
    let groups = w.suite_groups(&o.dtypes, o.axis.as_deref())?;
    for (g, (tag, group)) in groups.iter().enumerate().skip(o.from_group) {
        let dtype = crate::workload::Problem::dtype(group);
        let keep = |v: &Variant<W::Shape>| !o.exclude.contains(&v.name);
        let mut correct = Variant::matching(w.catalogue(dtype), o.variants.as_deref());
        let controls = Variant::matching(w.controls(dtype), o.variants.as_deref());
        if correct.is_empty() && controls.is_empty() {
            // select names what is allowed
            let all = w
                .catalogue(dtype)
                .into_iter()
                .chain(w.controls(dtype))
                .collect();
            Variant::select(all, o.variants.as_deref())?;
        }
        if !correct.iter().any(Variant::is_baseline) {
            correct.insert(0, w.catalogue(dtype).remove(0));
        }
        let correct: Vec<_> = correct.into_iter().filter(keep).collect();
        let controls: Vec<_> = controls.into_iter().filter(keep).collect();
        let mut mine = SuiteReport::default();
        match group_tests(e, w, o, (tag, group), (&correct, &controls), &mut mine) {
            Ok(()) => report.merge(mine),
            Err(Error::ContextLost {
                variant,
                case,
                cause,
            }) => {
                report.merge(mine);
                let baseline = correct.iter().any(|v| v.name == variant && v.is_baseline());
                // a control is broken on purpose: its fault is how it was caught
                let control = controls.iter().any(|v| v.name == variant);
                let mut why = format!("faulted the GPU context: {cause}");
                // the fault took the monitor's log: its monitored build, once, names the rule
                if !control && let Some(rule) = monitored_once(e, w, group, &variant, o.seed) {
                    why.push_str(&format!("; its monitored build: {rule}"));
                }
                record(
                    &e.progress,
                    &mut report,
                    format!("fault {tag} {variant} [{case}]"),
                    control,
                    why,
                );
                if baseline || o.exclude.len() >= MAX_FAULTS {
                    report.stopped = Some(format!("{variant} faulted the GPU context"));
                    return Ok((report, true));
                }
                e.progress.note(&format!(
                    "{variant} faulted the GPU context; the suite goes on in a new process without it, from {tag}"
                ));
                let exclude: Vec<String> = o.exclude.iter().chain([&variant]).cloned().collect();
                let extra = [
                    "--exclude".to_string(),
                    exclude.join(","),
                    "--from-group".to_string(),
                    g.to_string(),
                ];
                match isolate::continue_in::<SuiteReport>(&o.command, &extra) {
                    Ok(child) => {
                        // it starts the group again: what this process finished counts once
                        let before = report.tests.len();
                        report.merge_restarted(child);
                        // its test lines were not shown as they ran: show them now
                        for t in &report.tests[before..] {
                            e.progress.test(&t.name, t.passed, &t.detail);
                        }
                    }
                    Err(err) => report.stopped = Some(err.to_string()),
                }
                return Ok((report, true));
            }
            Err(err) => {
                report.merge(mine);
                report.stopped = Some(err.to_string());
                return Ok((report, false));
            }
        }
    }
    Ok((report, false))
}

/// Every test of one group into `report`.
fn group_tests<W: Workload>(
    e: &Engine,
    w: &W,
    o: &SuiteOptions,
    (tag, group): (&str, &W::Problem),
    variants: plan::Lineup<W>,
    report: &mut SuiteReport,
) -> Result<()> {
    let cases = w.suite_cases(group, o.seed)?;
    let plan: GroupPlan<W> = plan::plan(e, w, (tag, group), variants, cases)?;
    report.skipped.extend(plan.skipped.iter().cloned());
    let ready: Vec<Option<Ready<W>>> = prepare_all(e, w, plan.jobs.clone(), true)
        .into_iter()
        .zip(&plan.jobs)
        .map(|(r, job)| match r {
            Ok(r) => Some(r),
            Err(err) => {
                let name = format!("build {tag} {}", job.variant.name);
                record(&e.progress, report, name, false, err.to_string());
                None
            }
        })
        .collect();
    evidence::tests(e, w, &ready, tag, report);
    let stress_runs = w.stress_runs(o.runs);
    e.progress.stage(
        &format!("check {tag}"),
        (plan.valid.iter().map(|(_, v)| v.len()).sum::<usize>()
            + plan.stress.len() * stress_runs
            + plan.controls.len() * o.runs) as u64,
    );
    let correct = w.catalogue(crate::workload::Problem::dtype(group));
    for (ci, (case, on)) in plan.valid.iter().enumerate() {
        let lineup = Lineup {
            ready: on
                .iter()
                .enumerate()
                .filter_map(|(slot, &j)| Some((slot, ready[j].as_ref()?)))
                .collect(),
            correct: &correct,
        };
        let mut results: Vec<_> = lineup
            .ready
            .iter()
            .map(|(_, r)| crate::engine::validate::result_of(w, r.variant(), &case.problem))
            .collect();
        let outcome = validate_case(
            e,
            w,
            &lineup,
            None,
            &mut results,
            case,
            case_seed(o.seed, ci),
        );
        for ((_, r), res) in lineup.ready.iter().zip(&results) {
            // a case cut short (a lost context) never ran the variants after the one that stopped
            // it: their results still hold the default Passed, with nothing validated
            if outcome.is_err() && res.status == Status::Passed && res.validation.is_empty() {
                continue;
            }
            record(
                &e.progress,
                report,
                format!("valid {tag} {} [{}]", r.name(), case.name),
                res.status == Status::Passed,
                res.detail.clone().unwrap_or_default(),
            );
        }
        outcome?;
    }
    for (j, twin, cases) in &plan.stress {
        let Some(r) = &ready[*j] else { continue };
        let twin = twin.and_then(|t| ready[t].as_ref());
        let (t, err) = runs_here(e, w, (r, twin), cases, (stress_runs, o.seed));
        // a lost context is the suite's to record (and to go on from in a new process)
        if let Some(err @ Error::ContextLost { .. }) = err {
            return Err(err);
        }
        let failed = t.caught;
        record(
            &e.progress,
            report,
            format!("stress {tag} {} [{}]", r.name(), names(cases)),
            err.is_none() && failed == 0 && t.runs == stress_runs,
            match (failed, &t.stopped) {
                (0, None) => format!(
                    "0/{stress_runs} runs failed with random sleeps, every run monitored: no protocol rule broken"
                ),
                (_, None) => format!("{failed}/{stress_runs} runs failed; first: {}", t.first),
                (_, Some(why)) => {
                    format!("stopped after {} runs: {why}; first: {}", t.runs, t.first)
                }
            },
        );
        if let Some(err @ Error::Hung { .. }) = err {
            return Err(err);
        }
    }
    for (j, twin, cases) in &plan.controls {
        let Some(r) = &ready[*j] else { continue };
        let twin = twin.and_then(|t| ready[t].as_ref());
        control(e, w, o, tag, (r, twin), cases, report)?;
    }
    e.progress.done();
    Ok(())
}

/// One control, all its runs: here, or in processes of its own where it can fault the GPU (on
/// its first case).
fn control<W: Workload>(
    e: &Engine,
    w: &W,
    o: &SuiteOptions,
    tag: &str,
    (r, twin): (&Ready<W>, Option<&Ready<W>>),
    cases: &[Case<W::Problem>],
    report: &mut SuiteReport,
) -> Result<()> {
    let v = r.variant();
    let (t, err, shown) = if v.may_fault() {
        match runs_in_children(w, r.name(), &cases[0], r.job.instrument, (o.runs, o.seed)) {
            Ok(t) => (t, None, cases[0].name.clone()),
            Err(err) => (
                ControlRuns::none(r.name()),
                Some(err),
                cases[0].name.clone(),
            ),
        }
    } else {
        let (t, err) = runs_here(e, w, (r, twin), cases, (o.runs, o.seed));
        if let Some(err @ Error::ContextLost { .. }) = err {
            return Err(err);
        }
        (t, err, names(cases))
    };
    let mut detail = format!(
        "caught {}/{}; {}; first: {}",
        t.caught,
        o.runs,
        v.control.map_or("", |c| c.describe()),
        truncate(&t.first, 240)
    );
    if let Some(err) = &err {
        detail.push_str(&format!("; stopped: {err}"));
    }
    record(
        &e.progress,
        report,
        format!("control {tag} {} [{shown}]", r.name()),
        err.is_none() && t.caught == o.runs,
        detail,
    );
    match err {
        Some(err @ Error::Hung { .. }) => Err(err),
        _ => Ok(()),
    }
}

fn names<P>(cases: &[Case<P>]) -> String {
    let n: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    n.join(" + ")
}

fn truncate(s: &str, n: usize) -> String {
    if s.len() <= n {
        s.to_string()
    } else {
        format!("{}...", &s[..s.floor_char_boundary(n)])
    }
}
