//! Measures a sweep on the GPU, for any workload: per precision and tile height, the builds
//! validated before any point is timed (on the workload's run cases of a small problem), the
//! timing inputs made once for the largest point where the workload can time the smaller ones on
//! them, each point appended as it lands beside the run's ceiling (the copy, or the vendor
//! library at that point).

use super::record::VALIDATED;
use super::shard::workers_variants;
use super::{SweepOptions, peers};
use crate::engine::time::{copy_ceiling, time_kernel, time_with};
use crate::engine::validate::{Lineup, validate_case};
use crate::engine::{Engine, Job, Ready, case_seed, prepare_all};
use crate::pipeline::{Instrument, Mechanism, Variant};
use crate::results::sweep::{PointResources, Record, key};
use crate::results::sweep_store::{append, measured, resume};
use crate::results::{Bound, Grid, Status, Timing, tflops};
use crate::workload::{Problem, Workload};
use crate::{Error, Result};
use std::collections::BTreeSet;
const PROBE: &str = "stage probe: one stage only, output meaningless, not validated";

/// What can be judged without a GPU, so that it is refused before any GPU work: the file (there
/// already, without resume), every point's problem, and, where the torch peers are asked for
/// (their inputs are made whole on the host at every point), the host memory the largest point
/// takes (`available` bytes; None: not known).
pub fn check<W: Workload>(
    w: &W,
    o: &SweepOptions<W::Problem>,
    available: Option<u64>,
) -> Result<()> {
    if !o.resume && o.jsonl.exists() {
        return Err(Error::InvalidArgument(format!(
            "{} exists: pass --resume to continue it, or another --out",
            o.jsonl.display()
        )));
    }
    for &dtype in &o.spec.dtypes {
        for rows in o.spec.heights() {
            let points = points(w, o, dtype, rows)?;
            let (_, largest) = points.last().expect("the size axis has values");
            if o.torch_python.is_some() {
                crate::meminfo::check(
                    &format!(
                        "the peers' inputs at the sweep's largest point ({})",
                        largest.label()
                    ),
                    largest.host_bytes(),
                    available,
                )?;
            }
        }
    }
    Ok(())
}

/// The sizes and problems of one precision and tile height, smallest first.
pub fn points<W: Workload>(
    w: &W,
    o: &SweepOptions<W::Problem>,
    dtype: crate::dtype::DType,
    rows: Option<usize>,
) -> Result<Vec<(usize, W::Problem)>> {
    let mut sizes = o.spec.sizes.clone();
    sizes.sort_unstable();
    sizes
        .into_iter()
        .map(|n| Ok((n, w.sweep_problem(&o.base, dtype, n, rows)?)))
        .collect()
}

