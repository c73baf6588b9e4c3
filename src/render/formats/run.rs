//! A run's results as a GitHub comment (markdown), one CSV row per variant, or results.json.

use super::{csv_doc, md_table, opt};
use crate::bench::Timing;
use crate::report::table::{
    EVIDENCE_HEADER, PERFORMANCE_HEADER, PERFORMANCE_RIGHT, evidence_rows, performance_rows,
    problems,
};
use crate::report::{Perf, RunResults};

/// The problem and its device in one line, the two tables, the timelines, then the problems and
/// notes as a list.
pub fn markdown(r: &RunResults) -> String {
    let (d, w, v) = (&r.device, &r.workload, &r.workload.view);
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
        "tokens {} hidden {} stride {} offset {} ({} MiB moved), tile {} rows; copy ceiling {}; device times are CUDA-event medians per launch, host submit is the CPU time of the launch call\n\n",
        v.tokens,
        v.hidden,
        v.row_stride,
        v.offset,
        w.bytes_moved >> 20,
        w.tile_rows,
        r.ceiling
            .as_ref()
            .map_or("not measured".into(), |c| format!("{:.0} GB/s", c.gbps)),
    );
    out += &md_table(&PERFORMANCE_HEADER, &PERFORMANCE_RIGHT, performance_rows(r));
    out += "\n";
    out += &md_table(&EVIDENCE_HEADER, &[], evidence_rows(r));
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
pub fn timeline_rows(r: &RunResults) -> Vec<[String; 5]> {
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
pub fn csv(r: &RunResults) -> String {
    let header = [
        "variant",
        "mechanism",
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
        "pct_of_ceiling",
        "speedup_vs_sync",
        "registers",
        "static_smem",
        "dynamic_smem",
        "local_bytes",
        "blocks_per_sm",
        "warps_per_sm",
        "limiter",
        "emitted",
        "attestation",
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
            v.stages.to_string(),
            v.bytes_per_copy.to_string(),
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
            v.completion.clone(),
            opt(t.and_then(|t| t.clocks.as_ref()?.warning.clone())),
        ]);
        row
    });
    // peers: the same timing columns; their tool and version where a variant names its mechanism,
    // how they were asked to compute where a variant names its completion protocol
    let peers = r.peers.iter().map(|p| {
        let t = p.timing.as_ref();
        let perf = p.perf.as_ref();
        let mut row = vec![
            p.name.clone(),
            format!("peer: {}", p.version.clone().unwrap_or_default()),
            String::new(),
            String::new(),
            String::new(),
            p.status.label().into(),
            p.detail.clone().unwrap_or_default(),
        ];
        row.extend(timing_fields(t, perf));
        row.extend(std::iter::repeat_n(String::new(), 9));
        row.push(p.math.clone());
        row.push(String::new());
        row
    });
    csv_doc(&header, rows.chain(peers))
}

/// The CSV's timing fields: device median, min, max, relative spread, host submit median,
/// GB/s, % of the ceiling, speedup against `sync`.
fn timing_fields(t: Option<&Timing>, p: Option<&Perf>) -> [String; 8] {
    [
        opt(t.map(|t| t.device.median)),
        opt(t.map(|t| t.device.min)),
        opt(t.map(|t| t.device.max)),
        opt(t.map(|t| t.device.rel_stdev)),
        opt(t.map(|t| t.host_submit.median)),
        opt(p.map(|p| p.gbps)),
        opt(p.and_then(|p| p.pct_of_ceiling)),
        opt(p.and_then(|p| p.speedup_vs_sync)),
    ]
}

/// results.json, as `run --out` writes it.
pub fn json(r: &RunResults) -> String {
    serde_json::to_string_pretty(r).expect("results serialise")
}
