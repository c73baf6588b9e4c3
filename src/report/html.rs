//! report.html: the run's tables, a bandwidth chart against the ceiling, the validation detail and
//! the timeline, in one self-contained page.

use super::{RunResults, Status, table};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use plotters::prelude::*;

/// Horizontal bars of achieved GB/s per timed variant, with the copy ceiling as a line.
pub fn bandwidth_chart(r: &RunResults) -> Result<String, String> {
    let bars: Vec<(&str, f64)> = r
        .variants
        .iter()
        .filter_map(|v| v.perf.map(|p| (v.name.as_str(), p.gbps)))
        .collect();
    if bars.is_empty() {
        return Err("no timed variants".into());
    }
    let ceiling = r.ceiling.as_ref().map_or(0.0, |c| c.gbps);
    let xmax = bars.iter().map(|b| b.1).fold(ceiling, f64::max) * 1.08;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, (60 + 24 * bars.len()) as u32))
            .into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(170)
            .build_cartesian_2d(0f64..xmax, (0..bars.len()).into_segmented())
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc("GB/s (X read + Y written) / median device time")
            .y_labels(bars.len())
            .y_label_formatter(&|y| match y {
                SegmentValue::CenterOf(i) => {
                    bars.get(*i).map_or(String::new(), |b| b.0.to_string())
                }
                _ => String::new(),
            })
            .draw()
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, (_, g))| {
                Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(i)),
                        (*g, SegmentValue::Exact(i + 1)),
                    ],
                    RGBColor(52, 120, 200).filled(),
                )
            }))
            .map_err(|e| e.to_string())?;
        if ceiling > 0.0 {
            chart
                .draw_series(LineSeries::new(
                    [
                        (ceiling, SegmentValue::Exact(0)),
                        (ceiling, SegmentValue::Exact(bars.len())),
                    ],
                    RED.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

fn pre(s: &str) -> Markup {
    html! { pre { (s) } }
}

pub fn render(r: &RunResults, timeline_svg: Option<&str>) -> String {
    let d = &r.device;
    let w = &r.workload;
    let chart = bandwidth_chart(r).unwrap_or_else(|e| format!("<p>no chart: {e}</p>"));
    let page = html! {
        (DOCTYPE)
        html {
            head {
                meta charset="utf-8";
                title { "tilepipe report: " (w.name) " " (w.dtype) " on " (d.name) }
                style { "body{font-family:sans-serif;margin:2em;max-width:1400px} pre{font-size:12px;overflow-x:auto} td,th{padding:2px 8px} .bad{color:#b00}" }
            }
            body {
                h1 { "tilepipe: " (w.name) " on " (d.name) }
                p {
                    (d.arch) ", " (d.sm_count) " SMs, " (d.l2_bytes >> 20) " MB L2, " (d.smem_per_block_optin) " B shared memory per block (opt-in); driver "
                    (d.driver_version) ", NVRTC " (d.nvrtc_version) "; tilepipe " (r.tilepipe_version)
                }
                p { (w.formula) " - " (w.dtype) ", tokens " (w.view.tokens) ", hidden " (w.view.hidden) ", row stride " (w.view.row_stride)
                    ", offset " (w.view.offset) ", tile " (w.tile_rows) " rows, seed " (w.seed) ", " (w.bytes_moved >> 20) " MiB moved per launch" }
                @if let Some(c) = &r.ceiling {
                    p { "Copy ceiling measured in this run (cuMemcpyDtoD of " (c.bytes_copied >> 20) " MiB, read + write): " (format!("{:.0}", c.gbps)) " GB/s." }
                }
                p { "Device times are CUDA-event medians per launch after warm-up, inputs rotated past the L2. The host submission interval is the CPU time of the launch call: it says nothing about device execution." }
                h2 { "Performance" }
                (pre(&table::performance(r)))
                (PreEscaped(chart))
                h2 { "Evidence: resources, occupancy, SASS, completion" }
                (pre(&table::evidence(r)))
                @let problems = table::problems(r);
                @if !problems.is_empty() {
                    h2 { "Skipped, failed, errors" }
                    ul { @for p in &problems { li class="bad" { (p) } } }
                }
                h2 { "Validation before timing" }
                table {
                    tr { th { "variant" } th { "case" } th { "blocks" } th { "compared with" } th { "rel L2" } th { "verdict" } }
                    @for v in &r.variants {
                        @for c in &v.validation {
                            tr {
                                td { (v.name) } td { (c.case) } td { (c.blocks) } td { (c.verdict.checked_against) }
                                td { (c.verdict.rel_l2.map_or("-".to_string(), |x| format!("{x:.2e}"))) }
                                td class=(if c.verdict.passed { "" } else { "bad" }) { (if c.verdict.passed { "passed".to_string() } else { c.verdict.failure.clone().unwrap_or_default() }) }
                            }
                        }
                    }
                }
                @if !r.timelines.is_empty() {
                    h2 { "Timeline (instrumented builds, timed apart)" }
                    table {
                        tr { th { "variant" } th { "copy time under compute" } th { "clean ms" } th { "instrumented ms" } th { "overhead" } }
                        @for t in &r.timelines {
                            tr { td { (t.variant) } td { (format!("{:.1}%", 100.0 * t.overlap.share)) } td { (format!("{:.3}", t.clean_ms)) }
                                 td { (format!("{:.3}", t.instrumented_ms)) } td { (format!("{:+.1}%", 100.0 * t.overhead)) } }
                        }
                    }
                    @if let Some(svg) = timeline_svg { (PreEscaped(svg)) }
                }
                @for n in &r.notes { p { (n) } }
                p { "Status counts: "
                    (r.variants.iter().filter(|v| v.status == Status::Passed).count()) " passed, "
                    (r.variants.iter().filter(|v| v.status == Status::Failed).count()) " failed, "
                    (r.variants.iter().filter(|v| v.status == Status::Skipped).count()) " skipped, "
                    (r.variants.iter().filter(|v| v.status == Status::Error).count()) " errors." }
            }
        }
    };
    page.into_string()
}
