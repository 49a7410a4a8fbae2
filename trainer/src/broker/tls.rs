//! TLS for `rediss://` broker URLs: the files a user gives (`--broker-ca`, `--broker-cert`,
//! `--broker-key`), the crypto provider, and plain words for what goes wrong in a handshake.
//!
//! The server's certificate is checked against the system's trust store, read by
//! `rustls-native-certs` (which takes `SSL_CERT_FILE` / `SSL_CERT_DIR` instead where they are
//! set), or, with `--broker-ca FILE`, against the CA certificates in that file only. Skipping
//! the check (`rediss://...#insecure`) is refused: see [`super::BrokerUrl::parse`].

use anyhow::Context;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// At most this many bytes are read from a certificate or key file.
const MAX_PEM_BYTES: u64 = 1 << 20;

/// The TLS files of a broker connection, as given by the user (all optional).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM file of the CA certificate(s) that sign the server's certificate; without it the
    /// system's trust store (or `SSL_CERT_FILE`) decides.
    pub ca: Option<PathBuf>,
    /// PEM file of this client's certificate chain, for a server that asks for one.
    pub cert: Option<PathBuf>,
    /// PEM file of the private key of `cert`.
    pub key: Option<PathBuf>,
}

impl TlsFiles {
    /// Whether no file is given.
    pub fn is_empty(&self) -> bool {
        self.ca.is_none() && self.cert.is_none() && self.key.is_none()
    }
}

/// The contents of the TLS files, checked; never printed.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct TlsMaterial {
    /// PEM of the CA certificates that replace the system's trust store.
    ca: Option<Vec<u8>>,
    /// PEM of the client's certificate chain and of its key.
    client: Option<(Vec<u8>, Vec<u8>)>,
}

impl fmt::Debug for TlsMaterial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsMaterial")
            .field("ca", &self.ca.as_ref().map(|_| "<set>"))
            .field("client", &self.client.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl TlsMaterial {
    /// Reads and checks `files`: every certificate file holds at least one certificate that
    /// parses, the key file one private key; `cert` and `key` come together.
    pub(crate) fn load(files: &TlsFiles) -> anyhow::Result<TlsMaterial> {
        let ca = match &files.ca {
            Some(path) => {
                let pem = read_pem(path, "--broker-ca")?;
                certificates(&pem, path, "--broker-ca")?;
                Some(pem)
            }
            None => None,
        };
        let client = match (&files.cert, &files.key) {
            (Some(cert_path), Some(key_path)) => {
                let cert = read_pem(cert_path, "--broker-cert")?;
                certificates(&cert, cert_path, "--broker-cert")?;
                let key = read_pem(key_path, "--broker-key")?;
                // The parser's message never quotes the key.
                PrivateKeyDer::from_pem_slice(&key).map_err(|e| {
                    anyhow::anyhow!(
                        "--broker-key {}: no private key in PEM form ({e})",
                        key_path.display()
                    )
                })?;
                Some((cert, key))
            }
            (None, None) => None,
            (Some(_), None) => anyhow::bail!("--broker-cert needs --broker-key (its private key)"),
            (None, Some(_)) => anyhow::bail!("--broker-key needs --broker-cert (its certificate)"),
        };
        Ok(TlsMaterial { ca, client })
    }

    /// The redis client's form of these files.
    pub(crate) fn certificates(&self) -> redis::TlsCertificates {
        redis::TlsCertificates {
            client_tls: self
                .client
                .as_ref()
                .map(|(cert, key)| redis::ClientTlsConfig {
                    client_cert: cert.clone(),
                    client_key: key.clone(),
                }),
            root_cert: self.ca.clone(),
        }
    }
}

/// Reads a PEM file of at most [`MAX_PEM_BYTES`].
fn read_pem(path: &Path, flag: &str) -> anyhow::Result<Vec<u8>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("{flag} {}: cannot open it", path.display()))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, MAX_PEM_BYTES + 1),
        &mut bytes,
    )
    .with_context(|| format!("{flag} {}: cannot read it", path.display()))?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        anyhow::bail!(
            "{flag} {}: larger than {MAX_PEM_BYTES} bytes, not a PEM file of certificates or a key",
            path.display()
        );
    }
    Ok(bytes)
}

