//! The GPU suite behind `tilepipe check`: every variant x precision x validation shape; stress
//! runs with random sleeps; the negative controls, each of which must be caught on every run;
//! the SASS attestation of every strict claim; the occupancy cross-check. The command prints `N passed,
//! N failed` last.

use super::cases::{self, Case};
pub use super::outcome::{ControlRuns, SuiteReport, TestResult};
use super::probe_runs::{Process, Tally};
use crate::dtype::DType;
use crate::evidence::sass::Attestation;
use crate::harness::Harness;
use crate::pipeline::{BuildConfig, Claim, STRESS_BOTH, Variant};
use crate::report::{Status, VariantResult};
use crate::run::{Ready, case_seed, prepare_all, validate_case};
use crate::{Error, Result};

#[derive(Debug, Clone)]
pub struct SuiteOptions {
    pub dtypes: Vec<DType>,
    pub hidden: Vec<usize>,
    pub variants: Option<String>,
    /// Stress runs per correct variant and runs per control, each on fresh inputs.
    pub runs: usize,
    pub seed: u64,
    /// Variants left out (they faulted the process that started this one).
    pub exclude: Vec<String>,
    /// The (dtype, hidden) groups, in order, to start at (those before ran in that process).
    pub from_group: usize,
    /// This process's argv, handed to a new process after a fault.
    pub command: Vec<String>,
}

/// Result slots reset to "passed", keeping the build evidence.
fn fresh(results: &[VariantResult]) -> Vec<VariantResult> {
    results
        .iter()
        .map(|r| VariantResult {
            status: Status::Passed,
            detail: None,
            validation: Vec::new(),
            ..r.clone()
        })
        .collect()
}

/// Builds `variants` under `cfg` into `results` (appended), returning ready kernels whose indices
/// point into `results`.
fn prepare_into(
    h: &Harness,
    variants: &[Variant],
    cfg: &BuildConfig,
    results: &mut Vec<VariantResult>,
    report: &mut SuiteReport,
    tag: &str,
) -> Vec<Ready> {
    let offset = results.len();
    let mut mine: Vec<VariantResult> = variants
        .iter()
        .map(|v| VariantResult::new(v, cfg))
        .collect();
    let mut ready = prepare_all(h, variants, cfg, &[], &mut mine);
    for r in mine.iter().filter(|r| r.status != Status::Passed) {
        let why = r.detail.clone().unwrap_or_default();
        if r.status == Status::Skipped {
            report.skipped.push(format!("{} {tag}: {why}", r.name));
        } else {
            report.record(&h.progress, format!("build {} {tag}", r.name), false, why);
        }
    }
    for r in &mut ready {
        r.index += offset;
    }
    results.extend(mine);
    ready
}

/// The suite. A variant that faults the context (a sticky error) has that as its failure, recorded
/// with its case; this process can do no more GPU work, so the suite goes on in a new process
/// (`crate::child`) from the same (dtype, hidden) group without it, and its report is merged in.
/// The report records why the suite ended early if it did (a hang, Ctrl-C, too many faults); what
/// was tested before stands. The flag says whether this process's context was lost.
pub fn run_suite(h: &Harness, o: &SuiteOptions) -> Result<(SuiteReport, bool)> {
    let mut report = SuiteReport::default();
    let w = h.workload;
    let keep = |v: &Variant| !o.exclude.contains(&v.name);
    let mut correct = Variant::matching(w.catalogue(), o.variants.as_deref());
    let controls = Variant::matching(w.controls(), o.variants.as_deref());
    if correct.is_empty() && controls.is_empty() {
        // select names what is allowed
        Variant::select(w.variants(), o.variants.as_deref())?;
    }
    if !correct.iter().any(Variant::is_baseline) {
        correct.insert(0, w.catalogue().remove(0));
    }
    let correct: Vec<Variant> = correct.into_iter().filter(keep).collect();
    let controls: Vec<Variant> = controls.into_iter().filter(keep).collect();
    let groups = o
        .dtypes
        .iter()
        .flat_map(|&d| o.hidden.iter().map(move |&n| (d, n)));
    for (g, (dtype, hidden)) in groups.enumerate().skip(o.from_group) {
        let mut mine = SuiteReport::default();
        match group(h, o, dtype, hidden, &correct, &controls, &mut mine) {
            Ok(()) => report.merge(mine),
            Err(Error::ContextLost {
                variant,
                case,
                cause,
            }) => {
                let baseline = correct.iter().any(|v| v.name == variant && v.is_baseline());
                // a control is broken on purpose: its fault is how it was caught
                let control = controls.iter().any(|v| v.name == variant);
                report.record(
                    &h.progress,
                    format!("fault {dtype} h{hidden} {variant} [{case}]"),
                    control,
                    format!("faulted the GPU context: {cause}"),
                );
                if baseline || o.exclude.len() >= crate::run::isolate::MAX_FAULTS {
                    report.stopped = Some(format!("{variant} faulted the GPU context"));
                    return Ok((report, true));
                }
                h.progress.note(&format!(
                    "{variant} faulted the GPU context; the suite goes on in a new process without it, from {dtype} h{hidden}"
                ));
                let exclude: Vec<String> = o.exclude.iter().chain([&variant]).cloned().collect();
                let extra = [
                    "--exclude".to_string(),
                    exclude.join(","),
                    "--from-group".to_string(),
                    g.to_string(),
                ];
                match crate::child::continue_in::<SuiteReport>(&o.command, &extra) {
                    Ok(child) => {
                        // its test lines were not shown as they ran: show them now
                        for t in &child.tests {
                            h.progress.test(&t.name, t.passed, &t.detail);
                        }
                        report.merge(child);
                    }
                    Err(e) => report.stopped = Some(e.to_string()),
                }
                return Ok((report, true));
            }
            Err(e) => {
                report.merge(mine);
                report.stopped = Some(e.to_string());
                return Ok((report, false));
            }
        }
    }
    Ok((report, false))
}

