//! Device timing with CUDA events, host submission timing beside it, and the copy ceiling.

use super::{Engine, HANG_LIMIT, Ready};
use crate::clocks::{ClockSample, ClockTrace};
use crate::gpu::DevBuf;
use crate::results::gbps;
use crate::results::timing::{
    BATCH, Ceiling, DRIVER_COPY_NAME, OwnCopy, PLAIN_COPY_NAME, PairedRound, SizedCopy, Summary,
    Timing,
};
pub use crate::results::timing::{MAX_REPEATS, TimingOptions};
use crate::workload::Workload;
use crate::workload::rows::rotation_sets;
use crate::{Error, Result};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Times `r` on the given parameter sets in turn (one per rotated buffer set).
pub fn time_kernel<W: Workload>(
    e: &Engine,
    r: &Ready<W>,
    blocks: u32,
    sets: &[W::Params],
    opts: &TimingOptions,
) -> Result<Timing> {
    assert!(!sets.is_empty());
    time_with(e, r.name(), sets.len(), opts, |i| {
        r.launch(e, blocks, &sets[i % sets.len()])
    })
}

/// Times `launch(i)` (the i-th launch of anything: a kernel, a library call) with CUDA events
/// around each launch, in batches, after `opts.warmup` untimed ones; host submission time beside
/// it, clocks read between batches. Each batch is submitted while the device is held
/// (`Engine::hold`), so a launch that takes the host longer to submit than the device to run
/// still has only device time in its sample. `sets`: how many buffer sets the launches rotate through.
pub fn time_with(
    e: &Engine,
    what: &str,
    sets: usize,
    opts: &TimingOptions,
    mut launch: impl FnMut(usize) -> Result<()>,
) -> Result<Timing> {
    let warm = Instant::now();
    for i in 0..opts.warmup {
        launch(i)?;
    }
    let per_launch = warm.elapsed() / opts.warmup.max(1) as u32;
    e.gpu.finish(what, HANG_LIMIT)?;
    // read between batches, while the device is idle, so the readings never sit inside a sample
    let read = || e.clock();
    let mut clock_samples: Vec<ClockSample> = read().into_iter().collect();
    let events: Vec<_> = (0..=BATCH)
        .map(|_| e.gpu.event(true))
        .collect::<Result<_>>()?;
    let (mut device_ms, mut host_submit_us) = (Vec::new(), Vec::new());
    let mut hold = hold_for(per_launch * BATCH as u32);
    let mut host_bound_samples = 0;
    let start = Instant::now();
    let mut n = 0;
    while n < opts.max_repeats {
        // the batch queues up behind the hold, so the device never waits for the host inside it
        e.hold(hold.as_nanos() as u64)?;
        e.gpu.record(&events[0])?;
        let submit = Instant::now();
        for b in 0..BATCH {
            // the device already past the sample's first event waits for this launch: host time
            if e.gpu.reached(&events[b])? {
                host_bound_samples += 1;
            }
            let t = Instant::now();
            launch(n + b)?;
            host_submit_us.push(t.elapsed().as_secs_f64() * 1e6);
            e.gpu.record(&events[b + 1])?;
        }
        hold = hold_for(submit.elapsed());
        e.gpu.finish(what, HANG_LIMIT)?;
        for b in 0..BATCH {
            device_ms.push(e.gpu.elapsed_ms(&events[b], &events[b + 1])? as f64);
        }
        clock_samples.extend(read());
        n += BATCH;
        let s = Summary::of(&device_ms)
            .ok_or_else(|| Error::cuda("cuEventElapsedTime", "non-finite sample"))?;
        if n >= opts.min_repeats
            && (s.rel_stdev <= opts.target_rel_stdev || start.elapsed() > opts.budget)
        {
            break;
        }
    }
    Ok(Timing {
        device: Summary::of(&device_ms).expect("finite samples"),
        host_submit: Summary::of(&host_submit_us).expect("finite samples"),
        device_ms,
        host_submit_us,
        warmup: opts.warmup,
        buffer_sets: sets,
        host_bound_samples,
        clocks: e.clocks.is_ok().then(|| ClockTrace::new(clock_samples)),
    })
}

/// Rounds of a paired timing.
pub const PAIRED_ROUNDS: usize = 8;

