//! What every SVG plot shares that plotters does not give: readable type, a frame of horizontal
//! bars with its legend above the rows (never over them, never on rows of its own), and parts a
//! page can find. plotters writes flat SVG (no groups, no classes); `grouped` wraps what each part
//! adds in `<g class="NAME">` and names the plot by a class on `<svg>`, so that the report and its
//! browser test find a plot's kind, its bars, its band and its legend.

use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordusize};
use plotters::prelude::*;
use std::ops::Range;

/// Body text of a plot (tick labels, row labels, legend, axis descriptions) and its title, in CSS
/// pixels at the plot's own width. A page never shows a plot narrower than `MIN_SCALE` of it, so
/// no text ends below 12 px.
pub const TEXT_PX: f64 = 14.0;
pub const TITLE_PX: f64 = 18.0;
/// The width of a plot of bars, in pixels.
pub const WIDTH: u32 = 800;
/// The narrowest a page may show a plot, as a share of its width: 14 px at 0.9 is 12.6 px.
pub const MIN_SCALE: f64 = 0.9;
/// The height of one row of bars, in pixels.
pub const ROW_PX: u32 = 26;

/// A font of at least `px` CSS pixels. plotters' SVG backend writes a size as size / 1.24
/// (points to pixels) of a whole number of points, so the size it is given is that much larger,
/// rounded up.
pub fn font(px: f64) -> (&'static str, f64) {
    ("sans-serif", (px * 1.24).ceil())
}

/// A chart of horizontal bars: x a range of values, one row per segment of y.
pub type Bars<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, SegmentedCoord<RangedCoordusize>>>;

/// How a legend entry is marked.
#[derive(Debug, Clone, Copy)]
pub enum Mark {
    /// A filled square: a class of bars.
    Fill(RGBColor),
    /// A short line: a reference drawn across the bars.
    Line(RGBColor),
}

/// One entry of a legend.
#[derive(Debug, Clone)]
pub struct Entry {
    pub mark: Mark,
    pub text: String,
}

/// What a chart of horizontal bars shows around its bars.
pub struct Frame<'l> {
    pub title: &'l str,
    /// What x is, with its unit.
    pub x_desc: &'l str,
    pub y_desc: &'l str,
    pub x: Range<f64>,
    /// Decimals of the x tick labels.
    pub x_digits: usize,
    pub rows: usize,
    /// Pixels left of the axis for the row labels.
    pub label_width: u32,
    /// The label of row i (row 0 at the bottom).
    pub label: &'l dyn Fn(usize) -> String,
    /// Drawn above the rows.
    pub legend: &'l [Entry],
}

impl Frame<'_> {
    const TITLE: u32 = 34;
    const AXIS: u32 = 64;

    fn legend_height(&self) -> u32 {
        24 + 24 * self.legend.len() as u32
    }

    /// The plot's size in pixels: its width, and as high as its rows and legend need.
    pub fn size(&self) -> (u32, u32) {
        let rows = ROW_PX * self.rows.max(1) as u32;
        (
            WIDTH,
            Self::TITLE + self.legend_height() + rows + Self::AXIS,
        )
    }
}

/// `root` painted white with the title, the axes, their descriptions and the row labels; the
/// chart to draw the bars into and the area above it where `legend` draws the legend last.
pub fn bars<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    f: &Frame,
) -> Result<(Bars<'a, 'b>, DrawingArea<SVGBackend<'b>, Shift>), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let body = root
        .titled(f.title, font(TITLE_PX))
        .map_err(|e| e.to_string())?;
    let (top, plot) = body.split_vertically(f.legend_height());
    let mut chart = ChartBuilder::on(&plot)
        .margin_left(8)
        .margin_right(16)
        .x_label_area_size(Frame::AXIS)
        .y_label_area_size(f.label_width)
        .build_cartesian_2d(f.x.clone(), (0..f.rows.max(1) - 1).into_segmented())
        .map_err(|e| e.to_string())?;
    let digits = f.x_digits;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .label_style(font(TEXT_PX))
        .axis_desc_style(font(TEXT_PX))
        .x_desc(f.x_desc)
        .y_desc(f.y_desc)
        .x_labels(8)
        .x_label_formatter(&|x| format!("{x:.digits$}"))
        .y_labels(f.rows)
        .y_label_formatter(&|y| match y {
            SegmentValue::CenterOf(i) => (f.label)(*i),
            _ => String::new(),
        })
        .draw()
        .map_err(|e| e.to_string())?;
    let (_, legend) = top.split_horizontally(f.label_width);
    Ok((chart, legend))
}

/// The legend, in the area `bars` left above the rows: one entry a line, top left.
pub fn legend(area: &DrawingArea<SVGBackend, Shift>, entries: &[Entry]) -> Result<(), String> {
    let mut chart = ChartBuilder::on(area)
        .build_cartesian_2d(0f64..1.0, 0f64..1.0)
        .map_err(|e| e.to_string())?;
    let none = || std::iter::empty::<Circle<(f64, f64), u32>>();
    for e in entries {
        let series = chart.draw_series(none()).map_err(|e| e.to_string())?;
        let series = series.label(e.text.as_str());
        match e.mark {
            Mark::Fill(c) => series
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 18, y + 6)], c.filled())),
            Mark::Line(c) => series
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], c.stroke_width(2))),
        };
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(font(TEXT_PX))
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

