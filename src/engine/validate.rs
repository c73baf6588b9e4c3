//! Validation of every ready variant on one case: fresh seeded inputs; the vendor library's output
//! judged first where there is one (then a second reference); each variant against the f64
//! reference and, bit for bit, against the output of its correct twin (the same arithmetic) on
//! the same inputs. A failure is recorded with its case and is never timed.

use super::isolate::sticky;
use super::{Engine, Ready};
use crate::pipeline::Variant;
use crate::results::{CaseResult, Status, VariantResult};
use crate::verdict::Verdict;
use crate::workload::{Case, Problem, Refs, Vendor, Workload};
use crate::{Error, Result};
use sha2::{Digest as _, Sha256};
use std::collections::HashMap;

/// A SHA-256 digest of an output.
pub type Digest = sha2::digest::Output<Sha256>;

/// Outputs up to this size are digested, so a timing that leaves a different output on the same
/// inputs is caught (larger ones would cost seconds each to hash).
const DIGEST_LIMIT: usize = 512 << 20;

/// What one case's validation leaves: its inputs and buffers (timing and the peers use the last
/// case's), the vendor's output where it passed, why it failed where it did not, and a digest of
/// each variant's output (by result slot).
pub struct CaseOutcome<W: Workload> {
    pub inputs: W::Inputs,
    pub buffers: W::Buffers,
    pub vendor: Option<Vec<u8>>,
    pub vendor_failure: Option<String>,
    pub digests: HashMap<usize, Digest>,
}

/// The variants of a case and what their outputs are compared with.
pub struct Lineup<'a, W: Workload> {
    /// Each ready variant with its result slot, baseline first.
    pub ready: Vec<(usize, &'a Ready<W>)>,
    /// The correct variants a twin is looked up among (the workload's catalogue).
    pub correct: &'a [crate::pipeline::Variant<W::Shape>],
}

/// The failed verdicts' summaries joined, or None if every verdict passed.
pub fn failures(verdicts: &[Verdict]) -> Option<String> {
    let bad: Vec<String> = verdicts
        .iter()
        .filter(|v| !v.passed)
        .map(Verdict::summary)
        .collect();
    (!bad.is_empty()).then(|| bad.join("; "))
}

/// Validates every variant of `lineup` that has not failed yet on `case`.
pub fn validate_case<W: Workload>(
    e: &Engine,
    w: &W,
    lineup: &Lineup<W>,
    vendor: Option<&dyn Vendor<W::Buffers>>,
    results: &mut [VariantResult],
    case: &Case<W::Problem>,
    seed: u64,
) -> Result<CaseOutcome<W>> {
    let inputs = w.inputs(&case.problem, seed);
    let mut buffers = w.upload(&e.gpu, &inputs)?;
    let (mut vendor_out, mut vendor_failure) = (None, None);
    if let Some(v) = vendor {
        let out = v.output(&e.gpu, &buffers)?;
        match failures(&w.judge(&out, &inputs, Refs::default())) {
            None => vendor_out = Some(out),
            Some(why) => vendor_failure = Some(format!("{}: {why}", case.problem.label())),
        }
    }
    // the outputs some other variant is compared with, kept for as long as the case runs
    let twins: Vec<String> = lineup
        .ready
        .iter()
        .filter_map(|(_, r)| w.twin(r.variant(), lineup.correct))
        .map(|t| t.name.clone())
        .collect();
    // by name: the slot it came from, its output and verdicts
    let mut kept: HashMap<String, (usize, Vec<u8>, Vec<Verdict>)> = HashMap::new();
    let mut digests = HashMap::new();
    for &(i, r) in &lineup.ready {
        crate::interrupt::check()?;
        e.progress.step(&format!("{} / {}", r.name(), case.name));
        if results[i].status != Status::Passed {
            continue;
        }
        let blocks = r.grid(w, e, &case.problem, case.grid);
        let out = match r.run_checked(e, w, (&mut buffers, &case.problem), blocks, seed as u32) {
            Ok(out) => out,
            Err(err) => {
                let stop = fail(e, &mut results[i], r.name(), &case.name, err);
                match stop {
                    Some(err) => return Err(err),
                    None => continue,
                }
            }
        };
        let twin = w
            .twin(r.variant(), lineup.correct)
            .and_then(|t| kept.get(&t.name))
            .filter(|(slot, ..)| *slot != i)
            .map(|(_, o, v)| (o.as_slice(), v.as_slice()));
        let refs = Refs {
            twin,
            vendor: vendor_out.as_deref(),
        };
        let verdicts = w.judge(&out, &inputs, refs);
        let bad = failures(&verdicts);
        if let Some(why) = &bad {
            results[i].fail(Status::Failed, format!("{}: {why}", case.name));
        }
        results[i].validation.push(CaseResult {
            case: case.name.clone(),
            problem: case.problem.label(),
            grid: case.grid,
            blocks,
            verdicts: verdicts.clone(),
        });
        if out.len() <= DIGEST_LIMIT {
            digests.insert(i, Sha256::digest(&out));
        }
        if bad.is_none() && twins.iter().any(|t| t == r.name()) {
            kept.insert(r.name().to_string(), (i, out, verdicts));
        }
    }
    Ok(CaseOutcome {
        inputs,
        buffers,
        vendor: vendor_out,
        vendor_failure,
        digests,
    })
}

/// Records a launch's error as the variant's failure on `case`. Returns the error again where
/// nothing more can run here: a hang (the kernel still holds the GPU) or a lost context.
fn fail(e: &Engine, r: &mut VariantResult, name: &str, case: &str, err: Error) -> Option<Error> {
    match err {
        err @ (Error::WaitTimeout { .. } | Error::Protocol { .. } | Error::MonitorLog(_)) => {
            r.fail(Status::Failed, format!("{case}: {err}"));
            None
        }
        err @ Error::Hung { .. } => {
            r.fail(Status::Failed, format!("{case}: {err}"));
            Some(err)
        }
        err => match sticky(e, name, case, err) {
            err @ Error::ContextLost { .. } => {
                r.fail(Status::Failed, format!("{case}: {err}"));
                Some(err)
            }
            err => {
                r.fail(Status::Error, format!("{case}: {err}"));
                None
            }
        },
    }
}

/// A variant's result slot before anything ran.
pub fn result_of<W: Workload>(w: &W, v: &Variant<W::Shape>, p: &W::Problem) -> VariantResult {
    VariantResult {
        name: v.name.clone(),
        mechanism: v.mechanism,
        stages: v.stages,
        bytes_per_copy: w.bytes_per_copy(v, p),
        control: v.control,
        warp_specialized: v.warp_specialized,
        tile: w.tile_label(v, p),
        status: Status::Passed,
        detail: None,
        build: None,
        resources: None,
        sass: None,
        math: None,
        completion: w.completion(v, p),
        checking: None,
        validation: Vec::new(),
        timing: None,
        perf: None,
    }
}
