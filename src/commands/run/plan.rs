//! What a run builds: the variants the user named (the baseline always first), each fitted to
//! every problem it will run on, its result slot, and the reason it is skipped where this GPU or
//! a problem cannot take it.

use crate::engine::{Engine, Job};
use crate::pipeline::{Instrument, Variant};
use crate::results::{Status, VariantResult};
use crate::workload::Workload;
use crate::{Error, Result};

/// The catalogue's variants `filter` names (names or prefixes), the baseline first whether named
/// or not.
pub fn selected<W: Workload>(
    w: &W,
    dtype: crate::dtype::DType,
    filter: Option<&str>,
) -> Result<Vec<Variant<W::Shape>>> {
    let all = w.catalogue(dtype);
    let mut out = Variant::select(all.clone(), filter)?;
    if !out.iter().any(Variant::is_baseline) {
        out.insert(0, all[0].clone());
    }
    Ok(out)
}

/// The builds of a run: each variant fitted to every one of `problems` (the first is the one the
/// builds are for), with one job per instrumentation in `instruments`. Returns the result slots
/// (skips and their reasons recorded) and the jobs with the slot each serves.
pub fn plan<W: Workload>(
    e: &Engine,
    w: &W,
    variants: &[Variant<W::Shape>],
    problems: &[&W::Problem],
    instruments: &[Instrument],
) -> (Vec<VariantResult>, Vec<(usize, Job<W>)>) {
    let p: &W::Problem = problems.last().expect("at least the user's problem");
    let mut results: Vec<VariantResult> = Vec::new();
    let mut jobs = Vec::new();
    for v in variants {
        let fitted = w.fit(v, problems);
        let i = results.len();
        results.push(crate::engine::validate::result_of(w, &fitted, p));
        if results[..i].iter().any(|r| r.name == fitted.name) {
            let why = format!(
                "with {}-byte copies (all these problems allow) it is {}, already in this run",
                fitted.copy_bytes, fitted.name
            );
            results[i].name = v.name.clone();
            results[i].fail(Status::Skipped, why);
            continue;
        }
        match problems
            .iter()
            .find_map(|q| w.can_implement(&fitted, q, e.info()).err())
        {
            Some(why) => results[i].fail(Status::Skipped, why),
            None => jobs.extend(
                instruments
                    .iter()
                    .map(|&ins| (i, Job::new(&fitted, p, ins))),
            ),
        }
    }
    (results, jobs)
}

/// The error a run ends with before any GPU work when its baseline cannot run (nothing could be
/// compared with it) or nothing can.
pub fn runnable(results: &[VariantResult]) -> Result<()> {
    if let Some(b) = results.first()
        && b.status == Status::Skipped
    {
        return Err(Error::Unsupported {
            variant: format!("{} (the baseline)", b.name),
            reason: b.detail.clone().unwrap_or_default(),
        });
    }
    Ok(())
}
