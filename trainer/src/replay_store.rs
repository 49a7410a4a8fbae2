//! The replay buffer on disk, written incrementally: a checkpoint does not rewrite the whole
//! buffer, it adds one **segment** with the samples added since the previous checkpoint.
//!
//! - `RUN/replay/seg-SSSSSSSSSSSS-NNNNNNNN.bin`: the samples with indices `S..S+N` (an index
//!   counts every sample ever added to the run's buffer), in the order they were added. A
//!   segment is written atomically (temporary file, fsync, rename) before the checkpoint that
//!   first needs it, and never modified: the name says what it holds.
//! - `CHECKPOINT/replay.json`: the buffer of that checkpoint — its capacity, the samples ever
//!   added, how many it holds, and the segments that hold them, each with its length and
//!   checksum. It is one of the checkpoint's files, so it is written with the checkpoint and
//!   checked when read.
//!
//! A kill between a segment and its checkpoint leaves a segment that no checkpoint names; it is
//! removed when the run resumes, like the segments of pruned checkpoints, which
//! [`remove_unreferenced`] deletes once no kept checkpoint names them. Checkpoints written by
//! older builds hold the whole buffer in `replay.bin` ([`crate::state::REPLAY_FILE`]) and still
//! load.

use crate::replay::{ReplayBuffer, Sample};
use crate::rundir::RunDir;
use anyhow::{Context, bail};
use oware_engine::atomic_file::write_atomic;
use oware_model::checksum;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The replay description inside a checkpoint folder.
pub const REPLAY_INDEX_FILE: &str = "replay.json";

/// The folder of a run's segments.
pub const SEGMENTS_DIR: &str = "replay";

const SEGMENT_MAGIC: &[u8; 8] = b"OWRSEG01";

/// One segment named by a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SegmentRef {
    /// The file name in `RUN/replay/`.
    pub name: String,
    /// The index of its first sample.
    pub start: u64,
    /// Its samples.
    pub count: u64,
    /// Its file's length in bytes.
    pub bytes: u64,
    /// FNV-1a 64 of the file, hex.
    pub fnv1a64: String,
}

impl SegmentRef {
    /// One past the index of its last sample.
    pub fn end(&self) -> u64 {
        self.start + self.count
    }
}

/// `replay.json`: what a checkpoint's buffer holds and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayIndex {
    /// The buffer's capacity.
    pub capacity: usize,
    /// Samples ever added.
    pub total_added: u64,
    /// Samples held: those with indices `total_added - len .. total_added`.
    pub len: u64,
    /// The segments covering them, in index order.
    pub segments: Vec<SegmentRef>,
}

/// Where the buffer stands on disk: the segments of the newest checkpoint, so the next one
/// writes only what was added since.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SavedReplay {
    /// The segments that hold the buffer as last saved, in index order.
    pub segments: Vec<SegmentRef>,
}

impl SavedReplay {
    /// One past the last sample saved (0 when nothing is).
    fn saved_to(&self) -> u64 {
        self.segments.last().map_or(0, SegmentRef::end)
    }
}

fn segments_dir(run: &RunDir) -> PathBuf {
    run.root().join(SEGMENTS_DIR)
}

fn segment_name(start: u64, count: u64) -> String {
    format!("seg-{start:012}-{count:08}.bin")
}

/// The bytes of a segment holding `samples`, the first of index `start`.
fn segment_bytes<'a>(start: u64, count: u64, samples: impl Iterator<Item = &'a Sample>) -> Vec<u8> {
    let len = usize::try_from(count).unwrap_or(0);
    let mut bytes =
        Vec::with_capacity(24 + len.saturating_mul(crate::replay::SEGMENT_SAMPLE_BYTES) + 8);
    bytes.extend_from_slice(SEGMENT_MAGIC);
    bytes.extend_from_slice(&start.to_le_bytes());
    bytes.extend_from_slice(&count.to_le_bytes());
    for s in samples {
        crate::replay::write_segment_sample(s, &mut bytes);
    }
    let sum = checksum(&bytes);
    bytes.extend_from_slice(&sum.to_le_bytes());
    bytes
}

/// The samples of a segment file's bytes, checked against what `r` says of it.
fn read_segment(bytes: &[u8], r: &SegmentRef) -> Result<Vec<Sample>, String> {
    if bytes.len() as u64 != r.bytes {
        return Err(format!(
            "{} bytes, the checkpoint recorded {}",
            bytes.len(),
            r.bytes
        ));
    }
    if format!("{:016x}", checksum(bytes)) != r.fnv1a64 {
        return Err("checksum mismatch with the checkpoint's record".into());
    }
    if bytes.len() < 32 || &bytes[..8] != SEGMENT_MAGIC {
        return Err("not a replay segment".into());
    }
    let (body, tail) = bytes.split_at(bytes.len() - 8);
    let mut sum = [0u8; 8];
    sum.copy_from_slice(tail);
    if checksum(body) != u64::from_le_bytes(sum) {
        return Err("damaged: checksum mismatch".into());
    }
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&body[at..at + 8]);
        u64::from_le_bytes(w)
    };
    if word(8) != r.start || word(16) != r.count {
        return Err("holds other samples than its name says".into());
    }
    let data = &body[24..];
    let count = usize::try_from(r.count).map_err(|_| "count out of range".to_string())?;
    if data.len() != count.saturating_mul(crate::replay::SEGMENT_SAMPLE_BYTES) {
        return Err("wrong length".into());
    }
    data.chunks_exact(crate::replay::SEGMENT_SAMPLE_BYTES)
        .map(crate::replay::read_segment_sample)
        .collect()
}

