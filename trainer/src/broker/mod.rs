//! Self-play on many machines through Redis: `oware train --broker URL` (the learner) and
//! `oware worker --broker URL --run NAME` (stateless self-play processes anywhere).
//!
//! # Keys of a run
//! `NAME` is the run's name (its directory's last component, or `--run NAME` of a worker).
//!
//! - `oware:{NAME}:weights`, a hash written by the learner in one `MULTI`/`EXEC`:
//!   `version` (a decimal number, see below), `model` (the network shape, JSON), `settings`
//!   (the learner's `[mcts]`, `[selfplay]` and `[broker]` sections, JSON: workers play with the
//!   learner's search settings), `weights` (burnpack bytes, [`oware_model::encode_weights`]) and
//!   `checksum` (FNV-1a 64 of `weights`, hex). Workers poll `version` about once a second and
//!   fetch the whole hash when it changes.
//! - `oware:{NAME}:games`, a stream: one entry per finished game, field `g` holding the
//!   record of [`wire`] (worker id, per-worker sequence number, weights version, moves, search
//!   policies). Workers add with `MAXLEN ~ broker.max_stream_len`. The learner reads it through
//!   the consumer group `learner` as consumer `learner`.
//!
//! # Versions
//! Each publication gets the next version: one more than the larger of the run's own count
//! (kept in its checkpoints) and the version found in Redis when the learner starts, so versions
//! only grow, across learner restarts too. A game is tagged with the version its worker held
//! when the game ended. The learner drops a game whose version is more than
//! `broker.max_version_lag` below its newest (counted as stale).
//!
//! # Delivery: at least once, trained once
//! Every record carries its game id: the worker's id (random, new for every worker process)
//! and a sequence number that counts that worker's games from 0. A worker sends its games in
//! order and retries a send that failed, so the learner sees each worker's games in order,
//! perhaps more than once. The learner keeps, per worker, the highest sequence number it has
//! taken ([`ledger::BrokerState`], saved in every checkpoint's `meta.json`); a record at or
//! below it is a duplicate and is dropped (counted). Entries are acknowledged (`XACK`, then
//! deleted with `XDEL`) only after a checkpoint holds their games. A learner that is killed
//! leaves the entries it read since its last checkpoint pending in the group; when it resumes
//! it first re-reads its pending entries (`XREADGROUP ... 0`), then new ones (`>`). Games that
//! the checkpoint holds are then duplicates, the others are taken: none is lost, none is
//! trained on twice.
//!
//! # Validation
//! A record is decoded and checked before it comes near the replay buffer: its size (at most
//! [`wire::MAX_RECORD_BYTES`]), every field's range, the worker id's characters, every move
//! (the game is replayed with the engine, and must end exactly at its last move), every policy
//! (finite, non-negative, zero on illegal moves, summing to 1 over the legal ones). The
//! positions and the value and margin targets are not sent: the learner computes them from the
//! replayed game, so they are right by construction. A bad record is dropped, counted as
//! rejected, and acknowledged with the others.
//!
//! # Failures
//! Redis down or unreachable: the learner keeps training on what it has and checkpointing
//! (acknowledgements wait); its Redis thread reconnects with exponential backoff (0.2 s up to
//! 10 s) and says so on one line. Workers keep playing and hold up to
//! [`worker::OUTBOX_GAMES`] finished games until Redis is back. A Redis that comes back empty
//! (restarted without persistence) gets the weights republished and the consumer group created
//! again. Passwords in URLs are never printed ([`BrokerUrl`]'s `Display` hides them) and the
//! URL is never written to `config.toml`.
//!
//! # TLS
//! A `rediss://` URL connects through rustls ([`tls`]): the server's certificate is checked
//! against the system's trust store (`SSL_CERT_FILE` / `SSL_CERT_DIR` where set), or against
//! the `--broker-ca` file only; `--broker-cert`/`--broker-key` answer a server that asks for a
//! client certificate. A TLS set-up that does not match the server's ([`Mismatch`]) stops a
//! process that never reached Redis, with the reason and what to do; later it is retried like
//! Redis being away.

