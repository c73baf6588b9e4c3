//! What every SVG plot shares that plotters does not give: a legend a page can find. plotters
//! writes flat SVG (no groups, no classes); the report and its browser test find a plot's legend
//! by `<g class="legend">`.

use plotters::coord::CoordTranslate;
use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordusize};
use plotters::prelude::*;

/// A chart of horizontal bars: x from 0, one row per segment of y.
pub type Bars<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, SegmentedCoord<RangedCoordusize>>>;

/// What a chart of horizontal bars shows around its bars.
pub struct Frame<'l> {
    pub title: &'l str,
    /// What x is, with its unit.
    pub x_desc: &'l str,
    pub y_desc: &'l str,
    pub x_max: f64,
    pub rows: usize,
    /// Pixels left of the axis for the row labels.
    pub label_width: u32,
    /// The label of row i (row 0 at the bottom).
    pub label: &'l dyn Fn(usize) -> String,
}

/// `root` painted white, with the title, the axes, their descriptions and the row labels.
pub fn bars<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    f: &Frame,
) -> Result<Bars<'a, 'b>, String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(root)
        .caption(f.title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(f.label_width)
        .build_cartesian_2d(0f64..f.x_max, (0..f.rows).into_segmented())
        .map_err(|e| e.to_string())?;
    let digits = if f.x_max >= 100.0 {
        0
    } else if f.x_max >= 1.0 {
        1
    } else {
        3
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(f.x_desc)
        .y_desc(f.y_desc)
        .x_label_formatter(&|x| format!("{x:.digits$}"))
        .y_labels(f.rows)
        .y_label_formatter(&|y| match y {
            SegmentValue::CenterOf(i) => (f.label)(*i),
            _ => String::new(),
        })
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}

/// Ends a drawing: the series labels top right when `legend`, then the SVG written out.
pub fn finish<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    legend: bool,
) -> Result<(), String> {
    if legend {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE)
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    chart.plotting_area().present().map_err(|e| e.to_string())
}

/// Draws a plot twice, `draw(buffer, false)` without its series labels and `draw(buffer, true)`
/// with them, and wraps what the labels added in `<g class="legend">`. plotters draws the series
/// labels last and each drawing is deterministic, so the second is the first plus the legend.
pub fn with_legend(
    draw: impl Fn(&mut String, bool) -> Result<(), String>,
) -> Result<String, String> {
    const END: &str = "</svg>\n";
    let (mut bare, mut full) = (String::new(), String::new());
    draw(&mut bare, false)?;
    draw(&mut full, true)?;
    let body = bare
        .strip_suffix(END)
        .ok_or("the plot does not end in </svg>")?;
    let legend = full
        .strip_prefix(body)
        .and_then(|rest| rest.strip_suffix(END))
        .ok_or("drawing the legend changed the plot drawn before it")?;
    if !legend.contains("<text") {
        return Err("the plot has no series labels".into());
    }
    Ok(format!("{body}<g class=\"legend\">\n{legend}</g>\n{END}"))
}

/// The colour of series i.
pub fn palette(i: usize) -> RGBColor {
    const C: [RGBColor; 12] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
        RGBColor(0, 0, 0),
        RGBColor(255, 187, 120),
    ];
    C[i % C.len()]
}

/// Named lines of (x, y) points.
pub type Series = Vec<(String, Vec<(f64, f64)>)>;

/// How a line plot's axes are scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Log x, linear y from 0.
    LogX,
    /// Log x and log y.
    LogXY,
    /// Linear x and linear y from 0 (a handful of x values, such as stage counts).
    Linear,
}

/// Lines over axes scaled as `scale`, points marked, with an optional labelled horizontal line
/// (a ceiling).
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &Series,
    hline: Option<(f64, &str)>,
    scale: Scale,
) -> Result<String, String> {
    let pts = series.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if let Some((h, _)) = hline {
        y0 = y0.min(h);
        y1 = y1.max(h);
    }
    if x0 > x1 {
        return Err("no points to plot".into());
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut b = ChartBuilder::on(&root);
        b.caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70);
        macro_rules! finish {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(x_desc)
                    .y_desc(y_desc)
                    .draw()
                    .map_err(|e| e.to_string())?;
                for (i, (name, p)) in series.iter().enumerate() {
                    let c = palette(i);
                    chart
                        .draw_series(LineSeries::new(p.iter().copied(), c.stroke_width(2)))
                        .map_err(|e| e.to_string())?
                        .label(name.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                        });
                    chart
                        .draw_series(p.iter().map(|&q| Circle::new(q, 3, c.filled())))
                        .map_err(|e| e.to_string())?;
                }
                if let Some((h, label)) = hline {
                    chart
                        .draw_series(LineSeries::new([(x0, h), (x1, h)], BLACK.stroke_width(1)))
                        .map_err(|e| e.to_string())?
                        .label(label)
                        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK));
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .draw()
                    .map_err(|e| e.to_string())?;
            }};
        }
        let (ylo, yhi) = match scale {
            Scale::LogXY => (y0 * 0.8, y1 * 1.25),
            _ => (0.0, y1 * 1.1),
        };
        match scale {
            Scale::LogXY => finish!(
                b.build_cartesian_2d((x0 * 0.8..x1 * 1.25).log_scale(), (ylo..yhi).log_scale())
                    .map_err(|e| e.to_string())?
            ),
            Scale::LogX => finish!(
                b.build_cartesian_2d((x0 * 0.8..x1 * 1.25).log_scale(), ylo..yhi)
                    .map_err(|e| e.to_string())?
            ),
            Scale::Linear => finish!(
                b.build_cartesian_2d((x0 - 0.5)..(x1 + 0.5), ylo..yhi)
                    .map_err(|e| e.to_string())?
            ),
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plot(buf: &mut String, legend: bool, label: &str) -> Result<(), String> {
        let root = SVGBackend::with_string(buf, (300, 200)).into_drawing_area();
        let mut chart = ChartBuilder::on(&root)
            .build_cartesian_2d(0f64..1.0, 0f64..1.0)
            .map_err(|e| e.to_string())?;
        let s = chart
            .draw_series(LineSeries::new([(0.0, 0.0), (1.0, 1.0)], RED))
            .map_err(|e| e.to_string())?;
        if !label.is_empty() {
            s.label(label)
                .legend(|(x, y)| PathElement::new([(x, y), (x + 10, y)], RED));
        }
        finish(&mut chart, legend)
    }

    #[test]
    fn the_series_labels_and_nothing_else_are_grouped() {
        let svg = with_legend(|b, l| plot(b, l, "diagonal")).unwrap();
        let (before, group) = svg.split_once("<g class=\"legend\">").unwrap();
        assert!(before.starts_with("<svg") && before.contains("<polyline"));
        assert!(!before.contains("diagonal"));
        assert!(group.contains("diagonal") && group.ends_with("</g>\n</svg>\n"));
    }

    #[test]
    fn a_plot_without_labels_or_a_drawing_that_moves_is_refused() {
        assert!(with_legend(|b, l| plot(b, l, "")).is_err());
        let calls = std::cell::Cell::new(0);
        let moving = with_legend(|b, l| {
            calls.set(calls.get() + 1);
            plot(b, l, &format!("run {}", calls.get()))?;
            b.insert_str(5, &" ".repeat(calls.get()));
            Ok(())
        });
        assert!(moving.is_err());
    }
}
