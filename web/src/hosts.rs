//! Which hosts the server answers for, against DNS rebinding: a page of another site that
//! makes its own name resolve to this server (say `127.0.0.1`) could otherwise drive it from
//! the visitor's browser, since `Origin` and `Host` would agree. Every request must name an
//! allowed host in `Host`, and a WebSocket's `Origin` must be allowed too.

use crate::config::normalize_origin;
use axum::http::{HeaderMap, header};
use std::net::IpAddr;

/// The hosts the server answers for: loopback names (`localhost`, `*.localhost`), IP
/// addresses (which DNS rebinding cannot use) and the hosts of the configured public origins.
/// A page of another site that makes its name resolve to this server still sends its own name
/// in `Host`, and is refused.
#[derive(Clone, Debug, Default)]
pub struct HostPolicy {
    /// The configured public origins, normalized (`https://host[:port]`).
    origins: Vec<String>,
    /// Their host names, lower case.
    names: Vec<String>,
}

/// The host name of a `Host` header or an origin's authority, lower case, without the port
/// (`[::1]:8080` → `[::1]`); `None` when it is not one.
fn host_name(authority: &str) -> Option<String> {
    let a = authority.trim().to_ascii_lowercase();
    if a.is_empty() || a.contains(['/', '@', ' ', '?', '#']) {
        return None;
    }
    if a.starts_with('[') {
        let end = a.find(']')?;
        let rest = &a[end + 1..];
        if !(rest.is_empty() || rest.strip_prefix(':').is_some_and(is_port)) {
            return None;
        }
        return Some(a[..=end].to_string());
    }
    match a.rsplit_once(':') {
        Some((name, port)) if is_port(port) && !name.contains(':') => Some(name.to_string()),
        Some(_) => None,
        None => Some(a),
    }
}

fn is_port(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
}

impl HostPolicy {
    /// The policy of `public_origins` (checked: each must be `http(s)://host[:port]`).
    pub fn new(public_origins: &[String]) -> anyhow::Result<HostPolicy> {
        let mut policy = HostPolicy::default();
        for o in public_origins {
            let origin = normalize_origin(o).map_err(|e| anyhow::anyhow!("--public-origin {e}"))?;
            let authority = origin.split_once("://").map_or("", |(_, a)| a);
            let name = host_name(authority)
                .ok_or_else(|| anyhow::anyhow!("--public-origin '{o}': no host name in it"))?;
            policy.names.push(name);
            policy.origins.push(origin);
        }
        Ok(policy)
    }

    /// Whether a request with this `Host` is answered.
    pub fn host_allowed(&self, host: &str) -> bool {
        let Some(name) = host_name(host) else {
            return false;
        };
        let bare = name.trim_start_matches('[').trim_end_matches(']');
        name == "localhost"
            || name.ends_with(".localhost")
            || bare.parse::<IpAddr>().is_ok()
            || self.names.contains(&name)
    }

    /// Whether a WebSocket upgrade may go on: clients without `Origin` (not browsers) may; a
    /// browser's `Origin` must be a configured public origin, or name the host it asks (an
    /// allowed one).
    pub fn origin_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return true;
        };
        let Some(origin) = origin.to_str().ok().and_then(|o| normalize_origin(o).ok()) else {
            return false;
        };
        if self.origins.contains(&origin) {
            return true;
        }
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        let origin_authority = origin.split_once("://").map(|(_, rest)| rest);
        match (origin_authority, host) {
            (Some(o), Some(h)) => {
                // The origin lost a default port in normalizing; compare the same way.
                let scheme = origin.split_once("://").map_or("http", |(s, _)| s);
                let h = normalize_origin(&format!("{scheme}://{h}")).unwrap_or_default();
                h.split_once("://").is_some_and(|(_, a)| a == o) && self.host_allowed(o)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_allow_listed() {
        let p = HostPolicy::new(&["https://oware.example.org".to_string()]).expect("origin");
        for ok in [
            "localhost:8080",
            "LOCALHOST",
            "app.localhost:1",
            "127.0.0.1:8080",
            "10.1.2.3",
            "[::1]:8080",
            "[2001:db8::1]",
            "oware.example.org",
            "oware.example.org:443",
        ] {
            assert!(p.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "localhost.evil.example",
            "127.0.0.1.nip.io",
            "",
            "a b",
            "[::1",
            "host:99999999",
            "user@localhost",
        ] {
            assert!(!p.host_allowed(bad), "{bad}");
        }
        assert!(HostPolicy::new(&["ftp://x".to_string()]).is_err());
        assert!(HostPolicy::new(&["https://x/path".to_string()]).is_err());
    }

    #[test]
    fn origins_must_match_the_host_or_be_configured() {
        let p = HostPolicy::new(&["https://oware.example.org".to_string()]).expect("origin");
        let h = |origin: Option<&str>, host: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::HOST, host.parse().expect("header"));
            if let Some(o) = origin {
                m.insert(header::ORIGIN, o.parse().expect("header"));
            }
            p.origin_allowed(&m)
        };
        assert!(h(None, "127.0.0.1:8080"), "not a browser");
        assert!(h(Some("http://127.0.0.1:8080"), "127.0.0.1:8080"));
        assert!(h(Some("http://localhost:8080"), "localhost:8080"));
        assert!(!h(Some("http://evil.example"), "127.0.0.1:8080"));
        // DNS rebinding: the page's own name in both headers, but not an allowed host.
        assert!(!h(Some("http://evil.example:8080"), "evil.example:8080"));
        // Behind a reverse proxy that rewrites Host.
        assert!(h(Some("https://oware.example.org"), "127.0.0.1:8080"));
        assert!(h(
            Some("https://oware.example.org:443"),
            "oware.example.org"
        ));
        assert!(!h(Some("null"), "127.0.0.1:8080"));
    }
}
