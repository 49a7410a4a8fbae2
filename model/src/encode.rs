//! The network's view of a position: a fixed-size vector of `f32` features, always from the
//! point of view of the side to move ("the mover").
//!
//! # Layout ([`INPUT_SIZE`] = 131 floats)
//!
//! Houses are taken in the mover's frame: slots 0..6 are the mover's houses in sowing order
//! (`a`..`f` for South, `A`..`F` for North), slots 6..12 the opponent's houses in sowing order.
//! A position and its colour-swapped twin therefore encode identically.
//!
//! | offset | size | feature |
//! |---|---|---|
//! | `10*s` .. `10*s + 9` | 9 per slot `s` | one-hot of the house's count: 0, 1, …, 7, and a last bucket for 8 or more |
//! | `10*s + 9` | 1 per slot | the count divided by 12 (a house holding 12 sows exactly one lap) |
//! | 120 | 1 | seeds captured by the mover / 25 |
//! | 121 | 1 | seeds captured by the opponent / 25 |
//! | 122 | 1 | seeds on the mover's row / 48 |
//! | 123 | 1 | seeds on the opponent's row / 48 |
//! | 124 | 1 | 1 when the opponent's row is empty (the mover must feed it), else 0 |
//! | 125 .. 131 | 6 | 1 for each of the mover's six houses that is a legal move, else 0 |
//!
//! The exact small counts decide captures (an opponent house holding 1 or 2 becomes 2 or 3) and
//! where a sowing ends; the scaled count carries larger houses; the legal-move bits carry the
//! feeding rule, which depends on the whole board.
//!
//! # Move features (networks with `model.move_features`: [`MOVE_FEATURES`] = 26 more floats)
//!
//! What each house's sowing would do right now, played by the engine's own rules: a small
//! network learns the sowing arithmetic behind captures slowly from the counts alone.
//!
//! | offset | size | feature |
//! |---|---|---|
//! | `131 + 2*i` | 1 per mover house `i` | seeds its sowing captures / 12 (0 for an empty house or a cancelled grand slam) |
//! | `131 + 2*i + 1` | 1 per mover house | seeds its sowing drops on the opponent's row / 12 |
//! | `143 + 2*j` | 1 per opponent house `j` | seeds its sowing would capture if the opponent were to move now / 12 |
//! | `143 + 2*j + 1` | 1 per opponent house | seeds it would drop on the mover's row / 12 |
//! | 155 | 1 | the mover's best capture now / 12 |
//! | 156 | 1 | the opponent's best capture if it were to move now / 12 |

use burn::tensor::{Device, Tensor, TensorData};
use oware_engine::{Move, Position, Side};

/// Number of one-hot count buckets per house: counts 0..=7 exactly, then "8 or more".
pub const COUNT_BUCKETS: usize = 9;
/// Floats per house: the one-hot buckets plus the scaled count.
pub const PER_HOUSE: usize = COUNT_BUCKETS + 1;
/// Offset of the global features (after the 12 houses).
pub const GLOBALS_OFFSET: usize = 12 * PER_HOUSE;
/// Offset of the six legal-move bits.
pub const LEGAL_OFFSET: usize = GLOBALS_OFFSET + 5;
/// Length of one encoded position (the base layout, without move features).
pub const INPUT_SIZE: usize = LEGAL_OFFSET + 6;
/// Floats the move features add after the base layout (see the module docs).
pub const MOVE_FEATURES: usize = 26;

/// The length of one encoded position: [`INPUT_SIZE`], plus [`MOVE_FEATURES`] with
/// `move_features`.
pub const fn input_size(move_features: bool) -> usize {
    if move_features {
        INPUT_SIZE + MOVE_FEATURES
    } else {
        INPUT_SIZE
    }
}

/// The mover's legal moves as a mask over policy indices (sowing order within the mover's row).
pub fn legal_mask(pos: &Position) -> [bool; 6] {
    let mut mask = [false; 6];
    for m in &pos.legal_moves() {
        mask[m.relative()] = true;
    }
    mask
}

