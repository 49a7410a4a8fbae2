//! The hub: every table the server holds, found by room code, join code or seat token, with
//! the limits on their number (in all and per address), eviction of unattended tables, expiry
//! of idle ones, and the limits against guessing codes.

use crate::address::AddressKey;
use crate::ai::Roster;
use crate::config::{
    GLOBAL_LOOKUP_FAILURE_BURST, GLOBAL_LOOKUP_FAILURES_PER_MINUTE, JOIN_KEY_LEN,
    LOOKUP_FAILURE_BURST, LOOKUP_FAILURES_PER_MINUTE, MAX_TRACKED_ADDRESSES, ServeConfig,
};
use crate::hosts::HostPolicy;
use crate::pool::{AiPool, PoolLimits};
use crate::protocol::{ErrorCode, ErrorReply, Outgoing, Reply, SeatName};
use crate::ratelimit::{AddressLimiter, TokenBucket};
use crate::table::{Kind, Table, TableEvent};
use rand::Rng;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The letters of room codes: no 0/O, 1/I/L, so a code read aloud is typed right.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// Letters in a room code: 31^6, about 887 million codes. The code lets one watch; a seat
/// needs the join code, the room code and [`JOIN_KEY_LEN`] more letters (31^14 in all).
pub const CODE_LEN: usize = 6;
/// Table creations one address may make in a burst.
const CREATE_BURST: f64 = 120.0;
/// Table creations one address may make per minute, sustained.
const CREATES_PER_MINUTE: f64 = 60.0;

/// A shared table.
pub type SharedTable = Arc<Mutex<Table>>;

/// Locks a mutex, taking the data even if a thread panicked while holding it: every change
/// to a table is made through its methods, which leave it consistent at each step, so the
/// data is still good and the server goes on.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `n` random letters of the code alphabet.
fn letters(n: usize) -> String {
    let mut rng = rand::rng();
    (0..n)
        .map(|_| CODE_ALPHABET[rng.random_range(0..CODE_ALPHABET.len())] as char)
        .collect()
}

/// A random 128-bit secret in hex: seat tokens and the ids of private tables.
fn secret() -> String {
    format!("{:032x}", rand::rng().random::<u128>())
}

/// A code as typed, trimmed, upper case, without spaces and dashes: the room code and, when
/// the whole join code was given, the join key; `None` when it cannot be either.
pub fn parse_code(code: &str) -> Option<(String, Option<String>)> {
    let letters: String = code
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    if !letters.bytes().all(|b| CODE_ALPHABET.contains(&b)) {
        return None;
    }
    match letters.len() {
        CODE_LEN => Some((letters, None)),
        n if n == CODE_LEN + JOIN_KEY_LEN => {
            let (code, key) = letters.split_at(CODE_LEN);
            Some((code.to_string(), Some(key.to_string())))
        }
        _ => None,
    }
}

/// A room code as typed: trimmed, upper case; `None` when it cannot be a code.
pub fn normalize_code(code: &str) -> Option<String> {
    parse_code(code).map(|(code, _)| code)
}

/// Counts of something held per address and in all (connections), with a limit on each.
#[derive(Debug)]
pub struct Occupancy {
    total_cap: usize,
    per_address_cap: usize,
    counts: Arc<Mutex<Counts>>,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by_address: HashMap<AddressKey, usize>,
}

/// Which limit refused a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Full {
    /// The limit of all addresses together.
    Total(usize),
    /// The limit of one address.
    Address(usize),
}

/// A place taken in an [`Occupancy`]; dropping it frees the place.
#[derive(Debug)]
pub struct Place {
    counts: Arc<Mutex<Counts>>,
    key: AddressKey,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut c = lock(&self.counts);
        c.total = c.total.saturating_sub(1);
        if let Some(n) = c.by_address.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                c.by_address.remove(&self.key);
            }
        }
    }
}

