//! The ladder chart of `oware ladder`: one row per player from the strongest down, its rating
//! as a dot with the 95% interval as an error bar, the value written beside it, and a dashed
//! line at the anchor's 0.

use crate::chart::{
    self, INK, LABEL, MUTED, Picture, PlotRect, REFERENCE, SANS, centred_text, close_frame, color,
    fit, nice_step, px, reference_line, style_mesh, text, text_width,
};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Width of the image in pixels.
pub const WIDTH: u32 = 1000;
/// Height of one player's row in pixels.
const ROW: f64 = 34.0;
/// Height of everything but the rows: title, subtitle, axis.
const CHROME: f64 = 170.0;

/// One player on the chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The player's name (its spec).
    pub label: String,
    /// Elo relative to the anchor.
    pub rating: f64,
    /// Half-width of the 95% interval (0 for the anchor).
    pub ci95: f64,
    /// Whether this is the anchor.
    pub anchor: bool,
}

/// Where the chart put the data, in image pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// The plot's rectangle.
    pub rect: PlotRect,
    /// Elo at the left edge.
    pub x_min: f64,
    /// Elo at the right edge.
    pub x_max: f64,
}

impl Frame {
    /// Image coordinates of `elo` on row `row` of `rows` (0 at the top).
    pub fn map(&self, elo: f64, row: usize, rows: usize) -> (f64, f64) {
        let rows = rows.max(1) as f64;
        let y = rows - row as f64 - 0.5;
        self.rect
            .map((elo, y), (self.x_min, self.x_max), (0.0, rows))
    }
}

/// The height of the image for `players` rows.
pub fn height(players: usize) -> u32 {
    (CHROME + ROW * players.max(1) as f64).round() as u32
}

/// Draws `bars` (in any order; drawn from the highest rating down) with a title and subtitle.
pub fn draw(title: &str, subtitle: &str, bars: &[Bar]) -> anyhow::Result<Picture> {
    Ok(draw_framed(title, subtitle, bars)?.0)
}

/// [`draw`], also returning where the data lies (rows in the drawn, sorted order).
pub fn draw_framed(title: &str, subtitle: &str, bars: &[Bar]) -> anyhow::Result<(Picture, Frame)> {
    let mut sorted: Vec<&Bar> = bars.iter().collect();
    sorted.sort_by(|a, b| b.rating.total_cmp(&a.rating));
    chart::render(WIDTH, height(bars.len()), |root| {
        draw_on(root, title, subtitle, &sorted)
    })
}

/// The Elo range shown: every interval with a margin (a wide one on the right, for the values),
/// rounded out to nice steps, 0 included.
fn x_range(bars: &[&Bar]) -> (f64, f64) {
    let lo = bars
        .iter()
        .map(|b| b.rating - b.ci95)
        .fold(0.0f64, f64::min);
    let hi = bars
        .iter()
        .map(|b| b.rating + b.ci95)
        .fold(0.0f64, f64::max);
    // Room on the right for the values written beside the bars.
    let span = (hi - lo).max(1.0);
    let (lo, hi) = (lo - 0.04 * span, hi + 0.2 * span);
    let step = nice_step((hi - lo) / 8.0);
    ((lo / step).floor() * step, (hi / step).ceil() * step)
}

