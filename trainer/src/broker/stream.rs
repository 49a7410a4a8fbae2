//! The learner's Redis thread: it reads games from the stream, decodes and validates them, and
//! hands them to [`super::learner::LearnerBroker`] over a bounded channel; it sends the
//! acknowledgements and publications the learner asks for, checks that Redis still holds the
//! published weights, and reconnects with backoff when Redis goes away. All of the learner's
//! Redis I/O after its start is here; the bookkeeping is in [`super::ledger`].

use super::learner::Publication;
use super::wire::{self, Rejected, WireGame};
use super::{Backoff, BrokerUrl, GAME_FIELD, GROUP, Keys, connect};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Timeout for connecting to Redis.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Timeout for each Redis reply.
pub(super) const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one read waits for new games.
const BLOCK_MS: usize = 100;
/// How often the thread checks that Redis still holds the published weights (their version,
/// checksum, signature and key).
const WEIGHTS_CHECK: Duration = Duration::from_secs(2);
/// How often it compares the whole weights hash, every field and byte, with what it published.
const FULL_CHECK: Duration = Duration::from_secs(10);
/// The most bytes of records one read should bring: past it the next reads ask for fewer
/// entries (down to one), so a flood of oversized entries cannot make each reply huge; the
/// bound of one entry is the server's `proto-max-bulk-len` (see docs/security.md).
const READ_BYTES: usize = 16 << 20;

/// A message from the Redis thread.
pub(super) enum Incoming {
    /// A valid game, with its stream entry id.
    Game(String, Box<WireGame>),
    /// A record that failed validation.
    Rejected(String, Rejected),
    /// An entry that is gone from the stream (trimmed while pending): acknowledge only.
    Gone(String),
    /// Something the user should know (the published weights were changed by another client).
    Note(String),
}

/// A request to the Redis thread.
pub(super) enum Command {
    Publish(Arc<Publication>),
    Ack(Vec<String>),
}

/// The link's health, shared with the thread.
#[derive(Default)]
pub(super) struct Link {
    pub(super) connected: bool,
    pub(super) last_error: Option<String>,
    pub(super) reconnects: u64,
}

pub(super) fn sleep_unless(stop: &AtomicBool, total: Duration) {
    let until = Instant::now() + total;
    while !stop.load(Ordering::SeqCst) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20).min(until - Instant::now()));
    }
}

/// Creates the consumer group (reading from the stream's start, so games added while the
/// group did not exist are read), and the stream if needed; an existing group is kept.
pub(super) fn ensure_group(con: &mut redis::Connection, games: &str) -> redis::RedisResult<()> {
    match redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(games)
        .arg(GROUP)
        .arg("0")
        .arg("MKSTREAM")
        .query::<()>(con)
    {
        Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
        other => other,
    }
}

/// One entry of a stream reply: its id and, unless it is gone, its fields.
type Entry = (String, Option<Vec<(Vec<u8>, Vec<u8>)>>);

fn bytes_of(v: &redis::Value) -> Option<Vec<u8>> {
    match v {
        redis::Value::BulkString(b) => Some(b.clone()),
        redis::Value::SimpleString(s) => Some(s.clone().into_bytes()),
        _ => None,
    }
}

/// The entries of an `XREADGROUP` reply for one stream (RESP2 arrays or RESP3 maps).
fn parse_entries(reply: &redis::Value) -> Result<Vec<Entry>, String> {
    let streams: Vec<&redis::Value> = match reply {
        redis::Value::Nil => return Ok(Vec::new()),
        redis::Value::Array(items) => items
            .iter()
            .map(|s| match s {
                redis::Value::Array(kv) if kv.len() == 2 => Ok(&kv[1]),
                _ => Err("a stream of the reply is not [key, entries]".to_string()),
            })
            .collect::<Result<_, _>>()?,
        redis::Value::Map(kv) => kv.iter().map(|(_, v)| v).collect(),
        other => return Err(format!("unexpected reply {other:?}")),
    };
    let mut out = Vec::new();
    for entries in streams {
        let redis::Value::Array(entries) = entries else {
            return Err("the entries are not an array".into());
        };
        for entry in entries {
            let redis::Value::Array(parts) = entry else {
                return Err("an entry is not an array".into());
            };
            let id = parts
                .first()
                .and_then(bytes_of)
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or("an entry has no id")?;
            let fields = match parts.get(1) {
                None | Some(redis::Value::Nil) => None,
                Some(redis::Value::Array(f)) => Some(
                    f.chunks(2)
                        .filter_map(|kv| Some((bytes_of(&kv[0])?, bytes_of(kv.get(1)?)?)))
                        .collect(),
                ),
                Some(redis::Value::Map(f)) => Some(
                    f.iter()
                        .filter_map(|(k, v)| Some((bytes_of(k)?, bytes_of(v)?)))
                        .collect(),
                ),
                Some(other) => return Err(format!("entry {id}: unexpected fields {other:?}")),
            };
            out.push((id, fields));
        }
    }
    Ok(out)
}

