//! The game record sent by `oware worker` on the games stream, and its validation.
//!
//! Layout (little-endian), [`MAX_RECORD_BYTES`] at most:
//!
//! | bytes | field |
//! | --- | --- |
//! | 4 | magic `OWG1` |
//! | 8 | weights version the worker held when the game ended |
//! | 8 | the worker's sequence number of this game (0, 1, 2, ...) |
//! | 2 | the game's ply limit (1..=1000) |
//! | 1 + n | worker id: length n (1..=[`MAX_WORKER_ID`]), then n bytes of `[A-Za-z0-9._-]` |
//! | 2 + m | moves: count m, then m absolute house indices (0..12) |
//! | 2 + 26 k | searched moves: count k, then per searched move its ply (strictly increasing, below m) and 6 policy floats |
//!
//! Positions and value targets are not sent: [`decode`] replays the moves with the engine and
//! derives them, so a record either describes a real, finished game or is rejected.

use crate::replay::Sample;
use crate::selfplay::GameRecord;
use oware_engine::{Game, Move, Position};
use std::fmt;

/// The first bytes of every record.
pub const MAGIC: &[u8; 4] = b"OWG1";
/// The largest record accepted (a 1000-ply game with every move searched is about 27 KiB).
pub const MAX_RECORD_BYTES: usize = 64 * 1024;
/// The longest worker id.
pub const MAX_WORKER_ID: usize = 64;
/// How far a policy's sum over the legal moves may be from 1.
const POLICY_SUM_TOLERANCE: f32 = 1e-3;

/// A decoded, validated game from a worker.
#[derive(Clone, Debug)]
pub struct WireGame {
    /// The worker's id.
    pub worker: String,
    /// The worker's sequence number of the game.
    pub seq: u64,
    /// The weights version the worker held when the game ended.
    pub version: u64,
    /// The ply limit the game was played under (the learner requires its own).
    pub max_plies: u32,
    /// The game, its samples and result, as self-play makes them.
    pub record: GameRecord,
}

/// Why a record was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected(pub String);

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Rejected {}

fn reject<T>(msg: impl Into<String>) -> Result<T, Rejected> {
    Err(Rejected(msg.into()))
}

/// Whether `id` may be a worker id.
pub fn valid_worker_id(id: &str) -> bool {
    (1..=MAX_WORKER_ID).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Encodes a finished self-play game. The samples' plies are found by replaying the game (a
/// position occurs at most once before a game's end, so the match is exact).
///
/// # Errors
/// A record that does not describe its own game (a bug in the caller), an invalid worker id.
pub fn encode(
    record: &GameRecord,
    worker: &str,
    seq: u64,
    version: u64,
    max_plies: u32,
) -> anyhow::Result<Vec<u8>> {
    if !valid_worker_id(worker) {
        anyhow::bail!("worker id '{worker}' is not 1 to {MAX_WORKER_ID} of [A-Za-z0-9._-]");
    }
    let max_plies = u16::try_from(max_plies)
        .ok()
        .filter(|&p| p >= 1 && u32::from(p) <= oware_engine::DEFAULT_MAX_PLIES)
        .ok_or_else(|| anyhow::anyhow!("ply limit {max_plies} is out of range"))?;
    let n_moves = u16::try_from(record.moves.len())?;
    let n_samples = u16::try_from(record.samples.len())?;
    let mut out = Vec::with_capacity(
        4 + 8 + 8 + 2 + 1 + worker.len() + 2 + record.moves.len() + 2 + 26 * record.samples.len(),
    );
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&max_plies.to_le_bytes());
    out.push(worker.len() as u8);
    out.extend_from_slice(worker.as_bytes());
    out.extend_from_slice(&n_moves.to_le_bytes());
    out.extend(record.moves.iter().map(|m| m.house() as u8));
    out.extend_from_slice(&n_samples.to_le_bytes());
    let mut game = Game::with_max_plies(u32::from(max_plies));
    let mut samples = record.samples.iter().peekable();
    for (ply, &mv) in record.moves.iter().enumerate() {
        if let Some(s) = samples.peek()
            && s.position == *game.position()
        {
            out.extend_from_slice(&(ply as u16).to_le_bytes());
            for p in s.policy {
                out.extend_from_slice(&p.to_le_bytes());
            }
            samples.next();
        }
        game.play(mv)
            .map_err(|e| anyhow::anyhow!("encoding a self-play game: {e}"))?;
    }
    if samples.next().is_some() {
        anyhow::bail!("encoding a self-play game: a sample's position is not in the game");
    }
    Ok(out)
}

