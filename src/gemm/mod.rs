//! The GEMM engine: every variant built for the problem, validated before any timing (against the
//! f64 host reference, cuBLAS and the same-tile `sync`, on tail problems and under random sleeps
//! too), its evidence recorded, then timed beside cuBLAS on the same GPU, problem and stream.

mod controls;
mod cublas;
pub mod kernel;
mod peers;
pub mod suite;
pub mod sweep;
pub mod timeline;

use crate::bench::{TimingOptions, time_with};
use crate::harness::Engine;
use crate::pipeline::{Mechanism, STRESS_BOTH};
use crate::report::Status;
use crate::report::gemm::{CaseVerdicts, GemmResult, GemmRun, tflops};
use crate::workload::gemm::Problem;
use crate::workload::gemm::catalogue::GemmVariant;
use crate::workload::gemm::data::Inputs;
use crate::workload::gemm::reference::{self, Verdict};
use crate::{Error, Result};
use kernel::{Buffers, GemmKernel, Job};
use sha2::{Digest as _, Sha256};
use std::collections::HashMap;

/// A SHA-256 digest of an output.
type Digest = sha2::digest::Output<Sha256>;

#[derive(Debug, Clone)]
pub struct GemmOptions {
    pub problem: Problem,
    pub seed: u64,
    /// Names or prefixes, comma-separated; `sync` is always added as the baseline.
    pub variants: Option<String>,
    pub timing: TimingOptions,
    pub command: Vec<String>,
    /// The Python that runs torch.matmul and Triton's matmul beside the variants, if asked for.
    pub torch_python: Option<std::path::PathBuf>,
}

/// Stress validations per variant before it is timed.
const STRESS_RUNS: u32 = 3;

/// The catalogue's variants `filter` names, `sync` first.
pub fn selected(dtype: crate::dtype::DType, filter: Option<&str>) -> Result<Vec<GemmVariant>> {
    let all = GemmVariant::catalogue(dtype);
    let Some(filter) = filter else { return Ok(all) };
    let mut out = vec![all[0].clone()];
    for want in filter.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let hits: Vec<&GemmVariant> = all.iter().filter(|v| v.name.starts_with(want)).collect();
        if hits.is_empty() {
            let names: Vec<&str> = all.iter().map(|v| v.name.as_str()).collect();
            return Err(Error::InvalidArgument(format!(
                "no gemm variant matches '{want}' (allowed: a name or prefix of {})",
                names.join(", ")
            )));
        }
        out.extend(hits.into_iter().filter(|v| !v.is_baseline()).cloned());
    }
    out.dedup_by(|a, b| a.name == b.name);
    Ok(out)
}

/// Problems every variant of a run is validated on before the user's: tails in M, N and K (N and
/// K multiples of 8 elements, so rows take the run's widest copies), and K below one slice.
fn tail_problems(p: &Problem) -> Result<Vec<Problem>> {
    [(257, 392, 1000), (96, 136, 8)]
        .into_iter()
        .map(|(m, n, k)| Problem::new(m, n, k, p.layout, p.dtype))
        .collect()
}

impl GemmResult {
    fn new(v: &GemmVariant, p: &Problem) -> GemmResult {
        GemmResult {
            name: v.name.clone(),
            mechanism: v.pipe.mechanism,
            stages: v.pipe.stages,
            copy_bytes: v.pipe.copy_bytes,
            tile: v.tile,
            control: v.pipe.control,
            status: Status::Passed,
            detail: None,
            options: Vec::new(),
            resources: None,
            sass: None,
            math: None,
            completion: v.completion(p),
            validation: Vec::new(),
            timing: None,
            tflops: None,
            pct_of_cublas: None,
            cublas_clocks: None,
            speedup_vs_sync: None,
            speedup_vs_regprefetch: None,
        }
    }
}

/// Why `v` cannot run on this GPU for `p`, if it cannot.
pub fn unsupported(e: &Engine, v: &GemmVariant, p: &Problem) -> Option<String> {
    let sm = e.info().arch.sm();
    if v.tile.wgmma && sm != 90 {
        return Some(format!(
            "wgmma and setmaxnreg exist on sm_90 (Hopper) alone; this GPU is sm_{sm}"
        ));
    }
    let slot = v.tile.slot_bytes(p.dtype, p.layout);
    let optin = e.info().smem_per_block_optin;
    let smem = v.dynamic_smem(p);
    if smem > optin {
        return Some(format!(
            "{} stages x {slot} B slots + alignment = {smem} B of shared memory exceeds the {optin} B a block may use",
            v.pipe.stages
        ));
    }
    v.pipe
        .unfit(sm, optin, slot)
        .or_else(|| v.can_implement(p).err())
}

