//! Self-play through Redis over TLS (`rediss://`), end to end, against a real `redis-server`
//! started by each test with TLS only (`--port 0 --tls-port P`) on a free port of 127.0.0.1,
//! with a CA, server and client certificates made by the test (rcgen) in a temporary
//! directory: a learner (`--broker-ca`) and a worker (`SSL_CERT_FILE`, the system trust
//! store's override) train to a checkpoint; a wrong CA, a plain port on a `rediss://` URL and a
//! TLS port on a `redis://` URL each give a clear message; a server that asks for client
//! certificates takes `--broker-cert`/`--broker-key`; bad TLS options are refused before any
//! connection.
//!
//! Where `redis-server` is not installed, or was built without TLS, each test that needs it
//! says so loudly and passes without running.

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::broker::{
    Redis, ServerTls, broker_state, exit_of, finish, free_port, learner_args, sigint, spawn,
    spawn_env, step, wait_for, worker, worker_args,
};
use crate::common::{oware, text};
use oware_trainer::broker::TlsFiles;

/// The certificates of a test, as PEM files.
struct Pki {
    /// The CA that signs the others.
    ca: PathBuf,
    /// Another CA, that signs nothing here.
    other_ca: PathBuf,
    /// The server's certificate (for 127.0.0.1 and localhost) and key.
    server_cert: PathBuf,
    server_key: PathBuf,
    /// A client's certificate and key.
    client_cert: PathBuf,
    client_key: PathBuf,
}

fn new_ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    CertifiedIssuer::self_signed(params, KeyPair::generate().expect("CA key")).expect("CA")
}

fn write(dir: &Path, name: &str, pem: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, pem).expect("PEM file");
    path
}

impl Pki {
    fn new(dir: &Path) -> Pki {
        let ca = new_ca("oware test CA");
        let other = new_ca("another CA");
        let leaf = |names: Vec<String>, cn: &str| {
            let mut params = CertificateParams::new(names).expect("params");
            params.distinguished_name.push(DnType::CommonName, cn);
            let key = KeyPair::generate().expect("key");
            let cert = params.signed_by(&key, &ca).expect("signed");
            (cert.pem(), key.serialize_pem())
        };
        let (server_cert, server_key) = leaf(
            vec!["127.0.0.1".to_string(), "localhost".to_string()],
            "redis",
        );
        let (client_cert, client_key) = leaf(Vec::new(), "oware worker");
        Pki {
            ca: write(dir, "ca.pem", &ca.pem()),
            other_ca: write(dir, "other-ca.pem", &other.pem()),
            server_cert: write(dir, "server.pem", &server_cert),
            server_key: write(dir, "server-key.pem", &server_key),
            client_cert: write(dir, "client.pem", &client_cert),
            client_key: write(dir, "client-key.pem", &client_key),
        }
    }

    /// The server's TLS set-up; with `auth_clients`, clients need a certificate.
    fn server(&self, auth_clients: bool) -> ServerTls {
        ServerTls {
            cert: self.server_cert.clone(),
            key: self.server_key.clone(),
            ca: self.ca.clone(),
            auth_clients,
            client: TlsFiles {
                ca: Some(self.ca.clone()),
                cert: auth_clients.then(|| self.client_cert.clone()),
                key: auth_clients.then(|| self.client_key.clone()),
            },
        }
    }
}

fn utf8(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Runs `child` to its end and asserts that it failed with all of `want` in its log.
fn fails_with(child: crate::common::broker::Proc, what: &str, log: &Path, want: &[&str]) {
    let (status, out) = exit_of(child, what, log);
    let err = std::fs::read_to_string(log).unwrap_or_default();
    assert!(!status.success(), "{what} should fail:\n{err}\n{out}");
    assert!(!err.contains("panicked"), "{what} panicked:\n{err}");
    for w in want {
        assert!(err.contains(w), "{what}: no '{w}' in:\n{err}");
    }
}

#[test]
fn a_learner_and_a_worker_train_over_tls() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let pki = Pki::new(dir);
    let Some(redis) = Redis::start_tls(dir, pki.server(false)) else {
        return;
    };
    let url = redis.url();
    assert!(url.starts_with("rediss://"), "{url}");
    let run = dir.join("tls");
    let log = dir.join("learner.log");
    let mut args = learner_args(
        &run,
        &url,
        &[
            "selfplay.workers=0",
            "schedule.max_steps=40",
            "eval.every_steps=0",
            "broker.max_version_lag=1000",
        ],
    );
    args.extend(["--broker-ca", utf8(&pki.ca)]);
    let l = spawn(&args, &log);
    // The worker trusts the test's CA through SSL_CERT_FILE, as a system trust store.
    let wlog = dir.join("worker.log");
    let w = spawn_env(
        &worker_args(&url, "tls", &[]),
        &[("SSL_CERT_FILE", &pki.ca)],
        &wlog,
    );
    finish(l, "the learner", &log);
    assert_eq!(step(&run), 40);
    let b = broker_state(&run);
    assert!(b["games"].as_u64().expect("games") > 0, "{b}");
    assert_eq!(b["workers"].as_object().expect("workers").len(), 1, "{b}");
    assert_eq!(b["rejected"], 0, "{b}");
    let learner_log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!learner_log.contains("error"), "{learner_log}");
    sigint(&w);
    let summary = finish(w, "the worker", &wlog);
    let v: Value = serde_json::from_str(summary.trim()).expect("summary JSON");
    assert!(v["sent"].as_u64().expect("sent") > 0, "{v}");
    // The run directory holds no broker URL.
    let config = std::fs::read_to_string(run.join("config.toml")).expect("config.toml");
    assert!(!config.contains("rediss://"), "{config}");
}

