//! Bar charts of a run and of a comparison, in the tables' order. A chart of values (GB/s per
//! variant against the copy ceiling of the same run) has an axis that starts where its data does,
//! so that differences of a few per cent show, and says so under it. A chart of ratios (a GEMM
//! variant's TFLOP/s over the vendor library's; NEW over BASE in a comparison) is centred on 1,
//! with a band for the noise or threshold its verdict uses, and its bars run from 1 in the colour
//! of that verdict. A bar whose ratio was taken at unequal clocks is labelled `*`.

use super::clock_notes::ratio_clocks;
use super::plot::{self, Entry, Frame, Mark};
use crate::results::{Bound, Perf, RunResults, Timing};
use plotters::prelude::*;

const VALUE: RGBColor = RGBColor(52, 120, 200);
const CEILING: RGBColor = RGBColor(214, 39, 40);
const BAND: RGBColor = RGBColor(255, 226, 160);
pub const FASTER: RGBColor = RGBColor(44, 150, 44);
pub const SAME: RGBColor = RGBColor(150, 150, 150);
pub const SLOWER: RGBColor = RGBColor(214, 39, 40);

pub const TITLE: &str = "Achieved bandwidth per variant (higher is better)";
pub const TFLOPS_TITLE: &str = "TFLOP/s per variant (higher is better)";
pub const VENDOR_TITLE: &str = "TFLOP/s per variant over the vendor library's (higher is better)";

/// A class of bars: its colour and its entry in the legend.
#[derive(Debug, Clone)]
pub struct Class {
    pub color: RGBColor,
    pub label: String,
}

/// One row: its label, its value and its class (an index into the chart's classes).
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub class: usize,
}

/// What a chart's axis is.
#[derive(Debug, Clone)]
pub enum Axis {
    /// Values from just below the smallest (0 only where the data reaches it), with a labelled
    /// reference line (a ceiling) where there is one.
    Values { line: Option<(f64, String)> },
    /// Ratios centred on 1 (a line, labelled `one`), with a band from `band.0` to `band.1`.
    Ratio {
        one: String,
        band: (f64, f64),
        band_label: String,
    },
}

/// What a bar chart says around its bars.
pub struct Chart<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub classes: &'a [Class],
    pub axis: Axis,
}

/// The span of a value axis: from a margin below the smallest value, rounded down where that
/// keeps it above 0 (an axis starts at 0 only where the data does), to a margin above the largest.
fn value_range(lo: f64, hi: f64) -> (f64, f64) {
    let span = if hi > lo {
        hi - lo
    } else {
        hi.abs().max(1.0) * 0.1
    };
    let from = lo - (0.1 * span).min(0.5 * lo.max(0.0));
    let step = 10f64.powf(span.log10().floor()) / 10.0;
    let round = (from / step).floor() * step;
    (
        if round > 0.0 || lo <= 0.0 {
            round.max(0.0).min(lo)
        } else {
            from
        },
        hi + 0.06 * span,
    )
}

/// Decimals that tell a span's ticks apart.
fn digits(span: f64) -> usize {
    match span {
        s if s >= 50.0 => 0,
        s if s >= 5.0 => 1,
        s if s >= 0.05 => 2,
        _ => 3,
    }
}