/// Checks that `pem` holds one or more certificates.
fn certificates(pem: &[u8], path: &Path, flag: &str) -> anyhow::Result<()> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{flag} {}: bad PEM ({e})", path.display()))?;
    if certs.is_empty() {
        anyhow::bail!(
            "{flag} {}: no certificate in it (expected PEM blocks 'BEGIN CERTIFICATE')",
            path.display()
        );
    }
    Ok(())
}

/// Makes rustls' ring provider the process default (once; a default installed before stays).
/// Without a default, a rustls configuration cannot be built.
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // An error means another part of the process installed one first: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// What a failed connection or first reply says about TLS, in the user's words.
pub(crate) struct Hint {
    /// The explanation and what to do.
    pub(crate) text: String,
    /// Whether it is surely a mismatch between this client's TLS set-up and the server's, that
    /// no retry mends (a TLS failure); not so for a server that drops a plain connection,
    /// which may also be a server going down.
    pub(crate) mismatch: bool,
}

/// The [`Hint`] for `err` (from a connection with TLS or without, as `tls` says; `connected`:
/// the TCP connection was made and the first exchange failed) where TLS explains it; `None` for
/// anything else (unreachable, refused: retried).
pub(crate) fn hint(err: &redis::RedisError, tls: bool, connected: bool) -> Option<Hint> {
    let io_kind = io_error(err).map(std::io::Error::kind);
    if tls {
        let Some(e) = rustls_error(err) else {
            // A plain server takes the TLS hello for the start of a command and waits: the
            // read times out (`WouldBlock` is a read timeout, never a connect timeout).
            let waited = match io_kind {
                Some(std::io::ErrorKind::WouldBlock) => true,
                Some(std::io::ErrorKind::TimedOut) => connected,
                _ => false,
            };
            return waited.then(|| Hint {
                text: "no TLS answer from the server: is it a plain Redis port? Use redis:// for \
                       a server without TLS, or the server's --tls-port"
                    .to_string(),
                mismatch: false,
            });
        };
        let text = match e {
            rustls::Error::InvalidCertificate(_) => {
                "the server's certificate is not accepted: give the CA that signed it with \
                 --broker-ca FILE (or OWARE_BROKER_CA, or SSL_CERT_FILE for the system's \
                 store), and make sure the URL's host is a name or address in the certificate"
                    .to_string()
            }
            rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
                "the server does not answer in TLS: is it a plain Redis port? Use redis:// for a \
                 server without TLS, or the server's --tls-port"
                    .to_string()
            }
            rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired)
            | rustls::Error::AlertReceived(rustls::AlertDescription::HandshakeFailure) => {
                format!(
                    "the server refused the TLS handshake ({e}): if it asks for a client \
                     certificate (tls-auth-clients), give one with --broker-cert FILE and \
                     --broker-key FILE"
                )
            }
            other => format!("TLS failed: {other}"),
        };
        return Some(Hint {
            text,
            mismatch: true,
        });
    }
    // Plain text to a TLS port: the server drops the connection at once, or answers with a
    // TLS alert that is no Redis reply (a refused connection is no such case).
    let dropped = matches!(
        io_kind,
        Some(
            std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::BrokenPipe
                | std::io::ErrorKind::UnexpectedEof
                | std::io::ErrorKind::ConnectionAborted
        )
    ) || err.kind() == redis::ErrorKind::Parse;
    dropped.then(|| Hint {
        text: "the server closed the connection at once: if this port speaks TLS, use a \
               rediss:// URL"
            .to_string(),
        mismatch: false,
    })
}

/// The error that `err` wraps (the redis client keeps it behind an `Arc`).
fn inner(err: &redis::RedisError) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
    let source = std::error::Error::source(err)?;
    source
        .downcast_ref::<std::sync::Arc<dyn std::error::Error + Send + Sync>>()
        .map(|arc| arc.as_ref())
}

/// The I/O error inside `err`, if any.
fn io_error(err: &redis::RedisError) -> Option<&std::io::Error> {
    inner(err)?.downcast_ref::<std::io::Error>()
}

/// The rustls error inside `err` (directly, or inside its I/O error), if the failure came
/// from TLS.
fn rustls_error(err: &redis::RedisError) -> Option<&rustls::Error> {
    let inner = inner(err)?;
    inner.downcast_ref::<rustls::Error>().or_else(|| {
        inner
            .downcast_ref::<std::io::Error>()?
            .get_ref()?
            .downcast_ref::<rustls::Error>()
    })
}
