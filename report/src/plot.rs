//! The evaluation chart: score (%) against training time (minutes), one coloured curve with
//! markers and a light 95% band per opponent, a dashed 50% line, a title, a subtitle and a
//! legend under the plot that wraps into rows.

use crate::chart::{
    self, INK, MUTED, PALETTE, Picture, PlotRect, SANS, centred_text, close_frame, color, fit, px,
    reference_line, style_mesh, text, text_width,
};
use crate::run_report::Series;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Width of the image in pixels.
pub const WIDTH: u32 = 1000;
/// Height of the image in pixels.
pub const HEIGHT: u32 = 600;

/// Height of a legend row.
const LEGEND_ROW: f64 = 24.0;
/// Legend rows shown at most; with more opponents the last row says how many are left out.
const LEGEND_ROWS: usize = 5;
/// Length of the line sample before a legend entry.
const SWATCH: f64 = 28.0;
/// Space between legend entries.
const ENTRY_GAP: f64 = 30.0;

/// The plotting rectangle in image pixels and the data range it shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// The rectangle: 0 minutes on the left, the axis' low end at the bottom, its high end at
    /// the top.
    pub rect: PlotRect,
    /// Minutes at the right edge.
    pub x_max: f64,
    /// The values at the bottom and the top.
    pub y_range: (f64, f64),
}

impl Frame {
    /// Image coordinates of `minutes` and `value` (a percentage on the score chart).
    pub fn map(&self, minutes: f64, value: f64) -> (f64, f64) {
        self.rect
            .map((minutes, value), (0.0, self.x_max), self.y_range)
    }
}

/// What the vertical axis shows.
#[derive(Clone, Copy, Debug)]
pub struct YAxis {
    /// The values at the bottom and the top.
    pub range: (f64, f64),
    /// The axis title.
    pub desc: &'static str,
    /// Where the dashed reference line lies.
    pub reference: f64,
    /// Labelled ticks.
    pub labels: usize,
    /// How a legend entry gives a series' last value: `score` → `(last score 80%)`.
    pub last: fn(f64) -> String,
}

/// The score chart's axis: 0 to 100%, a line at 50%.
pub const SCORE_AXIS: YAxis = YAxis {
    range: (0.0, 100.0),
    desc: "score (%)",
    reference: 50.0,
    labels: 11,
    last: |v| format!(" (last score {v:.0}%)"),
};

