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
