//! A control run many times on fresh inputs, compared bit for bit with its correct twin (itself
//! checked against the f64 reference first); every run must catch it. A control whose broken
//! protocol can fault the GPU context (the mbarrier ring's) runs in `tilepipe probe` processes of
//! its own, a new one after each fault, until all its runs are done: the fault of a run is how
//! that run caught it, and the suite goes on. A correct variant's build that faults is run the
//! same way once, monitored, so that the rule it broke before the fault is named.

use super::validate::{Lineup, result_of, validate_case};
use super::{Engine, Ready, isolate};
use crate::pipeline::Instrument;
use crate::results::{ControlRuns, Grid, Status};
use crate::verdict::tally::{Process, Tally};
use crate::workload::{Case, Workload};
use crate::{Error, Result};

/// How long a probe process may print nothing: until its builds are ready (a GEMM module's
/// compile can take a while), then between runs (each takes well under a second when nothing
/// hangs).
pub const PROBE_SILENCE: isolate::Silence = isolate::Silence {
    first: std::time::Duration::from_secs(120),
    then: std::time::Duration::from_secs(30),
};

/// Seed of run `k` of a control on case `ci`: every run draws fresh inputs.
pub fn run_seed(seed: u64, ci: usize, k: usize) -> u64 {
    super::case_seed(seed ^ 0x05EE_D0F5_7E55 ^ ci as u64, k)
}

/// `runs` runs of `r` (a control, or a stressed correct build) on every one of `cases`, here,
/// against the f64 reference and, where it has one, bit for bit against its correct `twin`
/// (itself checked first). A run catches it when any case fails. Returns the runs so far and,
/// when the context was lost (a catch that ends this process's use of the GPU) or the runs could
/// not go on, the error.
pub fn runs_here<W: Workload>(
    e: &Engine,
    w: &W,
    (r, twin): (&Ready<W>, Option<&Ready<W>>),
    cases: &[Case<W::Problem>],
    (runs, seed): (usize, u64),
) -> (ControlRuns, Option<Error>) {
    let mut t = ControlRuns::none(r.name());
    let correct: Vec<_> = twin.iter().map(|t| t.variant().clone()).collect();
    let lineup = Lineup {
        ready: twin.iter().map(|t| (0, *t)).chain([(1, r)]).collect(),
        correct: &correct,
    };
    for k in 0..runs {
        let mut caught: Option<String> = None;
        for (ci, case) in cases.iter().enumerate() {
            // slot 0 is the twin's (unused without one), slot 1 the variant's
            let slot = |x: &Ready<W>| result_of(w, x.variant(), &case.problem);
            let mut results = [slot(twin.unwrap_or(r)), slot(r)];
            let outcome = validate_case(
                e,
                w,
                &lineup,
                None,
                &mut results,
                case,
                run_seed(seed, ci, k),
            );
            if let Err(err) = outcome {
                let lost = matches!(err, Error::ContextLost { .. });
                if lost {
                    t.runs += 1;
                    t.caught += 1;
                    if t.first.is_empty() {
                        t.first = format!("run {k}: faulted the GPU context: {err}");
                    }
                }
                t.stopped = (!lost).then(|| err.to_string());
                return (t, Some(err));
            }
            if let Some(twin) = twin
                && results[0].status != Status::Passed
            {
                let why = format!(
                    "its correct twin {} failed validation: {}",
                    twin.name(),
                    results[0].detail.clone().unwrap_or_default()
                );
                // the variant's own run still says what it broke (its monitor's rules), though
                // without a twin the run cannot count
                if t.first.is_empty()
                    && let Some(own) = results[1].detail.as_ref()
                {
                    t.first = format!("run {k}: {own}");
                }
                t.stopped = Some(why.clone());
                return (t, Some(Error::InvalidArgument(why)));
            }
            if caught.is_none() && results[1].status != Status::Passed {
                caught = results[1].detail.clone();
            }
        }
        t.runs += 1;
        if let Some(why) = caught {
            t.caught += 1;
            if t.first.is_empty() {
                t.first = format!("run {k}: {why}");
            }
        }
    }
    (t, None)
}

/// `runs` runs of the variant named `name` on `case` in `tilepipe probe --runs` processes: each
/// run line says passed, FAILED or FAULTED (a fault ends its process, and the next takes the
/// remaining runs); a process silent past PROBE_SILENCE is killed (its run hung: caught, and the
/// next process takes the remaining runs); one that stops with no verdict catches nothing.
pub fn runs_in_children<W: Workload>(
    w: &W,
    name: &str,
    case: &Case<W::Problem>,
    instrument: Instrument,
    (runs, seed): (usize, u64),
) -> Result<ControlRuns> {
    let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    let mut tally = Tally::default();
    loop {
        let done = tally.done;
        let mut probe = std::process::Command::new(&exe);
        probe
            .arg("probe")
            .arg(name)
            .args(["--workload", w.name()])
            .args(w.problem_args(&case.problem))
            .args(["--stress", &instrument.stress.to_string(), "--quiet"])
            .args(["--runs", &(runs - done).to_string()])
            .args(["--seed", &(seed ^ (0xC41D + done as u64)).to_string()]);
        if instrument.monitor {
            probe.arg("--monitor");
        }
        if let Grid::Fixed(b) = case.grid {
            probe.args(["--blocks", &b.to_string()]);
        }
        let (out, killed) =
            isolate::output_within(&mut probe, PROBE_SILENCE).map_err(|e| Error::io(&exe, e))?;
        tally.add(
            &Process {
                stdout: &String::from_utf8_lossy(&out.stdout),
                stderr: &String::from_utf8_lossy(&out.stderr),
                success: out.status.success(),
                silent: killed,
            },
            runs,
        );
        if tally.stopped {
            break;
        }
    }
    Ok(ControlRuns {
        name: name.to_string(),
        runs: tally.done.min(runs),
        caught: tally.caught,
        first: tally.first,
        stopped: None,
    })
}

/// What the monitored build of the variant `name` says in one stressed run on its first stress
/// case for `p`, in a `tilepipe probe` process: for a variant whose fault took this process's
/// context (and the monitor's log) with it. The rules its monitor recorded, from its log or, if
/// it faulted too, its trail; None when that run passed or could not be started.
pub fn monitored_once<W: Workload>(
    e: &Engine,
    w: &W,
    p: &W::Problem,
    name: &str,
    seed: u64,
) -> Option<String> {
    let dtype = crate::workload::Problem::dtype(p);
    let v = w.catalogue(dtype).into_iter().find(|v| v.name == name)?;
    let case = w.stress_cases(p, &v, e.info()).ok()?.into_iter().next()?;
    let runs = runs_in_children(w, name, &case, Instrument::STRESSED, (1, seed)).ok()?;
    (runs.caught > 0).then_some(runs.first)
}
