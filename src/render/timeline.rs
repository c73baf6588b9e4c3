//! The timeline drawn: as SVG (one row per sampled block and role, copies and computes as bars)
//! and as a Chrome trace for Perfetto.

use super::plot::{self, Entry, Frame, Mark};
use crate::results::timeline::BlockTrace;
use plotters::prelude::*;
use serde_json::json;

const COPY: RGBColor = RGBColor(52, 120, 200);
const COMPUTE: RGBColor = RGBColor(230, 140, 40);
const MMA: RGBColor = RGBColor(60, 160, 90);
const SOFTMAX: RGBColor = RGBColor(150, 80, 180);
/// The title of a run's timeline, in timeline.svg and report.html alike.
pub const TITLE: &str = "Copy in flight and compute per sampled block (instrumented builds)";

/// One row of a block's timeline: what it shows, its spans (globaltimer ns) and their colour.
struct Track {
    what: String,
    spans: Vec<(u64, u64)>,
    color: RGBColor,
}

/// A block's rows: its copies in flight and its compute; then, where the compute body recorded
/// them, each consumer warpgroup's MMAs in flight and its softmax.
fn tracks(b: &BlockTrace) -> Vec<Track> {
    let ring = |from: usize, to: usize| -> Vec<(u64, u64)> {
        b.tiles
            .iter()
            .filter_map(|t| Some((t.at[from]?.0, t.at[to]?.0)))
            .collect()
    };
    let body = |g: usize, pairs: &[(usize, usize)]| -> Vec<(u64, u64)> {
        b.tiles
            .iter()
            .filter_map(|t| t.body.get(g))
            .flat_map(|e| pairs.iter().filter_map(|&(f, z)| Some((e[f]?.0, e[z]?.0))))
            .collect()
    };
    let warpgroups = b.tiles.iter().map(|t| t.body.len()).max().unwrap_or(0);
    let mut rows = vec![
        Track {
            what: "copy".into(),
            spans: ring(0, 1),
            color: COPY,
        },
        Track {
            what: "compute".into(),
            spans: ring(2, 3),
            color: COMPUTE,
        },
    ];
    for g in 0..warpgroups {
        rows.push(Track {
            what: format!("wg{g} MMA"),
            spans: body(g, &[(0, 1), (3, 4)]),
            color: MMA,
        });
        rows.push(Track {
            what: format!("wg{g} softmax"),
            spans: body(g, &[(1, 2)]),
            color: SOFTMAX,
        });
    }
    rows
}

