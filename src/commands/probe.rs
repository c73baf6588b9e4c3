//! One variant (or control) launched a few times on fresh inputs, each run judged against the f64
//! reference and, bit for bit, against its correct twin's output on the same inputs: single
//! launches for external tools (compute-sanitizer, Nsight Compute) to observe, and the runs of a
//! control that may fault the GPU, in a process of their own.

use crate::engine::validate::{Lineup, validate_case};
use crate::engine::{Engine, Job, prepare_all};
use crate::pipeline::{Instrument, Variant};
use crate::results::Status;
use crate::workload::{Case, Workload};
use crate::{Error, Result};

/// The variant or control named exactly `name`, or an error listing the names allowed.
pub fn named<W: Workload>(
    w: &W,
    dtype: crate::dtype::DType,
    name: &str,
) -> Result<Variant<W::Shape>> {
    let all: Vec<_> = w
        .catalogue(dtype)
        .into_iter()
        .chain(w.controls(dtype))
        .collect();
    if let Some(v) = all.iter().find(|v| v.name == name) {
        return Ok(v.clone());
    }
    // select names what is allowed when nothing matches; a prefix alone is not enough here
    let hits: Vec<String> = Variant::select(all, Some(name))?
        .into_iter()
        .map(|v| v.name)
        .collect();
    Err(Error::InvalidArgument(format!(
        "'{name}' names no one variant: the full name is needed (allowed: one of {})",
        hits.join(", ")
    )))
}

/// One run's outcome: passed, or why not.
pub type RunVerdict = std::result::Result<(), String>;

/// `runs` runs of `v` on `case` built with `instrument`, each on fresh inputs (seed, seed + 1,
/// ...), `built` told once its builds are ready (before the first run) with the name of the twin
/// that launches before `v` in each run, if it has one, `each` told of every run
/// as it ends. An error that is no verdict on a run (a build, a
/// fault that lost the context) ends the runs.
pub fn probe<W: Workload>(
    e: &Engine,
    w: &W,
    v: &Variant<W::Shape>,
    case: &Case<W::Problem>,
    instrument: Instrument,
    (runs, seed): (u64, u64),
    (built, mut each): (impl FnOnce(Option<&str>), impl FnMut(u64, &RunVerdict)),
) -> Result<bool> {
    let dtype = crate::workload::Problem::dtype(&case.problem);
    let problems = [&case.problem];
    let fitted = w.fit(v, &problems);
    if let Err(why) = w.can_implement(&fitted, &case.problem, e.info()) {
        return Err(Error::Unsupported {
            variant: fitted.name,
            reason: why,
        });
    }
    let correct = w.catalogue(dtype);
    let twin = w
        .twin(&fitted, &correct)
        .filter(|t| t.name != fitted.name)
        .map(|t| w.fit(t, &problems));
    let mut jobs = vec![Job::new(&fitted, &case.problem, instrument)];
    jobs.extend(
        twin.iter()
            .map(|t| Job::new(t, &case.problem, Instrument::CLEAN)),
    );
    let mut ready = prepare_all(e, w, jobs, false)
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
    let me = ready.remove(0);
    built(twin.as_ref().map(|t| t.name.as_str()));
    let lineup = Lineup {
        ready: ready.iter().map(|t| (0, t)).chain([(1, &me)]).collect(),
        correct: &correct,
    };
    let mut all_passed = true;
    for i in 0..runs {
        let mut results = [
            crate::engine::validate::result_of(w, &fitted, &case.problem),
            crate::engine::validate::result_of(w, &fitted, &case.problem),
        ];
        validate_case(
            e,
            w,
            &lineup,
            None,
            &mut results,
            case,
            seed.wrapping_add(i),
        )?;
        let verdict = match (&results[0].status, &results[1].status) {
            (Status::Passed, Status::Passed) => Ok(()),
            (Status::Passed, _) => Err(results[1].detail.clone().unwrap_or_default()),
            (_, _) => {
                return Err(Error::InvalidArgument(format!(
                    "its correct twin failed validation: {}",
                    results[0].detail.clone().unwrap_or_default()
                )));
            }
        };
        all_passed &= verdict.is_ok();
        each(i, &verdict);
    }
    Ok(all_passed)
}
