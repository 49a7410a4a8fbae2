//! A tiny RGB raster: anti-aliased thick lines, filled rectangles, circles and bands, bitmap
//! text, and PNG encoding. Everything clips at the edges, so drawing never fails.

use super::font::{self, ADVANCE};
use anyhow::Context;

/// A colour as red, green, blue.
pub type Rgb = [u8; 3];

/// White.
pub const WHITE: Rgb = [255, 255, 255];
/// Black.
pub const BLACK: Rgb = [0, 0, 0];

/// An RGB image in memory, row by row from the top left.
#[derive(Clone, Debug)]
pub struct Canvas {
    width: u32,
    height: u32,
    data: Vec<u8>,
}

impl Canvas {
    /// A canvas of `width` × `height` pixels filled with `background`.
    pub fn new(width: u32, height: u32, background: Rgb) -> Canvas {
        let n = width as usize * height as usize;
        let data = background.iter().copied().cycle().take(n * 3).collect();
        Canvas {
            width,
            height,
            data,
        }
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The raw RGB bytes, row by row.
    pub fn as_bytes(&self) -> &[u8] {
        &self.data
    }

    fn index(&self, x: i64, y: i64) -> Option<usize> {
        let inside = x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height);
        inside.then(|| (y as usize * self.width as usize + x as usize) * 3)
    }

    /// The colour at `(x, y)`, or `None` outside the canvas.
    pub fn pixel(&self, x: i64, y: i64) -> Option<Rgb> {
        self.index(x, y)
            .map(|i| [self.data[i], self.data[i + 1], self.data[i + 2]])
    }

    /// Sets the pixel at `(x, y)`; outside the canvas it does nothing.
    pub fn put(&mut self, x: i64, y: i64, color: Rgb) {
        if let Some(i) = self.index(x, y) {
            self.data[i..i + 3].copy_from_slice(&color);
        }
    }

    /// Mixes `color` into the pixel at `(x, y)` with opacity `alpha` (0..1).
    pub fn blend(&mut self, x: i64, y: i64, color: Rgb, alpha: f64) {
        let alpha = alpha.clamp(0.0, 1.0);
        if alpha <= 0.0 {
            return;
        }
        if let Some(i) = self.index(x, y) {
            for (k, &c) in color.iter().enumerate() {
                let old = f64::from(self.data[i + k]);
                self.data[i + k] = (old + (f64::from(c) - old) * alpha).round() as u8;
            }
        }
    }

    /// Fills the rectangle with top-left corner `(x, y)` and the given size.
    pub fn fill_rect(&mut self, x: i64, y: i64, width: u32, height: u32, color: Rgb) {
        for yy in y..y + i64::from(height) {
            for xx in x..x + i64::from(width) {
                self.put(xx, yy, color);
            }
        }
    }

    /// Draws the outline of a rectangle, `thickness` pixels wide, inside its bounds.
    pub fn stroke_rect(
        &mut self,
        x: i64,
        y: i64,
        width: u32,
        height: u32,
        thickness: u32,
        color: Rgb,
    ) {
        let t = thickness.min(width).min(height);
        self.fill_rect(x, y, width, t, color);
        self.fill_rect(x, y + i64::from(height) - i64::from(t), width, t, color);
        self.fill_rect(x, y, t, height, color);
        self.fill_rect(x + i64::from(width) - i64::from(t), y, t, height, color);
    }