/// Renders the traces of several variants on one time axis (microseconds from each variant's first
/// event, so variants line up at zero).
pub fn render(variants: &[(String, Vec<BlockTrace>)], title: &str) -> Result<String, String> {
    let mut labels = Vec::new();
    let mut bars: Vec<(f64, f64, usize, RGBColor)> = Vec::new();
    for (name, bs) in variants {
        let rows: Vec<(usize, Track)> = bs
            .iter()
            .flat_map(|b| tracks(b).into_iter().map(move |t| (b.block, t)))
            .collect();
        let t0 = rows
            .iter()
            .flat_map(|(_, t)| t.spans.iter().map(|s| s.0))
            .min()
            .unwrap_or(0);
        for (block, t) in rows {
            let row = labels.len();
            labels.push(format!("{name} b{block} {}", t.what));
            bars.extend(t.spans.iter().map(|&(a, z)| {
                let us = |ns: u64| ns.saturating_sub(t0) as f64 / 1e3;
                (us(a), us(z.max(a)), row, t.color)
            }));
        }
    }
    let tmax = bars.iter().map(|b| b.1).fold(1e-3, f64::max);
    let label = |i: usize| labels.get(i).cloned().unwrap_or_default();
    let used = |c: RGBColor| bars.iter().any(|b| b.3 == c);
    let legend: Vec<Entry> = [
        (COPY, "copy in flight (issue to ready)"),
        (COMPUTE, "compute (begin to end)"),
        (MMA, "a warpgroup's MMAs in flight (issue to retirement)"),
        (SOFTMAX, "a warpgroup's softmax"),
    ]
    .into_iter()
    .filter(|&(c, _)| c == COPY || c == COMPUTE || used(c))
    .map(|(c, text)| Entry {
        mark: Mark::Fill(c),
        text: text.into(),
    })
    .collect();
    let frame = Frame {
        title,
        x_desc: "microseconds from the variant's first event (%globaltimer)",
        y_desc: "variant, sampled block (b), role",
        x: 0.0..tmax * 1.02,
        x_digits: if tmax >= 50.0 { 0 } else { 1 },
        rows: labels.len(),
        label_width: 250,
        label: &label,
        legend: &legend,
    };
    plot::grouped("timeline", &["bars", "legend"], |svg, k| {
        let root = SVGBackend::with_string(svg, frame.size()).into_drawing_area();
        let (mut chart, legend_area) = plot::bars(&root, &frame)?;
        if k >= 1 {
            for color in [COPY, COMPUTE, MMA, SOFTMAX] {
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
/// block and role (copy, compute, each warpgroup's MMAs and softmax where recorded); each span a
/// complete ("X") slice, in microseconds from the first event on the global timer.
pub fn chrome_trace(variants: &[(String, Vec<BlockTrace>)]) -> serde_json::Value {
    let all: Vec<Vec<(usize, Vec<Track>)>> = variants
        .iter()
        .map(|(_, bs)| bs.iter().map(|b| (b.block, tracks(b))).collect())
        .collect();
    let t0 = all
        .iter()
        .flatten()
        .flat_map(|(_, ts)| ts.iter().flat_map(|t| t.spans.iter().map(|s| s.0)))
        .min()
        .unwrap_or(0);
    let us = |ns: u64| ns.saturating_sub(t0) as f64 / 1000.0;
    let mut events = Vec::new();
    for (pid, ((name, _), blocks)) in variants.iter().zip(&all).enumerate() {
        events.push(json!({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": name}}));
        let mut tid = 0;
        for (block, ts) in blocks {
            for t in ts {
                events.push(
                    json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                                   "args": {"name": format!("block {block} {}", t.what)}}),
                );
                for (i, &(a, z)) in t.spans.iter().enumerate() {
                    events.push(json!({"ph": "X", "name": format!("{} {i}", t.what), "cat": t.what,
                                       "pid": pid, "tid": tid, "ts": us(a), "dur": us(z.max(a)) - us(a)}));
                }
                tid += 1;
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
            body: Vec::new(),
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
    fn a_body_that_records_its_mmas_and_softmax_gets_rows_for_each_warpgroup() {
        let wg = |base: u64| [0u64, 10, 30, 30, 40].map(|c| Some((base + c * 100, c)));
        let t = |k, base: u64| TileEvents {
            k,
            at: [0, 10, 10, 40, 40].map(|c| Some((base + c * 100, c))),
            body: vec![wg(base), wg(base + 500)],
        };
        let b = BlockTrace {
            block: 2,
            tiles: vec![t(0, 1000), t(1, 6000)],
        };
        let svg = render(&[("tma-wgmma-pp-s2".into(), vec![b.clone()])], "test").unwrap();
        for row in [
            "b2 copy",
            "b2 compute",
            "b2 wg0 MMA",
            "b2 wg0 softmax",
            "b2 wg1 MMA",
            "b2 wg1 softmax",
        ] {
            assert!(svg.contains(&format!("tma-wgmma-pp-s2 {row}")), "{row}");
        }
        let (plot, legend) = svg.split_once("<g class=\"legend\">").unwrap();
        // per warpgroup and tile: S and P V (green), one softmax (purple)
        assert_eq!(plot.matches("#3CA05A").count(), 2 * 2 * 2, "{svg}");
        assert_eq!(plot.matches("#9650B4").count(), 2 * 2);
        assert!(legend.contains("softmax") && legend.contains("MMAs in flight"));
        let v = chrome_trace(&[("pp".into(), vec![b])]);
        let cats: Vec<String> = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| e["cat"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(cats.iter().filter(|c| *c == "wg1 softmax").count(), 2);
        // no body events: no such rows, no such legend entries
        let plain = render(
            &[(
                "sync".into(),
                vec![BlockTrace {
                    block: 0,
                    tiles: vec![tile(0, [0, 10, 10, 30, 30])],
                }],
            )],
            "test",
        )
        .unwrap();
        assert!(!plain.contains("softmax") && !plain.contains("MMAs in flight"));
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
        assert_eq!(
            (slices[0]["tid"].clone(), slices[1]["tid"].clone()),
            (json!(0), json!(1))
        );
        assert_eq!(slices[0]["cat"], "copy");
        assert!(
            ev.iter()
                .any(|e| e["ph"] == "M" && e["args"]["name"] == "cpasync-cg16-s2")
        );
    }
}