#[test]
fn tls_mismatches_give_clear_messages() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let pki = Pki::new(dir);
    let Some(tls) = Redis::start_tls(dir, pki.server(false)) else {
        return;
    };
    let Some(plain) = Redis::start(dir) else {
        return;
    };
    let ca = utf8(&pki.ca);
    let other = utf8(&pki.other_ca);
    // A certificate signed by a CA the worker does not trust: it stops at once.
    let log = dir.join("wrong-ca.log");
    let started = Instant::now();
    let w = worker(&tls.url(), "x", &["--broker-ca", other], &log);
    fails_with(
        w,
        "a worker with the wrong CA",
        &log,
        &["certificate is not accepted", "--broker-ca"],
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    // The learner too, before it trains.
    let run = dir.join("wrong-ca-run");
    let llog = dir.join("wrong-ca-learner.log");
    let tls_url = tls.url();
    let mut args = learner_args(&run, &tls_url, &["selfplay.workers=0"]);
    args.extend(["--broker-ca", other]);
    fails_with(
        spawn(&args, &llog),
        "a learner with the wrong CA",
        &llog,
        &["certificate is not accepted", "--broker-ca"],
    );
    assert_eq!(step(&run), 0, "no training without the broker");
    // rediss:// to a plain port (which waits for the rest of a "command"), and redis:// to
    // the TLS port (which drops the connection): each said, and retried (a server that hangs
    // or drops connections may also be going down); the guards stop the workers.
    let plain_as_tls = format!("rediss://127.0.0.1:{}/0", plain.port);
    let tls_as_plain = format!("redis://127.0.0.1:{}/0", tls.port);
    let with_ca = ["--broker-ca", ca];
    let cases: [(&str, &[&str], &str, &str); 2] = [
        (
            &plain_as_tls,
            &with_ca,
            "plain-port.log",
            "is it a plain Redis port?",
        ),
        (&tls_as_plain, &[], "tls-port.log", "use a rediss:// URL"),
    ];
    let mut running = Vec::new();
    for (url, extra, name, want) in cases {
        let log = dir.join(name);
        running.push(worker(url, "x", extra, &log));
        wait_for(want, &log, || {
            std::fs::read_to_string(&log).is_ok_and(|t| t.contains(want))
        });
        let t = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(t.contains("retrying"), "{t}");
        assert!(!t.contains("panicked"), "{t}");
    }
}

#[test]
fn a_server_that_asks_for_client_certificates_gets_them() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let pki = Pki::new(dir);
    // `start_tls` waits until the test's own client (with the client certificate) is served.
    let Some(redis) = Redis::start_tls(dir, pki.server(true)) else {
        return;
    };
    let url = redis.url();
    let ca = utf8(&pki.ca);
    let log = dir.join("no-cert.log");
    fails_with(
        worker(&url, "mtls", &["--broker-ca", ca], &log),
        "a worker without a client certificate",
        &log,
        &["--broker-cert"],
    );
    let log = dir.join("cert.log");
    let _w = worker(
        &url,
        "mtls",
        &[
            "--broker-ca",
            ca,
            "--broker-cert",
            utf8(&pki.client_cert),
            "--broker-key",
            utf8(&pki.client_key),
        ],
        &log,
    );
    // Connected: it waits for a learner's weights (the guard stops it).
    wait_for("the worker to reach Redis", &log, || {
        std::fs::read_to_string(&log).is_ok_and(|t| t.contains("no weights published"))
    });
}

#[test]
fn bad_tls_options_are_refused_before_connecting() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let not_pem = write(dir, "not.pem", "hello\n");
    let ca = utf8(&not_pem);
    // Nothing listens on this port: every refusal comes before a connection is tried.
    let port = free_port();
    let tls_url = format!("rediss://127.0.0.1:{port}/0");
    let plain_url = format!("redis://127.0.0.1:{port}/0");
    let insecure = format!("rediss://127.0.0.1:{port}/0#insecure");
    let missing = dir.join("missing.pem");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--broker", &insecure], "#insecure"),
        (vec!["--broker", &plain_url, "--broker-ca", ca], "rediss://"),
        (
            vec!["--broker", &tls_url, "--broker-ca", ca],
            "no certificate",
        ),
        (
            vec!["--broker", &tls_url, "--broker-ca", utf8(&missing)],
            "cannot open",
        ),
        (
            vec!["--broker", &tls_url, "--broker-cert", ca],
            "--broker-key",
        ),
        (
            vec![
                "--broker",
                &tls_url,
                "--broker-cert",
                ca,
                "--broker-key",
                ca,
            ],
            "no certificate",
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["worker", "--run", "x"];
        all.extend(&args);
        let out = oware(&all);
        let t = text(&out);
        assert!(!out.status.success(), "{all:?} should fail:\n{t}");
        assert!(t.contains(want), "{all:?}: no '{want}' in:\n{t}");
        assert!(!t.contains("panicked"), "{all:?}:\n{t}");
    }
    // `oware train` takes the same options.
    let run = dir.join("r");
    let out = oware(&[
        "train",
        "--run",
        utf8(&run),
        "--broker",
        &insecure,
        "--quiet",
    ]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("#insecure"), "{t}");
}
