//! `oware book build` and `alphabeta:...,book=FILE` end to end with the real binary: a seeded
//! build is reproducible (whatever the threads), the player plays the book's moves, and a
//! damaged book is an error naming the file and the line.

use crate::common::{oware, scratch, text};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/models/oware-default");

fn build(out: &str, threads: &str) -> std::process::Output {
    oware(&[
        "book",
        "build",
        "--model",
        MODEL,
        "--depth",
        "2",
        "--sims",
        "60",
        "--threshold",
        "0.3",
        "--max-positions",
        "6",
        "--seed",
        "3",
        "--threads",
        threads,
        "--out",
        out,
    ])
}

#[test]
fn a_built_book_is_reproducible_and_its_moves_are_played() {
    let dir = scratch("book-build");
    let (one, two) = (dir.join("one.txt"), dir.join("two.txt"));
    let (one_s, two_s) = (one.to_str().expect("utf-8"), two.to_str().expect("utf-8"));
    let out = build(one_s, "1");
    assert!(out.status.success(), "{}", text(&out));
    let out = build(two_s, "2");
    assert!(out.status.success(), "{}", text(&out));
    let a = std::fs::read_to_string(&one).expect("written");
    let b = std::fs::read_to_string(&two).expect("written");
    // The comments name the output file; the book itself is the same.
    let body = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(body(&a), body(&b));
    assert_eq!(body(&a)[0], "oware-book 1");
    assert!(a.contains("oware book build"), "{a}");
    // The start position's book moves.
    let start = body(&a)
        .into_iter()
        .find(|l| l.starts_with("- |"))
        .expect("the start position is in the book");
    let words: Vec<&str> = start["- |".len()..].split_whitespace().collect();
    let book_moves: Vec<&str> = words.iter().step_by(2).copied().collect();
    assert!(!book_moves.is_empty());
    // From the start position, the book player's first move (as South) is a book move.
    let rec = dir.join("games.txt");
    let spec = format!("alphabeta:depth=1,book={one_s}");
    let out = oware(&[
        "pit",
        &spec,
        "random",
        "--games",
        "4",
        "--opening-plies",
        "0",
        "--threads",
        "1",
        "--record",
        rec.to_str().expect("utf-8"),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let games = std::fs::read_to_string(&rec).expect("record");
    for (i, line) in games.lines().enumerate().step_by(2) {
        let first = line.split_whitespace().next().expect("a move");
        assert!(book_moves.contains(&first), "game {i}: {line} ({start})");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_book_is_an_error_naming_the_file_and_line() {
    let dir = scratch("book-bad");
    let bad = dir.join("damaged-book.txt");
    std::fs::write(&bad, "oware-book 1\n- | f 0.5\nf | a 0.5\n").expect("write");
    let spec = format!("alphabeta:depth=1,book={}", bad.display());
    let out = oware(&["pit", &spec, "random", "--games", "2"]);
    assert!(!out.status.success());
    let t = text(&out);
    assert!(
        t.contains("damaged-book.txt: line 3: book move a is not legal there"),
        "{t}"
    );
    let out = oware(&["pit", "alphabeta:depth=1,book=no-such-book.txt", "random"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("no-such-book.txt"), "{}", text(&out));
    // Bad build arguments are clear errors.
    let out = oware(&["book", "build", "--out", "x.txt", "--threshold", "0"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("not in (0, 1]"), "{}", text(&out));
    let _ = std::fs::remove_dir_all(&dir);
}