/// The record of an entry's fields, or why there is none.
fn record_of(fields: &[(Vec<u8>, Vec<u8>)]) -> Result<&[u8], Rejected> {
    if fields.len() != 1 {
        return Err(Rejected(format!(
            "{} fields; a game entry has exactly one, '{GAME_FIELD}'",
            fields.len()
        )));
    }
    let (name, value) = &fields[0];
    if name.as_slice() != GAME_FIELD.as_bytes() {
        return Err(Rejected(format!(
            "field '{}' is not '{GAME_FIELD}'",
            String::from_utf8_lossy(&name[..name.len().min(32)])
        )));
    }
    Ok(value)
}

/// The thread that talks to Redis for the learner.
pub(super) struct RedisThread {
    pub(super) url: BrokerUrl,
    pub(super) keys: Keys,
    pub(super) con: Option<redis::Connection>,
    pub(super) backoff: Backoff,
    pub(super) publication: Arc<Publication>,
    pub(super) acks: Vec<String>,
    /// `Some(id)`: re-reading this consumer's pending entries after `id`; `None`: new entries.
    pub(super) pending_cursor: Option<String>,
    pub(super) read_batch: usize,
    pub(super) tx: SyncSender<Incoming>,
    pub(super) commands: Receiver<Command>,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) link: Arc<Mutex<Link>>,
    pub(super) last_weights_check: Instant,
    pub(super) last_full_check: Instant,
    /// The publication this thread (or the learner's start) wrote last.
    pub(super) written: Option<Arc<Publication>>,
    /// Games the learner holds unacknowledged; at `max_held` reading stops until a checkpoint.
    pub(super) held: Arc<AtomicUsize>,
    pub(super) max_held: usize,
    /// Entries asked for per read now (at most `read_batch`; fewer after large replies).
    pub(super) count: usize,
}

/// Which fields of the weights hash differ from the publication (none: it is ours).
fn differing(held: &[(Vec<u8>, Vec<u8>)], publication: &Publication) -> Vec<String> {
    let ours = publication.fields();
    let mut diff: Vec<String> = ours
        .iter()
        .filter(|(name, value)| {
            !held
                .iter()
                .any(|(n, v)| n.as_slice() == name.as_bytes() && v.as_slice() == value.as_ref())
        })
        .map(|(name, _)| (*name).to_string())
        .collect();
    for (n, _) in held {
        if !ours.iter().any(|(name, _)| n.as_slice() == name.as_bytes()) {
            diff.push(String::from_utf8_lossy(&n[..n.len().min(32)]).into_owned());
        }
    }
    diff
}

/// Why the thread's loop step ended early.
enum StepError {
    /// Redis failed: reconnect.
    Redis(redis::RedisError),
    /// The learner is gone: exit.
    LearnerGone,
}

impl From<redis::RedisError> for StepError {
    fn from(e: redis::RedisError) -> Self {
        StepError::Redis(e)
    }
}

impl RedisThread {
    pub(super) fn run(&mut self) {
        loop {
            let stopping = self.stop.load(Ordering::SeqCst);
            self.take_commands();
            if stopping {
                self.final_acks();
                return;
            }
            if self.con.is_none() && !self.reconnect() {
                std::thread::sleep(self.backoff.wait().min(Duration::from_millis(50)));
                continue;
            }
            match self.step() {
                Ok(()) => {}
                Err(StepError::LearnerGone) => return,
                Err(StepError::Redis(e)) => self.lost(&e),
            }
        }
    }

    fn take_commands(&mut self) {
        while let Ok(cmd) = self.commands.try_recv() {
            match cmd {
                Command::Publish(p) => {
                    self.publication = p;
                    // Written at the next step (the check finds Redis holding the old one).
                    self.last_weights_check = Instant::now()
                        .checked_sub(2 * WEIGHTS_CHECK)
                        .unwrap_or_else(Instant::now);
                }
                Command::Ack(mut ids) => self.acks.append(&mut ids),
            }
        }
    }