/// The house counts in the mover's frame: mover's row then opponent's row, each in sowing order.
pub fn mover_frame_board(pos: &Position) -> [u8; 12] {
    let board = pos.board();
    let mover = pos.to_move();
    let start = mover.row_start();
    let mut out = [0u8; 12];
    for (i, o) in out.iter_mut().enumerate() {
        *o = board[(start + i) % 12];
    }
    out
}

/// Writes the features of `pos` into `out` (length [`INPUT_SIZE`]); see the module docs for the
/// layout. Every entry of `out` is overwritten.
///
/// # Panics
/// If `out.len() != INPUT_SIZE` (a caller bug, never data-dependent).
pub fn encode_into(pos: &Position, out: &mut [f32]) {
    assert_eq!(
        out.len(),
        INPUT_SIZE,
        "encode_into needs a slice of INPUT_SIZE"
    );
    out.fill(0.0);
    let houses = mover_frame_board(pos);
    for (slot, &count) in houses.iter().enumerate() {
        let base = slot * PER_HOUSE;
        let bucket = (count as usize).min(COUNT_BUCKETS - 1);
        out[base + bucket] = 1.0;
        out[base + COUNT_BUCKETS] = count as f32 / 12.0;
    }
    let mover: Side = pos.to_move();
    let captured = pos.captured();
    let mover_row: u32 = houses[..6].iter().map(|&x| x as u32).sum();
    let opp_row: u32 = houses[6..].iter().map(|&x| x as u32).sum();
    out[GLOBALS_OFFSET] = captured[mover.index()] as f32 / 25.0;
    out[GLOBALS_OFFSET + 1] = captured[(!mover).index()] as f32 / 25.0;
    out[GLOBALS_OFFSET + 2] = mover_row as f32 / 48.0;
    out[GLOBALS_OFFSET + 3] = opp_row as f32 / 48.0;
    out[GLOBALS_OFFSET + 4] = if opp_row == 0 { 1.0 } else { 0.0 };
    for (i, legal) in legal_mask(pos).into_iter().enumerate() {
        if legal {
            out[LEGAL_OFFSET + i] = 1.0;
        }
    }
}

/// Writes the [`MOVE_FEATURES`] of `pos` into `out` (see the module docs): each house's
/// sowing played on a copy of the position by the engine, the opponent's as if it were to
/// move. Every entry of `out` is overwritten.
///
/// # Panics
/// If `out.len() != MOVE_FEATURES` (a caller bug, never data-dependent).
pub fn encode_moves_into(pos: &Position, out: &mut [f32]) {
    assert_eq!(
        out.len(),
        MOVE_FEATURES,
        "encode_moves_into needs a slice of MOVE_FEATURES"
    );
    let mover = pos.to_move();
    let theirs = pos.with_to_move(!mover);
    let mut best = [0u8; 2];
    for (k, (side, from)) in [(mover, pos), (!mover, &theirs)].into_iter().enumerate() {
        let other_row = from.row_seeds(!side);
        for i in 0..6 {
            let mv = Move::from_relative(side, i);
            let slot = &mut out[12 * k + 2 * i..12 * k + 2 * i + 2];
            if from.board()[mv.house()] == 0 {
                slot.fill(0.0);
                continue;
            }
            let mut next = *from;
            let effect = next.play_unchecked(mv);
            // What reached the other row: what is there now plus what was captured from it.
            let sown = (next.row_seeds(!side) + effect.captured).saturating_sub(other_row);
            slot[0] = f32::from(effect.captured) / 12.0;
            slot[1] = f32::from(sown) / 12.0;
            best[k] = best[k].max(effect.captured);
        }
    }
    out[24] = f32::from(best[0]) / 12.0;
    out[25] = f32::from(best[1]) / 12.0;
}

