//! `oware serve` tested through the built binary: HTTP and WebSocket clients (`api`), a real
//! headless Chromium (`browser`), and a load test (`load`, ignored; run it with
//! `cargo test --release --test serve -- --ignored --nocapture load`), and clients that
//! attack it (`hostile`).

mod api;
mod browser;
mod hostile;
mod load;
mod server;
mod tables;
