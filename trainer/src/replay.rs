//! The replay buffer: the most recent training samples from self-play, sampled uniformly by the
//! learner, and saved with each checkpoint so that a resumed run continues where it stopped.

use oware_engine::{Position, Side};
use oware_model::checksum;
use rand::Rng;
use std::collections::VecDeque;

/// One training example: a position and the targets learned from its game, all from the point
/// of view of the side to move there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// The position searched.
    pub position: Position,
    /// The search's policy target over the mover's six houses (sums to 1).
    pub policy: [f32; 6],
    /// The game's final result for the mover: 1 win, 0 draw, -1 loss.
    pub value: f32,
    /// The game's final seed margin for the mover, divided by 48.
    pub margin: f32,
    /// The short-horizon value target for the mover: the exponentially weighted mean of the
    /// next recorded search values, ending in the result (`selfplay.short_value_horizon`);
    /// the result itself where no search values are known (broker games, old buffers).
    pub short_value: f32,
}

impl Sample {
    /// A sample whose targets are the game's `result` for `side` (the short-horizon value
    /// too).
    pub fn of_result(
        position: Position,
        policy: [f32; 6],
        side: Side,
        result: &oware_engine::GameResult,
    ) -> Sample {
        let value = result.value_for(side);
        Sample {
            position,
            policy,
            value,
            margin: result.margin_for(side) as f32 / 48.0,
            short_value: value,
        }
    }
}

/// A ring of the most recent samples.
#[derive(Clone, Debug)]
pub struct ReplayBuffer {
    samples: VecDeque<Sample>,
    capacity: usize,
    /// Samples ever added (including those since evicted).
    total_added: u64,
}

const MAGIC: &[u8; 8] = b"OWREPLY1";
/// The bytes of one sample in `replay.bin`: board (12), captured (2), side (1), policy, value,
/// margin.
pub(crate) const SAMPLE_BYTES: usize = 15 + 6 * 4 + 4 + 4;

/// The bytes of one sample in a replay segment: those of [`SAMPLE_BYTES`], then the
/// short-horizon value.
pub(crate) const SEGMENT_SAMPLE_BYTES: usize = SAMPLE_BYTES + 4;

/// Appends the bytes of one sample as a segment holds it.
pub(crate) fn write_segment_sample(s: &Sample, bytes: &mut Vec<u8>) {
    write_sample(s, bytes);
    bytes.extend_from_slice(&s.short_value.to_le_bytes());
}

/// Reads one sample of [`SEGMENT_SAMPLE_BYTES`] bytes.
pub(crate) fn read_segment_sample(chunk: &[u8]) -> Result<Sample, String> {
    if chunk.len() != SEGMENT_SAMPLE_BYTES {
        return Err("damaged replay segment: a sample of the wrong length".into());
    }
    let mut s = read_sample(&chunk[..SAMPLE_BYTES])?;
    let mut f = [0u8; 4];
    f.copy_from_slice(&chunk[SAMPLE_BYTES..]);
    s.short_value = f32::from_le_bytes(f);
    if !s.short_value.is_finite() {
        return Err("damaged replay segment: a target is not a finite number".into());
    }
    Ok(s)
}

/// Appends the bytes of one sample as `replay.bin` holds it (no short-horizon value).
pub(crate) fn write_sample(s: &Sample, bytes: &mut Vec<u8>) {
    bytes.extend_from_slice(s.position.board());
    bytes.extend_from_slice(&s.position.captured());
    bytes.push(s.position.to_move().index() as u8);
    for p in s.policy {
        bytes.extend_from_slice(&p.to_le_bytes());
    }
    bytes.extend_from_slice(&s.value.to_le_bytes());
    bytes.extend_from_slice(&s.margin.to_le_bytes());
}