/// Horizontal bars, the first on top (as in the tables): `<svg class="bars">` for values,
/// `<svg class="ratio">` for ratios, with the bars, the band and the legend grouped by name.
pub fn bar_chart(c: &Chart, bars: &[Bar]) -> Result<String, String> {
    if bars.is_empty() {
        return Err("no timed variants".into());
    }
    let n = bars.len();
    let values = bars.iter().map(|b| b.value);
    let (x, origin, class) = match &c.axis {
        Axis::Values { line } => {
            let all = values.chain(line.iter().map(|l| l.0));
            let lo = all.clone().fold(f64::INFINITY, f64::min);
            let hi = all.fold(f64::NEG_INFINITY, f64::max);
            let (from, to) = value_range(lo, hi);
            (from..to, from, "bars")
        }
        Axis::Ratio { band, .. } => {
            let far = values
                .chain([band.0, band.1])
                .map(|v| (v - 1.0).abs())
                .fold(0.02, f64::max)
                * 1.12;
            ((1.0 - far).max(0.0)..1.0 + far, 1.0, "ratio")
        }
    };
    let x_desc = match (&c.axis, x.start) {
        (Axis::Values { .. }, from) if from > 0.0 => {
            let d = digits(x.end - x.start);
            format!("{} (axis from {from:.d$})", c.x_desc)
        }
        _ => c.x_desc.to_string(),
    };
    let mut legend: Vec<Entry> = c
        .classes
        .iter()
        .enumerate()
        .filter(|(i, _)| bars.iter().any(|b| b.class == *i))
        .map(|(_, k)| Entry {
            mark: Mark::Fill(k.color),
            text: k.label.clone(),
        })
        .collect();
    let (line, line_color) = match &c.axis {
        Axis::Values { line } => (line.clone(), CEILING),
        Axis::Ratio {
            one, band_label, ..
        } => {
            legend.push(Entry {
                mark: Mark::Fill(BAND),
                text: band_label.clone(),
            });
            (Some((1.0, one.clone())), BLACK)
        }
    };
    if let Some((_, text)) = &line {
        legend.push(Entry {
            mark: Mark::Line(line_color),
            text: text.clone(),
        });
    }
    let row = |i: usize| n - 1 - i;
    let label = |i: usize| bars[row(i)].label.clone();
    let frame = Frame {
        title: c.title,
        x_desc: &x_desc,
        y_desc: "variant",
        x_digits: digits(x.end - x.start),
        x,
        rows: n,
        label_width: 270,
        label: &label,
        legend: &legend,
    };
    let parts: &[&str] = match c.axis {
        Axis::Values { .. } => &["bars", "legend"],
        Axis::Ratio { .. } => &["band", "bars", "legend"],
    };
    plot::grouped(class, parts, |svg, k| {
        let root = SVGBackend::with_string(svg, frame.size()).into_drawing_area();
        let (mut chart, legend_area) = plot::bars(&root, &frame)?;
        let part = |name: &str| parts.iter().position(|p| *p == name).is_some_and(|i| i < k);
        if let Axis::Ratio { band, .. } = c.axis
            && part("band")
        {
            let span = [
                (band.0, SegmentValue::Exact(0)),
                (band.1, SegmentValue::Exact(n)),
            ];
            chart
                .draw_series([Rectangle::new(span, BAND.filled())])
                .map_err(|e| e.to_string())?;
        }
        if part("bars") {
            chart
                .draw_series(bars.iter().enumerate().map(|(i, b)| {
                    let mut bar = Rectangle::new(
                        [
                            (origin, SegmentValue::Exact(row(i))),
                            (b.value, SegmentValue::Exact(row(i) + 1)),
                        ],
                        c.classes[b.class].color.filled(),
                    );
                    // a gap between neighbouring bars
                    bar.set_margin(3, 3, 0, 0);
                    bar
                }))
                .map_err(|e| e.to_string())?;
        }
        if let Some((at, _)) = &line {
            chart
                .draw_series(LineSeries::new(
                    [(*at, SegmentValue::Exact(0)), (*at, SegmentValue::Exact(n))],
                    line_color.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?;
        }
        if part("legend") {
            plot::legend(&legend_area, &legend)?;
        }
        root.present().map_err(|e| e.to_string())
    })
}

/// The run's chart: each timed variant's (and peer's) GB/s against the copy ceiling of the same
/// run (memory-bound), or its TFLOP/s over the vendor library's on the same problem
/// (compute-bound; TFLOP/s alone where the library was not timed).
pub fn against_ceiling<P>(r: &RunResults<P>) -> Result<String, String> {
    let rows: Vec<(String, Option<&Timing>, &Perf)> = r
        .variants
        .iter()
        .filter(|v| v.control.is_none())
        .filter_map(|v| Some((v.name.clone(), v.timing.as_ref(), v.perf.as_ref()?)))
        .chain(
            r.peers
                .iter()
                .filter_map(|p| Some((p.name.clone(), p.timing.as_ref(), p.perf.as_ref()?))),
        )
        .collect();
    let vendor = r.vendor.as_ref().and_then(|v| {
        let t = v.timing.as_ref()?;
        Some((v, t, v.perf.as_ref()?.tflops?))
    });
    match (r.workload.bound, vendor) {
        (Bound::Memory, _) => {
            let bars = rows
                .iter()
                .map(|(name, _, p)| Bar {
                    label: name.clone(),
                    value: p.gbps,
                    class: 0,
                })
                .collect::<Vec<_>>();
            let line = r.ceiling.as_ref().filter(|c| c.gbps > 0.0).map(|c| {
                (
                    c.gbps,
                    format!("copy ceiling: {} in this run, {:.0} GB/s", c.kernel, c.gbps),
                )
            });
            let classes = [Class {
                color: VALUE,
                label: "achieved GB/s (median device time)".into(),
            }];
            bar_chart(
                &Chart {
                    title: TITLE,
                    x_desc: "GB/s: bytes read + written / median device time",
                    classes: &classes,
                    axis: Axis::Values { line },
                },
                &bars,
            )
        }
        (Bound::Compute, Some((v, vt, vendor_tflops))) => {
            let bars = rows
                .iter()
                .filter_map(|(name, t, p)| {
                    let tflops = p.tflops?;
                    // taken at one clock where it was (alternating batches): the matched
                    // rounds' spread decides the colour
                    let (value, class) = match &p.matched {
                        Some(m) if m.pct_range.0 > 100.0 => (m.pct / 100.0, 0),
                        Some(m) if m.pct_range.1 < 100.0 => (m.pct / 100.0, 2),
                        Some(m) => (m.pct / 100.0, 1),
                        None => match t {
                            Some(t) if t.device.indistinguishable(&vt.device) => {
                                (tflops / vendor_tflops, 1)
                            }
                            _ if tflops > vendor_tflops => (tflops / vendor_tflops, 0),
                            _ => (tflops / vendor_tflops, 2),
                        },
                    };
                    let unequal = ratio_clocks(r, *t, Some(p)).ceiling.is_some();
                    Some(Bar {
                        label: format!("{name}{}", if unequal { " *" } else { "" }),
                        value,
                        class,
                    })
                })
                .collect::<Vec<_>>();
            let classes = [
                (
                    FASTER,
                    format!("faster than {} by more than either spread", v.name),
                ),
                (SAME, format!("the same as {} within a spread", v.name)),
                (
                    SLOWER,
                    format!("slower than {} by more than either spread", v.name),
                ),
            ]
            .map(|(color, label)| Class { color, label });
            let d = &vt.device;
            let moved = vt.clocks.as_ref().and_then(crate::clocks::sm_moved);
            bar_chart(
                &Chart {
                    title: VENDOR_TITLE,
                    x_desc: &format!(
                        "speed over {}'s in this run, at one SM clock (* unequal clocks)",
                        v.name
                    ),
                    classes: &classes,
                    axis: Axis::Ratio {
                        one: format!(
                            "{} in this run: {vendor_tflops:.1} TFLOP/s{}",
                            v.name,
                            moved.map_or(String::new(), |(lo, hi)| format!(
                                " (its clocks moved: SM {lo}..{hi} MHz)"
                            ))
                        ),
                        band: (d.median / d.max, d.median / d.min),
                        band_label: format!("{}'s own spread (min..max)", v.name),
                    },
                },
                &bars,
            )
        }
        (Bound::Compute, None) => {
            let bars = rows
                .iter()
                .filter_map(|(name, _, p)| {
                    Some(Bar {
                        label: name.clone(),
                        value: p.tflops?,
                        class: 0,
                    })
                })
                .collect::<Vec<_>>();
            let classes = [Class {
                color: VALUE,
                label: "tilepipe variant (median device time)".into(),
            }];
            bar_chart(
                &Chart {
                    title: TFLOPS_TITLE,
                    x_desc: "TFLOP/s: FLOPs / median device time",
                    classes: &classes,
                    axis: Axis::Values { line: None },
                },
                &bars,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_axis_starts_where_the_data_does() {
        let (from, _) = value_range(3448.0, 4324.0);
        assert!((3300.0..=3448.0).contains(&from), "{from}");
        let (from, _) = value_range(276.0, 4261.0);
        assert!(from > 0.0 && from < 276.0, "{from}");
        assert_eq!(value_range(0.0, 50.0).0, 0.0);
    }

    fn bars(values: &[(f64, usize)]) -> Vec<Bar> {
        values
            .iter()
            .enumerate()
            .map(|(i, &(value, class))| Bar {
                label: format!("v{i}"),
                value,
                class,
            })
            .collect()
    }

    fn ticks(svg: &str) -> Vec<f64> {
        svg.split("</text>")
            .filter_map(|t| t.rsplit('>').next()?.trim().parse().ok())
            .collect()
    }

    #[test]
    fn a_chart_of_values_shows_a_few_per_cent() {
        let classes = [Class {
            color: VALUE,
            label: "GB/s".into(),
        }];
        let chart = Chart {
            title: "t",
            x_desc: "GB/s",
            classes: &classes,
            axis: Axis::Values {
                line: Some((4262.0, "ceiling".into())),
            },
        };
        let svg = bar_chart(&chart, &bars(&[(4100.0, 0), (4180.0, 0), (3990.0, 0)])).unwrap();
        assert!(svg.starts_with("<svg class=\"bars\" width=\"800\""));
        let (_, group) = svg.split_once("<g class=\"bars\">").unwrap();
        assert_eq!(
            group.split("</g>").next().unwrap().matches("<rect").count(),
            3
        );
        let ticks = ticks(&svg);
        assert!(
            ticks.len() >= 3 && ticks.iter().all(|&t| t > 3800.0),
            "{ticks:?}"
        );
        assert!(svg.contains("GB/s (axis from "));
        assert!(svg.contains("<g class=\"legend\">") && !svg.contains("class=\"band\""));
    }

    #[test]
    fn a_chart_of_ratios_is_centred_on_1_with_its_band_and_a_colour_per_verdict() {
        let classes = [FASTER, SAME, SLOWER].map(|color| Class {
            color,
            label: "verdict".into(),
        });
        let chart = Chart {
            title: "t",
            x_desc: "NEW / BASE",
            classes: &classes,
            axis: Axis::Ratio {
                one: "BASE".into(),
                band: (0.95, 1.05),
                band_label: "threshold".into(),
            },
        };
        let svg = bar_chart(&chart, &bars(&[(0.9, 0), (1.01, 1), (1.12, 2)])).unwrap();
        assert!(svg.starts_with("<svg class=\"ratio\""));
        let ticks = ticks(&svg);
        let (lo, hi) = (ticks[0], ticks[ticks.len() - 1]);
        assert!(
            lo < 1.0 && hi > 1.0 && (1.0 - lo - (hi - 1.0)).abs() < 0.06,
            "{ticks:?}"
        );
        let (_, band) = svg.split_once("<g class=\"band\">").unwrap();
        assert_eq!(
            band.split("</g>").next().unwrap().matches("<rect").count(),
            1
        );
        let (_, group) = svg.split_once("<g class=\"bars\">").unwrap();
        let group = group.split("</g>").next().unwrap();
        for c in [FASTER, SAME, SLOWER] {
            let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
            assert_eq!(group.matches(&fill).count(), 1, "{fill}");
        }
    }
}