fn draw_on<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
    bars: &[&Bar],
) -> anyhow::Result<Frame>
where
    DB::ErrorType: 'static,
{
    let width = f64::from(WIDTH);
    root.fill(&WHITE)?;
    centred_text(root, title, &text(SANS, 28.0, INK), width, 10.0)?;
    centred_text(root, subtitle, &text(SANS, 16.0, MUTED), width, 48.0)?;

    // Player names on the left, as wide as the longest needs (at most 40% of the image).
    let label_style = text(SANS, LABEL, INK);
    let names: Vec<String> = bars
        .iter()
        .map(|b| {
            let name = if b.anchor {
                format!("{} (anchor)", b.label)
            } else {
                b.label.clone()
            };
            fit(root, &name, &label_style, width * 0.4)
        })
        .collect();
    let name_width = names
        .iter()
        .map(|n| text_width(root, n, &label_style))
        .fold(60.0, f64::max);

    let (x_min, x_max) = x_range(bars);
    let rows = bars.len().max(1);
    let plot_area = root.margin(px(80.0), px(10.0), px(20.0), px(30.0));
    let mut chart = ChartBuilder::on(&plot_area)
        .x_label_area_size(px(52.0))
        .y_label_area_size(px(name_width + 16.0))
        .build_cartesian_2d(x_min..x_max, 0.0..rows as f64)?;
    let x_format = |v: &f64| {
        if v.abs() < 0.5 {
            "0".to_string()
        } else {
            format!("{v:+.0}")
        }
    };
    style_mesh(&mut chart.configure_mesh())
        .x_labels(9)
        .y_labels(0)
        .disable_y_mesh()
        .x_desc("rating (Elo), with 95% intervals")
        .x_label_formatter(&x_format)
        .draw()?;
    close_frame(&mut chart, (x_min, x_max), (0.0, rows as f64))?;
    reference_line(&mut chart, (0.0, 0.0), (0.0, rows as f64))?;

    let frame = Frame {
        rect: PlotRect::of(chart.plotting_area()),
        x_min,
        x_max,
    };
    let value_style = text(SANS, 14.0, MUTED);
    for (row, (bar, name)) in bars.iter().zip(&names).enumerate() {
        // Rows from the top: row 0 is the highest y value.
        let y = rows as f64 - row as f64 - 0.5;
        let c = color(0);
        if bar.ci95 > 0.0 {
            chart.draw_series(std::iter::once(ErrorBar::new_horizontal(
                y,
                bar.rating - bar.ci95,
                bar.rating,
                bar.rating + bar.ci95,
                c.stroke_width(px(2.0) as u32),
                px(12.0) as u32,
            )))?;
        }
        let marker = if bar.anchor { REFERENCE } else { c };
        chart.draw_series([
            Circle::new((bar.rating, y), px(6.0), WHITE.filled()),
            Circle::new((bar.rating, y), px(4.8), marker.filled()),
        ])?;
        // The name, right-aligned against the plot, and the value above the dot.
        let (_, px_y) = frame.map(bar.rating, row, rows);
        let w = text_width(root, name, &label_style);
        root.draw_text(
            name,
            &label_style,
            (px(frame.rect.left - 12.0 - w), px(px_y - LABEL * 0.3)),
        )?;
        let value = if bar.anchor {
            "0".to_string()
        } else {
            format!("{:+.0} ± {:.0}", bar.rating, bar.ci95)
        };
        // The value right of the bar, or left of it where the plot ends.
        let vw = text_width(root, &value, &value_style);
        let (left_end, _) = frame.map(bar.rating - bar.ci95, row, rows);
        let (right_end, _) = frame.map(bar.rating + bar.ci95, row, rows);
        let vx = if right_end + 12.0 + vw <= frame.rect.right - 4.0 {
            right_end + 12.0
        } else {
            (left_end - 12.0 - vw).max(frame.rect.left + 4.0)
        };
        // On a white patch, so grid and anchor lines do not run through the digits.
        root.draw(&Rectangle::new(
            [
                (px(vx - 3.0), px(px_y - 9.0)),
                (px(vx + vw + 3.0), px(px_y + 9.0)),
            ],
            WHITE.filled(),
        ))?;
        root.draw_text(&value, &value_style, (px(vx), px(px_y - 14.0 * 0.3)))?;
    }
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars() -> Vec<Bar> {
        vec![
            Bar {
                label: "random".into(),
                rating: 0.0,
                ci95: 0.0,
                anchor: true,
            },
            Bar {
                label: "alphabeta:depth=3".into(),
                rating: 610.0,
                ci95: 95.0,
                anchor: false,
            },
            Bar {
                label: "alphabeta:depth=1".into(),
                rating: 290.0,
                ci95: 70.0,
                anchor: false,
            },
        ]
    }

    #[test]
    fn the_range_holds_every_interval_and_zero() {
        let b = bars();
        let refs: Vec<&Bar> = b.iter().collect();
        let (lo, hi) = x_range(&refs);
        assert!(lo < 0.0 && hi > 705.0, "{lo} {hi}");
        assert_eq!(lo % 100.0, 0.0);
        let below = [Bar {
            label: "x".into(),
            rating: -300.0,
            ci95: 50.0,
            anchor: false,
        }];
        let refs: Vec<&Bar> = below.iter().collect();
        let (lo, hi) = x_range(&refs);
        assert!(lo < -350.0 && hi >= 0.0, "{lo} {hi}");
    }

    #[test]
    fn draws_a_row_per_player_from_the_top() {
        let (pic, f) = draw_framed("ladder", "3 players", &bars()).expect("draws");
        assert_eq!((pic.width, pic.height), (WIDTH, height(3)));
        // Sorted: depth=3 on row 0, depth=1 on row 1, the anchor on row 2.
        let near = |(x, y): (f64, f64), c: RGBColor| {
            (-1..=1).any(|d| {
                pic.pixel(x.round() as i64 + d, y.round() as i64)
                    .is_some_and(|p| (0..3).all(|k| p[k].abs_diff([c.0, c.1, c.2][k]) <= 12))
            })
        };
        assert!(near(f.map(610.0, 0, 3), color(0)));
        assert!(near(f.map(290.0, 1, 3), color(0)));
        assert!(near(f.map(0.0, 2, 3), REFERENCE));
        // The error bars reach their interval's ends, not beyond.
        let (x_hi, y) = f.map(610.0 + 95.0, 0, 3);
        assert!(near((x_hi, y), color(0)));
        assert!(!near((x_hi + 8.0, y), color(0)));
        // Names and numbers are dark text left of the plot.
        let dark = (0..pic.height as i64)
            .flat_map(|y| (0..f.rect.left as i64).map(move |x| (x, y)))
            .filter(|&(x, y)| pic.pixel(x, y).is_some_and(|p| p.iter().all(|&v| v < 90)))
            .count();
        assert!(dark > 300, "{dark}");
        assert_eq!(pic.pixel(0, 0), Some([255, 255, 255]));
    }

    #[test]
    fn many_players_make_a_taller_chart() {
        let many: Vec<Bar> = (0..30)
            .map(|i| Bar {
                label: format!("alphabeta:depth={i}"),
                rating: f64::from(i) * 40.0,
                ci95: 30.0,
                anchor: i == 0,
            })
            .collect();
        let pic = draw("ladder", "", &many).expect("draws");
        assert_eq!(pic.height, height(30));
        assert!(pic.height > 1000);
    }
}
