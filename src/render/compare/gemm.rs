//! `compare` on two GEMM runs: the same rules as for the row workloads (ratio of device-time
//! medians, noise from the spreads, status, attestation and resource changes), with cuBLAS in the
//! copy ceiling's place: if cuBLAS itself moved beyond its spread, the machine changed.

use super::{Comparison, RunInfo, Side, changes_by_name, figures, setting_warnings};
use crate::report::gemm::GemmRun;

pub fn compare_gemm(base: &GemmRun, new: &GemmRun, threshold_pct: f64) -> Comparison {
    let sides = |r: &GemmRun| -> Vec<(String, Side)> {
        r.variants
            .iter()
            .map(|v| {
                let side = Side {
                    status: v.status,
                    device: v.timing.as_ref().map(|t| t.device),
                    attestation: v.sass.as_ref().map(|s| s.attestation.label()),
                    resources: v.resources.as_ref().map(figures),
                };
                (v.name.clone(), side)
            })
            .collect()
    };
    Comparison {
        threshold_pct,
        base: info(base),
        new: info(new),
        warnings: warnings(base, new),
        variants: changes_by_name(sides(base), sides(new), threshold_pct),
    }
}

fn info(r: &GemmRun) -> RunInfo {
    let c = &r.cublas;
    RunInfo {
        device: r.device.name.clone(),
        ceiling_gbps: None,
        reference: Some(match c.tflops {
            Some(t) => format!(
                "cuBLAS {} {t:.1} TFLOP/s",
                c.version.as_deref().unwrap_or("")
            ),
            None => format!("cuBLAS not timed ({})", c.status.label()),
        }),
        workload: format!("gemm {}", r.problem.label()),
        tilepipe_version: r.tilepipe_version.clone(),
        created_unix_s: r.created_unix_s,
    }
}

fn warnings(base: &GemmRun, new: &GemmRun) -> Vec<String> {
    let (bp, np) = (base.problem.label(), new.problem.label());
    let mut w = setting_warnings((&base.device.name, &new.device.name), (&bp, &np));
    let time = |r: &GemmRun| {
        r.cublas
            .timing
            .as_ref()
            .map(|t| (t.device, r.cublas.tflops))
    };
    if let (Some((b, bt)), Some((n, nt))) = (time(base), time(new))
        && !b.indistinguishable(&n)
    {
        w.push(format!(
            "cuBLAS moved beyond its spread ({:.1} -> {:.1} TFLOP/s): the machine changed, not only the code",
            bt.unwrap_or(0.0),
            nt.unwrap_or(0.0)
        ));
    }
    w
}