/// Reads one sample of [`SAMPLE_BYTES`] bytes; the error says what is wrong.
pub(crate) fn read_sample(chunk: &[u8]) -> Result<Sample, String> {
    let bad = |why: &str| format!("damaged replay buffer: {why}");
    if chunk.len() != SAMPLE_BYTES {
        return Err(bad("a sample of the wrong length"));
    }
    let mut board = [0u8; 12];
    board.copy_from_slice(&chunk[..12]);
    let side = match chunk[14] {
        0 => Side::South,
        1 => Side::North,
        _ => return Err(bad("bad side to move")),
    };
    let position = Position::from_parts(board, [chunk[12], chunk[13]], side)
        .map_err(|e| bad(&e.to_string()))?;
    let f =
        |at: usize| f32::from_le_bytes([chunk[at], chunk[at + 1], chunk[at + 2], chunk[at + 3]]);
    let mut policy = [0.0; 6];
    for (i, p) in policy.iter_mut().enumerate() {
        *p = f(15 + 4 * i);
    }
    let (value, margin) = (f(39), f(43));
    if !(policy.iter().all(|p| p.is_finite()) && value.is_finite() && margin.is_finite()) {
        return Err(bad("a target is not a finite number"));
    }
    Ok(Sample {
        position,
        policy,
        value,
        margin,
        short_value: value,
    })
}

impl ReplayBuffer {
    /// An empty buffer holding at most `capacity` samples.
    pub fn new(capacity: usize) -> ReplayBuffer {
        ReplayBuffer {
            samples: VecDeque::with_capacity(capacity.min(1 << 20)),
            capacity: capacity.max(1),
            total_added: 0,
        }
    }

    /// Samples held now.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Samples ever added.
    pub fn total_added(&self) -> u64 {
        self.total_added
    }

    /// Adds samples, evicting the oldest beyond the capacity.
    pub fn extend(&mut self, new: impl IntoIterator<Item = Sample>) {
        for s in new {
            if self.samples.len() == self.capacity {
                self.samples.pop_front();
            }
            self.samples.push_back(s);
            self.total_added += 1;
        }
    }

    /// `n` samples drawn uniformly with replacement (none from an empty buffer).
    pub fn sample<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Vec<Sample> {
        if self.samples.is_empty() {
            return Vec::new();
        }
        (0..n)
            .map(|_| self.samples[rng.random_range(0..self.samples.len())])
            .collect()
    }

