//! TensorBoard scalar logging: one event file per training process, written synchronously so
//! that an I/O error (a full disk) is an error the caller sees, not a panic in a background
//! thread. Records are encoded with tensorboard-rs (its summary builder and record framing with
//! masked CRC32C) and can be read back with [`read_scalars`].

use protobuf::Message;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use tensorboard_proto::event::Event;
use tensorboard_rs::record_writer::RecordWriter;
use tensorboard_rs::summary::scalar;

/// Writes scalar summaries to `events.out.tfevents.*` in a run directory.
pub struct TensorBoard {
    path: PathBuf,
    writer: RecordWriter<BufWriter<File>>,
}

fn wall_time() -> f64 {
    // A clock set before 1970 gives wall time 0: the events keep their steps and stay readable.
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The host name for the event file's name (TensorBoard's convention); only a label, so a
/// platform without one is named `localhost`.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty() && !h.contains('/'))
        .unwrap_or_else(|| "localhost".to_string())
}

impl TensorBoard {
    /// Creates a new event file in `dir` (never overwriting an existing one).
    pub fn create(dir: &Path) -> anyhow::Result<TensorBoard> {
        // Only part of the file name (create_new below keeps names unique), so a clock before
        // 1970 is 0.
        let secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let host = hostname();
        let pid = std::process::id();
        let mut n = 0;
        let (path, file) = loop {
            let path = dir.join(format!("events.out.tfevents.{secs:010}.{host}.{pid}.{n}"));
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(f) => break (path, f),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => {
                    return Err(anyhow::anyhow!(
                        "cannot create event file {}: {e}",
                        path.display()
                    ));
                }
            }
        };
        let mut tb = TensorBoard {
            path,
            writer: RecordWriter::new(BufWriter::new(file)),
        };
        let mut version = Event::new();
        version.set_wall_time(wall_time());
        version.set_file_version("brain.Event:2".to_string());
        tb.write_event(&version)?;
        tb.flush()?;
        Ok(tb)
    }

    /// The event file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_event(&mut self, event: &Event) -> anyhow::Result<()> {
        let bytes = event
            .write_to_bytes()
            .map_err(|e| anyhow::anyhow!("encoding a TensorBoard event: {e}"))?;
        self.writer
            .write(&bytes)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", self.path.display()))
    }

    /// Logs one scalar at `step`.
    pub fn scalar(&mut self, tag: &str, value: f64, step: u64) -> anyhow::Result<()> {
        let mut event = Event::new();
        event.set_wall_time(wall_time());
        event.set_step(step as i64);
        event.set_summary(scalar(tag, value as f32));
        self.write_event(&event)
    }

    /// Pushes buffered events to the file.
    pub fn flush(&mut self) -> anyhow::Result<()> {
        self.writer
            .flush()
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", self.path.display()))
    }
}

/// One scalar read back from an event file.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarEvent {
    /// The tag, e.g. `loss/total`.
    pub tag: String,
    /// The training step.
    pub step: i64,
    /// The value.
    pub value: f32,
}

/// Reads every scalar from a TensorBoard event file, checking the record framing.
pub fn read_scalars(path: &Path) -> anyhow::Result<Vec<ScalarEvent>> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let header = bytes.get(at..at + 12).ok_or_else(|| {
            anyhow::anyhow!("{}: truncated record header at byte {at}", path.display())
        })?;
        let mut len_bytes = [0u8; 8];
        len_bytes.copy_from_slice(&header[..8]);
        let len = u64::from_le_bytes(len_bytes) as usize;
        let body_start = at + 12;
        let data = bytes
            .get(body_start..body_start + len)
            .ok_or_else(|| anyhow::anyhow!("{}: truncated record at byte {at}", path.display()))?;
        if bytes.len() < body_start + len + 4 {
            return Err(anyhow::anyhow!(
                "{}: missing record checksum at byte {at}",
                path.display()
            ));
        }
        let crc = u32::from_le_bytes([
            bytes[body_start + len],
            bytes[body_start + len + 1],
            bytes[body_start + len + 2],
            bytes[body_start + len + 3],
        ]);
        if tensorboard_rs::masked_crc32c::masked_crc32c(data) != crc {
            return Err(anyhow::anyhow!(
                "{}: bad record checksum at byte {at}",
                path.display()
            ));
        }
        let event = Event::parse_from_bytes(data)
            .map_err(|e| anyhow::anyhow!("{}: bad event at byte {at}: {e}", path.display()))?;
        if event.has_summary() {
            for v in event.get_summary().get_value() {
                out.push(ScalarEvent {
                    tag: v.get_tag().to_string(),
                    step: event.get_step(),
                    value: v.get_simple_value(),
                });
            }
        }
        at = body_start + len + 4;
    }
    Ok(out)
}

/// The event files in `dir`, oldest first.
pub fn event_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in
        std::fs::read_dir(dir).map_err(|e| anyhow::anyhow!("reading {}: {e}", dir.display()))?
    {
        let path = entry
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", dir.display()))?
            .path();
        let is_events = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("events.out.tfevents."));
        if is_events {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_round_trip_through_an_event_file() {
        let dir = std::env::temp_dir().join(format!("oware-tb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = {
            let mut tb = TensorBoard::create(&dir).expect("create");
            tb.scalar("loss/total", 1.5, 1).expect("write");
            tb.scalar("loss/total", 0.75, 2).expect("write");
            tb.scalar("eval/elo", -12.0, 2).expect("write");
            tb.flush().expect("flush");
            tb.path().to_path_buf()
        };
        let second = TensorBoard::create(&dir).expect("a second file in the same second");
        assert_ne!(second.path(), path);
        let got = read_scalars(&path).expect("read");
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[1],
            ScalarEvent {
                tag: "loss/total".into(),
                step: 2,
                value: 0.75
            }
        );
        assert_eq!(got[2].tag, "eval/elo");
        // A damaged file is an error, not a panic.
        let mut bytes = std::fs::read(&path).expect("bytes");
        let last = bytes.len() - 6;
        bytes[last] ^= 0xff;
        let bad = dir.join("events.out.tfevents.damaged");
        std::fs::write(&bad, &bytes).expect("write");
        assert!(read_scalars(&bad).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
