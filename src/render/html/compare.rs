//! compare.html: two runs side by side (`compare BASE NEW --out DIR`), row workloads' or GEMM's.
//! The runs and what they were measured against, the warnings, the table the terminal shows, and
//! each variant's NEW/BASE device-time ratio as a bar against 1. Same page rules as report.html (no
//! scripts, fits a 1280 px window).

use super::{figure, page, table};
use crate::render::chart::{Bars, bars_against};
use crate::render::compare::render::{HEADER, RIGHT, cells};
use crate::render::compare::{Comparison, RunInfo};
use maud::html;

pub const CHART_TITLE: &str = "NEW / BASE device time per variant (below 1 is faster)";

fn chart(c: &Comparison) -> Result<String, String> {
    let bars: Vec<(&str, f64)> = c
        .variants
        .iter()
        .filter_map(|v| v.ratio.map(|r| (v.name.as_str(), r)))
        .collect();
    bars_against(
        &Bars {
            title: CHART_TITLE,
            x_desc: "NEW median / BASE median (device time)",
            bar_label: "variant timed in both runs",
        },
        &bars,
        Some((1.0, "BASE (ratio 1)".into())),
    )
}

pub fn render(c: &Comparison) -> String {
    let run = |role: &str, r: &RunInfo| {
        html! {
            li {
                (role) ": "
                @if !r.file.is_empty() { code { (r.file) } ": " }
                (r.describe())
            }
        }
    };
    let body = html! {
        p { strong { (c.summary()) } }
        ul { (run("BASE", &c.base)) (run("NEW", &c.new)) }
        @if !c.warnings.is_empty() {
            div.warn { ul { @for w in &c.warnings { li { "warning: " (w) } } } }
        }
        p { "A variant is faster or slower when the medians lie outside each other's min..max spread, else the same; it regresses when slower by more than " (c.threshold_pct) " %, or when it passed in BASE and fails, errors or does not finish in NEW." }
        (table(&HEADER, &RIGHT, c.variants.iter().map(cells)))
        (figure(chart(c), "Bars: each variant timed in both runs, NEW's median device time over BASE's. Line: no change."))
    };
    let title = match c.new.workload == c.base.workload {
        true => format!("compare on {}", c.new.workload),
        false => format!("compare ({} against {})", c.new.workload, c.base.workload),
    };
    page(&title, body)
}