pub mod learner;
pub mod ledger;
pub mod sign;
pub mod stream;
pub mod tls;
pub mod wire;
pub mod worker;

pub use tls::TlsFiles;

use anyhow::Context;
use std::fmt;
use std::time::{Duration, Instant};

/// The consumer group (and consumer) name of the learner on the games stream.
pub const GROUP: &str = "learner";
/// The stream field that holds a game record.
pub const GAME_FIELD: &str = "g";

/// The Redis keys of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    /// `oware:{run}:weights`.
    pub weights: String,
    /// `oware:{run}:games`.
    pub games: String,
}

impl Keys {
    /// The keys of run `run` (a name of letters, digits, `.`, `_` and `-`).
    pub fn new(run: &str) -> anyhow::Result<Keys> {
        check_run_name(run)?;
        Ok(Keys {
            weights: format!("oware:{{{run}}}:weights"),
            games: format!("oware:{{{run}}}:games"),
        })
    }
}

/// Checks a run name used in Redis keys.
pub fn check_run_name(run: &str) -> anyhow::Result<()> {
    let ok = !run.is_empty()
        && run.len() <= 100
        && run
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        anyhow::bail!(
            "run name '{run}' cannot name Redis keys: use 1 to 100 letters, digits, '.', '_' or '-'"
        );
    }
    Ok(())
}

/// The run's name from what a user passes as `--run`: a name, or the learner's run
/// directory (then its last component, the name the learner uses), checked as
/// [`check_run_name`] checks it.
pub fn run_name_of(run: &str) -> anyhow::Result<String> {
    let trimmed = run.trim_end_matches(['/', '\\']);
    let name = std::path::Path::new(trimmed)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    check_run_name(name)?;
    Ok(name.to_string())
}

/// A broker URL (`redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, or `rediss://` for TLS) with
/// its TLS files, whose `Display` hides the password.
#[derive(Clone, PartialEq, Eq)]
pub struct BrokerUrl {
    url: String,
    /// The checked contents of `--broker-ca` / `--broker-cert` / `--broker-key`, if given.
    tls: Option<tls::TlsMaterial>,
}

impl BrokerUrl {
    /// Parses and checks a URL (the redis client's own parser decides), without TLS files:
    /// a `rediss://` server's certificate is then checked against the system's trust store.
    pub fn parse(url: &str) -> anyhow::Result<BrokerUrl> {
        BrokerUrl::parse_with_tls(url, &TlsFiles::default())
    }

    /// Parses and checks a URL and reads the TLS files for it (only a `rediss://` URL takes
    /// them). `rediss://...#insecure` (no certificate check) is refused.
    pub fn parse_with_tls(url: &str, files: &TlsFiles) -> anyhow::Result<BrokerUrl> {
        let candidate = BrokerUrl {
            url: url.to_string(),
            tls: None,
        };
        let is_tls = url.starts_with("rediss://");
        if !(url.starts_with("redis://") || is_tls) {
            anyhow::bail!(
                "--broker {candidate}: expected redis://HOST[:PORT][/DB] or rediss://..."
            );
        }
        if is_tls && url.contains('#') {
            anyhow::bail!(
                "--broker {candidate}: a URL fragment such as #insecure (TLS without checking \
                 the server's certificate) is not accepted; give the CA that signed the \
                 server's certificate with --broker-ca FILE instead"
            );
        }
        if !is_tls && !files.is_empty() {
            anyhow::bail!(
                "--broker {candidate}: --broker-ca, --broker-cert and --broker-key are for TLS, \
                 which needs a rediss:// URL"
            );
        }
        redis::Client::open(url).map_err(|e| match user_info(url) {
            // The parser's own words may quote pieces of a password it split wrongly.
            Some(_) => anyhow::anyhow!(
                "--broker {candidate}: not a valid Redis URL (the parser's message is not shown, \
                 as it may quote the password; percent-encode '/', '?', '#' and '@' in a \
                 password as %2F, %3F, %23 and %40)"
            ),
            None => anyhow::anyhow!("--broker {candidate}: {}", redact_text(&e.to_string(), url)),
        })?;
        let tls = if files.is_empty() {
            None
        } else {
            Some(tls::TlsMaterial::load(files)?)
        };
        Ok(BrokerUrl { tls, ..candidate })
    }

