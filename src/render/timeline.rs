//! The timeline drawn: as SVG (one row per sampled block and role, copies and computes as bars)
//! and as a Chrome trace for Perfetto.

use super::plot::{self, Entry, Frame, Mark};
use crate::results::timeline::BlockTrace;
use plotters::prelude::*;
use serde_json::json;

const COPY: RGBColor = RGBColor(52, 120, 200);
const COMPUTE: RGBColor = RGBColor(230, 140, 40);
/// The title of a run's timeline, in timeline.svg and report.html alike.
pub const TITLE: &str = "Copy in flight and compute per sampled block (instrumented builds)";

/// Renders the traces of several variants on one time axis (microseconds from each variant's first
/// event, so variants line up at zero).
pub fn render(variants: &[(String, Vec<BlockTrace>)], title: &str) -> Result<String, String> {
    let rows: Vec<(String, &BlockTrace, usize)> = variants
        .iter()
        .flat_map(|(name, bs)| {
            bs.iter()
                .flat_map(move |b| [0usize, 1].map(|role| (name.clone(), b, role)))
        })
        .collect();
    let starts: Vec<u64> = variants
        .iter()
        .map(|(_, bs)| {
            bs.iter()
                .flat_map(|b| {
                    b.tiles
                        .iter()
                        .flat_map(|t| t.at.iter().flatten().map(|(g, _)| *g))
                })
                .min()
                .unwrap_or(0)
        })
        .collect();
    let start_of = |name: &str| {
        variants
            .iter()
            .position(|(n, _)| n == name)
            .map_or(0, |i| starts[i])
    };
    let mut bars: Vec<(f64, f64, usize, RGBColor)> = Vec::new();
    for (row, (name, b, role)) in rows.iter().enumerate() {
        let t0 = start_of(name);
        let (from, to, color) = if *role == 0 {
            (0, 1, COPY)
        } else {
            (2, 3, COMPUTE)
        };
        for t in &b.tiles {
            if let (Some((a, _)), Some((z, _))) = (t.at[from], t.at[to]) {
                bars.push((
                    (a - t0) as f64 / 1e3,
                    (z.max(a) - t0) as f64 / 1e3,
                    row,
                    color,
                ));
            }
        }
    }
    let tmax = bars.iter().map(|b| b.1).fold(1e-3, f64::max);
    let labels: Vec<String> = rows
        .iter()
        .map(|(n, b, role)| {
            format!(
                "{n} b{} {}",
                b.block,
                if *role == 0 { "copy" } else { "compute" }
            )
        })
        .collect();
    let label = |i: usize| labels.get(i).cloned().unwrap_or_default();
    let legend = [
        (COPY, "copy in flight (issue to ready)"),
        (COMPUTE, "compute (begin to end)"),
    ]
    .map(|(c, text)| Entry {
        mark: Mark::Fill(c),
        text: text.into(),
    });
    let frame = Frame {
        title,
        x_desc: "microseconds from the variant's first event (%globaltimer)",
        y_desc: "variant, sampled block (b), role",
        x: 0.0..tmax * 1.02,
        x_digits: if tmax >= 50.0 { 0 } else { 1 },
        rows: rows.len(),
        label_width: 250,
        label: &label,
        legend: &legend,
    };
    plot::grouped("timeline", &["bars", "legend"], |svg, k| {
        let root = SVGBackend::with_string(svg, frame.size()).into_drawing_area();
        let (mut chart, legend_area) = plot::bars(&root, &frame)?;
        if k >= 1 {
            for color in [COPY, COMPUTE] {
                chart
                    .draw_series(bars.iter().filter(|b| b.3 == color).map(|(a, z, row, c)| {
                        Rectangle::new(
                            [
                                (*a, SegmentValue::Exact(*row)),
                                (*z, SegmentValue::Exact(*row + 1)),
                            ],
                            c.filled(),
                        )
                    }))
                    .map_err(|e| e.to_string())?;
            }
        }
        if k >= 2 {
            plot::legend(&legend_area, &legend)?;
        }
        root.present().map_err(|e| e.to_string())
    })
}

