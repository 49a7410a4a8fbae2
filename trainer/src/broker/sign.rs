//! Signed publications: the learner signs every weights version it publishes with an Ed25519
//! key of its run, and workers load only weights signed by the key they trust. Anyone who can
//! write to Redis can still overwrite the weights hash, but not sign it, so a forged version is
//! refused by every worker (and the learner, which checks the whole hash it published,
//! publishes it again).
//!
//! - **The key** lives in the run directory: [`KEY_FILE`] (the secret, hex, mode 0600) and
//!   [`PUBLIC_KEY_FILE`] (the public key, hex). A new run makes one; a resumed run keeps it.
//! - **What is signed**: [`message`], a domain tag, the run's name, the version and the
//!   SHA-256 of the model shape, the settings and the weights. The signature (`signature`,
//!   hex) and the public key (`key`, hex) are fields of the weights hash.
//! - **What a worker trusts** ([`Trust`]): the public key (`--learner-key HEX`), its
//!   fingerprint (the first 16 bytes of the key's SHA-256, hex: `--learner-key sha256:HEX`),
//!   a file holding either, or, without `--learner-key`, the key of the first signed weights
//!   it sees (trust on first use: weaker, and said so).

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::Path;

/// The learner's secret key in the run directory.
pub const KEY_FILE: &str = "broker-key";
/// The learner's public key in the run directory (give it to the workers).
pub const PUBLIC_KEY_FILE: &str = "broker-key.pub";
/// The first bytes of every signed message.
const DOMAIN: &[u8] = b"oware-zero weights v1\0";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let text = text.trim();
    if text.len() != 2 * N || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// What a publication's signature covers.
pub fn message(run: &str, version: u64, model: &str, settings: &str, weights: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(DOMAIN.len() + run.len() + 1 + 8 + 3 * 32);
    m.extend_from_slice(DOMAIN);
    m.extend_from_slice(run.as_bytes());
    m.push(0);
    m.extend_from_slice(&version.to_le_bytes());
    for part in [model.as_bytes(), settings.as_bytes(), weights] {
        m.extend_from_slice(&Sha256::digest(part));
    }
    m
}

/// A learner's public key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl PublicKey {
    /// The key from its hex form.
    pub fn parse(text: &str) -> Option<PublicKey> {
        let bytes = unhex::<32>(text)?;
        VerifyingKey::from_bytes(&bytes).ok().map(PublicKey)
    }

    /// Hex, 64 digits.
    pub fn hex(&self) -> String {
        hex(self.0.as_bytes())
    }

    /// `sha256:` and the first 16 bytes of the key's SHA-256, hex.
    pub fn fingerprint(&self) -> String {
        format!("sha256:{}", hex(&Sha256::digest(self.0.as_bytes())[..16]))
    }

    /// Whether `signature` (hex) is this key's signature of `message`.
    pub fn verifies(&self, message: &[u8], signature: &str) -> bool {
        let Some(bytes) = unhex::<64>(signature) else {
            return false;
        };
        self.0
            .verify_strict(message, &Signature::from_bytes(&bytes))
            .is_ok()
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.fingerprint())
    }
}

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

/// The learner's signing key.
pub struct LearnerKey(SigningKey);

impl fmt::Debug for LearnerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LearnerKey({})", self.public().fingerprint())
    }
}

impl LearnerKey {
    /// A new random key (from the thread's CSPRNG, seeded by the operating system).
    pub fn generate() -> LearnerKey {
        LearnerKey(SigningKey::from_bytes(&rand::random::<[u8; 32]>()))
    }

    /// The run's key: read from `dir/`[`KEY_FILE`], or made and written there (with
    /// [`PUBLIC_KEY_FILE`]) when there is none. `true` when it was made now.
    pub fn load_or_create(dir: &Path) -> anyhow::Result<(LearnerKey, bool)> {
        let path = dir.join(KEY_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let bytes = unhex::<32>(&text).ok_or_else(|| {
                    anyhow::anyhow!(
                        "{}: not a broker key (64 hex digits); delete it to make a new one \
                         (workers pinned to the old key must then be given the new one)",
                        path.display()
                    )
                })?;
                Ok((LearnerKey(SigningKey::from_bytes(&bytes)), false))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = LearnerKey::generate();
                write_secret(&path, &format!("{}\n", hex(key.0.as_bytes())))?;
                let public = dir.join(PUBLIC_KEY_FILE);
                std::fs::write(&public, format!("{}\n", key.public().hex()))
                    .map_err(|e| anyhow::anyhow!("writing {}: {e}", public.display()))?;
                Ok((key, true))
            }
            Err(e) => Err(anyhow::anyhow!("reading {}: {e}", path.display())),
        }
    }

    /// The public key.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// The signature of `message`, hex.
    pub fn sign(&self, message: &[u8]) -> String {
        hex(&self.0.sign(message).to_bytes())
    }
}

/// Writes a new file readable by its owner only.
fn write_secret(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options
        .open(path)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
}

/// The key a worker trusts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    /// This key only.
    Key(PublicKey),
    /// The key with this fingerprint (`sha256:` and 32 hex digits).
    Fingerprint(String),
    /// The key of the first signed publication seen (`None` until then).
    FirstSeen(Option<PublicKey>),
}