    /// Whether the connection uses TLS (`rediss://`).
    pub fn is_tls(&self) -> bool {
        self.url.starts_with("rediss://")
    }

    /// The URL with its password, for the client only.
    fn secret(&self) -> &str {
        &self.url
    }

    /// A client for this URL.
    pub fn client(&self) -> anyhow::Result<redis::Client> {
        if self.is_tls() {
            tls::install_crypto_provider();
        }
        let client = match &self.tls {
            Some(material) => redis::Client::build_with_tls(self.secret(), material.certificates()),
            None => redis::Client::open(self.secret()),
        };
        client.map_err(|e| {
            anyhow::anyhow!("broker {self}: {}", redact_text(&e.to_string(), &self.url))
        })
    }

    /// `err`'s text with the password (if any) hidden.
    pub fn describe(&self, err: &redis::RedisError) -> String {
        redact_text(&err.to_string(), &self.url)
    }
}

impl fmt::Display for BrokerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(&self.url))
    }
}

impl fmt::Debug for BrokerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BrokerUrl({self})")
    }
}

/// Where the user part of `url` ends: at the last `@` of everything after `://`, so a password
/// holding `/`, `?` or `#` (which a URL should percent-encode, but people type) is still all
/// hidden. `None` without a user part.
fn user_info(url: &str) -> Option<(&str, &str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let (user_info, host) = rest.rsplit_once('@')?;
    Some((scheme, user_info, host))
}

/// `url` with the password of its user part replaced by `***`.
pub fn redact(url: &str) -> String {
    match user_info(url) {
        Some((scheme, user_info, host)) => {
            let user = match user_info.split_once(':') {
                Some((user, _password)) if !user.contains(['/', '?', '#']) => {
                    format!("{user}:***")
                }
                // `redis://SECRET@host`: a lone user part may be a password too.
                _ => "***".to_string(),
            };
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_string(),
    }
}

/// `text` with the password of `url` (if it has one) replaced by `***` wherever it appears,
/// and the pieces it would be split into at `/`, `?`, `#` and `@` too.
fn redact_text(text: &str, url: &str) -> String {
    let Some((_, user_info, _)) = user_info(url) else {
        return text.to_string();
    };
    let password = user_info.split_once(':').map_or(user_info, |(_, p)| p);
    if password.is_empty() {
        return text.to_string();
    }
    let mut out = text.replace(password, "***");
    for piece in password.split(['/', '?', '#', '@']) {
        if piece.len() >= 3 {
            out = out.replace(piece, "***");
        }
    }
    out
}

/// Exponential backoff between reconnection attempts: steps of 0.2 s, doubling, at most 10 s,
/// each delay drawn between half the step and the step (jitter).
#[derive(Debug)]
pub struct Backoff {
    delay: Duration,
    next_try: Option<Instant>,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new()
    }
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(200);
    const MAX: Duration = Duration::from_secs(10);

    /// A backoff that allows the first attempt at once.
    pub fn new() -> Backoff {
        Backoff {
            delay: Self::FIRST,
            next_try: None,
        }
    }

    /// Whether an attempt may be made now.
    pub fn ready(&self) -> bool {
        self.next_try.is_none_or(|t| Instant::now() >= t)
    }

    /// Time until the next attempt may be made.
    pub fn wait(&self) -> Duration {
        self.next_try.map_or(Duration::ZERO, |t| {
            t.saturating_duration_since(Instant::now())
        })
    }

    /// Records a failed attempt; returns the delay before the next one: half the current step
    /// plus a random part up to the other half (so workers that lost Redis together do not
    /// all come back at the same instant).
    pub fn failed(&mut self) -> Duration {
        let step = self.delay;
        let delay = step / 2 + step.mul_f64(0.5 * rand::random::<f64>());
        self.next_try = Some(Instant::now() + delay);
        self.delay = (self.delay * 2).min(Self::MAX);
        delay
    }

    /// Records a success: the next failure waits the first delay again.
    pub fn succeeded(&mut self) {
        self.delay = Self::FIRST;
        self.next_try = None;
    }
}

