//! What every chart of the project shares: the embedded font, the palette and the drawing of
//! a picture into PNG bytes.
//!
//! Charts are drawn with `plotters` on an in-memory RGB bitmap at [`SUPERSAMPLE`] times the
//! final size and scaled down, which smooths the lines and circles that the bitmap backend
//! draws without anti-aliasing. Text uses the Ubuntu Light font that `epaint_default_fonts`
//! (egui's fonts crate) ships as bytes, registered with `plotters`' `ab_glyph` support, so no
//! system font or font library is needed. (A proportional font: `plotters` places each glyph
//! at its outline's left edge, which leaves uneven gaps in a monospaced one.)

use anyhow::{Context, anyhow};
use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::sync::OnceLock;

/// The font family of all text (Ubuntu Light).
pub const SANS: &str = "oware-sans";

/// Charts are drawn this many times larger, then scaled down to the asked size.
pub const SUPERSAMPLE: u32 = 2;

/// Size of tick labels and other small text, in final-image pixels.
pub const LABEL: f64 = 16.0;

/// Black text.
pub const INK: RGBColor = RGBColor(20, 20, 20);
/// Grey text (subtitles).
pub const MUTED: RGBColor = RGBColor(95, 95, 95);
/// The grid.
pub const GRID: RGBColor = RGBColor(226, 226, 226);
/// The frame around the plot.
pub const FRAME: RGBColor = RGBColor(90, 90, 90);
/// Reference lines (50%, the anchor).
pub const REFERENCE: RGBColor = RGBColor(128, 128, 128);

/// Curve colours, one per series in order (repeating after ten).
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(127, 127, 127),
];

/// The colour of the `i`-th series.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Registers the font once per process.
fn fonts() -> anyhow::Result<()> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let ubuntu = epaint_default_fonts::UBUNTU_LIGHT;
        plotters::style::register_font(SANS, FontStyle::Normal, ubuntu)
            .map_err(|_| "the embedded Ubuntu Light font does not parse".to_string())
    })
    .clone()
    .map_err(|e| anyhow!(e))
}

/// A text style of `family` at `size` pixels of the final image (scaled for supersampling).
pub fn text(family: &'static str, size: f64, color: RGBColor) -> TextStyle<'static> {
    (family, size * f64::from(SUPERSAMPLE))
        .into_font()
        .color(&color)
}

/// A length in pixels of the final image, in pixels of the supersampled drawing.
pub fn px(v: f64) -> i32 {
    (v * f64::from(SUPERSAMPLE)).round() as i32
}

/// The width in final-image pixels of `s` set in `style`.
pub fn text_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &str,
    style: &TextStyle<'_>,
) -> f64 {
    area.estimate_text_size(s, style)
        .map_or(0.0, |(w, _)| f64::from(w) / f64::from(SUPERSAMPLE))
}

/// Shortens `s` with a trailing `…` until it is at most `width` final-image pixels wide in
/// `style` (kept whole when it fits).
pub fn fit<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &str,
    style: &TextStyle<'_>,
    width: f64,
) -> String {
    if text_width(area, s, style) <= width {
        return s.to_string();
    }
    let mut chars: Vec<char> = s.chars().collect();
    while chars.pop().is_some() {
        let candidate: String = chars.iter().collect::<String>() + "…";
        if text_width(area, &candidate, style) <= width {
            return candidate;
        }
    }
    String::new()
}

/// Draws `s` centred across the image (`width` final-image pixels), its top at `y`, shortened
/// to fit with a margin of 20 pixels on each side.
pub fn centred_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &str,
    style: &TextStyle<'_>,
    width: f64,
    y: f64,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let s = fit(area, s, style, width - 40.0);
    let x = (width - text_width(area, &s, style)) / 2.0;
    area.draw_text(&s, style, (px(x), px(y)))?;
    Ok(())
}