/// Every test of one (dtype, hidden) group into `report`.
#[allow(clippy::too_many_arguments)]
fn group(
    h: &Harness,
    o: &SuiteOptions,
    dtype: DType,
    hidden: usize,
    correct: &[Variant],
    controls: &[Variant],
    report: &mut SuiteReport,
) -> Result<()> {
    let cfg = BuildConfig::new(dtype, hidden, None);
    let stressed = BuildConfig {
        stress: STRESS_BOTH,
        ..cfg
    };
    let cases = cases::suite_cases(hidden, dtype, cfg.tile_rows, o.seed)?;
    let tag = format!("{dtype} h{hidden}");
    let mut results = Vec::new();
    let clean = prepare_into(h, correct, &cfg, &mut results, report, &tag);
    let stress: Vec<Variant> = correct.iter().chain(controls).cloned().collect();
    let shaken = prepare_into(
        h,
        &stress,
        &stressed,
        &mut results,
        report,
        &format!("{tag} stress"),
    );
    evidence_tests(h, report, &clean, &tag);
    let baseline: Vec<&Ready> = clean
        .iter()
        .filter(|r| r.prepared.variant.is_baseline())
        .collect();
    h.progress.stage(
        &format!("check {tag}"),
        (cases.len() * clean.len() + shaken.len() * o.runs * 2) as u64,
    );
    for (ci, case) in cases.iter().enumerate() {
        let runnable: Vec<&Ready> = clean
            .iter()
            .filter(|r| {
                h.unsupported(&r.prepared.variant, &case.view, &r.prepared.cfg)
                    .is_none()
            })
            .collect();
        let mut res = fresh(&results);
        validate_case(h, &runnable, &mut res, case, dtype, case_seed(o.seed, ci))?;
        for r in &runnable {
            let v = &res[r.index];
            report.record(
                &h.progress,
                format!("valid {tag} {} [{}]", v.name, case.name),
                v.status == Status::Passed,
                v.detail.clone().unwrap_or_default(),
            );
        }
    }
    let stress_cases = cases::stress_cases(hidden, dtype, cfg.tile_rows, h.info().sm_count)?;
    for s in &shaken {
        repeated(h, report, &baseline, s, &stress_cases, &results, o, &tag)?;
    }
    h.progress.done();
    report.results.extend(results);
    Ok(())
}

fn evidence_tests(h: &Harness, report: &mut SuiteReport, ready: &[Ready], tag: &str) {
    let progress = &h.progress;
    for r in ready {
        let p = &r.prepared;
        let res = &p.resources;
        let o = &res.occupancy;
        report.record(
            progress,
            format!("occupancy {tag} {}", p.variant.name),
            o.blocks_per_sm == res.driver_blocks_per_sm,
            format!(
                "model {} blocks/SM ({}), driver {}",
                o.blocks_per_sm,
                o.limiter.name(),
                res.driver_blocks_per_sm
            ),
        );
        let kernel = crate::evidence::sass::parse::parse(&p.sass.listing)
            .into_iter()
            .find(|f| f.name == h.workload.kernel().entry);
        if let Some(verdict) = kernel
            .as_ref()
            .and_then(crate::evidence::sass::protocol::init_published)
        {
            let passed = verdict.is_ok();
            report.record(
                progress,
                format!("mbarrier-init {tag} {}", p.variant.name),
                passed,
                verdict.unwrap_or_else(|e| e),
            );
        }
        if p.variant.claim() == Claim::AnyAsync {
            continue;
        }
        match &p.sass.attestation {
            Attestation::Unverified { reason } => report.record(
                progress,
                format!("sass {tag} {}", p.variant.name),
                false,
                format!("unverified: {reason}"),
            ),
            a => report.record(
                progress,
                format!("sass {tag} {}", p.variant.name),
                a.is_attested(),
                a.label(),
            ),
        }
    }
}

