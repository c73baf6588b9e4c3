//! report.html: one self-contained page per run, whichever workload (no scripts, no fonts,
//! nothing fetched): the summary table with its notes and its chart against the run's ceiling,
//! the clocks, the workload's ladder, the peers, per-variant evidence with its SASS excerpt, the
//! validation, the overlap timeline of traced variants and the notes. Plots are plotters' SVG
//! inline, each with a title, axis descriptions with units and a legend above its rows (see
//! `plot`). Tables and plots sit in boxes that scroll sideways, a plot never narrower than
//! `plot::MIN_SCALE` of its width, so the page itself fits a window 800 px wide and no text on it
//! is below 12 px.

pub mod compare;
mod evidence;

use super::clock_notes::clock_notes;
use super::formats::run::{TIMELINE_HEADER, subject, timeline_rows};
use super::table::{
    EVIDENCE_HEADER, LADDER_HEADER, LADDER_RIGHT, PERFORMANCE_RIGHT, clock_warnings, evidence_rows,
    ladder_rows, performance_header, performance_rows, problems as problem_lines,
};
use super::{chart, plot, timeline};
use crate::clocks;
use crate::results::{Bound, Peer, RunResults, Status, timeline::named};
use maud::{DOCTYPE, Markup, PreEscaped, html};

/// The page's style; a plot is as wide as the page allows up to its own width, never below
/// `plot::MIN_SCALE` of it (its box scrolls instead), so its text stays at 12 px or more.
fn style() -> String {
    let (w, min) = (plot::WIDTH, f64::from(plot::WIDTH) * plot::MIN_SCALE);
    format!(
        "{STYLE}figure.plot svg{{width:100%;max-width:{w}px;min-width:{min:.0}px;height:auto;display:block}}"
    )
}

const STYLE: &str = "\
body{font-family:sans-serif;margin:1.5em;max-width:1400px;line-height:1.35;color:#222}\
h2{margin-top:1.6em;border-bottom:1px solid #ccc}\
.scroll{overflow-x:auto;max-width:100%;margin:.5em 0;\
background:linear-gradient(to right,#fff 30%,#fff0) left/30px 100% no-repeat local,linear-gradient(to left,#fff 30%,#fff0) right/30px 100% no-repeat local,\
radial-gradient(farthest-side at 100% 50%,#0003,#0000) right/12px 100% no-repeat scroll}\
table{border-collapse:collapse;font-size:13px}\
th,td{padding:3px 8px;border-bottom:1px solid #e2e2e2;text-align:left;vertical-align:top;overflow-wrap:break-word}\
th{background:#f2f2f2}td:first-child{white-space:nowrap}\
td:first-child,th:first-child{position:sticky;left:0;background:#fff;box-shadow:1px 0 0 #e2e2e2}th:first-child{background:#f2f2f2}\
.num{text-align:right;white-space:nowrap}\
pre{font-size:12px;overflow-x:auto;background:#f7f7f7;padding:6px;margin:.4em 0}\
figure{margin:1em 0;overflow-x:auto;max-width:100%}figcaption{font-size:13px;color:#555}\
.bad{color:#b00}\
.warn{background:#fff4e0;border-left:4px solid #e69500;padding:6px 12px;margin:.6em 0}\
.ok{background:#eef7ee;border-left:4px solid #5a5;padding:6px 12px;margin:.6em 0}\
details{margin:.3em 0}summary{cursor:pointer}\
details.variant{border:1px solid #ddd;border-radius:4px;padding:4px 10px}\
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:.4em 0;font-size:13px}\
dt{color:#555}dd{margin:0;overflow-wrap:break-word}\
.mv{background:#dbe8ff;font-weight:bold}.src{color:#777}";

/// A table with its header in a box that scrolls sideways; the columns in `right` hold numbers.
fn table<R: IntoIterator<Item = String>>(
    header: &[&str],
    right: &[usize],
    rows: impl IntoIterator<Item = R>,
) -> Markup {
    let class = |i: usize| right.contains(&i).then_some("num");
    html! {
        div.scroll {
            table {
                tr { @for (i, h) in header.iter().enumerate() { th class=[class(i)] { (h) } } }
                @for r in rows {
                    tr { @for (i, c) in r.into_iter().enumerate() { td class=[class(i)] { (c) } } }
                }
            }
        }
    }
}

/// An SVG plot with a line under it, or why there is none.
fn figure(svg: Result<String, String>, caption: &str) -> Markup {
    match svg {
        Ok(svg) => html! { figure.plot { (PreEscaped(svg)) figcaption { (caption) } } },
        Err(e) => html! { p { "No plot: " (e) } },
    }
}

