//! A sweep's records as a GitHub comment (markdown: the points and the model beside them), one CSV
//! row per point, or JSON.

use super::{csv_doc, md_table, opt};
use crate::model::Fit;
use crate::render::sweep::model_table;
use crate::results::sweep::Record;

/// What a point measured: the whole pipeline or one of its stages alone (a probe).
pub fn point(only: u32) -> &'static str {
    match only {
        0 => "pipeline",
        1 => "copy stage only",
        _ => "compute stage only",
    }
}

pub const MODEL_HEADER: [&str; 8] = [
    "variant",
    "stages",
    "steps/blk",
    "predicted",
    "simulated",
    "measured",
    "departure",
    "why",
];

/// Predicted against measured per point with probes; a departure past the model's threshold is
/// FLAGGED in front of its explanation.
pub fn model_rows(records: &[Record]) -> Vec<[String; 8]> {
    model_table(records)
        .into_iter()
        .map(|(c, _, why)| {
            let (departure, mark) = match c.fit {
                Fit::Within => (format!("{:+.1}%", 100.0 * c.departure), ""),
                Fit::Departs => (format!("{:+.1}%", 100.0 * c.departure), "FLAGGED: "),
                Fit::NotComparable => ("-".to_string(), ""),
            };
            [
                c.variant,
                c.stages.to_string(),
                c.tiles_per_block.to_string(),
                format!("{:.4}ms", c.predicted),
                format!("{:.4}ms", c.simulated),
                format!("{:.4}ms", c.measured),
                departure,
                format!("{mark}{why}"),
            ]
        })
        .collect()
}

const POINT_HEADER: [&str; 13] = [
    "variant",
    "point",
    "dtype",
    "configuration",
    "axis",
    "size",
    "blocks",
    "median ms (min..max)",
    "figure",
    "% of ceiling",
    "SM MHz",
    "clocks",
    "GPU",
];

/// The points as measured (grouped by the GPU that measured them), then the model where the probes
/// allow one.
pub fn markdown(records: &[Record]) -> String {
    let mut out = format!("**{} sweep points**\n\n", records.len());
    let mut ordered: Vec<&Record> = records.iter().collect();
    ordered.sort_by(|a, b| a.gpu.cmp(&b.gpu));
    let rows = ordered.into_iter().map(|r| {
        [
            r.variant.clone(),
            point(r.only).into(),
            r.dtype.to_string(),
            r.config.clone(),
            r.axis.clone(),
            r.size.to_string(),
            r.blocks.to_string(),
            format!("{:.4} ({:.4}..{:.4})", r.median_ms, r.min_ms, r.max_ms),
            match r.bound {
                crate::results::Bound::Memory => format!("{:.0} GB/s", r.gbps),
                crate::results::Bound::Compute => format!("{:.1} TFLOP/s", r.figure()),
            },
            if r.ceiling > 0.0 {
                format!("{:.1}", 100.0 * r.figure() / r.ceiling)
            } else {
                "-".into()
            },
            r.sm_clock_mhz
                .map_or("-".into(), |(lo, hi)| format!("{lo}..{hi}")),
            r.clock_warning.clone().unwrap_or_default(),
            r.gpu.clone().unwrap_or_default(),
        ]
    });
    out += &md_table(&POINT_HEADER, &[5, 6, 7, 8, 9], rows);
    let model = model_rows(records);
    if !model.is_empty() {
        out += "\n";
        out += &md_table(&MODEL_HEADER, &[1, 2, 3, 4, 5, 6], model);
    }
    out
}

/// Every field of every record, numbers at full precision.
pub fn csv(records: &[Record]) -> String {
    let header = [
        "key",
        "workload",
        "variant",
        "mechanism",
        "stages",
        "only",
        "dtype",
        "config",
        "axis",
        "size",
        "blocks",
        "steps_per_block",
        "bytes_moved",
        "flops",
        "median_ms",
        "min_ms",
        "max_ms",
        "rel_stdev",
        "host_submit_us",
        "gbps",
        "tflops",
        "ceiling",
        "sm_clock_min_mhz",
        "sm_clock_max_mhz",
        "clock_warning",
        "validated",
        "gpu",
        "peer",
    ];
    let rows = records.iter().map(|r| {
        vec![
            r.key.clone(),
            r.workload.clone(),
            r.variant.clone(),
            r.mechanism.map_or("peer", |m| m.name()).into(),
            r.stages.to_string(),
            r.only.to_string(),
            r.dtype.to_string(),
            r.config.clone(),
            r.axis.clone(),
            r.size.to_string(),
            r.blocks.to_string(),
            r.steps_per_block.to_string(),
            r.bytes_moved.to_string(),
            r.flops.to_string(),
            r.median_ms.to_string(),
            r.min_ms.to_string(),
            r.max_ms.to_string(),
            r.rel_stdev.to_string(),
            r.host_submit_us.to_string(),
            r.gbps.to_string(),
            opt(r.tflops),
            r.ceiling.to_string(),
            opt(r.sm_clock_mhz.map(|c| c.0)),
            opt(r.sm_clock_mhz.map(|c| c.1)),
            r.clock_warning.clone().unwrap_or_default(),
            r.validated.clone(),
            r.gpu.clone().unwrap_or_default(),
            r.peer.clone().unwrap_or_default(),
        ]
    });
    csv_doc(&header, rows)
}

/// The records as one JSON array (sweep.jsonl holds them one a line).
pub fn json(records: &[Record]) -> String {
    serde_json::to_string_pretty(records).expect("sweep records serialise")
}