/// Times a reference (`reference(i)`, the vendor library) against a subject (`subject(i)`, a
/// variant) in alternating batches: each round one batch of each, back to back, their order
/// swapped every round so neither always follows the other, each batch after two warm-up launches
/// of its own and with the SM clock read right after it (`Matched` keeps the rounds whose two
/// batches ran at one clock).
pub fn time_paired(
    e: &Engine,
    names: (&str, &str),
    mut reference: impl FnMut(usize) -> Result<()>,
    mut subject: impl FnMut(usize) -> Result<()>,
) -> Result<Vec<PairedRound>> {
    let opts = TimingOptions {
        warmup: 2,
        min_repeats: BATCH,
        max_repeats: BATCH,
        target_rel_stdev: f64::INFINITY,
        budget: Duration::ZERO,
    };
    let batch =
        |name: &str, launch: &mut dyn FnMut(usize) -> Result<()>| -> Result<(f64, Option<u32>)> {
            let t = time_with(e, name, 1, &opts, launch)?;
            let mhz = t.clocks.and_then(|c| c.samples.last().map(|s| s.sm_mhz));
            Ok((t.device.median, mhz))
        };
    (0..PAIRED_ROUNDS)
        .map(|round| {
            let ((r_ms, r_mhz), (s_ms, s_mhz)) = match round % 2 {
                0 => {
                    let r = batch(names.0, &mut reference)?;
                    (r, batch(names.1, &mut subject)?)
                }
                _ => {
                    let s = batch(names.1, &mut subject)?;
                    (batch(names.0, &mut reference)?, s)
                }
            };
            Ok(PairedRound {
                reference_ms: r_ms,
                subject_ms: s_ms,
                reference_mhz: r_mhz,
                subject_mhz: s_mhz,
            })
        })
        .collect()
}

/// How long the device is held before a batch whose submission takes about `submit`: twice that,
/// within 100 us..100 ms.
pub fn hold_for(submit: Duration) -> Duration {
    (2 * submit).clamp(Duration::from_micros(100), Duration::from_millis(100))
}

/// Parameters of `tilepipe_plain_copy` (kernels/plain_copy.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PlainCopyParams {
    src: u64,
    dst: u64,
    vectors: u64,
}

/// The copy ceiling: cuMemcpyDtoD of `bytes` of random data and a plain copy kernel of our own on
/// the same buffers, each timed with events (bytes counted twice: read and written). The faster
/// one is the ceiling, named in it.
pub fn copy_ceiling(h: &Engine, bytes: usize, repeats: usize) -> Result<Ceiling> {
    let bytes = bytes / 16 * 16;
    let mut host = vec![0u8; bytes];
    host.par_chunks_mut(1 << 20)
        .enumerate()
        .for_each(|(i, c)| SmallRng::seed_from_u64(i as u64).fill_bytes(c));
    let src: DevBuf = h.gpu.upload(&host, "the copy-ceiling source")?;
    let mut dst: DevBuf = h.gpu.alloc(bytes, "the copy-ceiling destination")?;
    let driver = time_copy(
        h,
        repeats,
        "device-to-device copy",
        |d: &mut DevBuf| h.gpu.copy(&src, d, bytes),
        &mut dst,
    )?;
    let k = h.utility(super::build::PLAIN_COPY)?;
    h.gpu.prepare(&k, 256, 0)?;
    // one block per 16 KB chunk (kernels/plain_copy.cu)
    let grid = (bytes / 16).div_ceil(4 * 256) as u32;
    let params = PlainCopyParams {
        src: h.gpu.ptr(&src),
        dst: h.gpu.ptr(&dst),
        vectors: (bytes / 16) as u64,
    };
    let own = time_copy(
        h,
        repeats,
        "the plain copy kernel",
        |_: &mut DevBuf| h.gpu.launch(&k, grid, 256, 0, &params),
        &mut dst,
    )?;
    // the kernel's copy must be the copy: compare it with the source before its time counts
    if h.gpu.download(&dst)? != host {
        return Err(Error::cuda(
            "tilepipe_plain_copy",
            "its destination differs from the source: the plain copy kernel is broken",
        ));
    }
    let gbps = |t: &Summary| 2.0 * bytes as f64 / (t.median * 1e-3) / 1e9;
    let (d, o) = (gbps(&driver.1), gbps(&own.1));
    let own_copy = OwnCopy {
        grid,
        threads: 256,
        samples_ms: own.0,
        time: own.1,
        gbps: o,
    };
    Ok(Ceiling {
        bytes_copied: bytes as u64,
        kernel: if o > d {
            PLAIN_COPY_NAME
        } else {
            DRIVER_COPY_NAME
        }
        .into(),
        gbps: d.max(o),
        samples_ms: driver.0,
        time: driver.1,
        own_kernel: Some(own_copy),
        at_problem_size: None,
    })
}