    /// Changes the capacity, keeping the most recent samples that fit (in their order).
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity.max(1);
        let excess = self.samples.len().saturating_sub(self.capacity);
        self.samples.drain(..excess);
    }

    /// The samples, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter()
    }

    /// The buffer as the bytes of a `replay.bin` file, ending in its checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(32 + self.samples.len() * SAMPLE_BYTES);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(self.capacity as u64).to_le_bytes());
        bytes.extend_from_slice(&self.total_added.to_le_bytes());
        bytes.extend_from_slice(&(self.samples.len() as u64).to_le_bytes());
        for s in &self.samples {
            write_sample(s, &mut bytes);
        }
        let sum = checksum(&bytes);
        bytes.extend_from_slice(&sum.to_le_bytes());
        bytes
    }

    /// Reads the bytes written by [`ReplayBuffer::to_bytes`]. A damaged buffer is an error
    /// saying what is wrong (the caller names the file).
    pub fn from_bytes(bytes: &[u8]) -> Result<ReplayBuffer, String> {
        let bad = |why: &str| format!("damaged replay buffer: {why}");
        if bytes.len() < MAGIC.len() + 32 || &bytes[..8] != MAGIC {
            return Err(bad("not a replay buffer file"));
        }
        let (body, tail) = bytes.split_at(bytes.len() - 8);
        let mut sum = [0u8; 8];
        sum.copy_from_slice(tail);
        if checksum(body) != u64::from_le_bytes(sum) {
            return Err(bad("checksum mismatch"));
        }
        let word = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&body[at..at + 8]);
            u64::from_le_bytes(w)
        };
        let capacity = usize::try_from(word(8)).map_err(|_| bad("capacity out of range"))?;
        let total_added = word(16);
        let count = usize::try_from(word(24)).map_err(|_| bad("count out of range"))?;
        let data = &body[32..];
        if data.len() != count.saturating_mul(SAMPLE_BYTES) || count > capacity {
            return Err(bad("wrong length"));
        }
        if (count as u64) > total_added {
            return Err(bad("holds more samples than were ever added"));
        }
        let samples = data
            .chunks_exact(SAMPLE_BYTES)
            .map(read_sample)
            .collect::<Result<Vec<_>, _>>()?;
        ReplayBuffer::from_parts(capacity, total_added, samples)
    }

    /// A buffer of `capacity` holding `samples` (oldest first), `total_added` samples having
    /// been added in all; an error when that cannot be.
    pub fn from_parts(
        capacity: usize,
        total_added: u64,
        samples: Vec<Sample>,
    ) -> Result<ReplayBuffer, String> {
        if capacity == 0 || samples.len() > capacity || samples.len() as u64 > total_added {
            return Err(format!(
                "damaged replay buffer: {} samples of {total_added} added, capacity {capacity}",
                samples.len()
            ));
        }
        let mut buf = ReplayBuffer::new(capacity);
        buf.total_added = total_added;
        buf.samples.extend(samples);
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn sample(i: usize) -> Sample {
        let (position, _) = Position::start()
            .play(oware_engine::Move::from_relative(Side::South, i % 6))
            .expect("legal");
        Sample {
            position,
            policy: [0.5, 0.5, 0.0, 0.0, 0.0, 0.0],
            value: 1.0,
            margin: -0.25,
            // As replay.bin reads it back: the result.
            short_value: 1.0,
        }
    }

    #[test]
    fn ring_evicts_oldest_and_round_trips() {
        let mut buf = ReplayBuffer::new(4);
        buf.extend((0..6).map(sample));
        assert_eq!(buf.len(), 4);
        assert_eq!(buf.total_added(), 6);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        assert_eq!(buf.sample(10, &mut rng).len(), 10);
        assert!(ReplayBuffer::new(3).sample(5, &mut rng).is_empty());
        let mut bytes = buf.to_bytes();
        let back = ReplayBuffer::from_bytes(&bytes).expect("load");
        assert_eq!(back.samples, buf.samples);
        assert_eq!(back.total_added(), 6);
        bytes[40] ^= 1;
        let err = ReplayBuffer::from_bytes(&bytes).expect_err("damaged");
        assert!(err.contains("damaged"), "{err}");
        assert!(ReplayBuffer::from_bytes(&bytes[..20]).is_err());
    }

    #[test]
    fn a_smaller_capacity_keeps_the_most_recent_samples() {
        let mut buf = ReplayBuffer::new(10);
        buf.extend((0..8).map(sample));
        let newest: Vec<Sample> = buf.samples().skip(5).copied().collect();
        buf.set_capacity(3);
        assert_eq!(buf.capacity(), 3);
        assert_eq!(buf.samples().copied().collect::<Vec<_>>(), newest);
        assert_eq!(
            buf.total_added(),
            8,
            "the count of samples ever added stays"
        );
        buf.set_capacity(100);
        assert_eq!(buf.len(), 3, "a larger capacity keeps everything");
        buf.extend((8..10).map(sample));
        assert_eq!(buf.len(), 5);
    }

    #[test]
    fn the_file_format_is_unchanged() {
        // A buffer written by the earlier format (and checksum function) still loads: the
        // checksum of a known body is the FNV-1a 64 value earlier builds wrote.
        let mut buf = ReplayBuffer::new(2);
        buf.extend([sample(0)]);
        let bytes = buf.to_bytes();
        assert_eq!(&bytes[..8], MAGIC);
        assert_eq!(bytes.len(), 32 + SAMPLE_BYTES + 8);
        let (body, tail) = bytes.split_at(bytes.len() - 8);
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in body {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        assert_eq!(tail, h.to_le_bytes());
    }
}