    /// Draws a straight line `width` pixels thick from `from` to `to` (pixel coordinates, pixel
    /// centres at `n + 0.5`), with round ends and anti-aliased edges.
    pub fn line(&mut self, from: (f64, f64), to: (f64, f64), width: f64, color: Rgb) {
        let half = width.max(0.0) / 2.0;
        let reach = half + 1.0;
        let x0 = (from.0.min(to.0) - reach).floor() as i64;
        let x1 = (from.0.max(to.0) + reach).ceil() as i64;
        let y0 = (from.1.min(to.1) - reach).floor() as i64;
        let y1 = (from.1.max(to.1) + reach).ceil() as i64;
        let (dx, dy) = (to.0 - from.0, to.1 - from.1);
        let len2 = dx * dx + dy * dy;
        for y in y0.max(0)..=y1.min(i64::from(self.height) - 1) {
            for x in x0.max(0)..=x1.min(i64::from(self.width) - 1) {
                let (px, py) = (x as f64 + 0.5, y as f64 + 0.5);
                let t = if len2 > 0.0 {
                    (((px - from.0) * dx + (py - from.1) * dy) / len2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let d = (px - from.0 - t * dx).hypot(py - from.1 - t * dy);
                self.blend(x, y, color, half + 0.5 - d);
            }
        }
    }

    /// Draws a dashed line: `dash` pixels drawn, `gap` pixels skipped, repeating.
    pub fn dashed_line(
        &mut self,
        from: (f64, f64),
        to: (f64, f64),
        width: f64,
        (dash, gap): (f64, f64),
        color: Rgb,
    ) {
        let len = (to.0 - from.0).hypot(to.1 - from.1);
        let period = dash.max(1.0) + gap.max(0.0);
        let at = |s: f64| {
            let t = if len > 0.0 { s / len } else { 0.0 };
            (from.0 + t * (to.0 - from.0), from.1 + t * (to.1 - from.1))
        };
        let mut s = 0.0;
        while s < len {
            let end = (s + dash.max(1.0)).min(len);
            self.line(at(s), at(end), width, color);
            s += period;
        }
    }

    /// Draws a polyline through `points`, `width` pixels thick.
    pub fn polyline(&mut self, points: &[(f64, f64)], width: f64, color: Rgb) {
        for pair in points.windows(2) {
            self.line(pair[0], pair[1], width, color);
        }
    }

    /// Fills a disc of `radius` pixels around `center`, anti-aliased.
    pub fn fill_circle(&mut self, center: (f64, f64), radius: f64, color: Rgb) {
        let x0 = (center.0 - radius - 1.0).floor() as i64;
        let x1 = (center.0 + radius + 1.0).ceil() as i64;
        let y0 = (center.1 - radius - 1.0).floor() as i64;
        let y1 = (center.1 + radius + 1.0).ceil() as i64;
        for y in y0..=y1 {
            for x in x0..=x1 {
                let d = (x as f64 + 0.5 - center.0).hypot(y as f64 + 0.5 - center.1);
                self.blend(x, y, color, radius + 0.5 - d);
            }
        }
    }

    /// Fills, with opacity `alpha`, the region between two straight edges over the columns from
    /// `left.0` to `right.0`: at `left.0` it spans the rows `left.1 ..= left.2`, at `right.0`
    /// the rows `right.1 ..= right.2`, and in between the interpolation. Columns whose centre
    /// lies in `[left.0, right.0)` are filled, so adjacent bands do not overlap.
    pub fn fill_band(
        &mut self,
        left: (f64, f64, f64),
        right: (f64, f64, f64),
        color: Rgb,
        alpha: f64,
    ) {
        let span = right.0 - left.0;
        let first = (left.0 - 0.5).ceil() as i64;
        let last = (right.0 - 0.5).ceil() as i64 - 1;
        for x in first.max(0)..=last.min(i64::from(self.width) - 1) {
            let t = if span > 0.0 {
                ((x as f64 + 0.5 - left.0) / span).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let a = left.1 + t * (right.1 - left.1);
            let b = left.2 + t * (right.2 - left.2);
            let (top, bottom) = (a.min(b).round() as i64, a.max(b).round() as i64);
            for y in top.max(0)..=bottom.min(i64::from(self.height) - 1) {
                self.blend(x, y, color, alpha);
            }
        }
    }

    /// Draws `text` with its top-left corner at `(x, y)`, each font pixel a `scale` × `scale`
    /// square. Characters the font lacks show as boxes.
    pub fn text(&mut self, x: i64, y: i64, text: &str, scale: u32, color: Rgb) {
        let s = i64::from(scale.max(1));
        for (i, c) in text.chars().enumerate() {
            let left = x + i as i64 * i64::from(ADVANCE) * s;
            for (gx, gy) in font::glyph_or_box(c).pixels() {
                self.fill_rect(
                    left + i64::from(gx) * s,
                    y + i64::from(gy) * s,
                    s as u32,
                    s as u32,
                    color,
                );
            }
        }
    }

    /// Draws `text` turned a quarter left (reading upwards), starting at the bottom with the
    /// top of its letters at column `x`: the text occupies columns `x .. x + 9·scale` and rows
    /// `y − width .. y`.
    pub fn text_up(&mut self, x: i64, y: i64, text: &str, scale: u32, color: Rgb) {
        let s = i64::from(scale.max(1));
        for (i, c) in text.chars().enumerate() {
            let base = y - i as i64 * i64::from(ADVANCE) * s;
            for (gx, gy) in font::glyph_or_box(c).pixels() {
                self.fill_rect(
                    x + i64::from(gy) * s,
                    base - (i64::from(gx) + 1) * s,
                    s as u32,
                    s as u32,
                    color,
                );
            }
        }
    }

    /// Encodes the canvas as an 8-bit RGB PNG file.
    pub fn encode_png(&self) -> anyhow::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        image::png::PngEncoder::new(&mut bytes)
            .encode(&self.data, self.width, self.height, image::ColorType::Rgb8)
            .context("encoding the PNG image")?;
        Ok(bytes)
    }

    /// How many pixels have exactly `color`.
    pub fn count(&self, color: Rgb) -> usize {
        self.data.chunks_exact(3).filter(|p| *p == color).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RED: Rgb = [255, 0, 0];

    #[test]
    fn new_canvas_is_the_background() {
        let c = Canvas::new(7, 5, [1, 2, 3]);
        assert_eq!((c.width(), c.height()), (7, 5));
        assert_eq!(c.as_bytes().len(), 7 * 5 * 3);
        assert_eq!(c.count([1, 2, 3]), 35);
        assert_eq!(c.pixel(6, 4), Some([1, 2, 3]));
        assert_eq!(c.pixel(7, 0), None);
        assert_eq!(c.pixel(-1, 0), None);
    }

    #[test]
    fn drawing_outside_is_clipped() {
        let mut c = Canvas::new(4, 4, WHITE);
        c.put(-1, 2, RED);
        c.put(4, 0, RED);
        c.fill_rect(-10, -10, 12, 12, RED);
        c.line((-50.0, -50.0), (100.0, -20.0), 3.0, RED);
        c.fill_circle((-30.0, 2.0), 5.0, RED);
        assert_eq!(c.count(RED), 4);
        assert_eq!(c.pixel(1, 1), Some(RED));
        assert_eq!(c.pixel(2, 2), Some(WHITE));
    }

    #[test]
    fn filled_rectangle_covers_exactly_its_area() {
        let mut c = Canvas::new(10, 10, WHITE);
        c.fill_rect(2, 3, 4, 5, RED);
        assert_eq!(c.count(RED), 20);
        assert_eq!(c.pixel(2, 3), Some(RED));
        assert_eq!(c.pixel(5, 7), Some(RED));
        assert_eq!(c.pixel(6, 7), Some(WHITE));
        assert_eq!(c.pixel(5, 8), Some(WHITE));
    }

    #[test]
    fn rectangle_outline_leaves_the_inside() {
        let mut c = Canvas::new(10, 10, WHITE);
        c.stroke_rect(1, 1, 8, 6, 1, RED);
        assert_eq!(c.count(RED), 2 * 8 + 2 * 4);
        assert_eq!(c.pixel(4, 3), Some(WHITE));
        assert_eq!(c.pixel(8, 6), Some(RED));
    }

    #[test]
    fn horizontal_line_fills_its_rows_only() {
        let mut c = Canvas::new(20, 10, WHITE);
        // Centre on row 4's centre, 3 pixels thick: rows 3, 4, 5 fully inked.
        c.line((2.5, 4.5), (16.5, 4.5), 3.0, RED);
        for x in 3..=16 {
            for y in 3..=5 {
                assert_eq!(c.pixel(x, y), Some(RED), "({x}, {y})");
            }
            assert_eq!(c.pixel(x, 1), Some(WHITE));
            assert_eq!(c.pixel(x, 7), Some(WHITE));
        }
        assert_eq!(c.pixel(19, 4), Some(WHITE));
    }

    #[test]
    fn diagonal_line_passes_through_its_points() {
        let mut c = Canvas::new(20, 20, WHITE);
        c.line((0.5, 0.5), (19.5, 19.5), 2.0, RED);
        for i in 0..20 {
            assert_eq!(c.pixel(i, i), Some(RED), "diagonal pixel {i}");
        }
        assert_eq!(c.pixel(19, 0), Some(WHITE));
        assert_eq!(c.pixel(0, 19), Some(WHITE));
    }

    #[test]
    fn dashed_line_has_gaps() {
        let mut c = Canvas::new(40, 5, WHITE);
        c.dashed_line((0.5, 2.5), (39.5, 2.5), 1.0, (5.0, 5.0), RED);
        let row: Vec<bool> = (0..40).map(|x| c.pixel(x, 2) == Some(RED)).collect();
        assert!(row[2] && row[12] && row[22]);
        assert!(!row[7] && !row[17] && !row[27]);
    }

    #[test]
    fn circle_is_round_and_centred() {
        let mut c = Canvas::new(21, 21, WHITE);
        c.fill_circle((10.5, 10.5), 5.0, RED);
        assert_eq!(c.pixel(10, 10), Some(RED));
        assert_eq!(c.pixel(14, 10), Some(RED));
        assert_eq!(c.pixel(10, 6), Some(RED));
        assert_eq!(c.pixel(17, 10), Some(WHITE));
        assert_eq!(c.pixel(14, 14), Some(WHITE));
        let inked = (21 * 21 - c.count(WHITE)) as f64;
        let pi = std::f64::consts::PI;
        assert!(inked > pi * 16.0 && inked < pi * 36.0, "inked {inked}");
    }

    #[test]
    fn band_blends_between_its_edges() {
        let mut c = Canvas::new(20, 20, WHITE);
        c.fill_band((0.0, 5.0, 10.0), (20.0, 5.0, 10.0), [0, 0, 0], 0.5);
        assert_eq!(c.pixel(3, 7), Some([128, 128, 128]));
        assert_eq!(c.pixel(3, 2), Some(WHITE));
        assert_eq!(c.pixel(3, 12), Some(WHITE));
        // Adjacent bands share no column.
        let mut d = Canvas::new(20, 4, WHITE);
        d.fill_band((0.0, 0.0, 3.0), (10.0, 0.0, 3.0), [0, 0, 0], 0.5);
        d.fill_band((10.0, 0.0, 3.0), (20.0, 0.0, 3.0), [0, 0, 0], 0.5);
        assert_eq!(d.count([128, 128, 128]), 80);
    }

    #[test]
    fn text_draws_glyph_pixels_scaled() {
        let mut c = Canvas::new(40, 30, WHITE);
        c.text(2, 3, "L", 2, RED);
        // 'L' is 7 rows of the left column plus 4 more on the bottom row, each 2×2.
        assert_eq!(c.count(RED), (7 + 4) * 4);
        assert_eq!(c.pixel(2, 3), Some(RED));
        assert_eq!(c.pixel(3, 16), Some(RED));
        assert_eq!(c.pixel(11, 16), Some(RED));
        assert_eq!(c.pixel(4, 3), Some(WHITE));
        c.text(0, 0, " ", 3, [0, 0, 255]);
        assert_eq!(c.count([0, 0, 255]), 0);
    }

    #[test]
    fn upward_text_is_turned() {
        let mut c = Canvas::new(30, 30, WHITE);
        c.text_up(5, 25, "L", 1, RED);
        // The stem of the 'L' becomes a row along the bottom...
        assert!((5..12).all(|x| c.pixel(x, 24) == Some(RED)));
        // ...and its foot a column at the right, going up.
        assert!((20..24).all(|y| c.pixel(11, y) == Some(RED)));
        assert_eq!(c.count(RED), 11);
    }

    #[test]
    fn png_round_trips() {
        let mut c = Canvas::new(12, 8, WHITE);
        c.fill_rect(0, 0, 3, 3, RED);
        let bytes = c.encode_png().expect("encodes");
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let img = image::load_from_memory(&bytes).expect("decodes").to_rgb8();
        assert_eq!(img.dimensions(), (12, 8));
        assert_eq!(img.get_pixel(1, 1).0, RED);
        assert_eq!(img.get_pixel(5, 5).0, WHITE);
    }
}