/// A connection failure that no retry mends: the client's TLS set-up and the server's do not
/// match (a certificate that is not accepted, a plain port on a `rediss://` URL). Found in the
/// chain of [`connect`]'s error; see [`is_mismatch`].
#[derive(Debug)]
pub struct Mismatch(String);

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Mismatch {}

/// Whether `err` (from [`connect`]) is a [`Mismatch`]: a process that never reached Redis
/// stops with it instead of retrying.
pub fn is_mismatch(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.downcast_ref::<Mismatch>().is_some())
}

/// Opens a connection with timeouts (`connect` to connect, `io` for each reply) and checks
/// that Redis answers (`PING`; over TLS this is where the handshake happens).
pub fn connect(
    url: &BrokerUrl,
    connect: Duration,
    io: Duration,
) -> anyhow::Result<redis::Connection> {
    let client = url.client()?;
    let failed = |e: redis::RedisError, connected: bool| -> anyhow::Error {
        let text = url.describe(&e);
        match tls::hint(&e, url.is_tls(), connected) {
            Some(h) if h.mismatch => anyhow::Error::new(Mismatch(format!(
                "cannot talk to Redis at {url}: {} ({text})",
                h.text
            ))),
            Some(h) => anyhow::anyhow!("cannot reach Redis at {url}: {} ({text})", h.text),
            None => anyhow::anyhow!("cannot reach Redis at {url}: {text}"),
        }
    };
    let mut con = client
        .get_connection_with_timeout(connect)
        .map_err(|e| failed(e, false))?;
    con.set_read_timeout(Some(io))
        .and_then(|()| con.set_write_timeout(Some(io)))
        .map_err(|e| anyhow::anyhow!("Redis at {url}: {}", url.describe(&e)))
        .context("setting timeouts")?;
    redis::cmd("PING")
        .query::<()>(&mut con)
        .map_err(|e| failed(e, true))?;
    Ok(con)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_named_by_its_name_or_its_directory() {
        assert_eq!(run_name_of("big").expect("a name"), "big");
        assert_eq!(run_name_of("runs/big").expect("a dir"), "big");
        assert_eq!(run_name_of("/tmp/runs/big/").expect("a dir"), "big");
        assert!(run_name_of(".").is_err());
        assert!(run_name_of("runs/has space").is_err());
    }

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(
            redact("redis://127.0.0.1:6379/0"),
            "redis://127.0.0.1:6379/0"
        );
        assert_eq!(
            redact("redis://user:s3cret@host:6379/2"),
            "redis://user:***@host:6379/2"
        );
        assert_eq!(redact("rediss://:s3cret@host"), "rediss://:***@host");
        assert_eq!(redact("redis://s3cret@host"), "redis://***@host");
        let url = BrokerUrl::parse("redis://u:pa55word@127.0.0.1:1/0").expect("valid");
        assert_eq!(url.to_string(), "redis://u:***@127.0.0.1:1/0");
        assert!(!format!("{url:?}").contains("pa55word"));
        assert_eq!(
            redact_text("auth failed for pa55word", "redis://u:pa55word@h"),
            "auth failed for ***"
        );
        let err = BrokerUrl::parse("http://u:pa55word@host").expect_err("not redis");
        assert!(!format!("{err:#}").contains("pa55word"), "{err:#}");
        // Passwords with characters a URL should have encoded: nothing of them shows, in the
        // URL or in a parse error.
        for (url, secret) in [
            ("redis://:se/cr3t@host:6379/0", ["se/cr3t", "cr3t@host"]),
            ("redis://u:se?cr3t@host:6379/0", ["se?cr3t", "cr3t@"]),
            ("redis://u:se#cr3t@host:6379", ["se#cr3t", "cr3t@"]),
            ("redis://u:a@b/c?d#eee@host:1/0", ["a@b/c?d#eee", "eee@"]),
        ] {
            let shown = redact(url);
            for s in secret {
                assert!(!shown.contains(s), "{url} shows as {shown}");
            }
            assert!(
                shown.ends_with("@host:6379/0") || shown.contains("@host"),
                "{shown}"
            );
            if let Err(e) = BrokerUrl::parse(url) {
                let text = format!("{e:#}");
                for s in secret {
                    assert!(!text.contains(s), "{url}: {text}");
                }
                assert!(!text.contains("cr3t") && !text.contains("eee"), "{text}");
            }
            let described = redact_text(&format!("failed near '{}'", &url[10..]), url);
            assert!(
                !described.contains("cr3t") && !described.contains("eee"),
                "{described}"
            );
        }
    }

    #[test]
    fn tls_urls_and_options_are_checked() {
        let url = BrokerUrl::parse("rediss://:pw@127.0.0.1:6380/0").expect("TLS URL");
        assert!(url.is_tls());
        assert!(
            !BrokerUrl::parse("redis://127.0.0.1:6379/0")
                .expect("plain")
                .is_tls()
        );
        let err = BrokerUrl::parse("rediss://:pw@127.0.0.1:6380/0#insecure").expect_err("refused");
        assert!(format!("{err:#}").contains("--broker-ca"), "{err:#}");
        assert!(!format!("{err:#}").contains("pw@"), "{err:#}");
        let files = TlsFiles {
            ca: Some("/nonexistent/ca.pem".into()),
            ..TlsFiles::default()
        };
        let err = BrokerUrl::parse_with_tls("redis://127.0.0.1:1/0", &files).expect_err("plain");
        assert!(format!("{err:#}").contains("rediss://"), "{err:#}");
        let err = BrokerUrl::parse_with_tls("rediss://127.0.0.1:1/0", &files).expect_err("no file");
        assert!(format!("{err:#}").contains("cannot open"), "{err:#}");
        let half = TlsFiles {
            key: Some("/nonexistent/key.pem".into()),
            ..TlsFiles::default()
        };
        let err = BrokerUrl::parse_with_tls("rediss://127.0.0.1:1/0", &half).expect_err("half");
        assert!(format!("{err:#}").contains("--broker-cert"), "{err:#}");
    }

    #[test]
    fn keys_and_run_names() {
        let k = Keys::new("run-1.a_b").expect("valid");
        assert_eq!(k.weights, "oware:{run-1.a_b}:weights");
        assert_eq!(k.games, "oware:{run-1.a_b}:games");
        assert!(Keys::new("a b").is_err());
        assert!(Keys::new("").is_err());
        assert!(Keys::new("x}:y").is_err());
    }

    #[test]
    fn backoff_doubles_up_to_its_cap_with_jitter() {
        let within = |d: Duration, step_ms: u64| {
            let step = Duration::from_millis(step_ms);
            d >= step / 2 && d <= step
        };
        let mut b = Backoff::new();
        assert!(b.ready());
        assert!(within(b.failed(), 200));
        assert!(!b.ready());
        assert!(within(b.failed(), 400));
        for _ in 0..10 {
            b.failed();
        }
        let delays: Vec<Duration> = (0..20).map(|_| b.failed()).collect();
        assert!(delays.iter().all(|&d| within(d, 10_000)), "{delays:?}");
        assert!(
            delays.iter().any(|d| *d != delays[0]),
            "the delays are spread: {delays:?}"
        );
        b.succeeded();
        assert!(b.ready());
        assert!(within(b.failed(), 200));
    }
}
