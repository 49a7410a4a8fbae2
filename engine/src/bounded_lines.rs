//! Reading untrusted text line by line with a bound on each line's length, so that input
//! without a line break (or with a huge line) never grows memory without bound. Used by every
//! line-based reader of untrusted input: the engine protocol and `oware replay`.

use std::io::{self, BufRead};

/// One line of input, without its line break (`\n` or `\r\n`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// A line of UTF-8 text.
    Text(String),
    /// A line longer than the bound; its bytes were skipped, not kept.
    TooLong {
        /// Its length in bytes.
        bytes: usize,
        /// The bound it broke.
        max: usize,
    },
    /// A line that is not UTF-8, with its text as far as it can be read (invalid sequences
    /// replaced by U+FFFD), for readers that want to show it.
    NotUtf8(String),
}

impl Line {
    /// The text, or the reason the line was refused (naming the line's number, 1-based).
    pub fn text(self, number: usize) -> Result<String, String> {
        match self {
            Line::Text(t) => Ok(t),
            Line::TooLong { bytes, max } => Err(format!(
                "line {number} is {bytes} bytes long, more than the {max} accepted"
            )),
            Line::NotUtf8(_) => Err(format!("line {number} is not UTF-8 text")),
        }
    }
}

/// The lines of a reader, each at most `max` bytes; longer lines come back as
/// [`Line::TooLong`] and reading goes on after them. Yields `(number, line)` with 1-based
/// line numbers; an I/O error ends the iteration after it is returned.
#[derive(Debug)]
pub struct BoundedLines<R> {
    reader: R,
    max: usize,
    number: usize,
    buf: Vec<u8>,
    done: bool,
}

impl<R: BufRead> BoundedLines<R> {
    /// Lines of `reader` of at most `max` bytes each.
    pub fn new(reader: R, max: usize) -> BoundedLines<R> {
        BoundedLines {
            reader,
            max,
            number: 0,
            buf: Vec::new(),
            done: false,
        }
    }

    /// Reads up to the next line break; `Ok(None)` at the end of input.
    fn read_one(&mut self) -> io::Result<Option<Line>> {
        self.buf.clear();
        let mut length = 0usize;
        let mut any = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                if !any {
                    return Ok(None);
                }
                break;
            }
            any = true;
            let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], true),
                None => (available, false),
            };
            length += chunk.len();
            if length <= self.max + 1 {
                // One byte of slack for a `\r` before the `\n`.
                self.buf.extend_from_slice(chunk);
            }
            let used = chunk.len() + usize::from(found);
            self.reader.consume(used);
            if found {
                break;
            }
        }
        if self.buf.last() == Some(&b'\r') && length <= self.max + 1 {
            self.buf.pop();
            length -= 1;
        }
        if length > self.max {
            return Ok(Some(Line::TooLong {
                bytes: length,
                max: self.max,
            }));
        }
        Ok(Some(match std::str::from_utf8(&self.buf) {
            Ok(s) => Line::Text(s.to_string()),
            Err(_) => Line::NotUtf8(String::from_utf8_lossy(&self.buf).into_owned()),
        }))
    }
}

impl<R: BufRead> Iterator for BoundedLines<R> {
    type Item = io::Result<(usize, Line)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.read_one() {
            Ok(Some(line)) => {
                self.number += 1;
                Some(Ok((self.number, line)))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<(usize, Line)> {
        BoundedLines::new(input, max)
            .map(|r| r.expect("in-memory input"))
            .collect()
    }

    #[test]
    fn splits_like_std_lines() {
        let got = lines(b"ab\r\n\ncd\nlast", 10);
        let want = ["ab", "", "cd", "last"]
            .iter()
            .enumerate()
            .map(|(i, s)| (i + 1, Line::Text(s.to_string())))
            .collect::<Vec<_>>();
        assert_eq!(got, want);
        assert!(lines(b"", 10).is_empty());
        assert_eq!(lines(b"\n", 10), vec![(1, Line::Text(String::new()))]);
    }

    #[test]
    fn long_and_binary_lines_are_refused_and_reading_goes_on() {
        let mut input = vec![b'x'; 100];
        input.extend_from_slice(b"\n\xff\xfe\nok\n");
        let got = lines(&input, 10);
        assert_eq!(
            got[0],
            (
                1,
                Line::TooLong {
                    bytes: 100,
                    max: 10
                }
            )
        );
        assert_eq!(got[1], (2, Line::NotUtf8("\u{fffd}\u{fffd}".to_string())));
        assert_eq!(got[2], (3, Line::Text("ok".to_string())));
        // Exactly the bound is fine, with or without `\r`.
        let got = lines(b"0123456789\r\n0123456789\n01234567890\n", 10);
        assert_eq!(got[0].1, Line::Text("0123456789".to_string()));
        assert_eq!(got[1].1, Line::Text("0123456789".to_string()));
        assert_eq!(got[2].1, Line::TooLong { bytes: 11, max: 10 });
        let err = Line::TooLong { bytes: 11, max: 10 }
            .text(3)
            .expect_err("too long");
        assert!(err.contains("line 3") && err.contains("11 bytes"), "{err}");
    }
}
