//! What every record of a sweep holds of its timing, whoever was timed (a variant, a probe, a peer).

use crate::results::sweep::Record;
use crate::results::{Timing, gbps, tflops};
use crate::workload::{Problem, Workload};

/// What a record of a variant says of its validation.
pub const VALIDATED: &str = "build validated before timing on the workload's run cases (tails, fewer tiles than stages, a strided view, the problem as given)";

/// The figures every record of `p` timed by `t` holds, against `ceiling`: the caller names what
/// was timed (variant, stages, blocks, who measured it) over these.
pub fn timed<W: Workload>(
    w: &W,
    p: &W::Problem,
    t: &Timing,
    ceiling: f64,
    (key, config, size): (String, String, usize),
) -> Record {
    let traffic = w.traffic(p);
    let ms = t.device.median;
    Record {
        key,
        workload: w.name().into(),
        bound: w.bound(),
        variant: String::new(),
        mechanism: None,
        stages: 0,
        only: 0,
        dtype: p.dtype(),
        config,
        axis: w.sweep_axis().0.into(),
        size,
        blocks: 0,
        steps_per_block: 0,
        bytes_moved: traffic.bytes,
        flops: traffic.flops,
        median_ms: ms,
        min_ms: t.device.min,
        max_ms: t.device.max,
        rel_stdev: t.device.rel_stdev,
        host_submit_us: t.host_submit.median,
        gbps: gbps(traffic.bytes, ms),
        tflops: (traffic.flops > 0).then(|| tflops(traffic.flops, ms)),
        ceiling,
        resources: None,
        sm_clock_mhz: t.clocks.as_ref().and_then(|c| c.sm_range()),
        clock_warning: t.clocks.as_ref().and_then(|c| c.warning.clone()),
        validated: VALIDATED.into(),
        gpu: None,
        peer: None,
    }
}
