//! A run that outlives a faulting kernel. A sticky fault (an illegal address, a trap) loses the
//! CUDA context, and with it this process's use of the GPU. The faulting variant is that fault's
//! only victim: its failure is kept, and the variants not yet finished go on in a new process
//! (`engine::isolate`), whose results are merged with this one's. The fault took the monitor's
//! log with it, so the faulting variant's monitored build runs once more in a probe process of its
//! own, and the rule it records before any fault is added to why the variant failed.

use super::{RunOptions, RunOutcome, run, selected};
use crate::engine::{Engine, controls, isolate};
use crate::results::{RunResults, Status, VariantResult};
use crate::workload::{Problem, Workload};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// At most this many variants may fault one run (each costs a new process); past it, the run ends
/// with what it has.
pub const MAX_FAULTS: usize = 8;

/// What a run in child mode writes for the process that started it.
#[derive(Debug, Serialize, Deserialize)]
pub struct ChildRun<P> {
    pub results: RunResults<P>,
    /// The error that ended it early, if one did.
    pub fatal: Option<String>,
}

/// `run`, going on past variants that fault the context. The outcome holds each faulting
/// variant's failure in its place; `poisoned` says this process can do no more GPU work.
pub fn run_isolated<W: Workload>(
    e: &Engine,
    w: &W,
    o: &RunOptions<W::Problem>,
) -> Result<RunOutcome<W::Problem>> {
    let mut outcome = run(e, w, o)?;
    let Some(Error::ContextLost { variant, .. }) = &outcome.fatal else {
        return Ok(outcome);
    };
    outcome.poisoned = true;
    let Some(mut faulted) = outcome
        .results
        .variants
        .iter()
        .find(|r| &r.name == variant && r.mechanism != crate::pipeline::Mechanism::Sync)
        .cloned()
    else {
        return Ok(outcome); // the baseline faulted: nothing can be compared against it
    };
    if o.exclude.len() >= MAX_FAULTS {
        return Ok(outcome);
    }
    if let Some(why) = controls::monitored_once(e, w, &o.problem, &faulted.name, o.seed) {
        let was = faulted.detail.take().unwrap_or_default();
        faulted.detail = Some(format!("{was}; its monitored build: {why}"));
    }
    e.progress.note(&format!(
        "{}: {}; going on in a new process without it",
        faulted.name,
        faulted.detail.as_deref().unwrap_or("faulted")
    ));
    let exclude: Vec<String> = o.exclude.iter().chain([&faulted.name]).cloned().collect();
    let extra = ["--exclude".to_string(), exclude.join(",")];
    match isolate::continue_in::<ChildRun<W::Problem>>(&o.command, &extra) {
        Ok(child) => {
            let order: Vec<String> = selected(w, o.problem.dtype(), o.variants.as_deref())?
                .into_iter()
                .map(|v| v.name)
                .collect();
            let mut results = child.results;
            merge(
                &mut results.variants,
                &mut results.notes,
                vec![faulted],
                &order,
            );
            outcome.results = results;
            outcome.fatal = child.fatal.map(|detail| Error::InChild { detail });
        }
        Err(err) => {
            // what this process measured stands; the rest is not finished, and says why
            for r in &mut outcome.results.variants {
                if r.status == Status::Unfinished {
                    r.detail = Some(format!("not run: {err}"));
                }
            }
            outcome.fatal = Some(err);
        }
    }
    Ok(outcome)
}

/// Puts each faulting variant's result back among the others, in the order of the selection, with
/// a note for each.
fn merge(
    variants: &mut Vec<VariantResult>,
    notes: &mut Vec<String>,
    faulted: Vec<VariantResult>,
    order: &[String],
) {
    let pos = |name: &str| order.iter().position(|v| v == name).unwrap_or(usize::MAX);
    for r in faulted {
        notes.push(format!(
            "{}; the run went on in a new process without it",
            r.detail.as_deref().unwrap_or("faulted the GPU context")
        ));
        variants.push(r);
    }
    variants.sort_by_key(|r| pos(&r.name));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rmsnorm::RmsNorm;
    use crate::workload::rows::{RowProblem, Rows, View};

    #[test]
    fn faulting_variants_go_back_in_selection_order_with_a_note() {
        let w = Rows(&RmsNorm);
        let dt = crate::dtype::DType::Bf16;
        let p = RowProblem::new(View::new(64, 4096, None, 0, None, dt).unwrap(), dt, None);
        let all = w.catalogue(dt);
        let order: Vec<String> = all.iter().map(|v| v.name.clone()).collect();
        let result = |i: usize| crate::engine::validate::result_of(&w, &all[i], &p);
        let mut variants = vec![result(0), result(3)];
        let mut notes = Vec::new();
        let mut bad = result(1);
        bad.status = Status::Failed;
        bad.detail = Some("valid: an illegal memory access".into());
        merge(&mut variants, &mut notes, vec![bad], &order);
        let names: Vec<&str> = variants.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, [&order[0], &order[1], &order[3]]);
        assert_eq!(variants[1].status, Status::Failed);
        assert!(notes[0].contains("illegal memory access"));
    }
}
