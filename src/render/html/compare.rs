//! compare.html: two runs side by side (`compare BASE NEW --out DIR`), row workloads' or GEMM's.
//! The runs and what they were measured against, the warnings, the table the terminal shows, and
//! each variant's NEW/BASE device-time ratio as a bar against 1. Same page rules as report.html (no
//! scripts, fits a 1280 px window).

use super::{figure, page, table};
use crate::render::chart::{Axis, Bar, Chart, Class, FASTER, SAME, SLOWER, bar_chart};
use crate::render::compare::render::{HEADER, RIGHT, cells};
use crate::render::compare::{Comparison, RunInfo, Verdict};
use maud::html;

pub const CHART_TITLE: &str = "NEW / BASE device time per variant (below 1 is faster)";

/// Each variant timed in both runs: its ratio from 1, coloured by its verdict, the threshold as
/// the band; `*` where a side's clocks moved.
fn chart(c: &Comparison) -> Result<String, String> {
    let bars: Vec<Bar> = c
        .variants
        .iter()
        .filter_map(|v| {
            let class = match v.verdict {
                Verdict::Faster => 0,
                Verdict::Same => 1,
                _ => 2,
            };
            Some(Bar {
                label: format!(
                    "{}{}",
                    v.name,
                    if v.unreliable.is_some() { " *" } else { "" }
                ),
                value: v.ratio?,
                class,
            })
        })
        .collect();
    let classes = [
        (FASTER, "faster: by more than either run's spread"),
        (SAME, "same: within a run's spread"),
        (SLOWER, "slower: by more than either run's spread"),
    ]
    .map(|(color, label)| Class {
        color,
        label: label.into(),
    });
    let t = c.threshold_pct / 100.0;
    bar_chart(
        &Chart {
            title: CHART_TITLE,
            x_desc: "NEW / BASE median device time (* a side's clocks moved)",
            classes: &classes,
            axis: Axis::Ratio {
                one: "BASE (ratio 1)".into(),
                band: (1.0 - t, 1.0 + t),
                band_label: format!(
                    "within {} %: slower beyond it is a regression",
                    c.threshold_pct
                ),
            },
        },
        &bars,
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
        (figure(chart(c), "Bars: each variant timed in both runs, NEW's median device time over BASE's, from 1 (no change), coloured by its verdict. Band: the regression threshold. * after a name: a side's clocks moved while it was timed, so its ratio may measure the clocks."))
    };
    let title = match c.new.workload == c.base.workload {
        true => format!("compare on {}", c.new.workload),
        false => format!("compare ({} against {})", c.new.workload, c.base.workload),
    };
    page(&title, body)
}
