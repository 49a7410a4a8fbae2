//! The perfect index of a table: every way of placing `n` seeds in 12 houses, in the mover's
//! order (the mover's six houses first, then the opponent's), numbered `0..C(n+11, 11)`.
//!
//! A board `h₀ … h₁₁` with prefix sums `Sₖ = h₀ + … + hₖ` is the set of 11 "bars"
//! `bₖ = Sₖ + k` (strictly increasing, below `n + 11`), and its index is the combinatorial
//! number `Σₖ C(bₖ, k + 1)` — a bijection onto `0..C(n+11, 11)`. Ranking costs eleven table
//! look-ups; walking the indices in order needs no unranking at all ([`Boards`]).

/// The most seeds a table may hold (the value code of [`super::Bounds`] fits 21 in a byte).
pub const MAX_TABLE_SEEDS: usize = 21;

/// The largest seed count the binomial table covers (every board of the game).
const MAX_N: usize = 48;

/// `C(a, b)` for `a ≤ 60`, `b ≤ 12`, computed at compile time.
const fn binomial(a: usize, b: usize) -> u64 {
    if b > a {
        return 0;
    }
    let mut r: u64 = 1;
    let mut i = 0;
    while i < b {
        r = r * (a - i) as u64 / (i + 1) as u64;
        i += 1;
    }
    r
}

/// `RANK[k][s] = C(s + k, k + 1)`: the share of bar `k` when the prefix sum up to house `k`
/// is `s`.
static RANK: [[u64; MAX_N + 1]; 11] = {
    let mut t = [[0u64; MAX_N + 1]; 11];
    let mut k = 0;
    while k < 11 {
        let mut s = 0;
        while s <= MAX_N {
            t[k][s] = binomial(s + k, k + 1);
            s += 1;
        }
        k += 1;
    }
    t
};

/// The number of boards with `n` seeds: `C(n + 11, 11)`.
pub const fn table_len(n: usize) -> u64 {
    binomial(n + 11, 11)
}

/// The index of the board whose houses, in the mover's order, are `board[start]`,
/// `board[(start + 1) % 12]`, …: pass `start = 0` when South is to move and 6 when North is.
/// The seed count is implied (the index is only meaningful within the table of that count).
#[inline]
pub fn rank_from(board: &[u8; 12], start: usize) -> u64 {
    let mut s = 0usize;
    let mut r = 0u64;
    for (k, row) in RANK.iter().enumerate() {
        s += board[(start + k) % 12] as usize;
        r += row[s];
    }
    r
}

/// The index of a board already in the mover's order.
#[inline]
pub fn rank(board: &[u8; 12]) -> u64 {
    rank_from(board, 0)
}

/// The board (mover's order) with index `index` in the table of `n` seeds, or `None` when the
/// index is out of range.
pub fn unrank(mut index: u64, n: usize) -> Option<[u8; 12]> {
    if n > MAX_N || index >= table_len(n) {
        return None;
    }
    // Bar k is the largest b below bar k + 1 with C(b, k + 1) ≤ what is left of the index.
    // The bars fall as k falls, so one downward scan finds them all.
    let mut board = [0u8; 12];
    let mut b = n + 10;
    let mut above = n; // the prefix sum at the bar above (S₁₁ = n)
    for k in (0..11).rev() {
        // C(b, k + 1) = RANK[k][b − k]; b ≥ k always holds since C(k, k + 1) = 0 fits.
        while RANK[k][b - k] > index {
            b -= 1;
        }
        index -= RANK[k][b - k];
        let s = b - k;
        board[k + 1] = (above - s) as u8;
        above = s;
        // The next bar lies strictly below (bar k ≥ k, so this stays ≥ k − 1).
        b = b.saturating_sub(1);
    }
    board[0] = above as u8;
    Some(board)
}

/// Walks the boards of one table in index order, from a given index, without unranking each.
#[derive(Clone, Debug)]
pub struct Boards {
    board: [u8; 12],
    index: u64,
    end: u64,
}

impl Boards {
    /// The boards with indices `start..end` of the table of `n` seeds (`end` is clamped to the
    /// table's length).
    pub fn new(n: usize, start: u64, end: u64) -> Boards {
        let end = end.min(table_len(n));
        let board = unrank(start.min(end.saturating_sub(1)), n).unwrap_or([0; 12]);
        Boards {
            board,
            index: start.min(end),
            end,
        }
    }

    /// Steps `board` to the next index: the smallest house `i` whose successor holds a seed
    /// takes one from it, plus every seed of the houses before it.
    #[inline]
    pub(crate) fn step(board: &mut [u8; 12]) {
        let mut below = 0u8;
        for i in 0..11 {
            if board[i + 1] > 0 {
                board[i + 1] -= 1;
                board[i] += below + 1;
                return;
            }
            below += board[i];
            board[i] = 0;
        }
    }
}

impl Iterator for Boards {
    type Item = (u64, [u8; 12]);

    #[inline]
    fn next(&mut self) -> Option<(u64, [u8; 12])> {
        if self.index >= self.end {
            return None;
        }
        let item = (self.index, self.board);
        self.index += 1;
        if self.index < self.end {
            Boards::step(&mut self.board);
        }
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lengths_are_binomials() {
        assert_eq!(table_len(0), 1);
        assert_eq!(table_len(1), 12);
        assert_eq!(table_len(2), 78);
        assert_eq!(table_len(20), 84_672_315);
        let total: u64 = (0..=20).map(table_len).sum();
        assert_eq!(total, 225_792_840);
    }

    #[test]
    fn the_index_is_a_bijection_on_small_tables() {
        for n in 0..=9 {
            let len = table_len(n);
            let mut count = 0u64;
            for (i, board) in Boards::new(n, 0, len) {
                assert_eq!(board.iter().map(|&x| x as usize).sum::<usize>(), n);
                assert_eq!(rank(&board), i, "n={n} board={board:?}");
                assert_eq!(unrank(i, n), Some(board), "n={n} i={i}");
                count += 1;
            }
            assert_eq!(count, len, "n={n}");
            assert_eq!(unrank(len, n), None);
        }
    }

    #[test]
    fn every_board_of_a_table_is_counted_once() {
        // Independent of the walk: enumerate all boards of 4 seeds by brute force.
        let n = 4u8;
        let mut seen = vec![false; table_len(4) as usize];
        let mut board = [0u8; 12];
        fn fill(h: usize, left: u8, board: &mut [u8; 12], seen: &mut [bool]) {
            if h == 11 {
                board[11] = left;
                let r = rank(board) as usize;
                assert!(!seen[r], "{board:?} collides");
                seen[r] = true;
                return;
            }
            for x in 0..=left {
                board[h] = x;
                fill(h + 1, left - x, board, seen);
            }
        }
        fill(0, n, &mut board, &mut seen);
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn rotation_ranks_from_the_movers_row() {
        let board = [1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 1];
        let mut rotated = [0u8; 12];
        for i in 0..12 {
            rotated[i] = board[(i + 6) % 12];
        }
        assert_eq!(rank_from(&board, 6), rank(&rotated));
        assert_eq!(unrank(rank(&rotated), 7), Some(rotated));
    }

    #[test]
    fn walks_start_anywhere() {
        let n = 6;
        let all: Vec<_> = Boards::new(n, 0, table_len(n)).collect();
        let part: Vec<_> = Boards::new(n, 1000, 1500).collect();
        assert_eq!(&all[1000..1500], &part[..]);
        assert_eq!(Boards::new(n, 5, 5).count(), 0);
        assert_eq!(Boards::new(n, 0, u64::MAX).count() as u64, table_len(n));
    }
}