impl Occupancy {
    /// At most `total_cap` in all and `per_address_cap` per address.
    pub fn new(total_cap: usize, per_address_cap: usize) -> Occupancy {
        Occupancy {
            total_cap,
            per_address_cap,
            counts: Arc::new(Mutex::new(Counts::default())),
        }
    }

    /// A place for `key`, unless a limit is reached.
    pub fn enter(&self, key: AddressKey) -> Result<Place, Full> {
        let mut c = lock(&self.counts);
        if c.total >= self.total_cap {
            return Err(Full::Total(self.total_cap));
        }
        let mine = c.by_address.get(&key).copied().unwrap_or(0);
        if mine >= self.per_address_cap {
            return Err(Full::Address(self.per_address_cap));
        }
        c.total += 1;
        *c.by_address.entry(key).or_insert(0) += 1;
        Ok(Place {
            counts: Arc::clone(&self.counts),
            key,
        })
    }

    /// Places taken in all.
    pub fn total(&self) -> usize {
        lock(&self.counts).total
    }

    /// Places taken by `key`.
    pub fn of(&self, key: AddressKey) -> usize {
        lock(&self.counts)
            .by_address
            .get(&key)
            .copied()
            .unwrap_or(0)
    }
}

#[derive(Default)]
struct Tables {
    by_id: HashMap<String, SharedTable>,
    by_token: HashMap<String, String>,
    by_owner: HashMap<AddressKey, usize>,
    rooms: usize,
    games: usize,
}

impl Tables {
    /// The unattended table (for `grace` at least) to close first among those `pick` takes:
    /// the one idle longest.
    fn evictable(
        &self,
        now: Instant,
        grace: Duration,
        pick: impl Fn(&Table) -> bool,
    ) -> Option<String> {
        self.by_id
            .iter()
            .filter_map(|(id, t)| {
                let t = lock(t);
                let away = t.unattended_for(now)?;
                (away >= grace && pick(&t)).then(|| (t.last_active(), id.clone()))
            })
            .min()
            .map(|(_, id)| id)
    }
}

/// Everything the connections share.
pub struct Hub {
    /// The settings.
    pub config: ServeConfig,
    /// The players offered.
    pub roster: Roster,
    /// The search pool.
    pub pool: AiPool,
    /// The hosts the server answers for.
    pub hosts: HostPolicy,
    tables: Mutex<Tables>,
    failures: Mutex<AddressLimiter>,
    global_failures: Mutex<TokenBucket>,
    creations: Mutex<AddressLimiter>,
    connections: Occupancy,
}

/// A table just made: the table, the seat and the token of its first occupant.
pub struct Created {
    /// The table.
    pub table: SharedTable,
    /// Its id.
    pub id: String,
    /// The creator's token.
    pub token: String,
}

/// Why a table closes before its players leave it.
#[derive(Clone, Copy, Debug)]
enum Closing {
    /// Idle past the idle limit.
    Idle(Duration),
    /// Nobody at it, and its place was needed.
    Evicted,
}

impl Hub {
    /// A hub with no tables.
    pub fn new(config: ServeConfig, roster: Roster, hosts: HostPolicy) -> Hub {
        let pool = AiPool::new(PoolLimits::of(&config));
        let connections =
            Occupancy::new(config.max_connections, config.max_connections_per_address);
        Hub {
            config,
            roster,
            pool,
            hosts,
            tables: Mutex::new(Tables::default()),
            failures: Mutex::new(AddressLimiter::new(
                LOOKUP_FAILURE_BURST,
                LOOKUP_FAILURES_PER_MINUTE,
                MAX_TRACKED_ADDRESSES,
            )),
            global_failures: Mutex::new(TokenBucket::new(
                GLOBAL_LOOKUP_FAILURE_BURST,
                GLOBAL_LOOKUP_FAILURES_PER_MINUTE / 60.0,
            )),
            creations: Mutex::new(AddressLimiter::new(
                CREATE_BURST,
                CREATES_PER_MINUTE,
                MAX_TRACKED_ADDRESSES,
            )),
            connections,
        }
    }