/// A whole page: the title (also its heading), the style, `body`.
fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "tilepipe report: " (title) }
                style { (PreEscaped(style())) }
            }
            body {
                h1 { "tilepipe: " (title) }
                (body)
            }
        }
    }
    .into_string()
}

pub fn render<P>(r: &RunResults<P>) -> String {
    let d = &r.device;
    let w = &r.workload;
    let count = |s: Status| r.variants.iter().filter(|v| v.status == s).count();
    let header = performance_header(r);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let how = match w.bound {
        Bound::Memory => {
            "Device times are CUDA-event medians per launch after warm-up, inputs rotated past the L2 (as many sets as the table's buffer sets)."
        }
        Bound::Compute => {
            "Device times are CUDA-event medians per launch after warm-up, inputs hot in L2 where they fit, for the vendor library and tilepipe alike; speedups are over sync and regprefetch on the same tile only."
        }
    };
    let caption = match w.bound {
        Bound::Memory => {
            "Bars: each variant's bytes moved over its median device time. Line: the device-to-device copy ceiling measured in the same run."
        }
        Bound::Compute => {
            "Bars: each timed variant's TFLOP/s over the vendor library's on the same problem and stream in this run, from 1 (the library's own), coloured by whether the two timings' spreads tell them apart. Band: the library's own min..max spread. * after a name: the ratio was taken at unequal clocks."
        }
    };
    let body = html! {
        p {
            (d.arch) ", " (d.sm_count) " SMs, " (d.l2_bytes >> 20) " MB L2, " (d.smem_per_block_optin) " B shared memory per block (opt-in); driver "
            (d.driver_version) ", NVRTC " (d.nvrtc_version) "; tilepipe " (r.tilepipe_version) "; "
            (count(Status::Passed)) " passed, " (count(Status::Failed)) " failed, "
            (count(Status::Skipped)) " skipped, " (count(Status::Error)) " errors, "
            (count(Status::Unfinished)) " not finished."
        }
        p { (w.formula) " - " (subject(r)) ", seed " (r.seed) "." }
        @if let Some(c) = &r.ceiling {
            p { "Measured in this run: " (c.describe()) "." }
        }
        @if let Some(v) = &r.vendor {
            p { "Measured beside the variants: " (v.name) " " (v.version.as_deref().unwrap_or("")) " (" (v.math) "): " (v.status.label())
                @if let Some(why) = &v.detail { " - " (why) } }
        }
        h2 #summary { "Summary" }
        p { (how) " The host submission interval is the CPU time of the launch call: it says nothing about device execution. \"~\" marks a speedup within the spread of the two timings (noise); \"*\" a ratio taken at unequal clocks (said under the table)." }
        (table(&header, &PERFORMANCE_RIGHT, performance_rows(r)))
        (summary_notes(r))
        (figure(chart::against_ceiling(r), caption))
        (clock_section(r))
        @let steps = ladder_rows(r);
        @if !steps.is_empty() {
            h2 { "The " (w.name) " ladder" }
            p { "Each step's fastest variant in this run, and its gain over the step before: what each step adds is measured here, not claimed." }
            (table(&LADDER_HEADER, &LADDER_RIGHT, steps))
        }
        (problems(r))
        (peers(r.peers.iter(), "Same GPU, input bytes, seed and timing rule as the variants (CUDA events around each launch after warm-up); each output validated against the same references before it was timed. Their outputs come from their own allocators."))
        h2 { "Evidence: resources, occupancy, SASS, completion" }
        (table(&EVIDENCE_HEADER, &[1, 3], evidence_rows(r)))
        @for v in r.variants.iter().filter(|v| v.resources.is_some() || v.sass.is_some()) {
            (evidence::variant(v))
        }
        (validation(r))
        (timeline_section(r))
        @if !r.notes.is_empty() {
            h2 { "Notes" }
            ul { @for n in &r.notes { li { (n) } } }
        }
    };
    page(&format!("{} {} on {}", w.name, w.dtype, d.name), body)
}

/// Beside the summary table: what "box" means in B/copy, and each ratio taken at unequal clocks.
fn summary_notes<P>(r: &RunResults<P>) -> Markup {
    let boxes = r
        .variants
        .iter()
        .any(|v| super::table::bytes_per_copy(v) == "box");
    let notes = clock_notes(r);
    html! {
        @if boxes {
            p { "B/copy \"box\": a TMA copy moves one tensor-map box, whose bytes are the kernel's (a share of the tile per operand), not a fixed width." }
        }
        @if !notes.is_empty() {
            div.warn {
                strong { "* Ratios taken at unequal clocks: they may measure the clocks, not the code." }
                ul { @for n in &notes { li { (n) } } }
            }
        }
    }
}