/// The axis of an Elo chart showing the values of `series` (bands included), with a line at
/// 0 (the anchor): a range of nice steps that holds them all and 0.
pub fn elo_axis(series: &[Series]) -> YAxis {
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for p in series.iter().flat_map(|s| &s.points) {
        for v in [p.low, p.score, p.high] {
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    let step = chart::nice_step(((hi - lo) / 8.0).max(10.0));
    let lo = (lo / step).floor() * step;
    let hi = ((hi / step).ceil() * step).max(lo + step);
    YAxis {
        range: (lo, hi),
        desc: "Elo against the anchor",
        reference: 0.0,
        labels: ((hi - lo) / step).round() as usize + 1,
        last: |v| format!(" (last {v:+.0})"),
    }
}

/// Evenly spaced "nice" tick values (steps of 1, 2 or 5 times a power of ten) from 0 up to at
/// least `max`, about `target` of them; and the number of decimals their labels need.
pub fn ticks(max: f64, target: usize) -> (Vec<f64>, usize) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let step = chart::nice_step(max / target.max(1) as f64);
    let n = (max / step - 1e-9).ceil().max(1.0) as usize;
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    ((0..=n).map(|i| i as f64 * step).collect(), decimals)
}

/// One legend entry: the colour, the marker and the text.
struct Entry {
    series: Option<usize>,
    text: String,
    width: f64,
}

/// Where the legend puts its entries: `(x, row)` of each slot, x from the image's left edge,
/// and how many entries are left out. Entries that fit on one line are centred on it; more
/// are set in aligned columns (as many as fit `width`) of at most `max_rows` rows. When they
/// do not all fit, the last slot is for a line that says how many are left out.
fn legend_layout(widths: &[f64], width: f64, max_rows: usize) -> (Vec<(f64, usize)>, usize) {
    let n = widths.len();
    let total: f64 = widths.iter().sum::<f64>() + ENTRY_GAP * n.saturating_sub(1) as f64;
    if total <= width {
        let mut x = (width - total) / 2.0;
        let slots = widths
            .iter()
            .map(|w| {
                let slot = (x, 0);
                x += w + ENTRY_GAP;
                slot
            })
            .collect();
        return (slots, 0);
    }
    let column = widths.iter().copied().fold(0.0, f64::max);
    let columns = (((width + ENTRY_GAP) / (column + ENTRY_GAP)).floor() as usize).max(1);
    let fits = columns * max_rows.max(1);
    let (slots, left_out) = if n > fits {
        (fits, n - (fits - 1))
    } else {
        (n, 0)
    };
    let used = columns.min(n) as f64 * (column + ENTRY_GAP) - ENTRY_GAP;
    let left = ((width - used) / 2.0).max(0.0);
    let slots = (0..slots)
        .map(|i| {
            (
                left + (i % columns) as f64 * (column + ENTRY_GAP),
                i / columns,
            )
        })
        .collect();
    (slots, left_out)
}

/// Draws the marker of the `i`-th series at `at`, `radius` final-image pixels, with a white
/// rim: a circle for the first ten series (one per colour), then squares, then triangles.
fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    i: usize,
    radius: f64,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
    CT::From: Clone,
{
    let c = color(i);
    for (r, style) in [(radius + 1.2, WHITE.filled()), (radius, c.filled())] {
        let r = px(r);
        match (i / PALETTE.len()) % 3 {
            0 => area.draw(&Circle::new(at.clone(), r, style))?,
            1 => area.draw(
                &(EmptyElement::at(at.clone()) + Rectangle::new([(-r, -r), (r, r)], style)),
            )?,
            _ => area.draw(&TriangleMarker::new(at.clone(), r + r / 3, style))?,
        }
    }
    Ok(())
}

/// Draws the score chart of `series` with `title` and `subtitle`.
pub fn draw(title: &str, subtitle: &str, series: &[Series]) -> anyhow::Result<Picture> {
    Ok(draw_framed(title, subtitle, series)?.0)
}

/// [`draw`], also returning where the data lies in the image.
pub fn draw_framed(
    title: &str,
    subtitle: &str,
    series: &[Series],
) -> anyhow::Result<(Picture, Frame)> {
    draw_with_axis(title, subtitle, series, &SCORE_AXIS)
}

/// Draws `series` (the points' `score`, `low` and `high` in the axis' unit) on `axis`, and
/// returns where the data lies in the image.
pub fn draw_with_axis(
    title: &str,
    subtitle: &str,
    series: &[Series],
    axis: &YAxis,
) -> anyhow::Result<(Picture, Frame)> {
    chart::render(WIDTH, HEIGHT, |root| {
        draw_on(root, title, subtitle, series, axis)
    })
}

fn draw_on<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
    series: &[Series],
    axis: &YAxis,
) -> anyhow::Result<Frame>
where
    DB::ErrorType: 'static,
{
    let width = f64::from(WIDTH);
    let height = f64::from(HEIGHT);
    root.fill(&WHITE)?;

    centred_text(root, title, &text(SANS, 30.0, INK), width, 10.0)?;
    centred_text(root, subtitle, &text(SANS, 17.0, MUTED), width, 50.0)?;

    // The legend: every opponent with its last score, under the plot.
    let legend_style = text(SANS, 17.0, INK);
    let mut entries: Vec<Entry> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let last = s
                .points
                .last()
                .map_or(String::new(), |p| (axis.last)(p.score));
            let label = fit(
                root,
                &format!("{}{last}", s.opponent),
                &legend_style,
                width - 120.0,
            );
            let w = SWATCH + 8.0 + text_width(root, &label, &legend_style);
            Entry {
                series: Some(i),
                text: label,
                width: w,
            }
        })
        .collect();
    let widths: Vec<f64> = entries.iter().map(|e| e.width).collect();
    let (slots, left_out) = legend_layout(&widths, width, LEGEND_ROWS);
    if left_out > 0 {
        // However many opponents there are, the plot keeps most of the image.
        entries.truncate(slots.len() - 1);
        let more = format!("… and {left_out} more");
        entries.push(Entry {
            series: None,
            width: text_width(root, &more, &legend_style),
            text: more,
        });
    }
    let rows = slots.iter().map(|s| s.1 + 1).max().unwrap_or(0);
    let legend_top = height - 10.0 - LEGEND_ROW * rows as f64;

    // The plot, between the subtitle and the legend.
    let x_max_raw = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.minutes))
        .fold(0.0f64, f64::max);
    let (x_ticks, x_decimals) = ticks(x_max_raw, 10);
    let x_max = x_ticks.last().copied().unwrap_or(1.0);
    let plot_area = root.margin(px(84.0), px(height - legend_top + 14.0), px(18.0), px(36.0));
    let mut chart = ChartBuilder::on(&plot_area)
        .x_label_area_size(px(52.0))
        .y_label_area_size(px(62.0))
        .build_cartesian_2d(0.0..x_max, axis.range.0..axis.range.1)?;
    let x_format = |v: &f64| format!("{v:.x_decimals$}");
    let y_format = |v: &f64| format!("{v:.0}");
    style_mesh(&mut chart.configure_mesh())
        .x_labels(x_ticks.len())
        .y_labels(axis.labels)
        .x_desc("training time (minutes)")
        .y_desc(axis.desc)
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .draw()?;

    reference_line(&mut chart, (0.0, axis.reference), (x_max, axis.reference))?;
    close_frame(&mut chart, (0.0, x_max), axis.range)?;

    // Bands first, so every curve lies on top of every band.
    for (i, s) in series.iter().enumerate() {
        let c = color(i);
        if let [p] = s.points[..] {
            chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                p.minutes,
                p.low,
                p.score,
                p.high,
                c.stroke_width(px(1.5) as u32),
                px(10.0) as u32,
            )))?;
            continue;
        }
        let band: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|p| (p.minutes, p.high))
            .chain(s.points.iter().rev().map(|p| (p.minutes, p.low)))
            .collect();
        chart.draw_series(std::iter::once(Polygon::new(band, c.mix(0.16).filled())))?;
    }
    // Markers shrink when the points crowd each other.
    let frame = Frame {
        rect: PlotRect::of(chart.plotting_area()),
        x_max,
        y_range: axis.range,
    };
    let most = series
        .iter()
        .map(|s| s.points.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let spacing = (frame.rect.right - frame.rect.left) / most as f64;
    let marker = (spacing / 4.0).clamp(1.6, 3.8);
    for (i, s) in series.iter().enumerate() {
        let c = color(i);
        let points: Vec<(f64, f64)> = s.points.iter().map(|p| (p.minutes, p.score)).collect();
        chart.draw_series(LineSeries::new(
            points.iter().copied(),
            c.stroke_width(px(2.5) as u32),
        ))?;
        chart.draw_series(
            points
                .iter()
                .map(|&p| Circle::new(p, px(marker + 1.2), WHITE.filled())),
        )?;
        chart.draw_series(
            points
                .iter()
                .map(|&p| Circle::new(p, px(marker), c.filled())),
        )?;
    }

    // The legend.
    for (e, &(x, row)) in entries.iter().zip(&slots) {
        let y = legend_top + row as f64 * LEGEND_ROW;
        let mid = y + 17.0 * 0.55;
        let Some(i) = e.series else {
            root.draw_text(&e.text, &text(SANS, 17.0, MUTED), (px(x), px(y)))?;
            continue;
        };
        root.draw(&PathElement::new(
            [(px(x), px(mid)), (px(x + SWATCH), px(mid))],
            color(i).stroke_width(px(2.5) as u32),
        ))?;
        draw_marker(root, (px(x + SWATCH / 2.0), px(mid)), i, 3.8)?;
        root.draw_text(&e.text, &legend_style, (px(x + SWATCH + 8.0), px(y)))?;
    }
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_report::Point;

    fn pt(minutes: f64, score: f64) -> Point {
        Point {
            minutes,
            score,
            low: (score - 15.0).max(0.0),
            high: (score + 15.0).min(100.0),
        }
    }

    fn two_series() -> Vec<Series> {
        vec![
            Series {
                opponent: "alphabeta:depth=2".into(),
                points: vec![pt(0.2, 40.0), pt(0.5, 70.0), pt(0.9, 95.0)],
            },
            Series {
                opponent: "mcts:rollouts,sims=200".into(),
                points: vec![pt(0.2, 20.0), pt(0.5, 35.0), pt(0.9, 55.0)],
            },
        ]
    }

    /// How far apart two colours are (largest channel difference).
    fn distance(a: [u8; 3], b: RGBColor) -> u8 {
        let b = [b.0, b.1, b.2];
        (0..3).map(|k| a[k].abs_diff(b[k])).max().unwrap_or(0)
    }

    /// Pixels within `tol` of `c`.
    fn count(p: &Picture, c: RGBColor, tol: u8) -> usize {
        p.rgb
            .chunks(3)
            .filter(|px| distance([px[0], px[1], px[2]], c) <= tol)
            .count()
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(10.0, 5), (vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0], 0));
        let (t, d) = ticks(0.71, 8);
        assert_eq!(d, 1);
        assert_eq!(t.len(), 9);
        assert!((t[8] - 0.8).abs() < 1e-12);
        let (t, d) = ticks(63.0, 8);
        assert_eq!((t[1], d), (10.0, 0));
        assert!(*t.last().expect("ticks") >= 63.0);
        assert_eq!(ticks(0.0, 8).0.last().copied(), Some(1.0));
        assert_eq!(ticks(f64::NAN, 8).0.last().copied(), Some(1.0));
    }

    #[test]
    fn legend_fits_in_one_line_or_in_columns() {
        // Few entries: one centred line.
        let (slots, left_out) = legend_layout(&[200.0, 300.0], 1000.0, 5);
        assert_eq!(left_out, 0);
        assert_eq!(slots, vec![(235.0, 0), (465.0, 0)]);
        // Many: aligned columns, row by row.
        let widths = [300.0, 250.0, 280.0, 300.0, 120.0, 310.0, 200.0];
        let (slots, left_out) = legend_layout(&widths, 1000.0, 5);
        assert_eq!(left_out, 0);
        assert_eq!(slots.len(), 7);
        let columns: Vec<f64> = slots.iter().filter(|s| s.1 == 0).map(|s| s.0).collect();
        assert_eq!(columns.len(), 3);
        assert!(slots.iter().all(|s| columns.contains(&s.0)));
        assert_eq!(slots.last().map(|s| s.1), Some(2));
        assert!(columns[2] + 310.0 <= 1000.0 && columns[0] >= 0.0);
        // Too many: the last slot is for "… and K more".
        let (slots, left_out) = legend_layout(&[300.0; 40], 1000.0, 5);
        assert_eq!((slots.len(), left_out), (15, 26));
    }

    #[test]
    fn chart_draws_curves_markers_and_text() {
        let series = two_series();
        let (c, f) =
            draw_framed("quick1", "mcts:sims=100 vs. each opponent", &series).expect("draws");
        assert_eq!((c.width, c.height), (WIDTH, HEIGHT));
        assert!((f.x_max - 0.9).abs() < 1e-9, "{}", f.x_max);
        let r = f.rect;
        assert!(r.left > 40.0 && r.right < f64::from(WIDTH) && r.top > 40.0);
        assert!(r.bottom < f64::from(HEIGHT) - 80.0 && r.bottom - r.top > 300.0);
        let at = |(x, y): (f64, f64)| c.pixel(x.round() as i64, y.round() as i64);
        for (i, s) in series.iter().enumerate() {
            assert!(count(&c, color(i), 10) > 300, "colour {i}");
            // Markers sit on the data points, and the line runs between them.
            for p in &s.points {
                let got = at(f.map(p.minutes, p.score)).expect("inside");
                assert!(distance(got, color(i)) <= 10, "{p:?}: {got:?}");
            }
            let (a, b) = (s.points[0], s.points[1]);
            let mid = f.map((a.minutes + b.minutes) / 2.0, (a.score + b.score) / 2.0);
            let got = at(mid).expect("inside");
            assert!(distance(got, color(i)) <= 40, "{got:?}");
            // Inside the band but off the line: a light tint of the colour.
            let tint = at(f.map(a.minutes + 0.01, a.score + 8.0)).expect("inside");
            assert!(
                tint != [255, 255, 255] && distance(tint, color(i)) > 60,
                "{tint:?}"
            );
            assert!(tint.iter().all(|&v| v > 150), "{tint:?}");
        }
        // Left of the data (before the first evaluation) the plot is only grid and white.
        let empty = at(f.map(0.13, 85.0)).expect("inside");
        assert!(empty.iter().all(|&v| v >= 220), "{empty:?}");
        // Title, tick labels and axis titles are dark text.
        let dark = c
            .rgb
            .chunks(3)
            .filter(|p| p.iter().all(|&v| v < 90))
            .count();
        assert!(dark > 1500, "{dark}");
        // The 50% reference line: grey pixels near it, left of the data.
        let (x, y) = f.map(0.05, 50.0);
        assert!((-2..=2).any(|d| {
            (0..30).any(|dx| {
                c.pixel(x as i64 + dx, y as i64 + d)
                    .is_some_and(|p| distance(p, chart::REFERENCE) <= 40)
            })
        }));
        // The corners stay white.
        assert_eq!(c.pixel(0, 0), Some([255, 255, 255]));
        assert_eq!(
            c.pixel(i64::from(WIDTH) - 1, i64::from(HEIGHT) - 1),
            Some([255, 255, 255])
        );
    }

    #[test]
    fn crowded_charts_still_draw() {
        let series: Vec<Series> = (0..15)
            .map(|k| Series {
                opponent: format!("alphabeta:depth={k}"),
                points: (0..300)
                    .map(|i| pt(f64::from(i) * 0.2, f64::from((i * 7 + k * 13) % 101)))
                    .collect(),
            })
            .collect();
        let (c, f) = draw_framed("many", "", &series).expect("draws");
        assert_eq!((c.width, c.height), (WIDTH, HEIGHT));
        assert!(f.rect.bottom - f.rect.top > 250.0, "{f:?}");
        assert!((0..10).all(|i| count(&c, color(i), 10) > 50));
    }

    #[test]
    fn single_point_series_get_error_bars() {
        let series = vec![Series {
            opponent: "random".into(),
            points: vec![pt(0.0, 50.0)],
        }];
        let c = draw("one", "", &series).expect("draws");
        assert!(count(&c, color(0), 10) > 100);
    }
}
