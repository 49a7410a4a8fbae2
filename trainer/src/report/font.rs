//! A small hand-made bitmap font: 5 columns by 7 rows above the baseline, plus 2 rows below it
//! for the descenders of `g j p q y , ; _`. Each glyph is written as rows of `.` and `#`
//! separated by spaces, so the table reads like the letters it draws.

/// Width of a glyph in font pixels.
pub const GLYPH_WIDTH: u32 = 5;
/// Rows from the top of a capital letter down to the baseline.
pub const GLYPH_HEIGHT: u32 = 7;
/// Rows of a glyph cell, descenders included.
pub const CELL_HEIGHT: u32 = 9;
/// Horizontal advance from one glyph to the next, in font pixels (one column of space).
pub const ADVANCE: u32 = GLYPH_WIDTH + 1;

/// The characters every report needs: letters, digits and the punctuation of player specs,
/// numbers and axis titles.
pub const REQUIRED: &str =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:=,.%-+()[]/_ ";

/// The glyph table: a character and its rows, top first (7 rows, or 8–9 with a descender).
const GLYPHS: &[(char, &str)] = &[
    ('A', ".###. #...# #...# ##### #...# #...# #...#"),
    ('B', "####. #...# #...# ####. #...# #...# ####."),
    ('C', ".###. #...# #.... #.... #.... #...# .###."),
    ('D', "####. #...# #...# #...# #...# #...# ####."),
    ('E', "##### #.... #.... ####. #.... #.... #####"),
    ('F', "##### #.... #.... ####. #.... #.... #...."),
    ('G', ".###. #...# #.... #.### #...# #...# .####"),
    ('H', "#...# #...# #...# ##### #...# #...# #...#"),
    ('I', ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###."),
    ('J', "..### ...#. ...#. ...#. ...#. #..#. .##.."),
    ('K', "#...# #..#. #.#.. ##... #.#.. #..#. #...#"),
    ('L', "#.... #.... #.... #.... #.... #.... #####"),
    ('M', "#...# ##.## #.#.# #.#.# #...# #...# #...#"),
    ('N', "#...# #...# ##..# #.#.# #..## #...# #...#"),
    ('O', ".###. #...# #...# #...# #...# #...# .###."),
    ('P', "####. #...# #...# ####. #.... #.... #...."),
    ('Q', ".###. #...# #...# #...# #.#.# #..#. .##.#"),
    ('R', "####. #...# #...# ####. #.#.. #..#. #...#"),
    ('S', ".#### #.... #.... .###. ....# ....# ####."),
    ('T', "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#.."),
    ('U', "#...# #...# #...# #...# #...# #...# .###."),
    ('V', "#...# #...# #...# #...# #...# .#.#. ..#.."),
    ('W', "#...# #...# #...# #.#.# #.#.# #.#.# .#.#."),
    ('X', "#...# #...# .#.#. ..#.. .#.#. #...# #...#"),
    ('Y', "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#.."),
    ('Z', "##### ....# ...#. ..#.. .#... #.... #####"),
    ('a', "..... ..... .###. ....# .#### #...# .####"),
    ('b', "#.... #.... #.##. ##..# #...# #...# ####."),
    ('c', "..... ..... .###. #.... #.... #...# .###."),
    ('d', "....# ....# .##.# #..## #...# #...# .####"),
    ('e', "..... ..... .###. #...# ##### #.... .###."),
    ('f', "..##. .#..# .#... ###.. .#... .#... .#..."),
    ('g', "..... ..... .#### #...# #...# .#### ....# #...# .###."),
    ('h', "#.... #.... #.##. ##..# #...# #...# #...#"),
    ('i', "..#.. ..... .##.. ..#.. ..#.. ..#.. .###."),
    ('j', "...#. ..... ..##. ...#. ...#. ...#. ...#. #..#. .##.."),
    ('k', "#.... #.... #..#. #.#.. ##... #.#.. #..#."),
    ('l', ".##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###."),
    ('m', "..... ..... ##.#. #.#.# #.#.# #.#.# #.#.#"),
    ('n', "..... ..... #.##. ##..# #...# #...# #...#"),
    ('o', "..... ..... .###. #...# #...# #...# .###."),
    ('p', "..... ..... ####. #...# #...# #...# ####. #.... #...."),
    ('q', "..... ..... .#### #...# #...# #...# .#### ....# ....#"),
    ('r', "..... ..... #.##. ##..# #.... #.... #...."),
    ('s', "..... ..... .###. #.... .###. ....# ####."),
    ('t', ".#... .#... ###.. .#... .#... .#..# ..##."),
    ('u', "..... ..... #...# #...# #...# #..## .##.#"),
    ('v', "..... ..... #...# #...# #...# .#.#. ..#.."),
    ('w', "..... ..... #...# #...# #.#.# #.#.# .#.#."),
    ('x', "..... ..... #...# .#.#. ..#.. .#.#. #...#"),
    ('y', "..... ..... #...# #...# #...# .#### ....# #...# .###."),
    ('z', "..... ..... ##### ...#. ..#.. .#... #####"),
    ('0', ".###. #...# #..## #.#.# ##..# #...# .###."),
    ('1', "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###."),
    ('2', ".###. #...# ....# ...#. ..#.. .#... #####"),
    ('3', "##### ...#. ..#.. ...#. ....# #...# .###."),
    ('4', "...#. ..##. .#.#. #..#. ##### ...#. ...#."),
    ('5', "##### #.... ####. ....# ....# #...# .###."),
    ('6', "..##. .#... #.... ####. #...# #...# .###."),
    ('7', "##### ....# ...#. ..#.. .#... .#... .#..."),
    ('8', ".###. #...# #...# .###. #...# #...# .###."),
    ('9', ".###. #...# #...# .#### ....# ...#. .##.."),
    (':', "..... .##.. .##.. ..... .##.. .##.. ....."),
    (';', "..... .##.. .##.. ..... .##.. .##.. ..#.. .#..."),
    ('=', "..... ..... ##### ..... ##### ..... ....."),
    (',', "..... ..... ..... ..... ..... .##.. .##.. ..#.. .#..."),
    ('.', "..... ..... ..... ..... ..... .##.. .##.."),
    ('%', "##... ##..# ...#. ..#.. .#... #..## ...##"),
    ('-', "..... ..... ..... ##### ..... ..... ....."),
    ('+', "..... ..#.. ..#.. ##### ..#.. ..#.. ....."),
    ('(', "...#. ..#.. .#... .#... .#... ..#.. ...#."),
    (')', ".#... ..#.. ...#. ...#. ...#. ..#.. .#..."),
    ('[', ".###. .#... .#... .#... .#... .#... .###."),
    (']', ".###. ...#. ...#. ...#. ...#. ...#. .###."),
    ('/', "..... ....# ...#. ..#.. .#... #.... ....."),
    ('_', "..... ..... ..... ..... ..... ..... ..... #####"),
    (' ', "..... ..... ..... ..... ..... ..... ....."),
    ('?', ".###. #...# ....# ...#. ..#.. ..... ..#.."),
    ('!', "..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#.."),
    ('\'', "..#.. ..#.. .#... ..... ..... ..... ....."),
    ('"', ".#.#. .#.#. ..... ..... ..... ..... ....."),
    ('#', ".#.#. .#.#. ##### .#.#. ##### .#.#. .#.#."),
    ('*', "..... ..#.. #.#.# .###. #.#.# ..#.. ....."),
    ('<', "...#. ..#.. .#... #.... .#... ..#.. ...#."),
    ('>', ".#... ..#.. ...#. ....# ...#. ..#.. .#..."),
];

/// The glyph drawn for a character the table lacks: a hollow box.
const MISSING: &str = "##### #...# #...# #...# #...# #...# #####";

/// One glyph as bit rows: bit 4 of a row is the leftmost column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Glyph {
    rows: [u8; CELL_HEIGHT as usize],
}

