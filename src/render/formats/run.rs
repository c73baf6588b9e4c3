//! A run's results as a GitHub comment (markdown), one CSV row per variant, or results.json,
//! whichever workload.

use super::{csv_doc, md_table, opt};
use crate::render::table::{
    EVIDENCE_HEADER, LADDER_HEADER, LADDER_RIGHT, PERFORMANCE_RIGHT, bytes_per_copy, evidence_rows,
    ladder_rows, performance_header, performance_rows, problems,
};
use crate::results::{Perf, RunResults, Timing};
use serde::Serialize;

/// The run's subject in one line: the problem, what it moves and computes, the ceiling.
pub fn subject<P>(r: &RunResults<P>) -> String {
    let w = &r.workload;
    let ceiling = match (&r.ceiling, &r.vendor) {
        (Some(c), _) => format!("copy ceiling {:.0} GB/s", c.gbps),
        (None, Some(v)) => format!(
            "{} {}: {}",
            v.name,
            v.version.as_deref().unwrap_or(""),
            v.math
        ),
        (None, None) => "no ceiling measured".into(),
    };
    format!(
        "{} {} ({} MiB moved, {:.1} GFLOP); {ceiling}",
        w.name,
        w.problem,
        w.bytes_moved >> 20,
        w.flops as f64 / 1e9
    )
}

/// The problem and its device in one line, the tables, the timelines, then the problems and
/// notes as a list.
pub fn markdown<P>(r: &RunResults<P>) -> String {
    let (d, w) = (&r.device, &r.workload);
    let mut out = format!(
        "**tilepipe {}: {} {} on {} ({}, {} SMs), driver {}, NVRTC {}**\n\n",
        r.tilepipe_version,
        w.name,
        w.dtype,
        d.name,
        d.arch,
        d.sm_count,
        d.driver_version,
        d.nvrtc_version
    );
    out += &format!(
        "{}; device times are CUDA-event medians per launch, host submit is the CPU time of the launch call\n\n",
        subject(r)
    );
    let header = performance_header(r);
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    out += &md_table(&h, &PERFORMANCE_RIGHT, performance_rows(r));
    out += "\n";
    out += &md_table(&EVIDENCE_HEADER, &[], evidence_rows(r));
    if !r.ladder.is_empty() {
        out += "\n";
        out += &md_table(&LADDER_HEADER, &LADDER_RIGHT, ladder_rows(r));
    }
    if !r.timelines.is_empty() {
        out += "\n";
        out += &md_table(&TIMELINE_HEADER, &[1, 2, 3, 4], timeline_rows(r));
    }
    let lines: Vec<String> = problems(r).into_iter().chain(r.notes.clone()).collect();
    if !lines.is_empty() {
        out += "\n";
        for l in lines {
            out += &format!("- {}\n", l.replace('\n', " "));
        }
    }
    out
}

pub const TIMELINE_HEADER: [&str; 5] = [
    "traced variant",
    "copy time under compute",
    "clean ms",
    "instrumented ms",
    "overhead",
];

/// One row per traced variant: its overlap figure beside its clean and instrumented times.
pub fn timeline_rows<P>(r: &RunResults<P>) -> Vec<[String; 5]> {
    r.timelines
        .iter()
        .map(|t| {
            [
                t.variant.clone(),
                format!("{:.1}%", 100.0 * t.overlap.share),
                format!("{:.3}", t.clean_ms),
                format!("{:.3}", t.instrumented_ms),
                format!("{:+.1}%", 100.0 * t.overhead),
            ]
        })
        .collect()
}

/// One row per variant (controls are not part of a run's table), numbers at full precision and
/// empty where absent.
pub fn csv<P>(r: &RunResults<P>) -> String {
    let header = [
        "variant",
        "mechanism",
        "tile",
        "stages",
        "bytes_per_copy",
        "warp_specialized",
        "status",
        "detail",
        "device_median_ms",
        "device_min_ms",
        "device_max_ms",
        "device_rel_stdev",
        "host_submit_median_us",
        "gbps",
        "tflops",
        "pct_of_ceiling",
        "speedup_vs_sync",
        "speedup_vs_regprefetch",
        "registers",
        "static_smem",
        "dynamic_smem",
        "local_bytes",
        "blocks_per_sm",
        "warps_per_sm",
        "limiter",
        "emitted",
        "attestation",
        "math",
        "completion",
        "clock_warning",
    ];
    let rows = r.variants.iter().filter(|v| v.control.is_none()).map(|v| {
        let t = v.timing.as_ref();
        let p = v.perf.as_ref();
        let res = v.resources.as_ref();
        let sass = v.sass.as_ref();
        let mut row = vec![
            v.name.clone(),
            v.mechanism.name().into(),
            v.tile.clone(),
            v.stages.to_string(),
            bytes_per_copy(v),
            v.warp_specialized.to_string(),
            v.status.label().into(),
            v.detail.clone().unwrap_or_default(),
        ];
        row.extend(timing_fields(t, p));
        row.extend([
            opt(res.map(|r| r.function.registers)),
            opt(res.map(|r| r.function.static_smem)),
            opt(res.map(|r| r.dynamic_smem)),
            opt(res.map(|r| r.function.local_bytes)),
            opt(res.map(|r| r.occupancy.blocks_per_sm)),
            opt(res.map(|r| r.occupancy.warps_per_sm)),
            opt(res.map(|r| r.occupancy.limiter.name())),
            opt(sass
                .and_then(|s| s.census.as_ref())
                .map(|c| c.movement_summary())),
            opt(sass.map(|s| s.attestation.label())),
            opt(v.math.as_ref().map(|m| m.label())),
            v.completion.clone(),
            opt(t.and_then(|t| t.clocks.as_ref()?.warning.clone())),
        ]);
        row
    });
    // peers: the same timing columns; their tool and version where a variant names its mechanism,
    // how they were asked to compute where a variant names its completion protocol
    let peers = r.vendor.iter().chain(&r.peers).map(|p| {
        let t = p.timing.as_ref();
        let perf = p.perf.as_ref();
        let mut row = vec![
            p.name.clone(),
            format!("peer: {}", p.version.clone().unwrap_or_default()),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            p.status.label().into(),
            p.detail.clone().unwrap_or_default(),
        ];
        row.extend(timing_fields(t, perf));
        row.extend(std::iter::repeat_n(String::new(), 10));
        row.push(p.math.clone());
        row.push(String::new());
        row
    });
    csv_doc(&header, rows.chain(peers))
}

/// The CSV's timing fields: device median, min, max, relative spread, host submit median,
/// GB/s, TFLOP/s, % of the ceiling, speedups against `sync` and `regprefetch`.
fn timing_fields(t: Option<&Timing>, p: Option<&Perf>) -> [String; 10] {
    [
        opt(t.map(|t| t.device.median)),
        opt(t.map(|t| t.device.min)),
        opt(t.map(|t| t.device.max)),
        opt(t.map(|t| t.device.rel_stdev)),
        opt(t.map(|t| t.host_submit.median)),
        opt(p.map(|p| p.gbps)),
        opt(p.and_then(|p| p.tflops)),
        opt(p.and_then(|p| p.pct_of_ceiling)),
        opt(p.and_then(|p| p.speedup_vs_sync)),
        opt(p.and_then(|p| p.speedup_vs_regprefetch)),
    ]
}

/// results.json, as `run --out` writes it.
pub fn json<P: Serialize>(r: &RunResults<P>) -> String {
    serde_json::to_string_pretty(r).expect("results serialise")
}