/// The house style of a chart's grid and axes: grid lines at the labelled ticks only, a
/// dark frame, outward ticks, label and axis-title fonts.
pub fn style_mesh<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged,
    Y: Ranged,
    DB: DrawingBackend,
{
    mesh.max_light_lines(0)
        .bold_line_style(GRID.stroke_width(px(1.0) as u32))
        .axis_style(FRAME.stroke_width(px(1.5) as u32))
        .set_all_tick_mark_size(px(6.0))
        .label_style(text(SANS, LABEL, INK))
        .axis_desc_style(text(SANS, 17.0, INK))
}

/// Closes the frame of a chart whose axes drew its left and bottom edges: a thin top and right
/// edge over `x` and `y`, the data ranges.
pub fn close_frame<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    chart.draw_series(LineSeries::new(
        [(x0, y1), (x1, y1), (x1, y0)],
        FRAME.stroke_width(px(1.0) as u32),
    ))?;
    Ok(())
}

/// A dashed reference line from `from` to `to` (data coordinates).
pub fn reference_line<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    from: (f64, f64),
    to: (f64, f64),
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    chart.draw_series(DashedLineSeries::new(
        [from, to],
        px(8.0),
        px(6.0),
        REFERENCE.stroke_width(px(1.5) as u32),
    ))?;
    Ok(())
}

/// Where a chart's plotting area lies in the final image, in pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlotRect {
    /// Left edge.
    pub left: f64,
    /// Right edge.
    pub right: f64,
    /// Top edge.
    pub top: f64,
    /// Bottom edge.
    pub bottom: f64,
}

impl PlotRect {
    /// The rectangle of a (supersampled) drawing area.
    pub fn of<DB: DrawingBackend, CT: CoordTranslate>(area: &DrawingArea<DB, CT>) -> PlotRect {
        let (xr, yr) = area.get_pixel_range();
        let scale = f64::from(SUPERSAMPLE);
        PlotRect {
            left: f64::from(xr.start) / scale,
            right: f64::from(xr.end) / scale,
            top: f64::from(yr.start) / scale,
            bottom: f64::from(yr.end) / scale,
        }
    }

    /// The pixel of `(x, y)` where the left edge is `x_range.0`, the right `x_range.1`, the
    /// bottom `y_range.0` and the top `y_range.1`.
    pub fn map(&self, (x, y): (f64, f64), x_range: (f64, f64), y_range: (f64, f64)) -> (f64, f64) {
        let fx = (x - x_range.0) / (x_range.1 - x_range.0);
        let fy = (y - y_range.0) / (y_range.1 - y_range.0);
        (
            self.left + fx * (self.right - self.left),
            self.bottom - fy * (self.bottom - self.top),
        )
    }
}

/// The smallest "nice" step (1, 2 or 5 times a power of ten) at least `rough` (positive and
/// finite; anything else gives 1).
pub fn nice_step(rough: f64) -> f64 {
    if !(rough.is_finite() && rough > 0.0) {
        return 1.0;
    }
    let magnitude = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= rough * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

/// A picture in memory: RGB bytes, row by row from the top left.
#[derive(Clone, Debug)]
pub struct Picture {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Three bytes per pixel.
    pub rgb: Vec<u8>,
}

impl Picture {
    /// The colour at `(x, y)`, or `None` outside the picture.
    pub fn pixel(&self, x: i64, y: i64) -> Option<[u8; 3]> {
        if x < 0 || y < 0 || x >= i64::from(self.width) || y >= i64::from(self.height) {
            return None;
        }
        let i = (y as usize * self.width as usize + x as usize) * 3;
        Some([self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]])
    }

    /// The picture as PNG bytes.
    pub fn encode_png(&self) -> anyhow::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        image::png::PngEncoder::new(&mut bytes)
            .encode(&self.rgb, self.width, self.height, image::ColorType::Rgb8)
            .context("encoding the PNG")?;
        Ok(bytes)
    }
}

