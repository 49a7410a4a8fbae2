//! What the alpha-beta player's data files (evaluation weights, opening books) share: reading a
//! file as text with errors that name it, and the `# ` comment lines a written file starts with.

use std::fmt::Write;
use std::path::Path;

/// The text of the file at `path`. `name` says what it holds in the read error ("cannot read the
/// NAME PATH: ..."), `not_text` what it is not when the bytes are not UTF-8 ("PATH: not NOT_TEXT
/// (not text)").
pub(super) fn read_text(path: &Path, name: &str, not_text: &str) -> Result<String, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("cannot read the {name} {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("{}: not {not_text} (not text)", path.display()))
}

/// The comment lines of a file's head: every line of every comment, each after a `# `.
pub(super) fn comment_lines(comments: &[String]) -> String {
    let mut s = String::new();
    for c in comments {
        for line in c.lines() {
            let _ = writeln!(s, "# {line}"); // writing to a String cannot fail
        }
    }
    s
}
