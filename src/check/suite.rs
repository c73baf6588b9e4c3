//! The GPU suite behind `tilepipe check`: every variant x precision x validation shape, the SASS
//! attestation of every strict claim, the occupancy cross-check, and the negative controls, each
//! of which must be caught on every one of K runs. Prints `N passed, N failed` last.

use super::cases::{self, Case};
use crate::dtype::DType;
use crate::harness::Harness;
use crate::report::{Status, VariantResult};
use crate::run::{Ready, case_seed, prepare_all, validate_case};
use crate::sass::Attestation;
use crate::variant::{BuildConfig, Claim, Variant};
use crate::Result;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone)]
pub struct SuiteOptions {
    pub dtypes: Vec<DType>,
    pub hidden: Vec<usize>,
    pub variants: Option<String>,
    /// Runs per control (each with fresh inputs); every one must catch it.
    pub control_runs: usize,
    pub seed: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestResult {
    pub name: String,
    pub passed: bool,
    pub detail: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SuiteReport {
    pub tests: Vec<TestResult>,
    pub skipped: Vec<String>,
    pub results: Vec<VariantResult>,
}

impl SuiteReport {
    pub fn passed(&self) -> usize {
        self.tests.iter().filter(|t| t.passed).count()
    }

    pub fn failed(&self) -> usize {
        self.tests.len() - self.passed()
    }

    fn record(&mut self, name: String, passed: bool, detail: String) {
        println!("{} {name}{}", if passed { "ok  " } else { "FAIL" }, if detail.is_empty() { String::new() } else { format!(": {detail}") });
        self.tests.push(TestResult { name, passed, detail });
    }
}

pub fn run_suite(h: &Harness, o: &SuiteOptions) -> Result<SuiteReport> {
    let mut report = SuiteReport::default();
    let mut correct = Variant::matching(Variant::catalogue(), o.variants.as_deref());
    let controls = Variant::matching(Variant::controls(), o.variants.as_deref());
    if correct.is_empty() && controls.is_empty() {
        // select names what is allowed
        Variant::select(Variant::catalogue().into_iter().chain(Variant::controls()).collect(), o.variants.as_deref())?;
    }
    if !correct.iter().any(Variant::is_baseline) {
        correct.insert(0, Variant::catalogue().remove(0));
    }
    for &dtype in &o.dtypes {
        for &hidden in &o.hidden {
            let cfg = BuildConfig::new(dtype, hidden, None);
            let cases = cases::suite_cases(hidden, dtype, cfg.tile_rows)?;
            let tag = format!("{dtype} h{hidden}");
            let all: Vec<Variant> = correct.iter().chain(&controls).cloned().collect();
            let mut results: Vec<VariantResult> = all.iter().map(|v| VariantResult::new(v, &cfg)).collect();
            // only what the GPU itself rules out is skipped here; shapes are checked per case
            let ready = prepare_all(h, &all, &cfg, &[], &mut results);
            for r in results.iter().filter(|r| r.status != Status::Passed) {
                if r.status == Status::Skipped {
                    report.skipped.push(format!("{} {tag}: {}", r.name, r.detail.clone().unwrap_or_default()));
                } else {
                    report.record(format!("build {} {tag}", r.name), false, r.detail.clone().unwrap_or_default());
                }
            }
            evidence_tests(&mut report, &ready, &tag);
            let (good, ctl): (Vec<&Ready>, Vec<&Ready>) = ready.iter().partition(|r| !r.prepared.variant.is_control());
            let baseline: Vec<&Ready> = good.iter().copied().filter(|r| r.prepared.variant.is_baseline()).collect();
            h.progress.stage(&format!("check {tag}"), (cases.len() * good.len() + controls.len() * o.control_runs) as u64);
            for (ci, case) in cases.iter().enumerate() {
                let runnable: Vec<&Ready> = good.iter().copied().filter(|r| h.unsupported(&r.prepared.variant, &case.view, &cfg).is_none()).collect();
                let mut res = fresh(&results);
                validate_case(h, &runnable, &mut res, case, dtype, case_seed(o.seed, ci))?;
                for r in &runnable {
                    let v = &res[r.index];
                    report.record(format!("valid {tag} {} [{}]", v.name, case.name), v.status == Status::Passed, v.detail.clone().unwrap_or_default());
                }
            }
            for c in ctl {
                control_test(h, &mut report, &baseline, c, &cases, &results, &cfg, o, &tag)?;
            }
            h.progress.done();
            report.results.extend(results);
        }
    }
    Ok(report)
}

/// Result slots reset to "passed", keeping the build evidence.
fn fresh(results: &[VariantResult]) -> Vec<VariantResult> {
    results
        .iter()
        .map(|r| VariantResult { status: Status::Passed, detail: None, validation: Vec::new(), ..r.clone() })
        .collect()
}

fn evidence_tests(report: &mut SuiteReport, ready: &[Ready], tag: &str) {
    for r in ready {
        let p = &r.prepared;
        let res = &p.resources;
        let o = &res.occupancy;
        report.record(
            format!("occupancy {tag} {}", p.variant.name),
            o.blocks_per_sm == res.driver_blocks_per_sm,
            format!("model {} blocks/SM ({}), driver {}", o.blocks_per_sm, o.limiter.name(), res.driver_blocks_per_sm),
        );
        if p.variant.is_control() || p.variant.claim() == Claim::AnyAsync {
            continue;
        }
        match &p.sass.attestation {
            Attestation::Unverified { reason } => {
                report.record(format!("sass {tag} {}", p.variant.name), false, format!("unverified: {reason}"))
            }
            a => report.record(format!("sass {tag} {}", p.variant.name), a.is_attested(), a.label()),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn control_test(
    h: &Harness,
    report: &mut SuiteReport,
    baseline: &[&Ready],
    c: &Ready,
    cases: &[Case],
    results: &[VariantResult],
    cfg: &BuildConfig,
    o: &SuiteOptions,
    tag: &str,
) -> Result<()> {
    let v = &c.prepared.variant;
    // the steady-state case (many tiles per block), or the strided one where the control needs it
    let Some((ci, case)) = cases.iter().enumerate().find(|(_, k)| h.unsupported(v, &k.view, cfg).is_none()) else {
        report.skipped.push(format!("{} {tag}: no suite case fits", v.name));
        return Ok(());
    };
    let mut caught = 0;
    let mut first = String::new();
    for k in 0..o.control_runs {
        let mut res = fresh(results);
        let subset: Vec<&Ready> = baseline.iter().copied().chain(std::iter::once(c)).collect();
        validate_case(h, &subset, &mut res, case, cfg.dtype, case_seed(o.seed ^ 0xC0417201, ci * 1000 + k))?;
        let r = &res[c.index];
        if r.status != Status::Passed {
            caught += 1;
            if first.is_empty() {
                first = r.detail.clone().unwrap_or_default();
            }
        }
    }
    report.record(
        format!("control {tag} {} [{}]", v.name, case.name),
        caught == o.control_runs,
        format!("caught {caught}/{}; {}; first: {}", o.control_runs, v.control.map_or("", |c| c.describe()), truncate(&first, 200)),
    );
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.len() <= n { s.to_string() } else { format!("{}...", &s[..s.floor_char_boundary(n)]) }
}
