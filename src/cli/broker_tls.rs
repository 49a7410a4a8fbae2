//! The TLS options of `oware train --broker` and `oware worker` (for `rediss://` URLs).

use oware_trainer::broker::TlsFiles;
use std::path::PathBuf;

/// TLS files for a `rediss://` broker; without them the server's certificate is checked
/// against the system's trust store (SSL_CERT_FILE / SSL_CERT_DIR replace it where set).
#[derive(clap::Args, Debug, Default)]
pub(super) struct BrokerTlsArgs {
    /// For a rediss:// broker: a PEM file of the CA certificate(s) that signed the server's
    /// certificate (a private CA); only these are then trusted.
    #[arg(long, value_name = "FILE", env = "OWARE_BROKER_CA")]
    broker_ca: Option<PathBuf>,
    /// For a rediss:// broker that asks for client certificates: this client's certificate
    /// chain (PEM); needs --broker-key.
    #[arg(
        long,
        value_name = "FILE",
        env = "OWARE_BROKER_CERT",
        requires = "broker_key"
    )]
    broker_cert: Option<PathBuf>,
    /// The private key (PEM) of --broker-cert.
    #[arg(
        long,
        value_name = "FILE",
        env = "OWARE_BROKER_KEY",
        requires = "broker_cert"
    )]
    broker_key: Option<PathBuf>,
}

impl BrokerTlsArgs {
    /// The files, for [`oware_trainer::broker::BrokerUrl::parse_with_tls`].
    pub(super) fn files(&self) -> TlsFiles {
        TlsFiles {
            ca: self.broker_ca.clone(),
            cert: self.broker_cert.clone(),
            key: self.broker_key.clone(),
        }
    }
}