/// The key of every point a sweep expands to, in the order it measures them.
pub fn keys<W: Workload>(w: &W, o: &SweepOptions<W::Problem>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for &dtype in &o.spec.dtypes {
        let variants = o.spec.variants(w, dtype);
        let baseline = w.catalogue(dtype).remove(0);
        let probes = o.spec.probes && w.stage_probes();
        let sets = build_sets(&variants, &baseline, probes);
        for rows in o.spec.heights() {
            for (_, p) in points(w, o, dtype, rows)? {
                let (_, point) = w.sweep_point(&p);
                for (ins, vs) in &sets {
                    for v in vs {
                        out.push(key(&v.name, ins.only, dtype, &point));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// What one configuration builds: the variants whole and, with probes, each staged variant's
/// copy stage alone and the baseline's compute stage alone. Direct has no copy stage apart: its
/// copy is its compute body's own loads.
pub fn build_sets<S: Clone>(
    variants: &[Variant<S>],
    baseline: &Variant<S>,
    probes: bool,
) -> Vec<(Instrument, Vec<Variant<S>>)> {
    let mut sets = vec![(Instrument::CLEAN, variants.to_vec())];
    if probes {
        let staged = variants.iter().filter(|v| v.mechanism != Mechanism::Direct);
        let only = |only| Instrument {
            only,
            ..Instrument::CLEAN
        };
        sets.push((only(1), staged.cloned().collect()));
        sets.push((only(2), vec![baseline.clone()]));
    }
    sets
}

/// The points measured already, and what resuming did to the file.
fn done<W: Workload>(e: &Engine, w: &W, o: &SweepOptions<W::Problem>) -> Result<BTreeSet<String>> {
    if o.worker.is_some() {
        // siblings append to the same file: read it, never cut it (the parent did, if needed)
        return measured(&o.jsonl);
    }
    if !o.resume {
        return Ok(BTreeSet::new());
    }
    let resumed = resume(&o.jsonl, w.name())?;
    for w in &resumed.warnings {
        e.progress.note(w);
    }
    Ok(resumed.done)
}

/// "GPU 0: NVIDIA H200 (GPU-...)": the GPU a point was measured on.
pub fn gpu_of(e: &Engine) -> String {
    let i = e.info();
    format!("GPU {}: {} ({})", i.ordinal, i.name, i.uuid)
}

pub fn sweep<W: Workload>(e: &Engine, w: &W, o: &SweepOptions<W::Problem>) -> Result<Vec<Record>> {
    check(w, o, crate::meminfo::available())?;
    let done = done(e, w, o)?;
    let copy = match w.bound() {
        Bound::Memory => Some(copy_ceiling(e, 1 << 30, 10)?.gbps),
        Bound::Compute => None,
    };
    let mut records = Vec::new();
    for &dtype in &o.spec.dtypes {
        for rows in o.spec.heights() {
            let points = points(w, o, dtype, rows)?;
            let slice = Slice {
                points: &points,
                copy,
                done: &done,
            };
            configuration(e, w, o, dtype, &slice, &mut records)?;
            if let Some(python) = o.torch_python.as_deref()
                && o.worker.is_none_or(|w| w.index == 0)
            {
                peers::measure(&peers::Context::of(e), w, o, python, &slice, &mut records)?;
            }
        }
    }
    Ok(records)
}

/// One precision and tile height of a sweep: its points (smallest first), the copy ceiling
/// (memory-bound workloads), the points measured already.
pub struct Slice<'a, P> {
    pub points: &'a [(usize, P)],
    pub copy: Option<f64>,
    pub done: &'a BTreeSet<String>,
}

/// Builds, validates and times one configuration's variants at every point.
fn configuration<W: Workload>(
    e: &Engine,
    w: &W,
    o: &SweepOptions<W::Problem>,
    dtype: crate::dtype::DType,
    s: &Slice<W::Problem>,
    records: &mut Vec<Record>,
) -> Result<()> {
    let (_, largest) = s.points.last().expect("the size axis has values");
    let small = w.sweep_check(largest)?;
    let cases = w.run_cases(&small)?;
    let problems: Vec<&W::Problem> = cases
        .iter()
        .map(|c| &c.problem)
        .chain(s.points.iter().map(|(_, p)| p))
        .collect();
    let mut variants = Vec::new();
    for v in workers_variants(o.spec.variants(w, dtype), o.worker) {
        let f = w.fit(&v, &problems);
        match problems
            .iter()
            .find_map(|p| w.can_implement(&f, p, e.info()).err())
        {
            Some(why) => e.progress.note(&format!("not swept: {}: {why}", f.name)),
            None => variants.push(f),
        }
    }
    let baseline = w.catalogue(dtype).remove(0);
    let probes = o.spec.probes && w.stage_probes() && o.worker.is_none_or(|w| w.index == 0);
    let jobs: Vec<Job<W>> = build_sets(&variants, &baseline, probes)
        .into_iter()
        .flat_map(|(ins, vs)| {
            vs.into_iter()
                .map(move |v| Job::new(&v, largest, ins))
                .collect::<Vec<_>>()
        })
        .collect();
    let ready: Vec<Ready<W>> = prepare_all(e, w, jobs, false)
        .into_iter()
        .collect::<Result<_>>()?;
    let passed = validate(e, w, o, &ready, &cases)?;
    let timed: Vec<&Ready<W>> = ready
        .iter()
        .filter(|r| !r.job.instrument.is_clean() || passed.contains(r.name()))
        .collect();
    e.progress.stage(
        &format!("sweep {}", w.sweep_point(largest).0),
        (s.points.len() * timed.len()) as u64,
    );
    let mut d = w.sweep_buffers(&e.gpu, largest, o.seed)?;
    let vendor = w.vendor(&e.gpu).and_then(|v| v.ok());
    for (n, p) in s.points {
        if !w.resize(&mut d, p) {
            d = w.sweep_buffers(&e.gpu, p, o.seed)?;
        }
        let ceiling = match (&vendor, s.copy) {
            (_, Some(gbps)) => gbps,
            (Some(lib), None) => {
                let t = time_with(e, &lib.peer().name, 1, &o.timing, |_| {
                    lib.launch(&e.gpu, &mut d)
                })?;
                tflops(w.traffic(p).flops, t.device.median)
            }
            (None, None) => 0.0,
        };
        let (config, point) = w.sweep_point(p);
        for r in &timed {
            crate::interrupt::check()?;
            let only = r.job.instrument.only;
            let k = key(r.name(), only, dtype, &point);
            e.progress.step(&k);
            if s.done.contains(&k) || o.shard.is_some_and(|sh| !sh.owns(&k)) {
                continue;
            }
            let sets = w.timing_params(&e.gpu, &mut d, r.variant(), e.ctl(0))?;
            let blocks = r.grid(w, e, p, Grid::Persistent);
            let t = time_kernel(e, r, blocks, &sets, &o.timing)?;
            let res = &r.resources;
            let id = Id {
                key: k,
                variant: r.variant(),
                only,
                dtype,
                config: config.clone(),
                problem: p,
                size: *n,
                blocks,
                steps_per_block: w.walk(r.variant(), p, blocks).longest as usize,
            };
            let mut rec = record(w, id, &t, ceiling, (gpu_of(e), only));
            rec.resources = Some(PointResources {
                registers: res.function.registers,
                dynamic_smem: res.dynamic_smem,
                blocks_per_sm: res.occupancy.blocks_per_sm,
                limiter: res.occupancy.limiter.name().into(),
            });
            append(&o.jsonl, &rec)?;
            records.push(rec);
        }
    }
    e.progress.done();
    Ok(())
}

/// The names of the whole-pipeline builds that passed validation on every run case; the others
/// are said and not timed.
fn validate<W: Workload>(
    e: &Engine,
    w: &W,
    o: &SweepOptions<W::Problem>,
    ready: &[Ready<W>],
    cases: &[crate::workload::Case<W::Problem>],
) -> Result<BTreeSet<String>> {
    let full: Vec<&Ready<W>> = ready
        .iter()
        .filter(|r| r.job.instrument.is_clean())
        .collect();
    let correct: Vec<Variant<W::Shape>> = full.iter().map(|r| r.variant().clone()).collect();
    let lineup = Lineup {
        ready: full.iter().enumerate().map(|(i, r)| (i, *r)).collect(),
        correct: &correct,
    };
    let mut results: Vec<_> = full
        .iter()
        .map(|r| crate::engine::validate::result_of(w, r.variant(), &cases[0].problem))
        .collect();
    e.progress
        .stage("validate", (cases.len() * full.len()) as u64);
    for (i, case) in cases.iter().enumerate() {
        validate_case(
            e,
            w,
            &lineup,
            None,
            &mut results,
            case,
            case_seed(o.seed, i),
        )?;
    }
    e.progress.done();
    let mut passed = BTreeSet::new();
    for r in &results {
        match r.status {
            Status::Passed => {
                passed.insert(r.name.clone());
            }
            _ => e.progress.note(&format!(
                "not timed: {} {}",
                r.name,
                r.detail.clone().unwrap_or_default()
            )),
        }
    }
    Ok(passed)
}

/// What a point is, before it is timed.
pub struct Id<'a, W: Workload> {
    pub key: String,
    pub variant: &'a Variant<W::Shape>,
    pub only: u32,
    pub dtype: crate::dtype::DType,
    pub config: String,
    pub problem: &'a W::Problem,
    pub size: usize,
    pub blocks: u32,
    pub steps_per_block: usize,
}

/// The point `id` as timed by `t`, against `ceiling`, measured on `gpu`.
fn record<W: Workload>(
    w: &W,
    id: Id<W>,
    t: &Timing,
    ceiling: f64,
    (gpu, only): (String, u32),
) -> Record {
    Record {
        variant: id.variant.name.clone(),
        mechanism: Some(id.variant.mechanism),
        stages: id.variant.stages,
        only,
        dtype: id.dtype,
        blocks: id.blocks,
        steps_per_block: id.steps_per_block,
        validated: if only == 0 { VALIDATED } else { PROBE }.into(),
        gpu: Some(gpu),
        ..super::record::timed(w, id.problem, t, ceiling, (id.key, id.config, id.size))
    }
}
