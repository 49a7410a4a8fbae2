//! Helpers of the broker tests (`tests/broker.rs`, `tests/broker_tls.rs`): a real
//! `redis-server` on a free port of 127.0.0.1 (plain or TLS), and the built `oware` binary as
//! learner and workers, each child process killed and waited for when its guard is dropped.

#![allow(dead_code)] // each test binary uses its own subset

use oware_trainer::broker::{BrokerUrl, TlsFiles, connect};
use serde_json::Value;
use std::fs::File;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::BIN;

/// `configs/tiny.toml`.
pub(crate) use super::TINY;
/// How long a test waits for anything.
pub(crate) const LIMIT: Duration = Duration::from_secs(180);

/// A child process of a test, killed (SIGKILL) and waited for when dropped: a failing
/// assertion leaves nothing running. Derefs to the [`Child`].
pub(crate) struct Proc(Child);

impl Proc {
    /// Guards `child`.
    pub(crate) fn new(child: Child) -> Proc {
        Proc(child)
    }
}

impl Deref for Proc {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl DerefMut for Proc {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        // Both fail harmlessly for a child that has exited and been waited for.
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

/// The TLS set-up of a test's Redis: its certificate files, and whether it asks clients for
/// certificates.
pub(crate) struct ServerTls {
    /// The server's certificate (PEM).
    pub cert: PathBuf,
    /// Its private key (PEM).
    pub key: PathBuf,
    /// The CA that signed it, and client certificates (PEM).
    pub ca: PathBuf,
    /// `--tls-auth-clients yes` instead of `no`.
    pub auth_clients: bool,
    /// What a client of the test uses to connect (the CA, and a client certificate where
    /// `auth_clients`).
    pub client: TlsFiles,
}

/// A `redis-server` of this test, stopped when dropped.
pub(crate) struct Redis {
    child: Option<Proc>,
    /// Its port (the TLS port with `tls`).
    pub port: u16,
    dir: PathBuf,
    tls: Option<ServerTls>,
}

fn redis_binary() -> Option<PathBuf> {
    ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

pub(crate) use super::free_port;

impl Redis {
    /// Starts one, or `None` (with a loud message) where redis-server is not installed.
    pub(crate) fn start(dir: &Path) -> Option<Redis> {
        Redis::start_with(dir, None)
    }

    /// Starts one that speaks only TLS (`--port 0 --tls-port P`), or `None` with a loud
    /// message where redis-server is not installed or was built without TLS.
    pub(crate) fn start_tls(dir: &Path, tls: ServerTls) -> Option<Redis> {
        Redis::start_with(dir, Some(tls))
    }

    fn start_with(dir: &Path, tls: Option<ServerTls>) -> Option<Redis> {
        let Some(bin) = redis_binary() else {
            super::missing_service(
                "redis-server is not installed (apt-get install redis-server; .ci/run does it)",
            );
            return None;
        };
        if tls.is_some() && !built_with_tls(&bin) {
            super::missing_service(&format!(
                "{} is built without TLS support (its --tls-port is unknown); the rediss:// \
                 tests did not run",
                bin.display()
            ));
            return None;
        }
        let mut r = Redis {
            child: None,
            port: free_port(),
            dir: dir.to_path_buf(),
            tls,
        };
        r.up();
        Some(r)
    }

    /// Starts the server (again, on the same port).
    pub(crate) fn up(&mut self) {
        let bin = redis_binary().expect("redis-server");
        let log_path = self.dir.join(format!("redis-{}.log", self.port));
        let log = File::create(&log_path).expect("log");
        let mut cmd = Command::new(bin);
        match &self.tls {
            None => {
                cmd.args(["--port", &self.port.to_string()]);
            }
            Some(t) => {
                cmd.args(["--port", "0", "--tls-port", &self.port.to_string()])
                    .arg("--tls-cert-file")
                    .arg(&t.cert)
                    .arg("--tls-key-file")
                    .arg(&t.key)
                    .arg("--tls-ca-cert-file")
                    .arg(&t.ca)
                    .args([
                        "--tls-auth-clients",
                        if t.auth_clients { "yes" } else { "no" },
                    ]);
            }
        }
        let child = cmd
            .args(["--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(Proc::new(child));
        let started = Instant::now();
        while let Err(e) = self.con() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "redis-server answers: {e:#}\n{}",
                std::fs::read_to_string(&log_path).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops it (SIGKILL: nothing is kept, as after a crash of a Redis without persistence).
    pub(crate) fn down(&mut self) {
        self.child.take();
    }

    /// Its URL (`rediss://` with TLS).
    pub(crate) fn url(&self) -> String {
        let scheme = if self.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}://127.0.0.1:{}/0", self.port)
    }

    /// A connection, through the broker's own [`connect`] (TLS with the test's CA).
    pub(crate) fn con(&self) -> anyhow::Result<redis::Connection> {
        let files = self
            .tls
            .as_ref()
            .map(|t| t.client.clone())
            .unwrap_or_default();
        let url = BrokerUrl::parse_with_tls(&self.url(), &files)?;
        connect(&url, Duration::from_secs(1), Duration::from_secs(5))
    }
}

/// Whether `bin` knows `--tls-port`: it is given with an option that exists in no build, so
/// the server stops at once, at the first option it does not know (a build without TLS names
/// `tls-port` there).
fn built_with_tls(bin: &Path) -> bool {
    let out = Command::new(bin)
        .args([
            "--port",
            "0",
            "--tls-port",
            "0",
            "--oware-probe-no-such-option",
            "1",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("redis-server runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("oware-probe-no-such-option") || text.contains("tls-port"),
        "redis-server's answer to an unknown option: {text}"
    );
    !text.contains(">>> 'tls-port")
}

/// Starts `oware ARGS` with extra environment variables, its stderr into `log`.
pub(crate) fn spawn_env(args: &[&str], env: &[(&str, &Path)], log: &Path) -> Proc {
    let mut cmd = Command::new(BIN);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Proc::new(
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(log).expect("log file"))
            .spawn()
            .expect("starts"),
    )
}

/// Starts `oware ARGS`, its stderr into `log`.
pub(crate) fn spawn(args: &[&str], log: &Path) -> Proc {
    spawn_env(args, &[], log)
}

/// The arguments of a learner on `configs/tiny.toml` (`extra` after `--broker URL`).
pub(crate) fn learner_args<'a>(run: &'a Path, url: &'a str, sets: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "train",
        "--config",
        TINY,
        "--run",
        run.to_str().expect("utf-8"),
        "--quiet",
        "--broker",
        url,
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    args
}

/// Starts a learner on `configs/tiny.toml`.
pub(crate) fn learner(run: &Path, url: &str, sets: &[&str], log: &Path) -> Proc {
    spawn(&learner_args(run, url, sets), log)
}

/// The arguments of a one-thread worker with a JSON summary (`extra` at the end).
pub(crate) fn worker_args<'a>(url: &'a str, run: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "worker",
        "--broker",
        url,
        "--run",
        run,
        "--threads",
        "1",
        "--json",
    ];
    args.extend_from_slice(extra);
    args
}

/// Starts a one-thread worker with a JSON summary.
pub(crate) fn worker(url: &str, run: &str, extra: &[&str], log: &Path) -> Proc {
    spawn(&worker_args(url, run, extra), log)
}

/// Sends SIGINT (Ctrl-C).
pub(crate) fn sigint(child: &Child) {
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill")
        .success();
    assert!(ok);
}

/// Waits for `child` to exit (at most `LIMIT`); its exit status and stdout.
pub(crate) fn exit_of(
    mut child: Proc,
    what: &str,
    log: &Path,
) -> (std::process::ExitStatus, String) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut out = String::new();
            if let Some(mut s) = child.stdout.take() {
                std::io::Read::read_to_string(&mut s, &mut out).ok();
            }
            return (status, out);
        }
        if started.elapsed() > LIMIT {
            let err = std::fs::read_to_string(log).unwrap_or_default();
            panic!("{what} did not finish:\n{err}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits for `child` to exit (at most `LIMIT`), asserting success; its stdout.
pub(crate) fn finish(child: Proc, what: &str, log: &Path) -> String {
    let (status, out) = exit_of(child, what, log);
    let err = std::fs::read_to_string(log).unwrap_or_default();
    assert!(status.success(), "{what} failed ({status}):\n{err}\n{out}");
    out
}

/// The latest checkpoint's `meta.json`.
pub(crate) fn meta(run: &Path) -> Option<Value> {
    let latest = std::fs::read_to_string(run.join("checkpoints/latest")).ok()?;
    let path = run
        .join("checkpoints")
        .join(latest.trim())
        .join("meta.json");
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// The latest checkpoint's step (0 without one).
pub(crate) fn step(run: &Path) -> u64 {
    meta(run).and_then(|m| m["step"].as_u64()).unwrap_or(0)
}

/// Waits until `cond` holds (failing after `LIMIT`, with `log`).
pub(crate) fn wait_for(what: &str, log: &Path, mut cond: impl FnMut() -> bool) {
    let started = Instant::now();
    while !cond() {
        if started.elapsed() > LIMIT {
            panic!(
                "timed out waiting for {what}:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The broker's state in the latest checkpoint.
pub(crate) fn broker_state(run: &Path) -> Value {
    meta(run).expect("a checkpoint")["extra"]["broker"].clone()
}
