//! `tilepipe check --workload gemm`: every variant on every validation problem of each precision
//! and layout (tails in M, N and K, K below one slice, fewer slices than stages, one slice, odd K,
//! a sampled large problem, more tiles than blocks at once), bit for bit against `sync` on the same
//! tile; stress runs with random sleeps; every control caught on every run; the SASS attestation of movement and math; the
//! occupancy cross-check. Ends with the totals, as the row workloads' suite does.

use super::controls::{self, ControlJob};
use super::kernel::{self, Buffers, GemmKernel, Job};
use super::{failures, judge, unsupported};
use crate::Result;
use crate::check::suite::ControlRuns;
use crate::check::suite::SuiteReport;
use crate::dtype::DType;
use crate::evidence::sass::Attestation;
use crate::harness::Engine;
use crate::pipeline::{Control, STRESS_BOTH};
use crate::workload::gemm::catalogue::GemmVariant;
use crate::workload::gemm::data::Inputs;
use crate::workload::gemm::reference;
use crate::workload::gemm::{Layout, Problem};
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct GemmSuiteOptions {
    pub dtypes: Vec<DType>,
    pub layouts: Vec<Layout>,
    /// Variants and controls by name prefix, comma-separated; all without.
    pub variants: Option<String>,
    /// Runs per control (all must catch it) and, a third as many, stress runs per variant.
    pub runs: usize,
    pub seed: u64,
    /// This process's argv, for the processes that run the controls which can fault the GPU.
    pub command: Vec<String>,
    /// Run only the controls, in this process, writing their runs to `control_runs` (a process
    /// started for one control).
    pub only_controls: bool,
}

/// The validation problems (M, N, K) and what each is for.
const CASES: [(&str, usize, usize, usize); 8] = [
    ("tails in M, N and K", 257, 392, 1000),
    ("K below one slice", 96, 136, 8),
    ("fewer slices than stages", 200, 136, 40),
    ("one K slice", 130, 264, 16),
    ("whole tiles", 512, 512, 512),
    ("odd K", 67, 40, 1001),
    ("large, sampled", 1536, 1024, 2048),
    // 256 to 512 tiles: persistent blocks (one per SM) walk two to four, the last round short
    (MANY_TILES, 2048, 4096, 128),
];
const MANY_TILES: &str = "more tiles than blocks at once";

/// Where the controls run: a thousand blocks of 8 to 16 slices each, so that the first wave's
/// copies contend for memory and land late, as a broken protocol needs to show.
const CONTROL_CASE: (usize, usize, usize) = (4096, 4096, 256);
/// Where the draining control runs: one K slice, so the slice its too-short wait lets through is
/// read right after it was issued (with more slices it is the last one, issued stages ago, and a
/// late copy is luck).
const DRAIN_CASE: (usize, usize, usize) = (4096, 4096, 16);

fn wanted(v: &GemmVariant, filter: Option<&str>) -> bool {
    filter.is_none_or(|f| {
        f.split(',')
            .map(str::trim)
            .any(|w| !w.is_empty() && v.name.starts_with(w))
    })
}

pub fn run_suite(e: &Engine, o: &GemmSuiteOptions) -> Result<SuiteReport> {
    let mut report = SuiteReport::default();
    for &dtype in &o.dtypes {
        for &layout in &o.layouts {
            if let Err(stop) = group(e, o, dtype, layout, &mut report) {
                report.stopped = Some(stop.to_string());
                return Ok(report);
            }
        }
    }
    Ok(report)
}

/// A variant fitted to one problem, built clean or stressed; keyed so each build happens once.
type Key = (String, u32, u32);

