//! The key every per-address limit counts by: an IPv4 address, or the /64 prefix of an IPv6
//! address (one home or one server gets a whole /64, so counting full IPv6 addresses would
//! give one client 2^64 separate allowances).

use std::fmt;
use std::net::IpAddr;

/// Where a client comes from, as the limits see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AddressKey {
    /// An IPv4 address (also an IPv4-mapped IPv6 address, `::ffff:a.b.c.d`).
    V4([u8; 4]),
    /// The first 64 bits of an IPv6 address.
    V6([u8; 8]),
}

impl AddressKey {
    /// The key of `ip`.
    pub fn of(ip: IpAddr) -> AddressKey {
        match ip {
            IpAddr::V4(v4) => AddressKey::V4(v4.octets()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => AddressKey::V4(v4.octets()),
                None => {
                    let o = v6.octets();
                    let mut prefix = [0u8; 8];
                    prefix.copy_from_slice(&o[..8]);
                    AddressKey::V6(prefix)
                }
            },
        }
    }
}

impl From<IpAddr> for AddressKey {
    fn from(ip: IpAddr) -> AddressKey {
        AddressKey::of(ip)
    }
}

impl fmt::Display for AddressKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddressKey::V4(o) => write!(f, "{}.{}.{}.{}", o[0], o[1], o[2], o[3]),
            AddressKey::V6(p) => {
                for pair in p.chunks(2) {
                    write!(f, "{:x}:", u16::from_be_bytes([pair[0], pair[1]]))?;
                }
                f.write_str(":/64")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> AddressKey {
        AddressKey::of(s.parse().expect("an address"))
    }

    #[test]
    fn ipv6_counts_by_its_64_bit_prefix() {
        assert_eq!(
            key("2001:db8:1:2::1"),
            key("2001:db8:1:2:ffff:ffff:ffff:ffff")
        );
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
        assert_eq!(key("2001:db8:1:2::1").to_string(), "2001:db8:1:2::/64");
    }

    #[test]
    fn ipv4_counts_by_the_whole_address_also_when_mapped() {
        assert_ne!(key("10.0.0.1"), key("10.0.0.2"));
        assert_eq!(key("::ffff:10.0.0.1"), key("10.0.0.1"));
        assert_eq!(key("10.0.0.1").to_string(), "10.0.0.1");
    }
}
