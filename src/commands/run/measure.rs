//! A run's timing, once every variant is validated: the ceiling (the device copy for a
//! memory-bound workload, the vendor library for a compute-bound one), each variant that passed,
//! the output its timed launches left checked against the validated one, speedups over the
//! register-staged baselines, a reference timed again at the end, and the peers.

use super::{Builds, RunOptions};
use crate::engine::time::{self, time_kernel, time_with};
use crate::engine::validate::{CaseOutcome, Digest};
use crate::engine::{Engine, Ready, isolate};
use crate::pipeline::Mechanism;
use crate::results::timing::{Matched, host_bound_note, sized_copy_note};
use crate::results::{
    Bound, Grid, LadderStep, Perf, Repeat, RunResults, Status, VariantResult, gbps, tflops,
};
use crate::workload::{Vendor, Workload};
use crate::{Error, Result};
use sha2::{Digest as _, Sha256};

#[allow(clippy::too_many_arguments)]
pub fn measure<W: Workload>(
    e: &Engine,
    w: &W,
    o: &RunOptions<W::Problem>,
    b: &Builds<W>,
    vendor: Option<&dyn Vendor<W::Buffers>>,
    mut user: CaseOutcome<W>,
    results: &mut [VariantResult],
    out: &mut RunResults<W::Problem>,
) -> Result<()> {
    let p = &o.problem;
    let traffic = w.traffic(p);
    match w.bound() {
        Bound::Memory => ceiling(e, w, o, out)?,
        Bound::Compute => {
            if let (Some(lib), Some(row)) = (vendor, out.vendor.as_mut())
                && row.status == Status::Passed
            {
                let t = time_with(e, &row.name, 1, &o.timing, |_| {
                    lib.launch(&e.gpu, &mut user.buffers)
                })?;
                row.perf = Some(Perf {
                    gbps: gbps(traffic.bytes, t.device.median),
                    tflops: Some(tflops(traffic.flops, t.device.median)),
                    ..Perf::default()
                });
                row.timing = Some(t);
            }
        }
    }
    let timed: Vec<&(usize, Ready<W>)> = b
        .clean
        .iter()
        .filter(|(i, _)| results[*i].status == Status::Passed)
        .collect();
    e.progress.stage("time", timed.len() as u64);
    let mut checked_after = false;
    for (i, r) in timed.iter().map(|(i, r)| (*i, r)) {
        crate::interrupt::check()?;
        e.progress.step(r.name());
        let sets = w.timing_params(&e.gpu, &mut user.buffers, r.variant(), e.ctl(0))?;
        let blocks = r.grid(w, e, p, Grid::Persistent);
        let t = match time_kernel(e, r, blocks, &sets, &o.timing) {
            Ok(t) => t,
            Err(err) => match isolate::sticky(e, r.name(), "timing", err) {
                err @ Error::ContextLost { .. } => {
                    results[i].fail(Status::Failed, format!("timing: {err}"));
                    return Err(err);
                }
                err => {
                    results[i].fail(Status::Error, format!("timing: {err}"));
                    continue;
                }
            },
        };
        if let Some(want) = user.digests.get(&i).copied() {
            checked_after = true;
            if !same_output(e, w, &mut user, &want)? {
                let why = "the timed launches left an output that differs from the validated launch's on the same inputs";
                results[i].fail(Status::Failed, why.into());
                continue;
            }
        }
        if o.explain_timing && r.variant().is_baseline() {
            let s = time::submit_vs_device(e, r, blocks, &sets[0], 50)?;
            out.notes.push(format!(
                "host submission vs device time: {} launches of {} were submitted in {:.3} ms of host time, and the device took {:.3} ms to run them ({:.0}x longer); a shorter submission interval says nothing about device execution",
                s.launches, s.variant, s.host_submit_ms, s.device_ms, s.device_ms / s.host_submit_ms
            ));
        }
        let mut p = perf(w, out, traffic, &t);
        if let (Some(lib), Some(row)) = (vendor, out.vendor.as_ref())
            && row.timing.is_some()
        {
            let rounds = time::time_paired(
                e,
                (&row.name, r.name()),
                |_| lib.launch(&e.gpu, &mut user.buffers),
                |j| r.launch(e, blocks, &sets[j % sets.len()]),
            )?;
            p.matched = Matched::of(rounds);
        }
        results[i].perf = Some(p);
        results[i].timing = Some(t);
    }
    e.progress.done();
    speedups(w, b, results);
    out.ladder = ladder(w, b, results);
    if let Some(python) = &o.torch_python {
        crate::interrupt::check()?;
        peers(e, w, o, &user, python, results, out);
    }
    repeat(e, w, o, b, vendor, &mut user, results, out)?;
    notes(w, checked_after, results, out, e);
    Ok(())
}