/// The clocks over the run and every timing taken while they moved, under the summary whose
/// numbers they qualify.
fn clock_section<P>(r: &RunResults<P>) -> Markup {
    let traces = r
        .variants
        .iter()
        .filter_map(|v| v.timing.as_ref()?.clocks.as_ref());
    let summary = clocks::summary(traces);
    let warnings: Vec<String> = clock_warnings(r).collect();
    html! {
        h2 #clocks { "Clocks and throttling" }
        @match &summary {
            Some(s) => p { (s) },
            None => p { "No clock readings in these results (NVML was not available)." },
        }
        @if warnings.is_empty() {
            @if summary.is_some() {
                div.ok { "SM and memory clocks held within " (format!("{:.0}", clocks::CLOCK_TOLERANCE * 100.0)) "% while each variant was timed." }
            }
        } @else {
            div.warn {
                strong { "Clocks moved while these variants were timed; their times mix clock speeds:" }
                ul { @for w in &warnings { li { (w) } } }
            }
        }
    }
}

/// What did not pass or stands out; the clocks' warnings and notes have their own places above.
fn problems<P>(r: &RunResults<P>) -> Markup {
    let said: Vec<String> = clock_warnings(r).chain(clock_notes(r)).collect();
    let lines: Vec<String> = problem_lines(r)
        .into_iter()
        .filter(|l| !said.contains(l))
        .collect();
    html! {
        @if !lines.is_empty() {
            h2 { "Skipped, failed, errors, caveats" }
            ul {
                @for l in &lines {
                    li class=[(!l.starts_with("skipped")).then_some("bad")] { (l) }
                }
            }
        }
    }
}

/// What each peer is, how it was asked to compute, and how its output compared, so its row in the
/// summary can be weighed.
fn peers<'a>(peers: impl Iterator<Item = &'a Peer>, how: &str) -> Markup {
    let peers: Vec<&Peer> = peers.collect();
    let rows = peers.iter().map(|p| {
        [
            p.name.clone(),
            p.version.clone().unwrap_or("-".into()),
            p.math.clone(),
            p.status.label().to_string(),
            p.checked.clone().or(p.detail.clone()).unwrap_or("-".into()),
        ]
    });
    html! {
        @if !peers.is_empty() {
            h2 #peers { "Peers: the same problem through other tools" }
            p { (how) }
            (table(&["peer", "version", "asked to compute", "status", "validation"], &[], rows))
        }
    }
}

fn validation<P>(r: &RunResults<P>) -> Markup {
    let cases: Vec<_> = r
        .variants
        .iter()
        .flat_map(|v| v.validation.iter().map(move |c| (v, c)))
        .collect();
    let failed = cases
        .iter()
        .filter(|(_, c)| c.verdicts.iter().any(|v| !v.passed))
        .count();
    let rows = cases.iter().flat_map(|(v, c)| {
        c.verdicts.iter().map(move |verdict| {
            let e = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.2e}"));
            [
                v.name.clone(),
                c.case.clone(),
                c.blocks.to_string(),
                verdict.checked_against.clone(),
                e(verdict.rel_l2),
                e(verdict.max_abs_err),
                if verdict.passed {
                    "passed".to_string()
                } else {
                    verdict.failure.clone().unwrap_or("FAILED".into())
                },
            ]
        })
    });
    html! {
        h2 { "Validation before timing" }
        details open[failed > 0] {
            summary { (cases.len()) " checked launches, " (failed) " failed" }
            (table(&["variant", "case", "blocks", "compared with", "rel L2", "max abs err", "verdict"], &[2, 4, 5], rows))
        }
    }
}

fn timeline_section<P>(r: &RunResults<P>) -> Markup {
    html! {
        @if !r.timelines.is_empty() {
            h2 #timeline { "Timeline (instrumented builds, timed apart)" }
            (table(&TIMELINE_HEADER, &[1, 2, 3, 4], timeline_rows(r)))
            (figure(
                timeline::render(&named(&r.timelines), timeline::TITLE),
                "Each sampled block's copies from issue to ready and its computes, on %globaltimer. Instrumented timings are never mixed with the clean ones above.",
            ))
        }
    }
}

#[cfg(test)]
mod tests;
