//! The chart: score (%) against training time (minutes), one coloured curve with markers and
//! a light 95% band per opponent, a dashed 50% line, ticks with labels, axis titles, a title
//! and a legend under the plot.

use super::Series;
use super::canvas::{BLACK, Canvas, Rgb, WHITE};
use super::font::{self, CELL_HEIGHT, GLYPH_HEIGHT};

/// Width of the image in pixels.
pub const WIDTH: u32 = 1000;
/// Height of the image in pixels.
pub const HEIGHT: u32 = 600;

/// Scale of ordinary text (font pixels to image pixels).
const TEXT: u32 = 2;
/// Scale of the title.
const TITLE: u32 = 3;
/// Height of a line of ordinary text, descenders and spacing included.
const LINE: i64 = (CELL_HEIGHT * TEXT) as i64 + 6;

const GRID: Rgb = [228, 228, 228];
const FRAME: Rgb = [90, 90, 90];
const MUTED: Rgb = [95, 95, 95];
const REFERENCE: Rgb = [130, 130, 130];

/// Curve colours, one per opponent in order (repeating after ten).
const PALETTE: [Rgb; 10] = [
    [31, 119, 180],
    [214, 39, 40],
    [44, 160, 44],
    [255, 127, 14],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [23, 190, 207],
    [188, 189, 34],
    [127, 127, 127],
];

/// The colour of the `i`-th curve.
pub fn color(i: usize) -> Rgb {
    PALETTE[i % PALETTE.len()]
}

/// The plotting rectangle in image pixels and the data range it shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// Left edge (x of 0 minutes).
    pub left: f64,
    /// Right edge (x of `x_max` minutes).
    pub right: f64,
    /// Top edge (y of 100%).
    pub top: f64,
    /// Bottom edge (y of 0%).
    pub bottom: f64,
    /// Minutes at the right edge.
    pub x_max: f64,
}

impl Frame {
    /// Image coordinates of `minutes` and `percent`.
    pub fn map(&self, minutes: f64, percent: f64) -> (f64, f64) {
        let x = self.left + (minutes / self.x_max) * (self.right - self.left);
        let y = self.bottom - (percent / 100.0) * (self.bottom - self.top);
        (x, y)
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
    let rough = max / target.max(1) as f64;
    let magnitude = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= rough * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude);
    let n = (max / step - 1e-9).ceil().max(1.0) as usize;
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    ((0..=n).map(|i| i as f64 * step).collect(), decimals)
}

/// One legend entry: the colour and the text.
struct Entry {
    color: Rgb,
    text: String,
}

const SWATCH: i64 = 28;
const ENTRY_GAP: i64 = 36;

fn entry_width(e: &Entry) -> i64 {
    SWATCH + 8 + i64::from(font::text_width(&e.text, TEXT))
}

/// Lays the legend entries out in rows that fit `width`: the entries of each row.
fn legend_rows(entries: &[Entry], width: i64) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut used = 0;
    for (i, e) in entries.iter().enumerate() {
        let w = entry_width(e);
        match rows.last_mut() {
            Some(row) if used + ENTRY_GAP + w <= width => {
                row.push(i);
                used += ENTRY_GAP + w;
            }
            _ => {
                rows.push(vec![i]);
                used = w;
            }
        }
    }
    rows
}

/// Shortens `text` with a trailing `..` so it is at most `width` pixels wide at `scale`.
fn fit(text: &str, width: u32, scale: u32) -> String {
    if font::text_width(text, scale) <= width {
        return text.to_string();
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let candidate: String = chars.iter().collect::<String>() + "..";
        if font::text_width(&candidate, scale) <= width {
            return candidate;
        }
    }
    String::new()
}

fn centered_text(canvas: &mut Canvas, center_x: f64, y: i64, text: &str, scale: u32, c: Rgb) {
    let w = f64::from(font::text_width(text, scale));
    canvas.text((center_x - w / 2.0).round() as i64, y, text, scale, c);
}

/// Draws the chart of `series` with `title` and `subtitle` on a new white canvas.
pub fn draw(title: &str, subtitle: &str, series: &[Series]) -> Canvas {
    draw_framed(title, subtitle, series).0
}