    fn lost(&mut self, e: &redis::RedisError) {
        self.con = None;
        let delay = self.backoff.failed();
        let mut link = self.link.lock().unwrap_or_else(|p| p.into_inner());
        if link.connected {
            link.last_error = Some(format!(
                "broker {}: lost the connection ({}); training goes on, reconnecting (every {:.1} s, up to 10 s)",
                self.url,
                self.url.describe(e),
                delay.as_secs_f64()
            ));
        }
        link.connected = false;
    }

    fn reconnect(&mut self) -> bool {
        if !self.backoff.ready() {
            return false;
        }
        match connect(&self.url, CONNECT_TIMEOUT, IO_TIMEOUT) {
            Ok(mut con) => {
                // Redis may have come back empty: the group and the weights again, then the
                // pending entries from the start (those already taken are duplicates).
                let setup = ensure_group(&mut con, &self.keys.games)
                    .and_then(|()| self.publication.write(&mut con, &self.keys.weights));
                if setup.is_ok() {
                    self.written = Some(Arc::clone(&self.publication));
                }
                if let Err(e) = setup {
                    self.con = Some(con);
                    self.lost(&e);
                    return false;
                }
                self.con = Some(con);
                self.backoff.succeeded();
                self.pending_cursor = Some("0".to_string());
                self.last_weights_check = Instant::now();
                let mut link = self.link.lock().unwrap_or_else(|p| p.into_inner());
                link.connected = true;
                link.reconnects += 1;
                link.last_error = Some(format!("broker {}: connected again", self.url));
                true
            }
            Err(_) => {
                self.backoff.failed();
                false
            }
        }
    }

