//! report.html of a GEMM run: the problem and cuBLAS beside it, the table, TFLOP/s bars against
//! cuBLAS, and per variant its resources, movement and math attestation, validation verdicts and
//! SASS excerpt. Same page rules as the row report (no scripts, fits a 1280 px window).

use super::evidence::{attestation_text, sass};
use super::{figure, page, peers, table};
use crate::report::chart::{Bars, bars_against};
use crate::report::gemm::{
    GemmResult, GemmRun, HEADER, LADDER_HEADER, LADDER_RIGHT, RIGHT, ladder, problems, rows,
};
use maud::{Markup, html};

pub const CHART_TITLE: &str = "TFLOP/s per variant (higher is better)";

fn chart(r: &GemmRun) -> Result<String, String> {
    let bars: Vec<(&str, f64)> = r
        .variants
        .iter()
        .filter_map(|v| v.tflops.map(|t| (v.name.as_str(), t)))
        .collect();
    let line = r
        .cublas
        .tflops
        .map(|t| (t, format!("cuBLAS in this run, {t:.1} TFLOP/s")));
    bars_against(
        &Bars {
            title: CHART_TITLE,
            x_desc: "TFLOP/s: 2 M N K / median device time",
            bar_label: "tilepipe variant (median device time)",
        },
        &bars,
        line,
    )
}

pub fn render(r: &GemmRun) -> String {
    let d = &r.device;
    let p = &r.problem;
    let c = &r.cublas;
    let body = html! {
        p {
            (d.arch) ", " (d.sm_count) " SMs, " (d.l2_bytes >> 20) " MB L2; driver "
            (d.driver_version) ", NVRTC " (d.nvrtc_version) "; tilepipe " (r.tilepipe_version)
            "; seed " (r.seed) "; " (format!("{:.1}", p.flops() as f64 / 1e9)) " GFLOP per launch."
        }
        p { "cuBLAS " (c.version.as_deref().unwrap_or("")) " (" (c.math) "): " (c.status.label())
            @if let Some(why) = &c.detail { " - " (why) } }
        h2 { "Summary" }
        p { "Medians of CUDA-event device times after warm-up. \"% cuBLAS\" is cuBLAS's time over the variant's; speedups are over sync and regprefetch on the same block tile only." }
        (table(&HEADER, &RIGHT, rows(r)))
        (figure(chart(r), "Bars: each timed variant's TFLOP/s. Line: cuBLAS on the same problem and stream in this run."))
        @let steps = ladder(r);
        @if !steps.is_empty() {
            h2 { "The Hopper ladder" }
            p { "Each step's fastest variant in this run, and its gain over the step before: what each step adds is measured here, not claimed." }
            (table(&LADDER_HEADER, &LADDER_RIGHT, steps))
        }
        (peers(&r.peers, "Same GPU, inputs, seed and timing rule as the variants and cuBLAS (CUDA events around each launch after warm-up, inputs hot in L2); each C validated against the f64 reference on the same elements and against cuBLAS's C before it was timed."))
        @let bad = problems(r);
        @if !bad.is_empty() {
            div.warn { ul { @for b in &bad { li { (b) } } } }
        }
        h2 { "Evidence and validation" }
        @for v in &r.variants { (variant(v)) }
        @if !r.notes.is_empty() {
            h2 { "Notes" }
            ul { @for n in &r.notes { li { (n) } } }
        }
    };
    page(&format!("gemm {} on {}", p.label(), d.name), body)
}

fn variant(v: &GemmResult) -> Markup {
    let t = &v.tile;
    html! {
        details.variant {
            summary { (v.name) ": " (v.status.label()) @if let Some(d) = &v.detail { " - " (d) } }
            dl {
                dt { "tile" } dd { (t.label()) " (" (t.warps_m) " x " (t.warps_n) " warps), " (v.stages) " stages, " (v.copy_bytes) " B copies" }
                dt { "completion" } dd { (v.completion) }
                @if let Some(r) = &v.resources {
                    dt { "resources" } dd { (r.function.registers) " registers, " (r.dynamic_smem) " B dynamic + " (r.function.static_smem) " B static shared, "
                        (r.function.local_bytes) " B local; " (r.occupancy.blocks_per_sm) " blocks/SM (" (r.occupancy.limiter.name()) "), driver says " (r.driver_blocks_per_sm) }
                }
                @if let Some(s) = &v.sass { dt { "movement" } dd { (attestation_text(&s.attestation)) } }
                @if let Some(m) = &v.math { dt { "math" } dd { (attestation_text(m)) } }
                @for cv in &v.validation {
                    dt { (cv.case) }
                    dd { @for verdict in &cv.verdicts { (verdict.summary()) br; } }
                }
            }
            @if let Some(s) = &v.sass { (sass(&v.name, s)) }
        }
    }
}
