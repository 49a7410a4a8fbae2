//! Helpers shared by the integration tests: the built `oware` binary, scratch folders, the
//! tiny config, free ports, and what to do when a real service (redis-server, Chromium) is
//! missing; [`broker`] starts a real redis-server and the learner and worker processes.

#![allow(dead_code)] // some helpers serve only the ignored (slow) tests

pub(crate) mod broker;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_oware");

/// The tiny config of the tests (`configs/tiny.toml`).
pub(crate) const TINY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/tiny.toml");

/// The variable that makes a missing service (redis-server, Chromium) a test failure instead
/// of a loud skip; `.ci/run` sets it, so CI cannot pass by skipping.
pub(crate) const REQUIRE_SERVICES: &str = "OWARE_REQUIRE_SERVICES";

/// A test cannot find a real service it needs (`what` says which and how to get it): with
/// [`REQUIRE_SERVICES`]`=1` the test fails, otherwise it says so loudly and the caller skips.
pub(crate) fn missing_service(what: &str) {
    if std::env::var(REQUIRE_SERVICES).is_ok_and(|v| v == "1") {
        panic!("{what} ({REQUIRE_SERVICES}=1: a missing service fails the test)");
    }
    eprintln!("\n!!!!!!!! SKIPPED: {what} !!!!!!!!\n");
}

/// A free port of 127.0.0.1.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("address")
        .port()
}

/// A fresh, empty scratch directory for one test.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oware-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Runs `oware ARGS` with no standard input and returns its output.
pub(crate) fn oware(args: &[&str]) -> Output {
    oware_env(args, &[])
}

/// [`oware`] with environment variables set (`Some`) or removed (`None`).
pub(crate) fn oware_env(args: &[&str], env: &[(&str, Option<&Path>)]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).stdin(Stdio::null());
    for (key, value) in env {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    cmd.output().expect("runs the binary")
}

/// Standard output and standard error together, for assertion messages.
pub(crate) fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The `meta.json` of a run's latest checkpoint.
pub(crate) fn meta(run: &Path) -> serde_json::Value {
    let latest = std::fs::read_to_string(run.join("checkpoints/latest")).expect("latest");
    let path = run
        .join("checkpoints")
        .join(latest.trim())
        .join("meta.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("meta.json")).expect("json")
}