/// K runs of a stressed build, each on fresh inputs in every stress case. A correct variant must
/// pass every run; a control must fail every run (in at least one of the cases).
#[allow(clippy::too_many_arguments)]
fn repeated(
    h: &Harness,
    report: &mut SuiteReport,
    baseline: &[&Ready],
    s: &Ready,
    cases: &[Case],
    results: &[VariantResult],
    o: &SuiteOptions,
    tag: &str,
) -> Result<()> {
    let v = &s.prepared.variant;
    let cfg = &s.prepared.cfg;
    let cases: Vec<&Case> = cases
        .iter()
        .filter(|c| match h.unsupported(v, &c.view, cfg) {
            Some(why) => {
                report
                    .skipped
                    .push(format!("{} {tag} [{}]: {why}", v.name, c.name));
                false
            }
            None => true,
        })
        .collect();
    let Some(&shown) = cases.first() else {
        return Ok(());
    };
    let (mut failed, mut first) = (0, String::new());
    if v.may_fault() {
        (failed, first) = in_child(h.workload.name(), v, shown, cfg, o)?;
    }
    for k in 0..if v.may_fault() { 0 } else { o.runs } {
        let mut failed_here = false;
        for (ci, case) in cases.iter().enumerate() {
            let mut res = fresh(results);
            let pair: Vec<&Ready> = baseline.iter().copied().chain(std::iter::once(s)).collect();
            validate_case(
                h,
                &pair,
                &mut res,
                case,
                cfg.dtype,
                case_seed(o.seed ^ 0x05EE_D0F5_7E55 ^ ci as u64, k),
            )?;
            let r = &res[s.index];
            if r.status != Status::Passed {
                failed_here = true;
                if first.is_empty() {
                    first = format!("run {k}: {}", r.detail.clone().unwrap_or_default());
                }
            }
        }
        failed += failed_here as usize;
    }
    let first = truncate(&first, 240);
    let shapes = if v.may_fault() {
        shown.name.clone()
    } else {
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        names.join(" + ")
    };
    match v.control {
        Some(c) => report.record(
            &h.progress,
            format!("control {tag} {} [{shapes}]", v.name),
            failed == o.runs,
            format!(
                "caught {failed}/{}; {}; first: {first}",
                o.runs,
                c.describe()
            ),
        ),
        None => report.record(
            &h.progress,
            format!("stress {tag} {} [{shapes}]", v.name),
            failed == 0,
            if failed == 0 {
                format!("0/{} runs failed with random sleeps", o.runs)
            } else {
                format!("{failed}/{} runs failed; first: {first}", o.runs)
            },
        ),
    }
    Ok(())
}

/// How long one probe process of a control may take (a few seconds when nothing hangs).
const PROBE_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Runs a control that may fault the device in `tilepipe probe --runs` child processes: each run
/// says passed, FAILED or FAULTED (a fault ends its child, and the next child takes the remaining
/// runs); a child that stops without a verdict catches nothing.
fn in_child(
    workload: &str,
    v: &Variant,
    case: &Case,
    cfg: &BuildConfig,
    o: &SuiteOptions,
) -> Result<(usize, String)> {
    let exe = std::env::current_exe().map_err(|e| crate::Error::io("current executable", e))?;
    let mut tally = Tally::default();
    loop {
        let done = tally.done;
        let c = &case.view;
        let blocks = match case.grid {
            cases::Grid::Fixed(b) => b,
            _ => 4,
        };
        let mut probe = std::process::Command::new(&exe);
        probe
            .arg("probe")
            .arg(&v.name)
            .args(["--workload", workload])
            .args([
                "--dtype",
                cfg.dtype.name(),
                "--hidden",
                &c.hidden.to_string(),
                "--tokens",
                &c.tokens.to_string(),
            ])
            .args([
                "--row-stride",
                &c.row_stride.to_string(),
                "--offset",
                &c.offset.to_string(),
                "--tile-rows",
                &cfg.tile_rows.to_string(),
            ])
            .args([
                "--stress",
                &cfg.stress.to_string(),
                "--blocks",
                &blocks.to_string(),
                "--quiet",
            ])
            .args([
                "--runs",
                &(o.runs - done).to_string(),
                "--seed",
                &(o.seed ^ (0xC41D + done as u64)).to_string(),
            ]);
        let (out, killed) = crate::child::output_within(&mut probe, PROBE_LIMIT)
            .map_err(|e| crate::Error::io(&exe, e))?;
        tally.add(
            &Process {
                stdout: &String::from_utf8_lossy(&out.stdout),
                stderr: &String::from_utf8_lossy(&out.stderr),
                success: out.status.success(),
                killed,
                limit_s: PROBE_LIMIT.as_secs(),
            },
            o.runs,
        );
        if tally.stopped {
            break;
        }
    }
    Ok((tally.caught, tally.first))
}

fn truncate(s: &str, n: usize) -> String {
    if s.len() <= n {
        s.to_string()
    } else {
        format!("{}...", &s[..s.floor_char_boundary(n)])
    }
}
