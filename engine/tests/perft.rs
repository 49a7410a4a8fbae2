//! Data-driven perft test: counts from `tests/data/perft.txt`.

use oware_engine::{Position, perft};

#[test]
fn perft_counts_from_data_file() {
    let text = include_str!("data/perft.txt");
    let mut checked = 0;
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let mut parts = line.split_whitespace();
        let depth: u32 = parts.next().and_then(|s| s.parse().ok()).expect("depth");
        let expected: u64 = parts.next().and_then(|s| s.parse().ok()).expect("count");
        assert_eq!(
            perft(&Position::start(), depth),
            expected,
            "perft depth {depth}"
        );
        checked += 1;
    }
    assert_eq!(checked, 9);
}
