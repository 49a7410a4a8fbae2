//! Token buckets: a connection's message rate, and the failed look-ups (unknown room codes or
//! seat tokens) and table creations of one address.

use std::collections::HashMap;
use std::net::IpAddr;
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

/// One bucket per address, for at most `max_addresses` addresses.
#[derive(Debug)]
pub struct AddressLimiter {
    buckets: HashMap<IpAddr, TokenBucket>,
    burst: f64,
    per_second: f64,
    max_addresses: usize,
}

impl AddressLimiter {
    /// A limiter allowing `burst` at once and `per_minute` sustained per address.
    pub fn new(burst: f64, per_minute: f64, max_addresses: usize) -> AddressLimiter {
        AddressLimiter {
            buckets: HashMap::new(),
            burst,
            per_second: per_minute / 60.0,
            max_addresses,
        }
    }

    /// Whether `ip` may try once more (nothing is taken).
    pub fn allows(&mut self, ip: IpAddr, now: Instant) -> bool {
        self.buckets.get_mut(&ip).is_none_or(|b| b.has(now))
    }

    /// Takes one from `ip`'s bucket; `false` when it was empty.
    pub fn take(&mut self, ip: IpAddr, now: Instant) -> bool {
        if !self.buckets.contains_key(&ip) && self.buckets.len() >= self.max_addresses {
            // Forget the addresses whose buckets have refilled; if all are still draining
            // (a flood from many addresses), forget all rather than grow without bound.
            self.buckets.retain(|_, b| !b.is_full(now));
            if self.buckets.len() >= self.max_addresses {
                self.buckets.clear();
            }
        }
        let (burst, rate) = (self.burst, self.per_second);
        self.buckets
            .entry(ip)
            .or_insert_with(|| TokenBucket::new(burst, rate))
            .take(now)
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
        let a: IpAddr = "127.0.0.1".parse().expect("ip");
        let b: IpAddr = "127.0.0.2".parse().expect("ip");
        assert!(l.take(a, t0) && l.take(a, t0));
        assert!(!l.allows(a, t0) && !l.take(a, t0));
        assert!(l.allows(b, t0) && l.take(b, t0));
        for i in 3..100u8 {
            l.take(IpAddr::from([10, 0, 0, i]), t0);
            assert!(l.buckets.len() <= 3);
        }
    }
}