impl Trust {
    /// What `--learner-key` says: a public key (64 hex digits), a fingerprint (`sha256:` and
    /// 32 hex digits, or the 32 digits alone), or a file holding either; none: trust on
    /// first use.
    pub fn from_arg(arg: Option<&str>) -> anyhow::Result<Trust> {
        let Some(arg) = arg else {
            return Ok(Trust::FirstSeen(None));
        };
        let parse = |text: &str| -> Option<Trust> {
            let t = text.trim().to_ascii_lowercase();
            let fp = t.strip_prefix("sha256:").unwrap_or(&t);
            if let Some(key) = PublicKey::parse(&t) {
                Some(Trust::Key(key))
            } else if unhex::<16>(fp).is_some() {
                Some(Trust::Fingerprint(format!("sha256:{fp}")))
            } else {
                None
            }
        };
        if let Some(t) = parse(arg) {
            return Ok(t);
        }
        let text = std::fs::read_to_string(arg).map_err(|e| {
            anyhow::anyhow!(
                "--learner-key '{arg}' is neither a public key (64 hex digits), a fingerprint \
                 (sha256: and 32 hex digits) nor a readable file: {e}"
            )
        })?;
        parse(&text)
            .ok_or_else(|| anyhow::anyhow!("{arg}: holds neither a public key nor a fingerprint"))
    }

    /// Checks a publication's `key` and `signature` fields over `message`; pins the key when
    /// trusting on first use. The error says why the publication is refused.
    pub fn check(
        &mut self,
        key: Option<&str>,
        signature: Option<&str>,
        message: &[u8],
    ) -> Result<PublicKey, String> {
        let (Some(key), Some(signature)) = (key, signature) else {
            return Err("it is not signed (no 'key' or 'signature' field)".into());
        };
        let key = PublicKey::parse(key).ok_or("its 'key' field is not a public key")?;
        match self {
            Trust::Key(k) if *k != key => {
                return Err(format!(
                    "it is signed by the key {}, not the learner's {}",
                    key.fingerprint(),
                    k.fingerprint()
                ));
            }
            Trust::Fingerprint(fp) if *fp != key.fingerprint() => {
                return Err(format!(
                    "it is signed by the key {}, not the learner's {fp}",
                    key.fingerprint()
                ));
            }
            Trust::FirstSeen(Some(k)) if *k != key => {
                return Err(format!(
                    "it is signed by the key {}, not the {} of the weights first loaded",
                    key.fingerprint(),
                    k.fingerprint()
                ));
            }
            _ => {}
        }
        if !key.verifies(message, signature) {
            return Err(format!(
                "its signature does not match its contents (key {})",
                key.fingerprint()
            ));
        }
        if let Trust::FirstSeen(pinned @ None) = self {
            *pinned = Some(key);
        }
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_covers_every_field() {
        let key = LearnerKey::generate();
        let m = message("run", 7, "{}", "{\"a\":1}", b"weights");
        let sig = key.sign(&m);
        let public = key.public();
        assert!(public.verifies(&m, &sig));
        for other in [
            message("run2", 7, "{}", "{\"a\":1}", b"weights"),
            message("run", 8, "{}", "{\"a\":1}", b"weights"),
            message("run", 7, "{ }", "{\"a\":1}", b"weights"),
            message("run", 7, "{}", "{\"a\":2}", b"weights"),
            message("run", 7, "{}", "{\"a\":1}", b"weightz"),
        ] {
            assert!(!public.verifies(&other, &sig));
        }
        assert!(!public.verifies(&m, "00"));
        assert!(!public.verifies(&m, &"zz".repeat(64)));
        assert!(!LearnerKey::generate().public().verifies(&m, &sig));
    }

    #[test]
    fn workers_trust_a_key_a_fingerprint_or_the_first_one() {
        let learner = LearnerKey::generate();
        let forger = LearnerKey::generate();
        let m = message("r", 1, "m", "s", b"w");
        let (good, bad) = (learner.sign(&m), forger.sign(&m));
        let (lk, fk) = (learner.public().hex(), forger.public().hex());
        let fp = learner.public().fingerprint();
        for arg in [
            lk.clone(),
            fp.clone(),
            fp.trim_start_matches("sha256:").to_string(),
        ] {
            let mut t = Trust::from_arg(Some(&arg)).expect("parses");
            assert!(t.check(Some(&lk), Some(&good), &m).is_ok(), "{arg}");
            let e = t.check(Some(&fk), Some(&bad), &m).expect_err("forger");
            assert!(e.contains("not the learner's"), "{e}");
            // The learner's key named, but a signature it did not make.
            assert!(t.check(Some(&lk), Some(&bad), &m).is_err());
            assert!(t.check(None, None, &m).is_err());
        }
        let mut tofu = Trust::from_arg(None).expect("first use");
        assert!(tofu.check(Some(&lk), Some(&good), &m).is_ok());
        assert!(tofu.check(Some(&fk), Some(&bad), &m).is_err(), "pinned");
        assert!(Trust::from_arg(Some("not-a-key")).is_err());
    }

    #[test]
    fn the_key_is_kept_in_the_run_directory() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (a, made) = LearnerKey::load_or_create(dir.path()).expect("made");
        assert!(made);
        let (b, made) = LearnerKey::load_or_create(dir.path()).expect("read");
        assert!(!made);
        assert_eq!(a.public(), b.public());
        let public = std::fs::read_to_string(dir.path().join(PUBLIC_KEY_FILE)).expect("pub");
        assert_eq!(PublicKey::parse(&public), Some(a.public()));
        let t = Trust::from_arg(Some(&dir.path().join(PUBLIC_KEY_FILE).to_string_lossy()))
            .expect("a key file");
        assert_eq!(t, Trust::Key(a.public()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(KEY_FILE))
                .expect("key file")
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "the secret is the owner's only");
        }
        std::fs::write(dir.path().join(KEY_FILE), "junk").expect("write");
        assert!(LearnerKey::load_or_create(dir.path()).is_err());
    }
}