/// Draws a `width` × `height` picture: `draw` gets a white drawing area of the supersampled
/// size (use [`px`] and [`text`] for sizes) and may return a value, e.g. where it put things.
pub fn render<T>(
    width: u32,
    height: u32,
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> anyhow::Result<T>,
) -> anyhow::Result<(Picture, T)> {
    fonts()?;
    let (w, h) = (width * SUPERSAMPLE, height * SUPERSAMPLE);
    let mut big = vec![255u8; w as usize * h as usize * 3];
    let value = {
        let root = BitMapBackend::with_buffer(&mut big, (w, h)).into_drawing_area();
        let value = draw(&root)?;
        root.present()
            .map_err(|e| anyhow!("drawing the chart: {e}"))?;
        value
    };
    Ok((
        Picture {
            width,
            height,
            rgb: downsample(&big, width, height),
        },
        value,
    ))
}

/// The mean of each block of `SUPERSAMPLE` × `SUPERSAMPLE` pixels.
fn downsample(big: &[u8], width: u32, height: u32) -> Vec<u8> {
    let s = SUPERSAMPLE as usize;
    let (w, h) = (width as usize, height as usize);
    let mut out = vec![0u8; w * h * 3];
    for y in 0..h {
        for x in 0..w {
            for c in 0..3 {
                let mut sum = 0u32;
                for dy in 0..s {
                    for dx in 0..s {
                        sum += u32::from(big[((y * s + dy) * w * s + x * s + dx) * 3 + c]);
                    }
                }
                out[(y * w + x) * 3 + c] = ((sum + (s * s / 2) as u32) / (s * s) as u32) as u8;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_text_and_shapes_without_system_fonts() {
        let (pic, width) = render(200, 80, |root| {
            root.fill(&WHITE)?;
            let style = text(SANS, 20.0, INK);
            root.draw_text("Oware 123", &style, (px(10.0), px(10.0)))?;
            root.draw(&Rectangle::new(
                [(px(150.0), px(40.0)), (px(190.0), px(70.0))],
                color(1).filled(),
            ))?;
            Ok(text_width(root, "Oware 123", &style))
        })
        .expect("draws");
        assert_eq!(
            (pic.width, pic.height, pic.rgb.len()),
            (200, 80, 200 * 80 * 3)
        );
        assert!(width > 50.0 && width < 150.0, "{width}");
        // The rectangle is solid inside, the corner stays white, the text left dark pixels.
        assert_eq!(pic.pixel(170, 55), Some([214, 39, 40]));
        assert_eq!(pic.pixel(0, 0), Some([255, 255, 255]));
        let dark = (0..80)
            .flat_map(|y| (0..140).map(move |x| (x, y)))
            .filter(|&(x, y)| pic.pixel(x, y).is_some_and(|p| p.iter().all(|&v| v < 100)))
            .count();
        assert!(dark > 30, "{dark} dark text pixels");
        let png = pic.encode_png().expect("encodes");
        let back = image::load_from_memory(&png).expect("decodes").to_rgb8();
        assert_eq!(back.dimensions(), (200, 80));
    }

    #[test]
    fn rectangles_map_corners() {
        let r = PlotRect {
            left: 100.0,
            right: 900.0,
            top: 50.0,
            bottom: 450.0,
        };
        assert_eq!(r.map((0.0, 0.0), (0.0, 4.0), (0.0, 100.0)), (100.0, 450.0));
        assert_eq!(r.map((4.0, 100.0), (0.0, 4.0), (0.0, 100.0)), (900.0, 50.0));
        assert_eq!(
            r.map((0.0, 50.0), (-2.0, 2.0), (0.0, 100.0)),
            (500.0, 250.0)
        );
    }

    #[test]
    fn steps_are_nice() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.0), 1.0);
        assert_eq!(nice_step(1.3), 2.0);
        assert_eq!(nice_step(36.0), 50.0);
        assert_eq!(nice_step(120.0), 200.0);
        assert_eq!(nice_step(0.0), 1.0);
        assert_eq!(nice_step(f64::NAN), 1.0);
    }

    #[test]
    fn long_text_is_shortened() {
        render(100, 40, |root| {
            let style = text(SANS, 12.0, INK);
            assert_eq!(fit(root, "abc", &style, 100.0), "abc");
            let short = fit(root, &"x".repeat(200), &style, 60.0);
            assert!(short.ends_with('…'), "{short}");
            assert!(text_width(root, &short, &style) <= 60.0);
            Ok(())
        })
        .expect("draws");
    }
}