/// The copy ceiling, and for a small problem the copy of its own size beside it.
fn ceiling<W: Workload>(
    e: &Engine,
    w: &W,
    o: &RunOptions<W::Problem>,
    out: &mut RunResults<W::Problem>,
) -> Result<()> {
    let moved = w.traffic(&o.problem).bytes as usize;
    let free = e.gpu.free_memory()? as usize;
    let bytes = o.ceiling_bytes.max(moved / 2).min(free / 3);
    e.progress.note(&format!(
        "measuring the device-to-device copy ceiling over {} MiB",
        bytes >> 20
    ));
    let mut c = time::copy_ceiling(e, bytes, 20)?;
    // a small problem also gets the copy of its own size: launch and ramp-up weigh there
    let own_size = moved / 2 / 16 * 16;
    if own_size < 4 * e.info().l2_bytes as usize {
        c.at_problem_size = Some(time::copy_at_size(e, own_size, &o.timing)?);
    }
    out.ceiling = Some(c);
    Ok(())
}

/// Whether the output the timed launches left on the validated inputs is the validated one.
fn same_output<W: Workload>(
    e: &Engine,
    w: &W,
    user: &mut CaseOutcome<W>,
    want: &Digest,
) -> Result<bool> {
    let got = e.gpu.download(w.output(&mut user.buffers))?;
    Ok(&Sha256::digest(&got) == want)
}

/// A timed variant's figures against the run's ceiling.
fn perf<W: Workload>(
    w: &W,
    out: &RunResults<W::Problem>,
    traffic: crate::workload::Traffic,
    t: &crate::results::Timing,
) -> Perf {
    let ms = t.device.median;
    let mut p = Perf {
        gbps: gbps(traffic.bytes, ms),
        tflops: (traffic.flops > 0).then(|| tflops(traffic.flops, ms)),
        ..Perf::default()
    };
    match w.bound() {
        Bound::Memory => {
            p.pct_of_ceiling = out.ceiling.as_ref().map(|c| 100.0 * p.gbps / c.gbps);
        }
        Bound::Compute => {
            let theirs = out.vendor.as_ref().and_then(|v| v.timing.as_ref());
            p.pct_of_ceiling = theirs.map(|v| 100.0 * v.device.median / ms);
            if let (Some(v), Some(row)) = (theirs, out.vendor.as_ref())
                && let Some(their_clocks) = &v.clocks
            {
                let mine = t.clocks.clone().unwrap_or_default();
                p.ceiling_clocks = crate::clocks::unmatched(&row.name, their_clocks, &mine);
            }
        }
    }
    p
}