    fn step(&mut self) -> Result<(), StepError> {
        let Some(con) = self.con.as_mut() else {
            return Ok(());
        };
        if self.last_weights_check.elapsed() >= WEIGHTS_CHECK {
            let full = self.last_full_check.elapsed() >= FULL_CHECK;
            let held: Vec<(Vec<u8>, Vec<u8>)> = if full {
                redis::cmd("HGETALL").arg(&self.keys.weights).query(con)?
            } else {
                let names = ["version", "checksum", "signature", "key"];
                let values: Vec<Option<Vec<u8>>> = redis::cmd("HMGET")
                    .arg(&self.keys.weights)
                    .arg(&names[..])
                    .query(con)?;
                names
                    .iter()
                    .zip(values)
                    .filter_map(|(n, v)| Some((n.as_bytes().to_vec(), v?)))
                    .collect()
            };
            const CHEAP: [&str; 4] = ["version", "checksum", "signature", "key"];
            let diff_from = |p: &Publication| {
                let mut d = differing(&held, p);
                if !full {
                    // Only these four were read.
                    d.retain(|f| CHEAP.contains(&f.as_str()));
                }
                d
            };
            let diff = diff_from(&self.publication);
            if !diff.is_empty() {
                // Redis restarted empty (or lost the key), or another client wrote the hash
                // (a forged publication, or a second learner): publish again. What this
                // thread wrote last, not yet replaced by a newer publication, is no one
                // else's doing.
                let ours = self
                    .written
                    .as_ref()
                    .is_some_and(|w| diff_from(w).is_empty());
                let newer = held.is_empty() || ours;
                self.publication.write(con, &self.keys.weights)?;
                self.written = Some(Arc::clone(&self.publication));
                ensure_group(con, &self.keys.games)?;
                if !newer {
                    let note = format!(
                        "broker {}: the published weights in {} were changed by another client \
                         (fields {}): published version {} again (workers load only weights \
                         signed by this learner)",
                        self.url,
                        self.keys.weights,
                        diff.join(", "),
                        self.publication.version
                    );
                    // The learner may be gone; then nobody needs the note.
                    let _ = self.tx.try_send(Incoming::Note(note));
                }
            }
            if full {
                self.last_full_check = Instant::now();
            }
            self.last_weights_check = Instant::now();
        }
        if !self.acks.is_empty() {
            for chunk in self.acks.chunks(1000) {
                redis::pipe()
                    .cmd("XACK")
                    .arg(&self.keys.games)
                    .arg(GROUP)
                    .arg(chunk)
                    .ignore()
                    .cmd("XDEL")
                    .arg(&self.keys.games)
                    .arg(chunk)
                    .ignore()
                    .query::<()>(con)?;
            }
            self.acks.clear();
        }
        if self.held.load(Ordering::SeqCst) >= self.max_held {
            // The learner holds as many games unacknowledged as it may: wait for a checkpoint.
            std::thread::sleep(Duration::from_millis(BLOCK_MS as u64));
            return Ok(());
        }
        let start = self.pending_cursor.clone().unwrap_or_else(|| ">".into());
        let mut cmd = redis::cmd("XREADGROUP");
        cmd.arg("GROUP")
            .arg(GROUP)
            .arg(GROUP)
            .arg("COUNT")
            .arg(self.count);
        if self.pending_cursor.is_none() {
            cmd.arg("BLOCK").arg(BLOCK_MS);
        }
        cmd.arg("STREAMS").arg(&self.keys.games).arg(&start);
        let reply: redis::Value = match cmd.query(con) {
            Ok(v) => v,
            Err(e) if e.code() == Some("NOGROUP") => {
                ensure_group(con, &self.keys.games)?;
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        let entries = match parse_entries(&reply) {
            Ok(entries) => entries,
            Err(why) => {
                return Err(StepError::Redis(redis::RedisError::from((
                    redis::ErrorKind::Parse,
                    "unexpected XREADGROUP reply",
                    why,
                ))));
            }
        };
        if self.pending_cursor.is_some() {
            self.pending_cursor = entries.last().map(|(id, _)| id.clone());
        }
        let bytes: usize = entries
            .iter()
            .flat_map(|(_, f)| f.iter().flatten())
            .map(|(k, v)| k.len() + v.len())
            .sum();
        self.count = if bytes > READ_BYTES {
            (self.count / 2).max(1)
        } else {
            (self.count * 2).min(self.read_batch)
        };
        for (id, fields) in entries {
            let msg = match fields {
                None => Incoming::Gone(id),
                Some(fields) => match record_of(&fields).and_then(wire::decode) {
                    Ok(game) => Incoming::Game(id, Box::new(game)),
                    Err(why) => Incoming::Rejected(id, why),
                },
            };
            self.tx.send(msg).map_err(|_| StepError::LearnerGone)?;
        }
        Ok(())
    }

    /// At shutdown: sends the acknowledgements held, trying for a few seconds at most.
    fn final_acks(&mut self) {
        let until = Instant::now() + Duration::from_secs(3);
        while !self.acks.is_empty() && Instant::now() < until {
            if self.con.is_none() && !self.reconnect() {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            if let Some(con) = self.con.as_mut() {
                let mut ok = true;
                for chunk in self.acks.chunks(1000) {
                    let r = redis::pipe()
                        .cmd("XACK")
                        .arg(&self.keys.games)
                        .arg(GROUP)
                        .arg(chunk)
                        .ignore()
                        .cmd("XDEL")
                        .arg(&self.keys.games)
                        .arg(chunk)
                        .ignore()
                        .query::<()>(con);
                    if let Err(e) = r {
                        self.lost(&e);
                        ok = false;
                        break;
                    }
                }
                if ok {
                    self.acks.clear();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_replies_parse_and_odd_entries_are_named() {
        use redis::Value::{Array, BulkString, Nil};
        let reply = Array(vec![Array(vec![
            BulkString(b"oware:{r}:games".to_vec()),
            Array(vec![
                Array(vec![
                    BulkString(b"1-0".to_vec()),
                    Array(vec![BulkString(b"g".to_vec()), BulkString(vec![1, 2])]),
                ]),
                Array(vec![BulkString(b"1-1".to_vec()), Nil]),
            ]),
        ])]);
        let entries = parse_entries(&reply).expect("parses");
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].0, "1-0");
        let fields = entries[0].1.as_ref().expect("fields");
        assert_eq!(record_of(fields).expect("one field"), &[1, 2]);
        assert!(entries[1].1.is_none(), "a deleted entry");
        assert!(parse_entries(&Nil).expect("timeout").is_empty());
        let two = vec![(b"g".to_vec(), vec![]), (b"x".to_vec(), vec![])];
        assert!(record_of(&two).is_err());
        let other = vec![(b"x".to_vec(), vec![])];
        assert!(
            record_of(&other)
                .expect_err("wrong field")
                .0
                .contains("'x'")
        );
    }
}
