//! Validation of every ready variant on one case: the baseline against the f64 reference, the rest
//! bit for bit against it as well.

use super::prepare::{Ready, grid_for};
use crate::check::cases::Case;
use crate::dtype::DType;
use crate::harness::{self, DeviceData, Harness};
use crate::report::{CaseResult, Status, VariantResult};
use crate::workload::HostData;
use crate::{Error, Result};

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
        crate::interrupt::check()?;
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
            Err(e) => match sticky(h, &p.variant.name, &case.name, e) {
                e @ Error::ContextLost { .. } => {
                    res.fail(Status::Failed, format!("{}: {e}", case.name));
                    return Err(e);
                }
                e => res.fail(Status::Error, format!("{}: {e}", case.name)),
            },
        }
    }
    Ok((data, dd))
}

/// `e`, from `variant`'s kernel on `case`, as `ContextLost` when it left the context unusable (a
/// sticky fault such as an illegal address: the variant's failure, after which nothing more can
/// run in this context and the caller goes on in a fresh one).
pub fn sticky(h: &Harness, variant: &str, case: &str, e: Error) -> Error {
    if h.healthy() {
        e
    } else {
        Error::ContextLost {
            variant: variant.to_string(),
            case: case.to_string(),
            cause: Box::new(e),
        }
    }
}

/// Stress builds of a run's variants (random sleeps in producer and consumer; indices as the
/// clean builds') and the cases they run on.
pub struct Stress<'a> {
    pub ready: &'a [Ready],
    pub cases: &'a [Case],
}

/// Launches per stress case for each variant in `run`: fewer than `check`'s 20, enough to catch a
/// race that needs perturbation to show before the variant is timed as a pass.
pub const STRESS_RUNS: usize = 3;

/// Every variant that passed validation, again under stress: a failure there fails the variant,
/// so it is not timed.
pub fn under_stress(
    h: &Harness,
    stress: &Stress,
    results: &mut [VariantResult],
    dtype: DType,
    seed: u64,
) -> Result<()> {
    let passed: Vec<&Ready> = stress
        .ready
        .iter()
        .filter(|r| results[r.index].status == Status::Passed)
        .collect();
    h.progress.stage(
        "validate under stress",
        (passed.len() * stress.cases.len() * STRESS_RUNS) as u64,
    );
    for run in 0..STRESS_RUNS {
        for (ci, case) in stress.cases.iter().enumerate() {
            let mut scratch: Vec<VariantResult> = results.to_vec();
            let s = seed ^ 0x57E5_5000 ^ ((run * stress.cases.len() + ci) as u64 + 1) << 20;
            validate_case(h, &passed, &mut scratch, case, dtype, s)?;
            for r in &passed {
                if let (Status::Passed, Some(why)) =
                    (results[r.index].status, scratch[r.index].detail.clone())
                {
                    results[r.index]
                        .fail(Status::Failed, format!("under stress (run {run}): {why}"));
                }
            }
        }
    }
    h.progress.done();
    Ok(())
}