    /// A place for one more WebSocket connection from `key`, unless a limit is reached (the
    /// error is the line to answer with).
    pub fn connection_slot(&self, key: AddressKey) -> Result<Place, String> {
        self.connections.enter(key).map_err(|full| match full {
            Full::Total(n) => {
                format!("the server holds its maximum of {n} connections: try again later\n")
            }
            Full::Address(n) => format!(
                "your address holds its maximum of {n} connections: close some tabs first\n"
            ),
        })
    }

    /// Open connections.
    pub fn connections(&self) -> usize {
        self.connections.total()
    }

    /// Open (rooms, other games).
    pub fn counts(&self) -> (usize, usize) {
        let t = lock(&self.tables);
        (t.rooms, t.games)
    }

    /// Tables `key` holds.
    pub fn tables_of(&self, key: AddressKey) -> usize {
        lock(&self.tables).by_owner.get(&key).copied().unwrap_or(0)
    }

    /// Makes a table of `kind` whose creator, from `key`, sits at `seat` (for rooms, the other
    /// seat gets a token too, handed to whoever joins first). The table `replacing` (the
    /// creator's own game, which the new one replaces) is removed only once the new one is
    /// made, and does not count against the limits. At a limit, the table nobody has sat at
    /// for longest makes room (the address's own first), if one has been unattended for the
    /// eviction grace; else the new one is refused.
    pub fn create(
        &self,
        kind: Kind,
        seat: SeatName,
        key: AddressKey,
        replacing: Option<&str>,
    ) -> Result<Created, ErrorReply> {
        if !lock(&self.creations).take(key, Instant::now()) {
            return Err(ErrorReply::new(
                ErrorCode::RateLimited,
                "too many new games from your address: wait a minute",
            ));
        }
        let now = Instant::now();
        let grace = self.config.evict_grace();
        let mut tables = lock(&self.tables);
        let is_room = kind == Kind::Room;
        let replaced = replacing
            .and_then(|id| tables.by_id.get(id).map(|t| (id.to_string(), t.clone())))
            .map(|(id, t)| {
                let t = lock(&t);
                (id, t.owner, t.kind == Kind::Room)
            });
        let not_replaced = |t: &Table| replaced.as_ref().is_none_or(|(id, _, _)| *id != t.id);
        // The address's own limit.
        let own_replaced = replaced.as_ref().is_some_and(|(_, owner, _)| *owner == key);
        let held = tables
            .by_owner
            .get(&key)
            .copied()
            .unwrap_or(0)
            .saturating_sub(usize::from(own_replaced));
        if held >= self.config.max_tables_per_address {
            match tables.evictable(now, grace, |t| t.owner == key && not_replaced(t)) {
                Some(id) => self.close_locked(&mut tables, &id, Closing::Evicted),
                None => {
                    return Err(ErrorReply::new(
                        ErrorCode::Limit,
                        format!(
                            "your address holds its maximum of {} games and rooms: finish or \
                             leave one first",
                            self.config.max_tables_per_address
                        ),
                    ));
                }
            }
        }
        // The server's limit for this kind of table.
        let (open, max, what) = if is_room {
            (tables.rooms, self.config.max_rooms, "rooms")
        } else {
            (tables.games, self.config.max_games, "games")
        };
        let same_kind_replaced = replaced.as_ref().is_some_and(|(_, _, r)| *r == is_room);
        if open.saturating_sub(usize::from(same_kind_replaced)) >= max {
            let found = tables.evictable(now, grace, |t| {
                (t.kind == Kind::Room) == is_room && not_replaced(t)
            });
            match found {
                Some(id) => self.close_locked(&mut tables, &id, Closing::Evicted),
                None => {
                    return Err(ErrorReply::new(
                        ErrorCode::Limit,
                        format!("the server holds its maximum of {max} {what}: try again later"),
                    ));
                }
            }
        }
        let id = loop {
            let id = if is_room { letters(CODE_LEN) } else { secret() };
            if !tables.by_id.contains_key(&id) {
                break id;
            }
        };
        let token = secret();
        let mut seats = vec![(token.clone(), seat)];
        if is_room {
            let other = match seat {
                SeatName::South => SeatName::North,
                _ => SeatName::South,
            };
            seats.push((secret(), other));
        }
        let join_key = is_room.then(|| letters(JOIN_KEY_LEN));
        let table = Table::new(id.clone(), kind, seats, key, join_key);
        for t in table.tokens() {
            tables.by_token.insert(t.to_string(), id.clone());
        }
        let table = Arc::new(Mutex::new(table));
        tables.by_id.insert(id.clone(), table.clone());
        *tables.by_owner.entry(key).or_insert(0) += 1;
        if is_room {
            tables.rooms += 1;
        } else {
            tables.games += 1;
        }
        if let Some((old, _, _)) = replaced
            && let Some(t) = Self::remove_locked(&mut tables, &old)
        {
            lock(&t).close_down();
        }
        Ok(Created { table, id, token })
    }