/// Speedups over `sync` and `regprefetch`, for the variants whose output is compared with
/// `sync`'s (the same arithmetic on the same tile).
fn speedups<W: Workload>(w: &W, b: &Builds<W>, results: &mut [VariantResult]) {
    let correct: Vec<_> = b.clean.iter().map(|(_, r)| r.variant().clone()).collect();
    let medians: Vec<Option<f64>> = results
        .iter()
        .map(|r| r.timing.as_ref().map(|t| t.device.median))
        .collect();
    let median = |i: usize| medians[i];
    let of = |m: Mechanism| {
        b.clean
            .iter()
            .find(|(_, r)| r.variant().mechanism == m && r.variant().control.is_none())
            .and_then(|(i, _)| median(*i))
    };
    let (sync, regprefetch) = (of(Mechanism::Sync), of(Mechanism::Regprefetch));
    for (i, r) in &b.clean {
        let with_sync = r.variant().is_baseline()
            || w.twin(r.variant(), &correct)
                .is_some_and(|t| t.is_baseline());
        let (Some(ms), true) = (median(*i), with_sync) else {
            continue;
        };
        if let Some(p) = results[*i].perf.as_mut() {
            p.speedup_vs_sync = sync.map(|s| s / ms);
            p.speedup_vs_regprefetch = regprefetch.map(|s| s / ms);
        }
    }
}

/// The workload's ladder: per step the fastest timed variant standing on it.
fn ladder<W: Workload>(w: &W, b: &Builds<W>, results: &[VariantResult]) -> Vec<LadderStep> {
    let figure = |r: &VariantResult| -> Option<(f64, &'static str)> {
        let p = r.perf.as_ref()?;
        match w.bound() {
            Bound::Compute => Some((p.tflops?, "TFLOP/s")),
            Bound::Memory => Some((p.gbps, "GB/s")),
        }
    };
    w.ladder()
        .iter()
        .enumerate()
        .filter_map(|(step, what)| {
            let (r, (f, unit)) = b
                .clean
                .iter()
                .filter(|(_, r)| w.ladder_step(r.variant()) == Some(step))
                .filter_map(|(i, _)| Some((&results[*i], figure(&results[*i])?)))
                .max_by(|a, b| a.1.0.total_cmp(&b.1.0))?;
            Some(LadderStep {
                step: what.to_string(),
                variant: r.name.clone(),
                figure: f,
                unit: unit.into(),
            })
        })
        .collect()
}

/// The run's reference measured again after everything else: the vendor library where there is
/// one (it ran first, on a GPU not yet at its power limit), else the first timed variant.
#[allow(clippy::too_many_arguments)]
fn repeat<W: Workload>(
    e: &Engine,
    w: &W,
    o: &RunOptions<W::Problem>,
    b: &Builds<W>,
    vendor: Option<&dyn Vendor<W::Buffers>>,
    user: &mut CaseOutcome<W>,
    results: &[VariantResult],
    out: &mut RunResults<W::Problem>,
) -> Result<()> {
    let after = match o.torch_python {
        Some(_) => "every variant and peer",
        None => "every other variant",
    };
    let first_vendor = out
        .vendor
        .as_ref()
        .and_then(|v| Some((v.name.clone(), v.timing.as_ref()?.device)));
    let repeat = match (vendor, first_vendor) {
        (Some(lib), Some((name, before))) => {
            let t = time_with(e, &name, 1, &o.timing, |_| {
                lib.launch(&e.gpu, &mut user.buffers)
            })?;
            Repeat::new(&name, before, t.device)
        }
        _ => {
            let Some((i, r)) = b.clean.iter().find(|(i, _)| results[*i].timing.is_some()) else {
                return Ok(());
            };
            let sets = w.timing_params(&e.gpu, &mut user.buffers, r.variant(), e.ctl(0))?;
            let blocks = r.grid(w, e, &o.problem, Grid::Persistent);
            let again = time_kernel(e, r, blocks, &sets, &o.timing)?.device;
            let before = results[*i].timing.as_ref().expect("timed above").device;
            Repeat::new(r.name(), before, again)
        }
    };
    out.notes.push(repeat.note(after));
    out.repeat = Some(repeat);
    Ok(())
}