/// Draws a plot once per part, `draw(buffer, k)` with the first `k` of `parts`, and wraps what
/// each part added in `<g class="PART">`; the whole is `<svg class="CLASS">`. Each part must add
/// one run of elements to the drawing before it (plotters' drawings are deterministic, and each
/// element starts a line of its own).
pub fn grouped(
    class: &str,
    parts: &[&str],
    draw: impl Fn(&mut String, usize) -> Result<(), String>,
) -> Result<String, String> {
    let mut marked: Vec<(String, Option<&str>)> = Vec::new();
    for k in 0..=parts.len() {
        let mut svg = String::new();
        draw(&mut svg, k)?;
        let now = elements(&svg);
        let head = marked
            .iter()
            .zip(&now)
            .take_while(|((a, _), b)| a == *b)
            .count();
        let tail = marked[head..]
            .iter()
            .rev()
            .zip(now[head..].iter().rev())
            .take_while(|((a, _), b)| a == *b)
            .count();
        if head + tail != marked.len() {
            return Err(format!(
                "drawing {} changed the plot drawn before it",
                parts[k - 1]
            ));
        }
        let added = now[head..now.len() - tail]
            .iter()
            .map(|e| (e.clone(), k.checked_sub(1).map(|i| parts[i])));
        if k > 0 && added.len() == 0 {
            return Err(format!("the plot has no {}", parts[k - 1]));
        }
        marked.splice(head..head, added.collect::<Vec<_>>());
    }
    let mut out = String::new();
    let mut open: Option<&str> = None;
    for (e, part) in &marked {
        if *part != open {
            if open.is_some() {
                out += "</g>\n";
            }
            if let Some(p) = part {
                out += &format!("<g class=\"{p}\">\n");
            }
            open = *part;
        }
        out += e;
    }
    let out = out
        .strip_prefix("<svg ")
        .ok_or("the plot does not start with <svg")?;
    Ok(format!("<svg class=\"{class}\" {out}"))
}

/// An SVG document as its elements, each with the lines it spans (a `<text>` spans three).
fn elements(svg: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in svg.split_inclusive('\n') {
        match out.last_mut() {
            Some(e) if !line.starts_with('<') || (line.starts_with("</") && line != "</svg>\n") => {
                e.push_str(line)
            }
            _ => out.push(line.to_string()),
        }
    }
    out
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
        b.caption(title, font(TITLE_PX))
            .margin(12)
            .x_label_area_size(56)
            .y_label_area_size(84);
        macro_rules! finish {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .label_style(font(TEXT_PX))
                    .axis_desc_style(font(TEXT_PX))
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
                    .label_font(font(TEXT_PX))
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

    /// A diagonal with, as parts, a second line drawn under it and the legend.
    fn plot(buf: &mut String, k: usize) -> Result<(), String> {
        let root = SVGBackend::with_string(buf, (300, 200)).into_drawing_area();
        let mut chart = ChartBuilder::on(&root)
            .build_cartesian_2d(0f64..1.0, 0f64..1.0)
            .map_err(|e| e.to_string())?;
        if k >= 1 {
            chart
                .draw_series(LineSeries::new([(0.0, 1.0), (1.0, 0.0)], BLUE))
                .map_err(|e| e.to_string())?;
        }
        chart
            .draw_series(LineSeries::new([(0.0, 0.0), (1.0, 1.0)], RED))
            .map_err(|e| e.to_string())?
            .label("diagonal")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 10, y)], RED));
        if k >= 2 {
            chart
                .configure_series_labels()
                .label_font(font(TEXT_PX))
                .draw()
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())
    }

    #[test]
    fn each_part_and_nothing_else_is_grouped() {
        let svg = grouped("lines", &["under", "legend"], plot).unwrap();
        assert!(svg.starts_with("<svg class=\"lines\" width=\"300\""));
        let (before, rest) = svg.split_once("<g class=\"under\">\n").unwrap();
        let (under, rest) = rest.split_once("</g>\n").unwrap();
        assert!(
            before.starts_with("<svg") && !before.contains("<polyline"),
            "{svg}"
        );
        assert_eq!(under.matches("<polyline").count(), 1);
        assert!(under.contains("#0000FF") && !under.contains("#FF0000"));
        let (between, legend) = rest.split_once("<g class=\"legend\">\n").unwrap();
        assert!(between.contains("#FF0000") && !between.contains("diagonal"));
        assert!(legend.contains("diagonal") && legend.ends_with("</g>\n</svg>\n"));
        // the legend's text is whole inside its group, at 14 px or more
        let size = legend.split("font-size=\"").nth(1).unwrap();
        let size: f64 = size[..size.find('"').unwrap()].parse().unwrap();
        assert!((14.0..15.0).contains(&size), "{legend}");
    }

    #[test]
    fn a_part_that_adds_nothing_or_a_drawing_that_moves_is_refused() {
        let missing = grouped("lines", &["under", "legend", "more"], plot);
        assert_eq!(missing.unwrap_err(), "the plot has no more");
        let calls = std::cell::Cell::new(0);
        let moving = grouped("lines", &["under"], |b, k| {
            calls.set(calls.get() + 1);
            plot(b, k)?;
            b.insert_str(5, &" ".repeat(calls.get()));
            Ok(())
        });
        assert!(
            moving
                .unwrap_err()
                .contains("changed the plot drawn before it")
        );
    }
}