impl Glyph {
    fn parse(text: &str) -> Glyph {
        let mut rows = [0u8; CELL_HEIGHT as usize];
        for (row, bits) in rows.iter_mut().zip(text.split(' ')) {
            *row = bits
                .bytes()
                .take(GLYPH_WIDTH as usize)
                .fold(0u8, |acc, b| (acc << 1) | u8::from(b == b'#'));
        }
        Glyph { rows }
    }

    /// Whether the pixel at column `x` (0..5) and row `y` (0..9, the baseline under row 6) is
    /// inked.
    pub fn pixel(&self, x: u32, y: u32) -> bool {
        x < GLYPH_WIDTH
            && (y as usize) < self.rows.len()
            && self.rows[y as usize] & (1 << (GLYPH_WIDTH - 1 - x)) != 0
    }

    /// The inked pixels as `(column, row)` pairs.
    pub fn pixels(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..CELL_HEIGHT)
            .flat_map(|y| (0..GLYPH_WIDTH).map(move |x| (x, y)))
            .filter(|&(x, y)| self.pixel(x, y))
    }
}

/// The glyph of `c`, if the font has one.
pub fn glyph(c: char) -> Option<Glyph> {
    GLYPHS
        .iter()
        .find(|(g, _)| *g == c)
        .map(|(_, rows)| Glyph::parse(rows))
}