/// The torch peers on the user's problem: the same inputs, validated like the variants, timed by
/// the same rule.
fn peers<W: Workload>(
    e: &Engine,
    w: &W,
    o: &RunOptions<W::Problem>,
    user: &CaseOutcome<W>,
    python: &std::path::Path,
    results: &[VariantResult],
    out: &mut RunResults<W::Problem>,
) {
    e.progress
        .note("running the same problem through the torch peers");
    let baseline = results
        .iter()
        .find(|r| r.mechanism == Mechanism::Sync && r.control.is_none());
    let req = crate::peers::TorchRequest {
        python: python.into(),
        device: e.info().ordinal,
        buffer_sets: baseline
            .and_then(|r| r.timing.as_ref())
            .map_or(1, |t| t.buffer_sets),
        timing: o.timing,
        ceiling_gbps: out.ceiling.as_ref().map(|c| c.gbps),
        baseline_ms: baseline
            .and_then(|r| r.timing.as_ref())
            .map(|t| t.device.median),
    };
    let subject = w.peer_subject(&o.problem, &user.inputs, user.vendor.as_deref());
    let mut peers = crate::peers::torch(&req, subject.as_ref(), &|| e.clock());
    let theirs = out
        .vendor
        .as_ref()
        .and_then(|v| Some((v.name.clone(), v.timing.clone()?)));
    for peer in &mut peers {
        if let (Some((name, vt)), Some(pt), Some(pp)) = (&theirs, &peer.timing, peer.perf.as_mut())
        {
            pp.pct_of_ceiling = Some(100.0 * vt.device.median / pt.device.median);
            if let (Some(a), Some(b)) = (&vt.clocks, &pt.clocks) {
                pp.ceiling_clocks = crate::clocks::unmatched(name, a, b);
            }
        }
    }
    out.peers = peers;
    crate::results::peer::share_of_fastest_peer(out);
}

/// The run's closing notes: how it was timed, timings that waited for the host, the copy of the
/// problem's own size, the clocks.
fn notes<W: Workload>(
    w: &W,
    checked_after: bool,
    results: &[VariantResult],
    out: &mut RunResults<W::Problem>,
    e: &Engine,
) {
    if let Some(n) = w.timing_note() {
        out.notes.push(n.into());
    }
    if checked_after {
        out.notes.push("each variant was validated before timing (poisoned output, L2 scrubbed), and the output its timed launches left on the validated inputs matched the validated one bit for bit".into());
    }
    if let Some(v) = &out.vendor
        && results
            .iter()
            .any(|r| r.perf.as_ref().is_some_and(|p| p.matched.is_some()))
    {
        out.notes.push(format!(
            "% of {0}: at one SM clock, {1} rounds of a batch of {0} and a batch of the variant back to back (their order alternating), the median share over the rounds whose two batches ran within {2:.0} % of one clock; the device median and TFLOP/s are the variant's own timing",
            v.name,
            time::PAIRED_ROUNDS,
            100.0 * crate::clocks::CLOCK_TOLERANCE
        ));
    }
    let timed = results
        .iter()
        .filter_map(|r| Some((r.name.as_str(), r.timing.as_ref()?)))
        .chain(
            out.peers
                .iter()
                .filter_map(|p| Some((p.name.as_str(), p.timing.as_ref()?))),
        );
    out.notes.extend(host_bound_note(timed));
    let sized = out
        .ceiling
        .as_ref()
        .and_then(|c| c.at_problem_size.as_ref());
    let own = results
        .iter()
        .filter_map(|r| Some((r.name.as_str(), r.timing.as_ref()?)));
    out.notes
        .extend(sized.and_then(|c| sized_copy_note(c, own)));
    out.notes.push(match &e.clocks {
        Ok(_) => crate::clocks::summary(
            results
                .iter()
                .filter_map(|r| r.timing.as_ref()?.clocks.as_ref()),
        )
        .unwrap_or_else(|| "clocks: NVML gave no reading".into()),
        Err(why) => format!("clocks not recorded: {why}"),
    });
}