/// Builds and loads `jobs`, recording why any failed in `results[index]`.
fn prepare(
    e: &Engine,
    jobs: Vec<(usize, Job)>,
    results: &mut [GemmResult],
) -> Vec<(usize, GemmKernel)> {
    let builds = kernel::build_all(e, &jobs.iter().map(|(_, j)| j.clone()).collect::<Vec<_>>());
    let mut ready = Vec::new();
    for ((i, job), built) in jobs.into_iter().zip(builds) {
        let clean = job.stress == 0;
        match built.and_then(|b| kernel::prepare(e, job, b, true)) {
            Ok(k) => {
                if clean {
                    results[i].options = k.built.options.clone();
                    results[i].resources = Some(k.resources.clone());
                    results[i].sass = Some(k.sass.clone());
                    results[i].math = Some(k.math.clone());
                    if !k.sass.attestation.is_attested() && k.sass.census.is_some() {
                        results[i].fail(
                            Status::Failed,
                            format!("SASS: {}", k.sass.attestation.label()),
                        );
                    } else if let crate::evidence::sass::Attestation::Mismatch {
                        claimed,
                        emitted,
                    } = &k.math
                    {
                        results[i].fail(
                            Status::Failed,
                            format!("math: claimed {claimed}, emitted {emitted}"),
                        );
                    }
                }
                ready.push((i, k));
            }
            Err(err) => results[i].fail(Status::Error, err.to_string()),
        }
    }
    ready
}

/// The failed verdicts' summaries joined, or None if every verdict passed.
fn failures(verdicts: &[Verdict]) -> Option<String> {
    let bad: Vec<String> = verdicts
        .iter()
        .filter(|v| !v.passed())
        .map(Verdict::summary)
        .collect();
    (!bad.is_empty()).then(|| bad.join("; "))
}

/// Runs `k` on `d` and judges C against the reference on `elements`, cuBLAS's C and the baseline's.
fn judge(
    e: &Engine,
    k: &GemmKernel,
    d: &mut Buffers,
    x: &Inputs,
    elements: &[(usize, usize)],
    others: (Option<&[u8]>, Option<&[u8]>),
    seed: u32,
) -> Result<(Vec<u8>, Vec<Verdict>)> {
    let out = k.run_checked(e, d, seed)?;
    let mut v = vec![reference::against_reference(&out, x, elements)];
    if let Some(c) = others.0 {
        v.push(reference::against_cublas(&out, c, &x.problem));
    }
    if let Some(b) = others.1 {
        v.push(reference::against_baseline(&out, b, &x.problem));
    }
    Ok((out, v))
}

pub fn run(e: &Engine, o: &GemmOptions) -> Result<GemmOutcome> {
    let p = o.problem;
    let variants = selected(p.dtype, o.variants.as_deref())?;
    let mut problems = tail_problems(&p)?;
    problems.push(p);
    let mut results: Vec<GemmResult> = variants.iter().map(|v| GemmResult::new(v, &p)).collect();
    let mut jobs = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        let fitted = v.fit(&p);
        results[i].copy_bytes = fitted.pipe.copy_bytes;
        if results[..i].iter().any(|r| r.name == fitted.name) {
            let why = format!(
                "with {}-byte copies (all these rows allow) it is {}, already in this run",
                fitted.pipe.copy_bytes, fitted.name
            );
            results[i].fail(Status::Skipped, why);
            continue;
        }
        results[i].name = fitted.name.clone();
        let v = fitted;
        match problems.iter().find_map(|q| unsupported(e, &v, q)) {
            Some(why) => results[i].fail(Status::Skipped, why),
            None => {
                for stress in [0, STRESS_BOTH] {
                    jobs.push((
                        i,
                        Job {
                            stress,
                            ..Job::clean(&v, &p)
                        },
                    ));
                }
            }
        }
    }
    if results[0].status == Status::Skipped {
        return Err(Error::Unsupported {
            variant: "sync (the baseline)".into(),
            reason: results[0].detail.clone().unwrap_or_default(),
        });
    }
    let ready = prepare(e, jobs, &mut results);
    let (clean, stressed): (Vec<_>, Vec<_>) =
        ready.into_iter().partition(|(_, k)| k.job.stress == 0);
    let blas = cublas::Library::open(e);
    let mut out = GemmRun {
        tilepipe_version: env!("CARGO_PKG_VERSION").into(),
        created_unix_s: crate::report::now_unix_s(),
        command: o.command.clone(),
        device: e.info().clone(),
        toolchain: e.tc.clone(),
        problem: p,
        seed: o.seed,
        cublas: blas.peer(),
        peers: Vec::new(),
        repeat: None,
        variants: Vec::new(),
        notes: Vec::new(),
    };
    let fatal = validate(e, o, &problems, &clean, &blas, &mut results, &mut out)
        .and_then(|(mut user, validated)| {
            under_stress(e, &stressed, &mut results, &problems[0], o.seed)?;
            let timing = (&mut user.d, &validated);
            measure(e, o, &clean, &blas, timing, &mut results, &mut out)?;
            if let Some(python) = &o.torch_python {
                out.peers = peers::torch(e, o, &user, python);
            }
            out.repeat = blas.again(e, &mut user.d, &o.timing, &out.cublas)?;
            let after = if out.peers.is_empty() {
                "every variant"
            } else {
                "every variant and peer"
            };
            out.notes.extend(out.repeat.as_ref().map(|r| r.note(after)));
            Ok(())
        })
        .err();
    if let Some(err) = &fatal {
        // never shown as passed: a result counts only once it is validated and timed
        for r in results.iter_mut().filter(|r| r.timing.is_none()) {
            r.fail(Status::Unfinished, format!("the run stopped first: {err}"));
        }
    }
    out.variants = results;
    Ok(GemmOutcome { run: out, fatal })
}