fn group(
    e: &Engine,
    o: &GemmSuiteOptions,
    dtype: DType,
    layout: Layout,
    report: &mut SuiteReport,
) -> Result<()> {
    let tag = format!("{dtype} {}", layout.name());
    let problems: Vec<(String, Problem)> = CASES
        .iter()
        .map(|&(what, m, n, k)| {
            Ok((
                format!("{m}x{n}x{k} ({what})"),
                Problem::new(m, n, k, layout, dtype)?,
            ))
        })
        .collect::<Result<_>>()?;
    let catalogue: Vec<GemmVariant> = GemmVariant::catalogue(dtype)
        .into_iter()
        .filter(|v| v.is_baseline() || wanted(v, o.variants.as_deref()))
        .collect();
    let controls: Vec<GemmVariant> = GemmVariant::controls(dtype)
        .into_iter()
        .filter(|v| wanted(v, o.variants.as_deref()))
        .collect();
    // every (variant, problem) pair that can run, and the builds they need
    let mut jobs: Vec<Job> = Vec::new();
    let mut index: HashMap<Key, usize> = HashMap::new();
    let mut job_of = |v: &GemmVariant, p: &Problem, stress: u32, jobs: &mut Vec<Job>| -> usize {
        let key = (v.name.clone(), v.pipe.copy_bytes, stress);
        *index.entry(key).or_insert_with(|| {
            jobs.push(Job {
                stress,
                ..Job::clean(v, p)
            });
            jobs.len() - 1
        })
    };
    let mut plan: Vec<(usize, usize)> = Vec::new(); // (problem, job)
    for (pi, (label, p)) in problems.iter().enumerate().filter(|_| !o.only_controls) {
        for v in &catalogue {
            let v = v.fit(p);
            match unsupported(e, &v, p) {
                Some(why) => report
                    .skipped
                    .push(format!("{} {tag} {label}: {why}", v.name)),
                None => plan.push((pi, job_of(&v, p, 0, &mut jobs))),
            }
        }
    }
    // stressed on the tails; a persistent variant on the problem where its blocks walk tiles
    let walk = CASES
        .iter()
        .position(|c| c.0 == MANY_TILES)
        .expect("a case of many tiles");
    let stress_problem = |v: &GemmVariant| if v.persistent { walk } else { 0 };
    let stress: Vec<(usize, usize)> = catalogue
        .iter()
        .filter(|v| !o.only_controls && unsupported(e, v, &problems[stress_problem(v)].1).is_none())
        .map(|v| {
            let q = stress_problem(v);
            (q, job_of(v, &problems[q].1, STRESS_BOTH, &mut jobs))
        })
        .collect();
    // each control case with its controls, grouped by the correct build they are compared with
    let all = GemmVariant::catalogue(dtype);
    let mut ctl: Vec<(Problem, Vec<usize>, usize)> = Vec::new();
    for (m, n, k) in [CONTROL_CASE, DRAIN_CASE] {
        let p = Problem::new(m, n, k, layout, dtype)?;
        let drain = (m, n, k) == DRAIN_CASE;
        for v in controls
            .iter()
            .filter(|v| (v.pipe.control == Some(Control::DrainNoCommit)) == drain)
        {
            let Some(twin) = v.twin(&all).filter(|_| unsupported(e, v, &p).is_none()) else {
                let why = unsupported(e, v, &p).unwrap_or_else(|| "no correct twin".into());
                report.skipped.push(format!("{} {tag}: {why}", v.name));
                continue;
            };
            let (job, base) = (job_of(v, &p, 0, &mut jobs), job_of(twin, &p, 0, &mut jobs));
            match ctl.iter_mut().find(|(q, _, b)| *q == p && *b == base) {
                Some((_, mine, _)) => mine.push(job),
                None => ctl.push((p, vec![job], base)),
            }
        }
    }
    let builds = kernel::build_all(e, &jobs);
    let mut ready: Vec<Option<GemmKernel>> = Vec::new();
    for (job, built) in jobs.into_iter().zip(builds) {
        let name = format!("build {} {tag}", job.variant.name);
        match built.and_then(|b| kernel::prepare(e, job, b, !o.only_controls)) {
            Ok(k) => ready.push(Some(k)),
            Err(err) => {
                report.record(&e.progress, name, false, err.to_string());
                ready.push(None);
            }
        }
    }
    if !o.only_controls {
        evidence(e, &ready, &tag, report);
    }
    for (pi, (label, p)) in problems.iter().enumerate() {
        let seed = o.seed ^ (pi as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let x = Inputs::new(*p, seed);
        let mut d = Buffers::upload(&e.gpu, &x)?;
        let elements = reference::checked_elements(p, seed);
        let mut baseline: Option<(GemmVariant, Vec<u8>)> = None;
        for &(_, j) in plan.iter().filter(|(q, _)| *q == pi) {
            crate::interrupt::check()?;
            let Some(k) = &ready[j] else { continue };
            let same_tile = baseline
                .as_ref()
                .filter(|(b, _)| b.tile == k.job.variant.tile)
                .map(|(_, c)| c.as_slice());
            let name = format!("{} {tag} {label}", k.name());
            match judge(e, k, &mut d, &x, &elements, (None, same_tile), seed as u32) {
                Ok((c, verdicts)) => {
                    let bad = failures(&verdicts);
                    if k.job.variant.is_baseline() && bad.is_none() {
                        baseline = Some((k.job.variant.clone(), c));
                    }
                    report.record(&e.progress, name, bad.is_none(), bad.unwrap_or_default());
                }
                Err(err) => {
                    report.record(&e.progress, name, false, err.to_string());
                    if !e.healthy() {
                        return Err(err);
                    }
                }
            }
        }
    }
    let stress_runs = o.runs.div_ceil(3).max(1);
    for q in [0, walk] {
        let jobs: Vec<usize> = stress
            .iter()
            .filter(|(p, _)| *p == q)
            .map(|(_, j)| *j)
            .collect();
        if jobs.is_empty() {
            continue;
        }
        under_stress(
            e,
            &ready,
            &jobs,
            &problems[q].1,
            stress_runs,
            o.seed,
            &tag,
            report,
        )?;
    }
    for (p, jobs, base) in &ctl {
        for &j in jobs {
            let (Some(control), Some(twin)) = (&ready[j], &ready[*base]) else {
                continue; // its build failure is recorded
            };
            let job = ControlJob {
                control,
                twin,
                problem: *p,
                runs: o.runs,
                seed: o.seed,
            };
            run_control(e, o, (dtype, layout), &job, report)?;
        }
    }
    Ok(())
}

/// One control, all its runs: here, or in processes of its own where it can fault the GPU.
fn run_control(
    e: &Engine,
    o: &GemmSuiteOptions,
    (dtype, layout): (DType, Layout),
    j: &ControlJob,
    report: &mut SuiteReport,
) -> Result<()> {
    let v = &j.control.job.variant;
    let (t, err) = if o.only_controls {
        let (t, err) = controls::runs_here(e, j);
        report.control_runs.push(t);
        return err.map_or(Ok(()), Err);
    } else if v.pipe.may_fault() {
        match controls::runs_in_children(&o.command, (dtype.name(), layout.name()), j) {
            Ok(t) => (t, None),
            Err(err) => (ControlRuns::none(j.control.name()), Some(err)),
        }
    } else {
        controls::runs_here(e, j)
    };
    let tag = format!("{dtype} {}", layout.name());
    let mut detail = format!(
        "{}; first: {}",
        v.pipe.control.map_or("", |c| c.describe()),
        t.first
    );
    if let Some(err) = &err {
        detail.push_str(&format!("; stopped: {err}"));
    }
    report.record(
        &e.progress,
        format!("control {} {tag}: caught {}/{}", t.name, t.caught, o.runs),
        err.is_none() && t.caught == o.runs,
        detail,
    );
    match err {
        Some(err) if !e.healthy() => Err(err),
        _ => Ok(()),
    }
}

/// SASS attestation (movement and math) and the occupancy cross-check of every clean build.
fn evidence(e: &Engine, ready: &[Option<GemmKernel>], tag: &str, report: &mut SuiteReport) {
    for k in ready.iter().flatten().filter(|k| k.job.stress == 0) {
        let name = format!(
            "{} {tag} (copy width {} B)",
            k.name(),
            k.job.variant.pipe.copy_bytes
        );
        let a = &k.sass.attestation;
        let ok = a.is_attested() && k.math.is_attested();
        let detail = match (a, &k.math) {
            (Attestation::Attested { evidence }, Attestation::Attested { evidence: m }) => {
                format!("{evidence}; {m}")
            }
            _ => format!("movement: {}; math: {}", a.label(), k.math.label()),
        };
        report.record(&e.progress, format!("sass {name}"), ok, detail);
        let r = &k.resources;
        report.record(
            &e.progress,
            format!("occupancy {name}"),
            r.occupancy.blocks_per_sm == r.driver_blocks_per_sm,
            format!(
                "{} blocks/SM computed ({}), driver {}; {} registers, {} B shared",
                r.occupancy.blocks_per_sm,
                r.occupancy.limiter.name(),
                r.driver_blocks_per_sm,
                r.function.registers,
                r.dynamic_smem
            ),
        );
    }
}

/// Each of `jobs` (stressed builds of correct variants) `runs` times on fresh inputs of `p`: every
/// run must pass.
#[allow(clippy::too_many_arguments)]
fn under_stress(
    e: &Engine,
    ready: &[Option<GemmKernel>],
    jobs: &[usize],
    p: &Problem,
    runs: usize,
    seed: u64,
    tag: &str,
    report: &mut SuiteReport,
) -> Result<()> {
    let elements = reference::checked_elements(p, seed);
    let mut failed = vec![0usize; jobs.len()];
    let mut first = vec![String::new(); jobs.len()];
    for r in 0..runs {
        crate::interrupt::check()?;
        let x = Inputs::new(*p, seed ^ 0xC0_417 ^ (r as u64) << 20);
        let mut d = Buffers::upload(&e.gpu, &x)?;
        for (n, &j) in jobs.iter().enumerate() {
            let Some(k) = &ready[j] else { continue };
            let why = match judge(e, k, &mut d, &x, &elements, (None, None), r as u32 + 1) {
                Ok((_, v)) => failures(&v),
                Err(err) if e.healthy() => Some(err.to_string()),
                Err(err) => return Err(err),
            };
            if let Some(w) = why {
                failed[n] += 1;
                if first[n].is_empty() {
                    first[n] = w;
                }
            }
        }
    }
    for (n, &j) in jobs.iter().enumerate() {
        let Some(k) = &ready[j] else { continue };
        let name = format!("stress {} {tag}: {runs} runs", k.name());
        report.record(&e.progress, name, failed[n] == 0, first[n].clone());
    }
    Ok(())
}