/// cuMemcpyDtoD of `bytes` of random data, rotated through enough source/destination pairs that
/// every copy reads device memory, timed by `time_with` as the variants are.
pub fn copy_at_size(e: &Engine, bytes: usize, opts: &TimingOptions) -> Result<SizedCopy> {
    let sets = rotation_sets(e.info().l2_bytes as usize, 2 * bytes);
    let mut host = vec![0u8; bytes];
    SmallRng::seed_from_u64(bytes as u64).fill_bytes(&mut host);
    let src: Vec<DevBuf> = (0..sets)
        .map(|_| e.gpu.upload(&host, "a rotated copy source"))
        .collect::<Result<_>>()?;
    let mut dst: Vec<DevBuf> = (0..sets)
        .map(|_| e.gpu.alloc(bytes, "a rotated copy destination"))
        .collect::<Result<_>>()?;
    let t = time_with(e, DRIVER_COPY_NAME, sets, opts, |i| {
        e.gpu.copy(&src[i % sets], &mut dst[i % sets], bytes)
    })?;
    if e.gpu.download(&dst[0])? != host {
        return Err(Error::cuda(
            DRIVER_COPY_NAME,
            "a rotated copy differs from its source",
        ));
    }
    Ok(SizedCopy {
        bytes_copied: bytes as u64,
        buffer_sets: sets,
        gbps: gbps(2 * bytes as u64, t.device.median),
        time: t.device,
    })
}

/// Three untimed copies, then `repeats` timed one by one between events.
fn time_copy(
    h: &Engine,
    repeats: usize,
    what: &str,
    mut copy: impl FnMut(&mut DevBuf) -> Result<()>,
    dst: &mut DevBuf,
) -> Result<(Vec<f64>, Summary)> {
    for _ in 0..3 {
        copy(dst)?;
    }
    let (a, b) = (h.gpu.event(true)?, h.gpu.event(true)?);
    let mut samples_ms = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        h.gpu.record(&a)?;
        copy(dst)?;
        h.gpu.record(&b)?;
        h.gpu.finish(what, HANG_LIMIT)?;
        samples_ms.push(h.gpu.elapsed_ms(&a, &b)? as f64);
    }
    let time = Summary::of(&samples_ms)
        .ok_or_else(|| Error::cuda("cuEventElapsedTime", "non-finite sample"))?;
    Ok((samples_ms, time))
}

/// A case where host submission and device time disagree: `launches` launches submitted back to
/// back, the host's submission interval (the loop alone, no synchronisation) against the device
/// time between events recorded before and after them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SubmitVsDevice {
    pub variant: String,
    pub launches: usize,
    pub host_submit_ms: f64,
    pub device_ms: f64,
}

pub fn submit_vs_device<W: Workload>(
    h: &Engine,
    r: &Ready<W>,
    blocks: u32,
    params: &W::Params,
    launches: usize,
) -> Result<SubmitVsDevice> {
    let (a, b) = (h.gpu.event(true)?, h.gpu.event(true)?);
    h.gpu.record(&a)?;
    let t = Instant::now();
    for _ in 0..launches {
        r.launch(h, blocks, params)?;
    }
    let host_submit_ms = t.elapsed().as_secs_f64() * 1e3;
    h.gpu.record(&b)?;
    h.gpu.finish(r.name(), HANG_LIMIT * launches as u32)?;
    Ok(SubmitVsDevice {
        variant: r.name().to_string(),
        launches,
        host_submit_ms,
        device_ms: h.gpu.elapsed_ms(&a, &b)? as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_covers_twice_the_submission_within_bounds() {
        assert_eq!(
            hold_for(Duration::from_micros(300)),
            Duration::from_micros(600)
        );
        assert_eq!(hold_for(Duration::ZERO), Duration::from_micros(100));
        assert_eq!(hold_for(Duration::from_secs(1)), Duration::from_millis(100));
    }
}