/// Reads the record's fields in order.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Rejected> {
        if self.bytes.len() < n {
            return reject(format!("truncated record: no room for {what}"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Rejected> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    fn u64(&mut self, what: &str) -> Result<u64, Rejected> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn u16(&mut self, what: &str) -> Result<u16, Rejected> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    fn f32(&mut self, what: &str) -> Result<f32, Rejected> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }
}

/// Checks a search policy at `position` (the mover's six houses in sowing order).
fn check_policy(position: &Position, policy: &[f32; 6], ply: usize) -> Result<(), Rejected> {
    let mask = position.legal_mask();
    let mut sum = 0.0f32;
    for (i, &p) in policy.iter().enumerate() {
        if !p.is_finite() || p < 0.0 {
            return reject(format!("ply {ply}: policy[{i}] = {p} is not a probability"));
        }
        if mask & (1 << i) == 0 {
            if p != 0.0 {
                return reject(format!("ply {ply}: policy[{i}] = {p} on an illegal move"));
            }
        } else {
            sum += p;
        }
    }
    if (sum - 1.0).abs() > POLICY_SUM_TOLERANCE {
        return reject(format!(
            "ply {ply}: the policy sums to {sum} over the legal moves, not 1"
        ));
    }
    Ok(())
}

/// Decodes and validates a record: size, fields, worker id, every move (replayed with the
/// engine; the game must end exactly at its last move) and every policy. The samples' positions
/// and their value and margin targets come from the replayed game.
pub fn decode(bytes: &[u8]) -> Result<WireGame, Rejected> {
    if bytes.len() > MAX_RECORD_BYTES {
        return reject(format!(
            "record of {} bytes is larger than {MAX_RECORD_BYTES}",
            bytes.len()
        ));
    }
    let mut r = Reader { bytes };
    if r.take(4, "the magic")? != MAGIC {
        return reject("not a game record (bad magic)");
    }
    let version = r.u64("the version")?;
    let seq = r.u64("the sequence number")?;
    let max_plies = u32::from(r.u16("the ply limit")?);
    if !(1..=oware_engine::DEFAULT_MAX_PLIES).contains(&max_plies) {
        return reject(format!("ply limit {max_plies} is outside 1..=1000"));
    }
    let id_len = r.take(1, "the worker id length")?[0] as usize;
    let id = r.take(id_len, "the worker id")?;
    let worker = match std::str::from_utf8(id) {
        Ok(s) if valid_worker_id(s) => s.to_string(),
        _ => return reject("the worker id is not 1 to 64 of [A-Za-z0-9._-]"),
    };
    let n_moves = r.u16("the move count")? as usize;
    if n_moves == 0 || n_moves > max_plies as usize {
        return reject(format!(
            "{n_moves} moves: a game has 1 to its ply limit {max_plies}"
        ));
    }
    let houses = r.take(n_moves, "the moves")?;
    let n_samples = r.u16("the sample count")? as usize;
    if n_samples > n_moves {
        return reject(format!("{n_samples} samples for {n_moves} moves"));
    }
    let mut searched = Vec::with_capacity(n_samples);
    for _ in 0..n_samples {
        let ply = r.u16("a sample's ply")? as usize;
        let mut policy = [0f32; 6];
        for p in &mut policy {
            *p = r.f32("a policy")?;
        }
        searched.push((ply, policy));
    }
    if !r.bytes.is_empty() {
        return reject(format!("{} bytes after the record", r.bytes.len()));
    }
    let mut game = Game::with_max_plies(max_plies);
    let mut pending = Vec::with_capacity(n_samples);
    let mut next = searched.iter().peekable();
    let mut last_ply: Option<usize> = None;
    for (ply, &house) in houses.iter().enumerate() {
        let Some(mv) = Move::new(house as usize) else {
            return reject(format!("ply {ply}: house {house} does not exist"));
        };
        if let Some(&&(sample_ply, policy)) = next.peek() {
            if last_ply.is_some_and(|l| sample_ply <= l) || sample_ply >= n_moves {
                return reject(format!(
                    "sample ply {sample_ply}: plies must increase and stay below {n_moves}"
                ));
            }
            if sample_ply == ply {
                check_policy(game.position(), &policy, ply)?;
                pending.push((*game.position(), policy, game.to_move()));
                last_ply = Some(ply);
                next.next();
            }
        }
        if let Err(e) = game.play(mv) {
            return reject(format!("illegal move: {e}"));
        }
    }
    if next.next().is_some() {
        return reject("a sample's ply is not a ply of the game");
    }
    let Some(result) = game.result() else {
        return reject(format!("the game is not over after its {n_moves} moves"));
    };
    let samples = pending
        .into_iter()
        .map(|(position, policy, side)| Sample::of_result(position, policy, side, &result))
        .collect();
    Ok(WireGame {
        worker,
        seq,
        version,
        max_plies,
        record: GameRecord {
            moves: game.moves().to_vec(),
            result,
            samples,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// A random finished game with a uniform policy recorded on every other move.
    pub(crate) fn random_game(seed: u64, max_plies: u32) -> GameRecord {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut game = Game::with_max_plies(max_plies);
        let mut pending = Vec::new();
        while !game.is_over() {
            let moves = game.legal_moves();
            let mv = moves
                .get(rng.random_range(0..moves.as_slice().len()))
                .expect("a live game has a move");
            if game.ply().is_multiple_of(2) {
                let mut policy = [0f32; 6];
                for m in moves.iter() {
                    policy[m.relative()] = 1.0 / moves.as_slice().len() as f32;
                }
                pending.push((*game.position(), policy, game.to_move()));
            }
            game.play(mv).expect("legal");
        }
        let result = game.result().expect("over");
        GameRecord {
            moves: game.moves().to_vec(),
            result,
            samples: pending
                .into_iter()
                .map(|(position, policy, side)| Sample::of_result(position, policy, side, &result))
                .collect(),
        }
    }

    #[test]
    fn a_game_round_trips() {
        for seed in 0..20 {
            let g = random_game(seed, 200);
            let bytes = encode(&g, "w-1", seed, 7, 200).expect("encode");
            let back = decode(&bytes).expect("valid");
            assert_eq!(
                (back.worker.as_str(), back.seq, back.version),
                ("w-1", seed, 7)
            );
            assert_eq!(back.record.moves, g.moves);
            assert_eq!(back.record.result, g.result);
            assert_eq!(back.record.samples, g.samples);
        }
    }

    /// Where the moves of a record by `worker` start.
    fn moves_offset(worker: &str) -> usize {
        4 + 8 + 8 + 2 + 1 + worker.len() + 2
    }

    #[test]
    fn hostile_records_are_rejected() {
        let g = random_game(3, 200);
        let good = encode(&g, "w", 0, 1, 200).expect("encode");
        let moves_at = moves_offset("w");
        let n_moves = g.moves.len();
        let samples_at = moves_at + n_moves + 2;
        let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
        // An illegal move: North's house on South's first turn.
        let mut illegal = good.clone();
        illegal[moves_at] = 6;
        cases.push(("illegal move", illegal));
        let mut no_house = good.clone();
        no_house[moves_at] = 12;
        cases.push(("does not exist", no_house));
        // A policy that does not sum to 1, one that is NaN, one on an illegal move.
        let mut sum = good.clone();
        let p0 = samples_at + 2;
        sum[p0..p0 + 4].copy_from_slice(&5.0f32.to_le_bytes());
        cases.push(("sums to", sum));
        let mut nan = good.clone();
        nan[p0..p0 + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        cases.push(("not a probability", nan));
        let mut negative = good.clone();
        negative[p0..p0 + 4].copy_from_slice(&(-0.5f32).to_le_bytes());
        cases.push(("not a probability", negative));
        cases.push(("truncated", good[..good.len() - 3].to_vec()));
        let mut trailing = good.clone();
        trailing.push(0);
        cases.push(("after the record", trailing));
        cases.push(("larger than", vec![0u8; MAX_RECORD_BYTES + 1]));
        cases.push(("bad magic", b"OWG0xxxxxxxxxxxxxxxxxxxxxxxxxxxx".to_vec()));
        // A game cut short is not over.
        let mut short = g.clone();
        short.moves.truncate(n_moves - 1);
        short.samples.retain(|s| {
            let mut game = Game::with_max_plies(200);
            for &m in &short.moves {
                if *game.position() == s.position {
                    return true;
                }
                game.play(m).expect("legal");
            }
            false
        });
        cases.push(("not over", encode(&short, "w", 0, 1, 200).expect("encode")));
        let mut bad_id = good.clone();
        bad_id[4 + 8 + 8 + 2 + 1] = b' ';
        cases.push(("worker id", bad_id));
        for (want, bytes) in cases {
            let err = decode(&bytes).expect_err(want);
            assert!(err.0.contains(want), "{want}: {err}");
        }
        // Policy mass on an illegal move: a position where some house is empty.
        let mut found = false;
        let mut game = Game::with_max_plies(200);
        for (ply, &m) in g.moves.iter().enumerate() {
            if ply.is_multiple_of(2) && game.position().legal_mask() != 0b11_1111 {
                let k = ply / 2;
                let mask = game.position().legal_mask();
                let illegal = (0..6)
                    .find(|i| mask & (1 << i) == 0)
                    .expect("an illegal move");
                let mut bad = good.clone();
                let at = samples_at + k * 26 + 2 + 4 * illegal;
                bad[at..at + 4].copy_from_slice(&0.25f32.to_le_bytes());
                let err = decode(&bad).expect_err("illegal mass");
                assert!(err.0.contains("illegal move"), "{err}");
                found = true;
                break;
            }
            game.play(m).expect("legal");
        }
        assert!(found, "the game has a sampled position with an empty house");
    }
}