    fn remove_locked(tables: &mut Tables, id: &str) -> Option<SharedTable> {
        let table = tables.by_id.remove(id)?;
        let t = lock(&table);
        for token in t.tokens() {
            tables.by_token.remove(token);
        }
        if let Some(n) = tables.by_owner.get_mut(&t.owner) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                tables.by_owner.remove(&t.owner);
            }
        }
        if t.kind == Kind::Room {
            tables.rooms = tables.rooms.saturating_sub(1);
        } else {
            tables.games = tables.games.saturating_sub(1);
        }
        drop(t);
        Some(table)
    }

    /// Removes a table, stops its searches and tells whoever is at it why.
    fn close_locked(&self, tables: &mut Tables, id: &str, why: Closing) {
        let Some(table) = Self::remove_locked(tables, id) else {
            return;
        };
        let text = match why {
            Closing::Idle(idle) => {
                format!(
                    "this game expired after {} s without a move",
                    idle.as_secs()
                )
            }
            Closing::Evicted => {
                "this game was closed to make room for a new one: nobody had been at it for a while"
                    .to_string()
            }
        };
        let message: Arc<str> = Outgoing::to(
            None,
            Reply::Error(ErrorReply::new(ErrorCode::Expired, text)),
        )
        .to_json()
        .into();
        let mut t = lock(&table);
        t.close_down();
        t.send(TableEvent::Expired(message));
    }

    /// Refuses when `key` has tried too many unknown codes or tokens lately; or, for a code
    /// that can be guessed (`guessable`: a six-letter room code), when all addresses together
    /// have.
    fn check_guesses(&self, key: AddressKey, guessable: bool) -> Result<(), ErrorReply> {
        let now = Instant::now();
        if !lock(&self.failures).allows(key, now) {
            return Err(ErrorReply::new(
                ErrorCode::RateLimited,
                "too many unknown room codes from your address: wait a minute",
            ));
        }
        if guessable && !lock(&self.global_failures).has(now) {
            return Err(ErrorReply::new(
                ErrorCode::RateLimited,
                "too many unknown room codes were tried on this server lately: six-letter \
                 codes are refused for a minute (the host's join link still works)",
            ));
        }
        Ok(())
    }

    fn failed_guess(&self, key: AddressKey, what: &str) -> ErrorReply {
        let now = Instant::now();
        lock(&self.failures).take(key, now);
        lock(&self.global_failures).take(now);
        ErrorReply::new(ErrorCode::NotFound, what)
    }

    /// The room `code` names (a six-letter room code, or a whole join code), for a seat
    /// (`seat`: then only a join code will do) or to watch. Returns the room code, the room,
    /// and whether the join code was given and right.
    pub fn room(
        &self,
        code: &str,
        key: AddressKey,
        seat: bool,
    ) -> Result<(String, SharedTable, bool), ErrorReply> {
        let parsed = parse_code(code);
        let guessable = parsed.as_ref().is_none_or(|(_, k)| k.is_none());
        self.check_guesses(key, guessable)?;
        let found = parsed.and_then(|(code, join)| {
            let tables = lock(&self.tables);
            let t = tables.by_id.get(&code)?.clone();
            let (is_room, joins) = {
                let t = lock(&t);
                (
                    t.kind == Kind::Room,
                    join.as_deref().is_some_and(|k| t.join_key_is(k)),
                )
            };
            // A wrong join key is a failed guess like an unknown code.
            (is_room && (join.is_none() || joins)).then_some((code, t, joins))
        });
        let Some((code, table, joins)) = found else {
            return Err(self.failed_guess(
                key,
                "no room with that code: check it, or the room may have expired",
            ));
        };
        if seat && !joins {
            return Err(ErrorReply::new(
                ErrorCode::NotAllowed,
                format!(
                    "a seat in room {code} needs the whole join code from the host's link \
                     ({code}-{}); with the six letters you can watch",
                    "X".repeat(JOIN_KEY_LEN)
                ),
            ));
        }
        Ok((code, table, joins))
    }

    /// The table and id the seat token holds.
    pub fn by_token(
        &self,
        token: &str,
        key: AddressKey,
    ) -> Result<(String, SharedTable), ErrorReply> {
        self.check_guesses(key, false)?;
        let found = {
            let tables = lock(&self.tables);
            tables
                .by_token
                .get(token)
                .and_then(|id| Some((id.clone(), tables.by_id.get(id)?.clone())))
        };
        found.ok_or_else(|| {
            self.failed_guess(key, "no seat with that token: the game may have expired")
        })
    }

    /// Removes every table idle for longer than the idle limit and tells those at it.
    pub fn sweep(&self, now: Instant) -> usize {
        let idle = self.config.idle;
        let mut tables = lock(&self.tables);
        let expired: Vec<String> = tables
            .by_id
            .iter()
            .filter(|(_, t)| now.saturating_duration_since(lock(t).last_active()) > idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            self.close_locked(&mut tables, id, Closing::Idle(idle));
        }
        expired.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_with_or_without_the_join_key() {
        assert_eq!(parse_code(" abcdef "), Some(("ABCDEF".into(), None)));
        assert_eq!(
            parse_code("ABCDEF-GHJKMNPQ"),
            Some(("ABCDEF".into(), Some("GHJKMNPQ".into())))
        );
        assert_eq!(
            parse_code("abc def ghjk mnpq"),
            Some(("ABCDEF".into(), Some("GHJKMNPQ".into())))
        );
        assert_eq!(parse_code("ABCDE"), None);
        assert_eq!(parse_code("ABCDEF-GHJ"), None);
        assert_eq!(parse_code("ABCDE0"), None, "0 is not in the alphabet");
        assert_eq!(parse_code("ÄBCDEF"), None);
    }

    #[test]
    fn occupancy_counts_per_address_and_in_all() {
        let o = Occupancy::new(3, 2);
        let (a, b) = (AddressKey::V4([1, 1, 1, 1]), AddressKey::V4([2, 2, 2, 2]));
        let p1 = o.enter(a).expect("room");
        let _p2 = o.enter(a).expect("room");
        assert_eq!(o.enter(a).expect_err("per address"), Full::Address(2));
        let _p3 = o.enter(b).expect("room");
        assert_eq!(o.enter(b).expect_err("in all"), Full::Total(3));
        drop(p1);
        assert_eq!((o.total(), o.of(a)), (2, 1));
        assert!(o.enter(b).is_ok());
    }
}
