//! The hub: every table the server holds, found by room code or seat token, with the limits
//! on their number, expiry of idle ones, and the rate limits against guessing codes.

use crate::ai::{AiPool, Roster};
use crate::config::{
    LOOKUP_FAILURE_BURST, LOOKUP_FAILURES_PER_MINUTE, MAX_AI_QUEUE, MAX_TRACKED_ADDRESSES,
    ServeConfig,
};
use crate::protocol::{ErrorCode, ErrorReply, Outgoing, Reply, SeatName};
use crate::ratelimit::AddressLimiter;
use crate::table::{Kind, Table, TableEvent};
use rand::Rng;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// The letters of room codes: no 0/O, 1/I/L, so a code read aloud is typed right.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// Letters in a room code: 31^6, about 887 million codes.
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

/// A random room code.
fn room_code() -> String {
    let mut rng = rand::rng();
    (0..CODE_LEN)
        .map(|_| CODE_ALPHABET[rng.random_range(0..CODE_ALPHABET.len())] as char)
        .collect()
}

/// A random 128-bit secret in hex: seat tokens and the ids of private tables.
fn secret() -> String {
    format!("{:032x}", rand::rng().random::<u128>())
}

/// A room code as typed: trimmed, upper case; `None` when it cannot be a code.
pub fn normalize_code(code: &str) -> Option<String> {
    let code = code.trim().to_ascii_uppercase();
    (code.len() == CODE_LEN && code.bytes().all(|b| CODE_ALPHABET.contains(&b))).then_some(code)
}

#[derive(Default)]
struct Tables {
    by_id: HashMap<String, SharedTable>,
    by_token: HashMap<String, String>,
    rooms: usize,
    games: usize,
}

/// A place among the open connections; dropping it frees the place.
#[derive(Debug)]
pub struct ConnectionSlot(Arc<AtomicUsize>);

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
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
    tables: Mutex<Tables>,
    failures: Mutex<AddressLimiter>,
    creations: Mutex<AddressLimiter>,
    connections: Arc<AtomicUsize>,
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

impl Hub {
    /// A hub with no tables.
    pub fn new(config: ServeConfig, roster: Roster) -> Hub {
        let pool = AiPool::new(config.ai_threads, MAX_AI_QUEUE);
        Hub {
            config,
            roster,
            pool,
            tables: Mutex::new(Tables::default()),
            failures: Mutex::new(AddressLimiter::new(
                LOOKUP_FAILURE_BURST,
                LOOKUP_FAILURES_PER_MINUTE,
                MAX_TRACKED_ADDRESSES,
            )),
            creations: Mutex::new(AddressLimiter::new(
                CREATE_BURST,
                CREATES_PER_MINUTE,
                MAX_TRACKED_ADDRESSES,
            )),
            connections: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// A place for one more connection, unless the limit is reached.
    pub fn connection_slot(&self) -> Option<ConnectionSlot> {
        let n = self.connections.fetch_add(1, Ordering::AcqRel);
        let slot = ConnectionSlot(self.connections.clone());
        (n < self.config.max_connections).then_some(slot)
    }

    /// Open connections.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::Acquire)
    }

    /// Open (rooms, other games).
    pub fn counts(&self) -> (usize, usize) {
        let t = lock(&self.tables);
        (t.rooms, t.games)
    }

    /// Makes a table of `kind` whose creator sits at `seat` (for rooms, the other seat gets
    /// a token too, handed to whoever joins first).
    pub fn create(&self, kind: Kind, seat: SeatName, ip: IpAddr) -> Result<Created, ErrorReply> {
        if !lock(&self.creations).take(ip, Instant::now()) {
            return Err(ErrorReply::new(
                ErrorCode::RateLimited,
                "too many new games from your address: wait a minute",
            ));
        }
        let mut tables = lock(&self.tables);
        let is_room = kind == Kind::Room;
        if is_room && tables.rooms >= self.config.max_rooms {
            return Err(ErrorReply::new(
                ErrorCode::Limit,
                format!(
                    "the server holds its maximum of {} rooms: try again later",
                    self.config.max_rooms
                ),
            ));
        }
        if !is_room && tables.games >= self.config.max_games {
            return Err(ErrorReply::new(
                ErrorCode::Limit,
                format!(
                    "the server holds its maximum of {} games: try again later",
                    self.config.max_games
                ),
            ));
        }
        let id = loop {
            let id = if is_room { room_code() } else { secret() };
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
        let table = Table::new(id.clone(), kind, seats);
        for t in table.tokens() {
            tables.by_token.insert(t.to_string(), id.clone());
        }
        let table = Arc::new(Mutex::new(table));
        tables.by_id.insert(id.clone(), table.clone());
        if is_room {
            tables.rooms += 1;
        } else {
            tables.games += 1;
        }
        Ok(Created { table, id, token })
    }

    /// Removes a table at once (a person replaced their own game by a new one).
    pub fn remove(&self, id: &str) {
        let mut tables = lock(&self.tables);
        Self::remove_locked(&mut tables, id);
    }

    fn remove_locked(tables: &mut Tables, id: &str) -> Option<SharedTable> {
        let table = tables.by_id.remove(id)?;
        let t = lock(&table);
        for token in t.tokens() {
            tables.by_token.remove(token);
        }
        if t.kind == Kind::Room {
            tables.rooms -= 1;
        } else {
            tables.games -= 1;
        }
        drop(t);
        Some(table)
    }

    /// Refuses when `ip` has tried too many unknown codes or tokens lately.
    fn check_guesses(&self, ip: IpAddr) -> Result<(), ErrorReply> {
        if lock(&self.failures).allows(ip, Instant::now()) {
            Ok(())
        } else {
            Err(ErrorReply::new(
                ErrorCode::RateLimited,
                "too many unknown room codes from your address: wait a minute",
            ))
        }
    }

    fn failed_guess(&self, ip: IpAddr, what: &str) -> ErrorReply {
        lock(&self.failures).take(ip, Instant::now());
        ErrorReply::new(ErrorCode::NotFound, what)
    }

    /// The room with `code`.
    pub fn room(&self, code: &str, ip: IpAddr) -> Result<(String, SharedTable), ErrorReply> {
        self.check_guesses(ip)?;
        let found = normalize_code(code).and_then(|code| {
            let tables = lock(&self.tables);
            let t = tables.by_id.get(&code)?.clone();
            let is_room = lock(&t).kind == Kind::Room;
            is_room.then_some((code, t))
        });
        found.ok_or_else(|| {
            self.failed_guess(
                ip,
                "no room with that code: check it, or the room may have expired",
            )
        })
    }

    /// The table and id the seat token holds.
    pub fn by_token(&self, token: &str, ip: IpAddr) -> Result<(String, SharedTable), ErrorReply> {
        self.check_guesses(ip)?;
        let found = {
            let tables = lock(&self.tables);
            tables
                .by_token
                .get(token)
                .and_then(|id| Some((id.clone(), tables.by_id.get(id)?.clone())))
        };
        found.ok_or_else(|| {
            self.failed_guess(ip, "no seat with that token: the game may have expired")
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
        let message: Arc<str> = Outgoing::to(
            None,
            Reply::Error(ErrorReply::new(
                ErrorCode::Expired,
                format!(
                    "this game expired after {} s without a move",
                    idle.as_secs()
                ),
            )),
        )
        .to_json()
        .into();
        for id in &expired {
            if let Some(table) = Self::remove_locked(&mut tables, id) {
                lock(&table).send(TableEvent::Expired(message.clone()));
            }
        }
        expired.len()
    }
}