/// Writes the features of `pos` into `out` (length [`input_size`]`(move_features)`): the base
/// layout, then the move features when asked.
///
/// # Panics
/// If `out` has another length (a caller bug, never data-dependent).
pub fn encode_into_with(pos: &Position, move_features: bool, out: &mut [f32]) {
    assert_eq!(
        out.len(),
        input_size(move_features),
        "encode_into_with needs a slice of input_size"
    );
    let (base, moves) = out.split_at_mut(INPUT_SIZE);
    encode_into(pos, base);
    if move_features {
        encode_moves_into(pos, moves);
    }
}

/// The features of a batch of positions, row-major `[positions.len() * input_size]`, with the
/// move features when `move_features`.
pub fn encode_vec(positions: &[Position], move_features: bool) -> Vec<f32> {
    let width = input_size(move_features);
    let mut data = vec![0.0f32; positions.len() * width];
    for (pos, row) in positions.iter().zip(data.chunks_exact_mut(width)) {
        encode_into_with(pos, move_features, row);
    }
    data
}

/// The input tensor of a batch: shape `[positions.len(), input_size]`, on `device`.
pub fn encode_batch(positions: &[Position], move_features: bool, device: &Device) -> Tensor<2> {
    let n = positions.len();
    Tensor::from_data(
        TensorData::new(
            encode_vec(positions, move_features),
            [n, input_size(move_features)],
        ),
        device,
    )
}

/// The additive mask of a batch, shape `[positions.len(), 6]`: 0 for a legal move and
/// [`ILLEGAL_LOGIT`] for an illegal one. Added to the policy logits before the softmax, it
/// gives illegal moves probability 0.
pub fn mask_batch(positions: &[Position], device: &Device) -> Tensor<2> {
    let mut data = Vec::with_capacity(positions.len() * 6);
    for pos in positions {
        for legal in legal_mask(pos) {
            data.push(if legal { 0.0 } else { ILLEGAL_LOGIT });
        }
    }
    Tensor::from_data(TensorData::new(data, [positions.len(), 6]), device)
}

/// What an illegal move's logit is shifted by: large enough that `exp` underflows to 0, small
/// enough to stay finite in `f32` (so `0 * log p` stays 0 in the loss).
pub const ILLEGAL_LOGIT: f32 = -1.0e9;

#[cfg(test)]
mod tests {
    use super::*;

    /// South: a=0 b=1 c=2 d=3 e=9 f=13; North: A=0 B=0 C=2 D=1 E=0 F=0 (with 10 / 7 captured).
    const WORKED: [u8; 12] = [0, 1, 2, 3, 9, 13, 0, 0, 2, 1, 0, 0];

    /// A position with South to move and its colour-swapped twin with North to move.
    fn colour_twins() -> (Position, Position) {
        let board = [3, 0, 5, 1, 2, 7, 4, 4, 0, 1, 6, 2];
        let south = Position::from_parts(board, [8, 5], Side::South).expect("48");
        let mut swapped = [0u8; 12];
        for i in 0..12 {
            swapped[(i + 6) % 12] = board[i];
        }
        let north = Position::from_parts(swapped, [5, 8], Side::North).expect("48");
        (south, north)
    }

    fn enc(pos: &Position) -> Vec<f32> {
        let mut v = vec![0.0; INPUT_SIZE];
        encode_into(pos, &mut v);
        v
    }

    fn bucket_of(v: &[f32], slot: usize) -> usize {
        let base = slot * PER_HOUSE;
        let hot: Vec<usize> = (0..COUNT_BUCKETS).filter(|&b| v[base + b] == 1.0).collect();
        assert_eq!(hot.len(), 1, "exactly one bucket set for slot {slot}");
        assert!(
            (0..COUNT_BUCKETS).all(|b| v[base + b] == 0.0 || v[base + b] == 1.0),
            "one-hot is 0/1"
        );
        hot[0]
    }

