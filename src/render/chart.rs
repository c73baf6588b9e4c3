//! Bar charts of a run, in the tables' order: achieved GB/s per timed variant (and peer) against
//! the copy ceiling measured in the same run (a memory-bound workload), or TFLOP/s against the
//! vendor library on the same problem (a compute-bound one).

use super::plot::{self, Frame};
use crate::results::{Bound, RunResults};
use plotters::prelude::*;

const BAR: RGBColor = RGBColor(52, 120, 200);
/// Empty rows above the bars, where the legend goes.
const LEGEND_ROWS: usize = 3;

pub const TITLE: &str = "Achieved bandwidth per variant (higher is better)";
pub const TFLOPS_TITLE: &str = "TFLOP/s per variant (higher is better)";

pub fn against_ceiling<P>(r: &RunResults<P>) -> Result<String, String> {
    let figure = |p: &crate::results::Perf| match r.workload.bound {
        Bound::Memory => Some(p.gbps),
        Bound::Compute => p.tflops,
    };
    let bars: Vec<(&str, f64)> = r
        .variants
        .iter()
        .filter(|v| v.control.is_none())
        .filter_map(|v| Some((v.name.as_str(), figure(v.perf.as_ref()?)?)))
        .chain(
            r.peers
                .iter()
                .filter_map(|p| Some((p.name.as_str(), figure(p.perf.as_ref()?)?))),
        )
        .collect();
    match r.workload.bound {
        Bound::Memory => {
            let line = r.ceiling.as_ref().filter(|c| c.gbps > 0.0).map(|c| {
                (
                    c.gbps,
                    format!("copy ceiling: {} in this run, {:.0} GB/s", c.kernel, c.gbps),
                )
            });
            bars_against(
                &Bars {
                    title: TITLE,
                    x_desc: "GB/s: bytes moved (read + written) / median device time",
                    bar_label: "achieved GB/s (median device time)",
                },
                &bars,
                line,
            )
        }
        Bound::Compute => {
            let line = r.vendor.as_ref().and_then(|v| {
                let t = v.perf.as_ref()?.tflops?;
                Some((t, format!("{} in this run, {t:.1} TFLOP/s", v.name)))
            });
            bars_against(
                &Bars {
                    title: TFLOPS_TITLE,
                    x_desc: "TFLOP/s: floating-point operations / median device time",
                    bar_label: "tilepipe variant (median device time)",
                },
                &bars,
                line,
            )
        }
    }
}

/// What a bar chart says around its bars.
pub struct Bars<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    /// The bars' entry in the legend.
    pub bar_label: &'a str,
}

/// Horizontal bars, the first on top (as in the tables), with an optional labelled vertical line
/// (a ceiling, a reference library) across them.
pub fn bars_against(
    b: &Bars,
    bars: &[(&str, f64)],
    line: Option<(f64, String)>,
) -> Result<String, String> {
    if bars.is_empty() {
        return Err("no timed variants".into());
    }
    let n = bars.len();
    let row = |i: usize| n - 1 - i;
    let x_max = bars
        .iter()
        .map(|b| b.1)
        .fold(line.as_ref().map_or(0.0, |l| l.0), f64::max)
        * 1.08;
    let label = |i: usize| {
        if i < n {
            bars[row(i)].0.to_string()
        } else {
            String::new()
        }
    };
    let frame = Frame {
        title: b.title,
        x_desc: b.x_desc,
        y_desc: "variant",
        x_max,
        rows: n + LEGEND_ROWS,
        label_width: 230,
        label: &label,
    };
    let size = (1000, (110 + 24 * frame.rows) as u32);
    plot::with_legend(|svg, legend| {
        let root = SVGBackend::with_string(svg, size).into_drawing_area();
        let mut chart = plot::bars(&root, &frame)?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, (_, g))| {
                let mut bar = Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(row(i))),
                        (*g, SegmentValue::Exact(row(i) + 1)),
                    ],
                    BAR.filled(),
                );
                // a gap between neighbouring bars
                bar.set_margin(2, 2, 0, 0);
                bar
            }))
            .map_err(|e| e.to_string())?
            .label(b.bar_label)
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], BAR.filled()));
        if let Some((c, text)) = &line {
            chart
                .draw_series(LineSeries::new(
                    [(*c, SegmentValue::Exact(0)), (*c, SegmentValue::Exact(n))],
                    RED.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?
                .label(text.as_str())
                .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], RED.stroke_width(2)));
        }
        plot::finish(&mut chart, legend)
    })
}
