//! The timeline drawn as SVG: one row per sampled block and role, copies and computes as bars.

use super::BlockTrace;
use plotters::prelude::*;

const COPY: RGBColor = RGBColor(52, 120, 200);
const COMPUTE: RGBColor = RGBColor(230, 140, 40);

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
    let height = (80 + 18 * rows.len()).min(4000) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(230)
            .build_cartesian_2d(0f64..tmax * 1.02, (0..rows.len().max(1)).into_segmented())
            .map_err(|e| e.to_string())?;
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
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc("microseconds from the first recorded event (%globaltimer)")
            .y_labels(rows.len().max(1))
            .y_label_formatter(&|y| match y {
                SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .draw()
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(bars.iter().map(|(a, z, row, c)| {
                Rectangle::new(
                    [
                        (*a, SegmentValue::Exact(*row)),
                        (*z, SegmentValue::Exact(*row + 1)),
                    ],
                    c.filled(),
                )
            }))
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::TileEvents;

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
        // four bars: two copies (blue) and two computes (orange)
        assert_eq!(svg.matches("#3478C8").count(), 2, "{svg}");
        assert_eq!(svg.matches("#E68C28").count(), 2);
    }
}
