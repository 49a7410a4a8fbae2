//! Token buckets: a connection's message rate, and the failed look-ups (unknown room codes or
//! seat tokens) and table creations of one address ([`AddressKey`]: IPv6 by its /64).

use crate::address::AddressKey;
use std::collections::HashMap;
use std::time::Instant;

/// A token bucket: `burst` tokens at most, refilled at `per_second`.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    tokens: f64,
    burst: f64,
    per_second: f64,
    updated: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(burst: f64, per_second: f64) -> TokenBucket {
        TokenBucket {
            tokens: burst,
            burst,
            per_second,
            updated: Instant::now(),
        }
    }

    fn refill(&mut self, now: Instant) {
        let dt = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + dt * self.per_second).min(self.burst);
        self.updated = now;
    }

    /// Takes a token if there is one.
    pub fn take(&mut self, now: Instant) -> bool {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Whether a token is there, without taking it.
    pub fn has(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.tokens >= 1.0
    }

    /// Whether the bucket is full again (so forgetting it loses nothing).
    fn is_full(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.tokens >= self.burst
    }
}

/// One bucket per address, for at most `max_addresses` addresses. When that many are
/// draining at once (a flood from many addresses), the addresses not tracked yet share one
/// more bucket: a flood can neither grow the map nor, by pushing addresses out, hand their
/// owners fresh buckets.
#[derive(Debug)]
pub struct AddressLimiter {
    buckets: HashMap<AddressKey, TokenBucket>,
    /// The bucket of the addresses that find the map full.
    overflow: TokenBucket,
    burst: f64,
    per_second: f64,
    max_addresses: usize,
}

impl AddressLimiter {
    /// A limiter allowing `burst` at once and `per_minute` sustained per address.
    pub fn new(burst: f64, per_minute: f64, max_addresses: usize) -> AddressLimiter {
        AddressLimiter {
            buckets: HashMap::new(),
            overflow: TokenBucket::new(burst, per_minute / 60.0),
            burst,
            per_second: per_minute / 60.0,
            max_addresses,
        }
    }

    /// The bucket of `key`, making room for it when the map is full of refilled buckets.
    fn bucket(&mut self, key: AddressKey, now: Instant) -> &mut TokenBucket {
        if !self.buckets.contains_key(&key) && self.buckets.len() >= self.max_addresses {
            // Forget the addresses whose buckets have refilled: that loses nothing.
            self.buckets.retain(|_, b| !b.is_full(now));
        }
        if !self.buckets.contains_key(&key) && self.buckets.len() >= self.max_addresses {
            return &mut self.overflow;
        }
        let (burst, rate) = (self.burst, self.per_second);
        self.buckets
            .entry(key)
            .or_insert_with(|| TokenBucket::new(burst, rate))
    }

    /// Whether `key` may try once more (nothing is taken).
    pub fn allows(&mut self, key: AddressKey, now: Instant) -> bool {
        let full = self.buckets.len() >= self.max_addresses;
        match self.buckets.get_mut(&key) {
            Some(b) => b.has(now),
            None if full => self.overflow.has(now),
            None => true,
        }
    }

    /// Takes one from `key`'s bucket; `false` when it was empty.
    pub fn take(&mut self, key: AddressKey, now: Instant) -> bool {
        self.bucket(key, now).take(now)
    }

    /// Addresses tracked.
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Whether no address is tracked.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn buckets_drain_and_refill() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(3.0, 2.0);
        assert!(b.take(t0) && b.take(t0) && b.take(t0));
        assert!(!b.take(t0));
        assert!(b.take(t0 + Duration::from_millis(600)));
        assert!(!b.take(t0 + Duration::from_millis(600)));
    }

    #[test]
    fn addresses_are_limited_apart_and_bounded() {
        let t0 = Instant::now();
        let mut l = AddressLimiter::new(2.0, 60.0, 3);
        let key = |s: &str| AddressKey::of(s.parse().expect("ip"));
        let (a, b) = (key("127.0.0.1"), key("127.0.0.2"));
        assert!(l.take(a, t0) && l.take(a, t0));
        assert!(!l.allows(a, t0) && !l.take(a, t0));
        assert!(l.allows(b, t0) && l.take(b, t0));
        // A flood from many addresses: the map stays bounded, and the addresses it cannot
        // hold share one bucket, so the flood gets two more tries in all, not two each.
        let mut allowed = 0;
        for i in 3..100u8 {
            if l.take(AddressKey::of([10, 0, 0, i].into()), t0) {
                allowed += 1;
            }
            assert!(l.len() <= 3);
        }
        assert_eq!(
            allowed,
            1 + 2,
            "one address fits the map, the others share a bucket"
        );
        // The drained addresses are still remembered: no fresh bucket for them.
        assert!(!l.take(a, t0));
        // Once buckets refill, their addresses are forgotten and new ones fit again.
        let later = t0 + std::time::Duration::from_secs(10);
        assert!(l.take(key("10.1.0.1"), later));
    }

    #[test]
    fn one_ipv6_prefix_is_one_address() {
        let t0 = Instant::now();
        let mut l = AddressLimiter::new(2.0, 60.0, 100);
        let mut allowed = 0;
        for i in 0..50u16 {
            let ip: std::net::IpAddr = format!("2001:db8:0:7::{i:x}").parse().expect("ip");
            if l.take(AddressKey::of(ip), t0) {
                allowed += 1;
            }
        }
        assert_eq!((allowed, l.len()), (2, 1));
    }
}