/// Chrome trace (Perfetto / chrome://tracing): one process per variant, one track per sampled
/// block and role; copies and computes as complete ("X") slices, in microseconds from the first
/// event on the global timer.
pub fn chrome_trace(variants: &[(String, Vec<BlockTrace>)]) -> serde_json::Value {
    let t0 = variants
        .iter()
        .flat_map(|(_, bs)| {
            bs.iter().flat_map(|b| {
                b.tiles
                    .iter()
                    .flat_map(|t| t.at.iter().flatten().map(|(g, _)| *g))
            })
        })
        .min()
        .unwrap_or(0);
    let us = |ns: u64| (ns - t0) as f64 / 1000.0;
    let mut events = Vec::new();
    for (pid, (name, blocks)) in variants.iter().enumerate() {
        events.push(json!({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": name}}));
        for b in blocks {
            for (role, tid) in [("copy", 2 * b.block), ("compute", 2 * b.block + 1)] {
                events.push(
                    json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                                   "args": {"name": format!("block {} {role}", b.block)}}),
                );
            }
            for t in &b.tiles {
                let slices = [
                    ("copy", 0usize, 1usize, 2 * b.block),
                    ("compute", 2, 3, 2 * b.block + 1),
                ];
                for (what, from, to, tid) in slices {
                    if let (Some((a, _)), Some((z, _))) = (t.at[from], t.at[to]) {
                        events.push(json!({"ph": "X", "name": format!("{what} tile {}", t.k), "cat": what,
                                           "pid": pid, "tid": tid, "ts": us(a), "dur": us(z.max(a)) - us(a)}));
                    }
                }
            }
        }
    }
    json!({ "traceEvents": events, "displayTimeUnit": "ns" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::timeline::{TileEvents, tile};

    #[test]
    fn renders_bars_for_every_slice() {
        let t = |k, base: u64| TileEvents {
            k,
            at: [0, 10, 10, 30, 30].map(|c| Some((base + c * 100, c))),
        };
        let b = BlockTrace {
            block: 0,
            tiles: vec![t(0, 1000), t(1, 4000)],
        };
        let svg = render(&[("sync".into(), vec![b])], "test").unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("sync b0 copy") && svg.contains("sync b0 compute"));
        let (plot, legend) = svg.split_once("<g class=\"legend\">").unwrap();
        // four bars: two copies (blue) and two computes (orange), one swatch of each in the legend
        assert_eq!(plot.matches("#3478C8").count(), 2, "{svg}");
        assert_eq!(plot.matches("#E68C28").count(), 2);
        assert_eq!(legend.matches("#3478C8").count(), 1);
        assert!(legend.contains("copy in flight") && legend.contains("compute (begin to end)"));
        // title and axis descriptions (with the unit) are drawn as text
        for text in ["test", "microseconds from", "variant, sampled block"] {
            assert!(plot.contains(&format!(">\n{text}")), "{text}");
        }
    }

    #[test]
    fn chrome_trace_has_the_schema_perfetto_reads() {
        let b = BlockTrace {
            block: 3,
            tiles: vec![tile(0, [0, 10, 10, 30, 30])],
        };
        let v = chrome_trace(&[("cpasync-cg16-s2".into(), vec![b])]);
        let ev = v["traceEvents"].as_array().unwrap();
        let slices: Vec<_> = ev.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(slices.len(), 2);
        for s in &slices {
            for key in ["name", "pid", "tid", "ts", "dur", "cat"] {
                assert!(!s[key].is_null(), "{key} missing in {s}");
            }
            assert!(s["ts"].as_f64().unwrap() >= 0.0 && s["dur"].as_f64().unwrap() >= 0.0);
        }
        assert_eq!(slices[0]["tid"], 6);
        assert_eq!(slices[1]["tid"], 7);
        assert!(
            ev.iter()
                .any(|e| e["ph"] == "M" && e["args"]["name"] == "cpasync-cg16-s2")
        );
    }
}