/// [`draw`], also returning where the data lies in the image.
pub fn draw_framed(title: &str, subtitle: &str, series: &[Series]) -> (Canvas, Frame) {
    let mut canvas = Canvas::new(WIDTH, HEIGHT, WHITE);
    let width = i64::from(WIDTH);
    let height = i64::from(HEIGHT);

    // Title and subtitle, centred.
    let title = fit(title, WIDTH - 40, TITLE);
    centered_text(&mut canvas, width as f64 / 2.0, 14, &title, TITLE, BLACK);
    let subtitle = fit(subtitle, WIDTH - 40, TEXT);
    centered_text(&mut canvas, width as f64 / 2.0, 52, &subtitle, TEXT, MUTED);

    // Legend rows under everything else.
    let entries: Vec<Entry> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let last = s
                .points
                .last()
                .map_or(String::new(), |p| format!(" (last score {:.0}%)", p.score));
            Entry {
                color: color(i),
                text: fit(&format!("{}{last}", s.opponent), WIDTH - 120, TEXT),
            }
        })
        .collect();
    let rows = legend_rows(&entries, width - 80);
    // However many opponents there are, the plot keeps most of the image; legend rows that do
    // not fit then run off the bottom edge.
    let legend_top = (height - 14 - LINE * rows.len() as i64).max(height - 14 - LINE * 4);

    // The plotting rectangle.
    let cap = i64::from(GLYPH_HEIGHT * TEXT);
    let x_title_y = legend_top - 14 - LINE;
    let x_labels_y = x_title_y - 6 - LINE;
    let x_max_raw = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.minutes))
        .fold(0.0f64, f64::max);
    let (x_ticks, x_decimals) = ticks(x_max_raw, 10);
    let x_max = x_ticks.last().copied().unwrap_or(1.0);
    let frame = Frame {
        left: 92.0,
        right: (width - 36) as f64,
        top: 92.0,
        bottom: (x_labels_y - 10) as f64,
        x_max,
    };

    // Grid, reference line and frame.
    for pct in (0..=100).step_by(10) {
        let (_, y) = frame.map(0.0, f64::from(pct));
        canvas.line((frame.left, y), (frame.right, y), 1.0, GRID);
        let label = pct.to_string();
        let w = i64::from(font::text_width(&label, TEXT));
        canvas.text(
            frame.left as i64 - 10 - w,
            y.round() as i64 - cap / 2,
            &label,
            TEXT,
            BLACK,
        );
        canvas.line((frame.left - 6.0, y), (frame.left, y), 1.5, FRAME);
    }
    for &t in &x_ticks {
        let (x, _) = frame.map(t, 0.0);
        canvas.line((x, frame.top), (x, frame.bottom), 1.0, GRID);
        canvas.line((x, frame.bottom), (x, frame.bottom + 6.0), 1.5, FRAME);
        let label = format!("{t:.x_decimals$}");
        centered_text(&mut canvas, x, x_labels_y, &label, TEXT, BLACK);
    }
    let (_, half) = frame.map(0.0, 50.0);
    canvas.dashed_line(
        (frame.left, half),
        (frame.right, half),
        1.5,
        (8.0, 6.0),
        REFERENCE,
    );
    canvas.line(
        (frame.left, frame.top),
        (frame.left, frame.bottom),
        1.5,
        FRAME,
    );
    canvas.line(
        (frame.left, frame.bottom),
        (frame.right, frame.bottom),
        1.5,
        FRAME,
    );
    canvas.line(
        (frame.left, frame.top),
        (frame.right, frame.top),
        1.0,
        FRAME,
    );
    canvas.line(
        (frame.right, frame.top),
        (frame.right, frame.bottom),
        1.0,
        FRAME,
    );

    // Axis titles.
    centered_text(
        &mut canvas,
        (frame.left + frame.right) / 2.0,
        x_title_y,
        "training time (minutes)",
        TEXT,
        BLACK,
    );
    let y_title = "score (%)";
    let y_title_w = f64::from(font::text_width(y_title, TEXT));
    canvas.text_up(
        16,
        ((frame.top + frame.bottom) / 2.0 + y_title_w / 2.0).round() as i64,
        y_title,
        TEXT,
        BLACK,
    );

    // Bands first, so every curve lies on top of every band.
    for (i, s) in series.iter().enumerate() {
        draw_band(&mut canvas, &frame, s, color(i));
    }
    // Markers shrink when the points crowd each other.
    let most = series
        .iter()
        .map(|s| s.points.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let spacing = (frame.right - frame.left) / most as f64;
    let marker = (spacing / 4.0).clamp(1.6, 3.8);
    for (i, s) in series.iter().enumerate() {
        let points: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|p| frame.map(p.minutes, p.score))
            .collect();
        canvas.polyline(&points, 2.5, color(i));
        for &p in &points {
            canvas.fill_circle(p, marker + 1.2, WHITE);
            canvas.fill_circle(p, marker, color(i));
        }
    }

    // Legend.
    for (r, row) in rows.iter().enumerate() {
        let total: i64 = row.iter().map(|&i| entry_width(&entries[i])).sum::<i64>()
            + ENTRY_GAP * (row.len() as i64 - 1);
        let mut x = (width - total) / 2;
        let y = legend_top + r as i64 * LINE;
        for &i in row {
            let e = &entries[i];
            let mid = (y + cap / 2) as f64;
            canvas.line((x as f64, mid), ((x + SWATCH) as f64, mid), 2.5, e.color);
            canvas.fill_circle(((x + SWATCH / 2) as f64, mid), 3.8, e.color);
            canvas.text(x + SWATCH + 8, y, &e.text, TEXT, BLACK);
            x += entry_width(e) + ENTRY_GAP;
        }
    }
    (canvas, frame)
}