/// Saves `buffer` for a new checkpoint: writes one segment with the samples added since
/// `saved` (all the buffer holds, when more were added than it keeps), updates `saved`, and
/// returns the `replay.json` bytes of the checkpoint.
pub fn save_increment(
    run: &RunDir,
    buffer: &ReplayBuffer,
    saved: &mut SavedReplay,
) -> anyhow::Result<Vec<u8>> {
    let total = buffer.total_added();
    let window_start = total - buffer.len() as u64;
    let from = saved.saved_to().max(window_start);
    let mut segments: Vec<SegmentRef> = saved
        .segments
        .iter()
        .filter(|s| s.end() > window_start && s.end() <= from)
        .cloned()
        .collect();
    if from < total {
        let skip = usize::try_from(from - window_start).context("replay index out of range")?;
        let count = total - from;
        let bytes = segment_bytes(from, count, buffer.samples().skip(skip));
        let name = segment_name(from, count);
        let dir = segments_dir(run);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        write_atomic(&dir.join(&name), &bytes)?;
        segments.push(SegmentRef {
            name,
            start: from,
            count,
            bytes: bytes.len() as u64,
            fnv1a64: format!("{:016x}", checksum(&bytes)),
        });
    }
    let index = ReplayIndex {
        capacity: buffer.capacity(),
        total_added: total,
        len: buffer.len() as u64,
        segments: segments.clone(),
    };
    saved.segments = segments;
    Ok(serde_json::to_vec_pretty(&index)?)
}

/// Reads the buffer a checkpoint's `replay.json` (`index_bytes`, from checkpoint `dir`)
/// describes, from the run's segments. A missing, damaged or mismatched segment is an error
/// naming the file.
pub fn load(
    run: &RunDir,
    dir: &Path,
    index_bytes: &[u8],
) -> anyhow::Result<(ReplayBuffer, SavedReplay)> {
    let index_path = dir.join(REPLAY_INDEX_FILE);
    let index: ReplayIndex = serde_json::from_slice(index_bytes)
        .with_context(|| format!("{}: not a valid replay index", index_path.display()))?;
    if index.len > index.total_added || index.len > index.capacity as u64 || index.capacity == 0 {
        bail!(
            "{}: holds {} of {} samples with capacity {}",
            index_path.display(),
            index.len,
            index.total_added,
            index.capacity
        );
    }
    let window_start = index.total_added - index.len;
    let mut samples: Vec<Sample> = Vec::new();
    let mut next = window_start;
    for r in &index.segments {
        if r.name != segment_name(r.start, r.count) || r.start > next || r.end() <= next {
            bail!(
                "{}: segment {} does not continue the buffer at sample {next}",
                index_path.display(),
                r.name
            );
        }
        let path = segments_dir(run).join(&r.name);
        let bytes = std::fs::read(&path).with_context(|| {
            format!(
                "reading the replay segment {} that {} names",
                path.display(),
                index_path.display()
            )
        })?;
        let got =
            read_segment(&bytes, r).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let skip = usize::try_from(next - r.start).context("replay index out of range")?;
        samples.extend(got.into_iter().skip(skip));
        next = r.end();
    }
    if next != index.total_added {
        bail!(
            "{}: its segments end at sample {next}, not at {}",
            index_path.display(),
            index.total_added
        );
    }
    let buffer = ReplayBuffer::from_parts(index.capacity, index.total_added, samples)
        .map_err(|e| anyhow::anyhow!("{}: {e}", index_path.display()))?;
    Ok((
        buffer,
        SavedReplay {
            segments: index.segments,
        },
    ))
}