    #[test]
    fn start_position() {
        let v = enc(&Position::start());
        assert_eq!(INPUT_SIZE, 131);
        for slot in 0..12 {
            assert_eq!(bucket_of(&v, slot), 4);
            assert!((v[slot * PER_HOUSE + 9] - 4.0 / 12.0).abs() < 1e-6);
        }
        assert_eq!(v[GLOBALS_OFFSET], 0.0);
        assert_eq!(v[GLOBALS_OFFSET + 1], 0.0);
        assert!((v[GLOBALS_OFFSET + 2] - 0.5).abs() < 1e-6);
        assert!((v[GLOBALS_OFFSET + 3] - 0.5).abs() < 1e-6);
        assert_eq!(v[GLOBALS_OFFSET + 4], 0.0);
        assert_eq!(&v[LEGAL_OFFSET..], &[1.0; 6]);
    }

    #[test]
    fn known_position_from_both_sides() {
        let board = WORKED;
        let south = Position::from_parts(board, [10, 7], Side::South).expect("48 seeds");
        let v = enc(&south);
        let want = [0, 1, 2, 3, 8, 8, 0, 0, 2, 1, 0, 0];
        for (slot, &b) in want.iter().enumerate() {
            assert_eq!(bucket_of(&v, slot), b, "slot {slot}");
            assert!((v[slot * PER_HOUSE + 9] - board[slot] as f32 / 12.0).abs() < 1e-6);
        }
        assert!((v[GLOBALS_OFFSET] - 10.0 / 25.0).abs() < 1e-6);
        assert!((v[GLOBALS_OFFSET + 1] - 7.0 / 25.0).abs() < 1e-6);
        assert!((v[GLOBALS_OFFSET + 2] - 28.0 / 48.0).abs() < 1e-6);
        assert!((v[GLOBALS_OFFSET + 3] - 3.0 / 48.0).abs() < 1e-6);
        assert_eq!(v[GLOBALS_OFFSET + 4], 0.0);
        // a is empty, the others are legal.
        assert_eq!(&v[LEGAL_OFFSET..], &[0.0, 1.0, 1.0, 1.0, 1.0, 1.0]);

        // The same board with North to move: North's row comes first.
        let north = Position::from_parts(board, [10, 7], Side::North).expect("48 seeds");
        let w = enc(&north);
        let want = [0, 0, 2, 1, 0, 0, 0, 1, 2, 3, 8, 8];
        for (slot, &b) in want.iter().enumerate() {
            assert_eq!(bucket_of(&w, slot), b, "slot {slot}");
        }
        assert!((w[GLOBALS_OFFSET] - 7.0 / 25.0).abs() < 1e-6);
        assert!((w[GLOBALS_OFFSET + 1] - 10.0 / 25.0).abs() < 1e-6);
        assert_eq!(&w[LEGAL_OFFSET..], &[0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
    }

    #[test]
    fn colour_swap_encodes_identically() {
        let (south, north) = colour_twins();
        assert_eq!(enc(&south), enc(&north));
    }

    #[test]
    fn must_feed_position() {
        // North's row is empty; South must play a move that reaches it: only f (2 seeds) does.
        let board = [1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0];
        let pos = Position::from_parts(board, [20, 25], Side::South).expect("48 seeds");
        let v = enc(&pos);
        assert_eq!(v[GLOBALS_OFFSET + 4], 1.0);
        assert_eq!(v[GLOBALS_OFFSET + 3], 0.0);
        let mask = legal_mask(&pos);
        // The game is over by capture count (North has 25), so nothing is legal.
        assert_eq!(mask, [false; 6]);
        let live = Position::from_parts(board, [22, 23], Side::South).expect("48");
        assert_eq!(legal_mask(&live), [false, false, false, false, false, true]);
        let w = enc(&live);
        assert_eq!(&w[LEGAL_OFFSET..], &[0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    }

    #[test]
    fn batch_tensor_shape_and_rows() {
        let device = Device::flex();
        let a = Position::start();
        let b = Position::from_parts([0, 1, 2, 3, 9, 13, 0, 0, 2, 1, 0, 0], [10, 7], Side::North)
            .expect("48");
        let t = encode_batch(&[a, b], false, &device);
        assert_eq!(t.dims(), [2, INPUT_SIZE]);
        let data = t.into_data().try_to_vec::<f32>().expect("f32 data");
        assert_eq!(&data[..INPUT_SIZE], enc(&a).as_slice());
        assert_eq!(&data[INPUT_SIZE..], enc(&b).as_slice());
        let m = mask_batch(&[b], &device)
            .into_data()
            .try_to_vec::<f32>()
            .expect("f32");
        assert_eq!(
            m,
            vec![
                ILLEGAL_LOGIT,
                ILLEGAL_LOGIT,
                0.0,
                0.0,
                ILLEGAL_LOGIT,
                ILLEGAL_LOGIT
            ]
        );
    }

    fn moves_of(pos: &Position) -> Vec<f32> {
        let mut v = vec![0.0; input_size(true)];
        encode_into_with(pos, true, &mut v);
        assert_eq!(
            &v[..INPUT_SIZE],
            enc(pos).as_slice(),
            "the base layout comes first"
        );
        v[INPUT_SIZE..].iter().map(|x| x * 12.0).collect()
    }

    #[test]
    fn move_features_of_a_position_worked_by_hand() {
        let board = WORKED;
        let south = Position::from_parts(board, [10, 7], Side::South).expect("48 seeds");
        let v = moves_of(&south);
        // d drops one seed on A; e six on North's row, ending on b; f (13 seeds) laps the
        // board and ends on B: A and B hold 2 each and are taken (4 seeds), 8 seeds sown there.
        let mover = [0., 0., 0., 0., 0., 0., 0., 1., 0., 6., 4., 8.];
        // North, were it to move: C ends on E, D on E, in its own row.
        let theirs = [0.0; 12];
        for (k, (got, want)) in v[..24].iter().zip(mover.iter().chain(&theirs)).enumerate() {
            assert!((got - want).abs() < 1e-5, "feature {k}: {got} vs {want}");
        }
        assert!((v[24] - 4.0).abs() < 1e-5 && v[25].abs() < 1e-5);
        // The same board with North to move: its moves first, South's as the threats.
        let north = moves_of(&Position::from_parts(board, [10, 7], Side::North).expect("48"));
        assert_eq!(&north[..12], &theirs);
        for (k, (got, want)) in north[12..24].iter().zip(&mover).enumerate() {
            assert!((got - want).abs() < 1e-5, "threat {k}: {got} vs {want}");
        }
        assert!(north[24].abs() < 1e-5 && (north[25] - 4.0).abs() < 1e-5);
    }

    #[test]
    fn move_features_follow_the_grand_slam_rule_and_the_colour_swap() {
        // f's one seed makes A (North's only seeds) 2: taking it would leave North nothing, so
        // the capture is cancelled; the seed still reached North's row.
        let board = [0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0];
        let v = moves_of(&Position::from_parts(board, [23, 23], Side::South).expect("48"));
        assert_eq!(&v[10..12], &[0.0, 1.0]);
        assert_eq!(v[24], 0.0);
        let (south, north) = colour_twins();
        assert_eq!(moves_of(&south), moves_of(&north));
        // Every legal move's capture feature is what the engine captures playing it.
        for m in &south.legal_moves() {
            let (_, effect) = south.play(m).expect("legal");
            let got = moves_of(&south)[2 * m.relative()];
            assert!((got - f32::from(effect.captured)).abs() < 1e-5, "move {m}");
        }
    }

    #[test]
    fn batch_tensor_with_move_features() {
        let device = Device::flex();
        let a = Position::start();
        let t = encode_batch(&[a, a], true, &device);
        assert_eq!(t.dims(), [2, INPUT_SIZE + MOVE_FEATURES]);
        assert_eq!(input_size(false), INPUT_SIZE);
    }
}