/// The 95% band of a curve: a light fill between the interval ends, or an error bar where the
/// curve has a single point.
fn draw_band(canvas: &mut Canvas, frame: &Frame, s: &Series, c: Rgb) {
    let edges: Vec<(f64, f64, f64)> = s
        .points
        .iter()
        .map(|p| {
            let (x, lo) = frame.map(p.minutes, p.low);
            let (_, hi) = frame.map(p.minutes, p.high);
            (x, lo, hi)
        })
        .collect();
    if let [(x, lo, hi)] = edges[..] {
        canvas.line((x, lo), (x, hi), 1.5, c);
        canvas.line((x - 5.0, lo), (x + 5.0, lo), 1.5, c);
        canvas.line((x - 5.0, hi), (x + 5.0, hi), 1.5, c);
        return;
    }
    for pair in edges.windows(2) {
        canvas.fill_band(pair[0], pair[1], c, 0.16);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Point;
    use super::*;

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
    fn frame_maps_corners() {
        let f = Frame {
            left: 100.0,
            right: 900.0,
            top: 50.0,
            bottom: 450.0,
            x_max: 4.0,
        };
        assert_eq!(f.map(0.0, 0.0), (100.0, 450.0));
        assert_eq!(f.map(4.0, 100.0), (900.0, 50.0));
        assert_eq!(f.map(2.0, 50.0), (500.0, 250.0));
    }

    #[test]
    fn legend_wraps_to_fit() {
        let entries: Vec<Entry> = (0..6)
            .map(|i| Entry {
                color: color(i),
                text: format!("alphabeta:depth={i}"),
            })
            .collect();
        let rows = legend_rows(&entries, 900);
        assert!(rows.len() >= 2);
        assert_eq!(rows.iter().map(Vec::len).sum::<usize>(), 6);
        for row in &rows {
            let w: i64 = row.iter().map(|&i| entry_width(&entries[i])).sum::<i64>()
                + ENTRY_GAP * (row.len() as i64 - 1);
            assert!(w <= 900);
        }
    }

    #[test]
    fn long_text_is_shortened() {
        assert_eq!(fit("abc", 100, 2), "abc");
        let long = "x".repeat(200);
        let short = fit(&long, 300, 2);
        assert!(short.ends_with("..") && font::text_width(&short, 2) <= 300);
    }

    #[test]
    fn chart_draws_curves_markers_and_text() {
        let series = two_series();
        let (c, f) = draw_framed("quick1", "mcts:sims=100 vs. each opponent", &series);
        assert_eq!((c.width(), c.height()), (WIDTH, HEIGHT));
        assert!((f.x_max - 0.9).abs() < 1e-9, "{}", f.x_max);
        assert!(f.left > 40.0 && f.right < f64::from(WIDTH) && f.top > 40.0);
        assert!(f.bottom < f64::from(HEIGHT) - 80.0 && f.bottom - f.top > 300.0);
        let at = |(x, y): (f64, f64)| c.pixel(x as i64, y as i64);
        for (i, s) in series.iter().enumerate() {
            assert!(c.count(color(i)) > 300, "colour {i}: {}", c.count(color(i)));
            // Markers sit on the data points, and the line runs between them.
            for p in &s.points {
                assert_eq!(at(f.map(p.minutes, p.score)), Some(color(i)), "{p:?}");
            }
            let (a, b) = (s.points[0], s.points[1]);
            let mid = f.map((a.minutes + b.minutes) / 2.0, (a.score + b.score) / 2.0);
            assert_eq!(at(mid), Some(color(i)));
            // Inside the band but off the line: a light tint of the colour.
            let tint = at(f.map(a.minutes + 0.01, a.score + 7.0)).expect("inside");
            assert!(tint != WHITE && tint != color(i), "{tint:?}");
            assert!(tint.iter().all(|&v| v > 150), "{tint:?}");
        }
        // Left of the data (before the first evaluation) the plot is only grid and white.
        assert_eq!(at(f.map(0.15, 85.0)), Some(WHITE));
        // Title, tick labels and axis titles are black text.
        assert!(c.count(BLACK) > 2000);
        // The 50% reference line.
        let (x, y) = f.map(0.05, 50.0);
        assert!((-1..=1).any(|d| c.pixel(x as i64, y as i64 + d) != Some(WHITE)));
        // The corners stay white.
        assert_eq!(c.pixel(0, 0), Some(WHITE));
        assert_eq!(c.pixel(WIDTH as i64 - 1, HEIGHT as i64 - 1), Some(WHITE));
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
        let (c, f) = draw_framed("many", "", &series);
        assert_eq!((c.width(), c.height()), (WIDTH, HEIGHT));
        assert!(f.bottom - f.top > 250.0, "{f:?}");
        assert!((0..10).all(|i| c.count(color(i)) > 50));
    }

    #[test]
    fn single_point_series_get_error_bars() {
        let series = vec![Series {
            opponent: "random".into(),
            points: vec![pt(0.0, 50.0)],
        }];
        let c = draw("one", "", &series);
        assert!(c.count(color(0)) > 100);
    }
}