/// Deletes the segments no checkpoint of the run names (those of pruned checkpoints, and one a
/// killed process wrote before its checkpoint). Only call it while this process is the run's
/// one writer. Returns how many were removed.
pub fn remove_unreferenced(run: &RunDir) -> anyhow::Result<usize> {
    let dir = segments_dir(run);
    if !dir.is_dir() {
        return Ok(0);
    }
    let mut named: HashSet<String> = HashSet::new();
    let checkpoints = run.checkpoints();
    for entry in std::fs::read_dir(&checkpoints)
        .with_context(|| format!("reading {}", checkpoints.display()))?
    {
        let path = entry
            .with_context(|| format!("reading {}", checkpoints.display()))?
            .path();
        let index = path.join(REPLAY_INDEX_FILE);
        if !index.is_file() {
            continue;
        }
        let bytes =
            std::fs::read(&index).with_context(|| format!("reading {}", index.display()))?;
        let index: ReplayIndex = serde_json::from_slice(&bytes)
            .with_context(|| format!("{}: not a valid replay index", index.display()))?;
        named.extend(index.segments.into_iter().map(|s| s.name));
    }
    let mut removed = 0;
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with("seg-") && !named.contains(name) {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_engine::Position;

    fn sample(i: u64) -> Sample {
        Sample {
            position: Position::start(),
            policy: [1.0 / 6.0; 6],
            value: (i % 3) as f32 - 1.0,
            margin: i as f32 / 1000.0,
            short_value: ((i % 5) as f32 - 2.0) / 2.0,
        }
    }

    fn add(buffer: &mut ReplayBuffer, from: u64, n: u64) {
        buffer.extend((from..from + n).map(sample));
    }

    #[test]
    fn increments_write_only_new_samples_and_read_back_the_buffer() {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = RunDir::new(dir.path().join("run"));
        run.create().expect("create");
        let mut buffer = ReplayBuffer::new(100);
        let mut saved = SavedReplay::default();
        let ckpt = dir.path().join("ckpt");
        std::fs::create_dir_all(&ckpt).expect("dir");
        add(&mut buffer, 0, 30);
        let first = save_increment(&run, &buffer, &mut saved).expect("saves");
        add(&mut buffer, 30, 50);
        let second = save_increment(&run, &buffer, &mut saved).expect("saves");
        assert_eq!(saved.segments.len(), 2);
        assert_eq!(saved.segments[1].start, 30);
        assert_eq!(saved.segments[1].count, 50);
        // Past the capacity: the oldest segment leaves the window only once it is all evicted.
        add(&mut buffer, 80, 40);
        let third = save_increment(&run, &buffer, &mut saved).expect("saves");
        assert_eq!(
            saved
                .segments
                .iter()
                .map(|s| (s.start, s.count))
                .collect::<Vec<_>>(),
            vec![(0, 30), (30, 50), (80, 40)]
        );
        for (index, len, total) in [(&first, 30, 30), (&second, 80, 80), (&third, 100, 120)] {
            let (back, _) = load(&run, &ckpt, index).expect("loads");
            assert_eq!((back.len() as u64, back.total_added()), (len, total));
            let want: Vec<Sample> = (total - len..total).map(sample).collect();
            assert_eq!(back.samples().copied().collect::<Vec<_>>(), want);
        }
        // More than the capacity at once: one segment with what the buffer holds.
        add(&mut buffer, 120, 250);
        let fourth = save_increment(&run, &buffer, &mut saved).expect("saves");
        assert_eq!(
            saved
                .segments
                .iter()
                .map(|s| (s.start, s.count))
                .collect::<Vec<_>>(),
            vec![(270, 100)]
        );
        let (back, _) = load(&run, &ckpt, &fourth).expect("loads");
        assert_eq!(back.samples().next(), Some(&sample(270)));
    }

    #[test]
    fn damaged_or_missing_segments_are_errors_naming_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = RunDir::new(dir.path().join("run"));
        run.create().expect("create");
        let mut buffer = ReplayBuffer::new(100);
        let mut saved = SavedReplay::default();
        add(&mut buffer, 0, 10);
        let index = save_increment(&run, &buffer, &mut saved).expect("saves");
        let seg = segments_dir(&run).join(&saved.segments[0].name);
        let mut bytes = std::fs::read(&seg).expect("read");
        bytes[40] ^= 1;
        std::fs::write(&seg, &bytes).expect("write");
        let e = format!("{:#}", load(&run, dir.path(), &index).expect_err("damaged"));
        assert!(
            e.contains(&saved.segments[0].name) && e.contains("checksum"),
            "{e}"
        );
        std::fs::remove_file(&seg).expect("remove");
        let e = format!("{:#}", load(&run, dir.path(), &index).expect_err("missing"));
        assert!(e.contains(&saved.segments[0].name), "{e}");
        let e = format!(
            "{:#}",
            load(&run, dir.path(), b"{\"capacity\": 3}").expect_err("bad")
        );
        assert!(e.contains("replay.json"), "{e}");
    }

    #[test]
    fn segments_no_checkpoint_names_are_removed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = RunDir::new(dir.path().join("run"));
        run.create().expect("create");
        let mut buffer = ReplayBuffer::new(100);
        let mut saved = SavedReplay::default();
        add(&mut buffer, 0, 10);
        let index = save_increment(&run, &buffer, &mut saved).expect("saves");
        let kept = run.checkpoints().join("step-0000001");
        std::fs::create_dir_all(&kept).expect("dir");
        std::fs::write(kept.join(REPLAY_INDEX_FILE), &index).expect("write");
        add(&mut buffer, 10, 10);
        save_increment(&run, &buffer, &mut saved).expect("saves"); // no checkpoint names it
        assert_eq!(remove_unreferenced(&run).expect("removes"), 1);
        assert!(segments_dir(&run).join(segment_name(0, 10)).is_file());
        assert!(!segments_dir(&run).join(segment_name(10, 10)).exists());
    }
}
