//! # oware-web
//!
//! `oware serve`: Oware in a browser. One page (HTML, CSS and JavaScript in `assets/`, built
//! into the binary) talks to the server over a WebSocket with small JSON messages
//! ([`protocol`]). The server is authoritative: every move is checked by the engine and the
//! page only draws the states it is sent.
//!
//! - [`config`]: settings and every limit, with their defaults; [`address`]: the key the
//!   per-address limits count by (IPv6 by its /64).
//! - [`protocol`]: the messages.
//! - [`state`]: the JSON of a position (that of `oware replay --json`) and of a table.
//! - [`table`]: one game and its seats (vs AI, two on one device, friend room).
//! - [`hub`]: all tables, room and join codes, seat tokens, expiry, eviction, the limits per
//!   address and against guessing.
//! - [`ai`]: the players offered and their searches; [`pool`]: the bounded search pool (AI
//!   moves before analysis, the lightest address first, stale searches stopped).
//! - [`session`]: one connection's message handling; [`socket`]: its WebSocket.
//! - [`server`]: the HTTP routes and the main loop (TCP limits, header timeout);
//!   [`hosts`]: the hosts it answers for (against DNS rebinding).
//!
//! `docs/security.md` describes the threat model and every limit.

pub mod address;
pub mod ai;
pub mod config;
pub mod hosts;
pub mod hub;
pub mod pool;
pub mod protocol;
pub mod ratelimit;
pub mod server;
pub mod session;
pub mod socket;
pub mod state;
pub mod table;

pub use config::ServeConfig;
pub use server::run;