/// What a GEMM run produced, and what stopped it early (a fault, a hang, Ctrl-C), if anything did:
/// what was validated and timed before stands.
pub struct GemmOutcome {
    pub run: GemmRun,
    pub fatal: Option<Error>,
}

/// Every clean build on every problem, the user's last (its buffers stay for timing): against the
/// f64 reference, cuBLAS's C (itself checked against the reference first) and `sync`'s on the same
/// tile. Returns the user's case and a digest of each variant's C there.
fn validate(
    e: &Engine,
    o: &GemmOptions,
    problems: &[Problem],
    clean: &[(usize, GemmKernel)],
    blas: &cublas::Library,
    results: &mut [GemmResult],
    out: &mut GemmRun,
) -> Result<(peers::UserCase, HashMap<usize, Digest>)> {
    let mut last = None;
    let mut digests = HashMap::new();
    e.progress
        .stage("validate", (problems.len() * clean.len()) as u64);
    for (ci, q) in problems.iter().enumerate() {
        let seed = o.seed ^ (ci as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let x = Inputs::new(*q, seed);
        let mut d = Buffers::upload(&e.gpu, &x)?;
        let elements = reference::checked_elements(q, seed);
        let cublas_c = match blas.reference_c(e, &mut d)? {
            Some(c) => {
                let v = reference::against_reference(&c, &x, &elements);
                if v.passed() {
                    Some(c)
                } else {
                    out.cublas.fail(format!("{}: {}", q.label(), v.summary()));
                    None
                }
            }
            None => None,
        };
        let mut baseline: Option<(GemmVariant, Vec<u8>)> = None;
        for (i, k) in clean {
            e.progress.step(k.name());
            if results[*i].status != Status::Passed {
                continue;
            }
            let same_tile = baseline
                .as_ref()
                .filter(|(b, _)| b.tile == k.job.variant.tile)
                .map(|(_, c)| c.as_slice());
            match judge(
                e,
                k,
                &mut d,
                &x,
                &elements,
                (cublas_c.as_deref(), same_tile),
                seed as u32,
            ) {
                Ok((c, verdicts)) => {
                    let bad = failures(&verdicts);
                    if let Some(bad) = &bad {
                        results[*i].fail(Status::Failed, format!("{}: {bad}", q.label()));
                    }
                    results[*i].validation.push(CaseVerdicts {
                        case: q.label(),
                        verdicts,
                    });
                    if ci + 1 == problems.len() {
                        digests.insert(*i, Sha256::digest(&c));
                    }
                    if k.job.variant.is_baseline() && bad.is_none() {
                        baseline = Some((k.job.variant.clone(), c));
                    }
                }
                Err(err) => {
                    results[*i].fail(Status::Failed, format!("{}: {err}", q.label()));
                    if !e.healthy() {
                        return Err(err);
                    }
                }
            }
        }
        last = Some(peers::UserCase {
            d,
            x,
            elements,
            cublas_c,
        });
    }
    e.progress.done();
    Ok((last.expect("the user's problem is validated last"), digests))
}

/// Every variant again on the first tail problem, built with random sleeps in producer and
/// consumer, `STRESS_RUNS` times with fresh inputs: a race that a quiet run hides fails here.
fn under_stress(
    e: &Engine,
    stressed: &[(usize, GemmKernel)],
    results: &mut [GemmResult],
    q: &Problem,
    seed: u64,
) -> Result<()> {
    e.progress.stage("stress", stressed.len() as u64);
    for r in 0..STRESS_RUNS {
        let x = Inputs::new(*q, seed ^ 0x57E5 ^ u64::from(r));
        let mut d = Buffers::upload(&e.gpu, &x)?;
        let elements = reference::checked_elements(q, 0);
        for (i, k) in stressed {
            if r == 0 {
                e.progress.step(k.name());
            }
            if results[*i].status != Status::Passed {
                continue;
            }
            match judge(e, k, &mut d, &x, &elements, (None, None), r + 1) {
                Ok((_, v)) if v[0].passed() => {}
                Ok((_, v)) => {
                    results[*i].fail(Status::Failed, format!("under stress: {}", v[0].summary()))
                }
                Err(err) => results[*i].fail(Status::Failed, format!("under stress: {err}")),
            }
        }
    }
    e.progress.done();
    Ok(())
}

/// Times every validated variant and cuBLAS on the user's problem, the same way.
/// After each variant's timed launches, the C they left is compared bit for bit with the C the same
/// inputs gave when the variant was validated: a kernel that is right only when launched alone
/// fails here.
fn measure(
    e: &Engine,
    o: &GemmOptions,
    clean: &[(usize, GemmKernel)],
    blas: &cublas::Library,
    (d, validated): (&mut Buffers, &HashMap<usize, Digest>),
    results: &mut [GemmResult],
    out: &mut GemmRun,
) -> Result<()> {
    let p = o.problem;
    blas.time(e, d, &o.timing, &mut out.cublas)?;
    let cublas_ms = out.cublas.timing.as_ref().map(|t| t.device.median);
    let timed: Vec<&(usize, GemmKernel)> = clean
        .iter()
        .filter(|(i, _)| results[*i].status == Status::Passed)
        .collect();
    e.progress.stage("time", timed.len() as u64);
    let mut times = Vec::new();
    for (i, k) in timed {
        crate::interrupt::check()?;
        e.progress.step(k.name());
        let params = match d.params(&e.gpu, k, 0) {
            Ok(p) => p,
            Err(err) => {
                results[*i].fail(Status::Error, format!("timing: {err}"));
                continue;
            }
        };
        let t = match time_with(e, k.name(), 1, &o.timing, |_| k.launch(&e.gpu, &params)) {
            Ok(t) => t,
            // a fault that leaves the context usable costs this variant only
            Err(err) if e.healthy() && !matches!(err, Error::Interrupted) => {
                results[*i].fail(Status::Error, format!("timing: {err}"));
                continue;
            }
            Err(err) => return Err(err),
        };
        if validated.get(i) != Some(&Sha256::digest(e.gpu.download(&d.c)?)) {
            let why = "the timed launches left a C that differs from the validated launch's on the same inputs";
            results[*i].fail(Status::Failed, why.into());
            continue;
        }
        let ms = t.device.median;
        let r = &mut results[*i];
        r.tflops = Some(tflops(p.flops(), ms));
        r.pct_of_cublas = cublas_ms.map(|c| 100.0 * c / ms);
        if let Some(theirs) = out.cublas.timing.as_ref().and_then(|c| c.clocks.as_ref()) {
            let mine = t.clocks.clone().unwrap_or_default();
            r.cublas_clocks = crate::clocks::unmatched("cuBLAS", theirs, &mine);
        }
        r.timing = Some(t);
        times.push((*i, &k.job.variant, ms));
    }
    // speedups over the register-staged baselines, on the same tile only
    for m in [Mechanism::Sync, Mechanism::Regprefetch] {
        let Some(&(_, base, base_ms)) = times.iter().find(|(_, v, _)| v.pipe.mechanism == m) else {
            continue;
        };
        for &(i, _, ms) in times.iter().filter(|(_, v, _)| v.tile == base.tile) {
            let s = Some(base_ms / ms);
            match m {
                Mechanism::Sync => results[i].speedup_vs_sync = s,
                _ => results[i].speedup_vs_regprefetch = s,
            }
        }
    }
    e.progress.done();
    out.notes.push(
        "timed hot: A and B stay in L2 where they fit, for cuBLAS and tilepipe alike; each variant was validated before timing (poisoned C, L2 scrubbed), and the C its timed launches left matched the validated one bit for bit".into(),
    );
    Ok(())
}