/// The glyph of `c`, or a hollow box when the font lacks it.
pub fn glyph_or_box(c: char) -> Glyph {
    glyph(c).unwrap_or_else(|| Glyph::parse(MISSING))
}

/// Width in pixels of `text` drawn at `scale` (no trailing space after the last glyph).
pub fn text_width(text: &str, scale: u32) -> u32 {
    let n = text.chars().count() as u32;
    if n == 0 { 0 } else { (n * ADVANCE - 1) * scale }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_required_character_has_a_glyph() {
        for c in REQUIRED.chars() {
            assert!(glyph(c).is_some(), "no glyph for {c:?}");
        }
    }

    #[test]
    fn glyph_rows_are_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for (c, rows) in GLYPHS {
            assert!(seen.insert(*c), "{c:?} defined twice");
            let rows: Vec<&str> = rows.split(' ').collect();
            assert!(
                (GLYPH_HEIGHT as usize..=CELL_HEIGHT as usize).contains(&rows.len()),
                "{c:?} has {} rows",
                rows.len()
            );
            for row in rows {
                assert_eq!(row.len(), GLYPH_WIDTH as usize, "{c:?} row {row:?}");
                assert!(
                    row.bytes().all(|b| b == b'.' || b == b'#'),
                    "{c:?} row {row:?}"
                );
            }
        }
    }

    #[test]
    fn visible_glyphs_are_inked_and_distinct() {
        let mut shapes = std::collections::HashMap::new();
        for c in REQUIRED.chars().filter(|c| *c != ' ') {
            let g = glyph_or_box(c);
            assert!(g.pixels().count() > 0, "{c:?} is blank");
            if let Some(other) = shapes.insert(g, c) {
                panic!("{c:?} and {other:?} look the same");
            }
        }
        assert_eq!(glyph_or_box(' ').pixels().count(), 0);
    }

    #[test]
    fn glyphs_read_as_written() {
        let l = glyph_or_box('L');
        assert!((0..7).all(|y| l.pixel(0, y)));
        assert!((1..5).all(|x| l.pixel(x, 6) && !l.pixel(x, 0)));
        // Descenders reach below the baseline; capitals do not.
        assert!(glyph_or_box('g').pixels().any(|(_, y)| y >= GLYPH_HEIGHT));
        assert!(glyph_or_box('G').pixels().all(|(_, y)| y < GLYPH_HEIGHT));
        assert!(!l.pixel(5, 0) && !l.pixel(0, 9));
    }

    #[test]
    fn missing_characters_draw_a_box() {
        assert!(glyph('\u{263a}').is_none());
        assert_eq!(glyph_or_box('\u{263a}').pixels().count(), 20);
    }

    #[test]
    fn text_width_counts_glyph_advances() {
        assert_eq!(text_width("", 2), 0);
        assert_eq!(text_width("a", 1), 5);
        assert_eq!(text_width("ab", 2), 22);
    }
}
