//! The integration tests of the workspace, in one test binary (one link, on 2 cores much less
//! time than one binary per file): the built `oware` binary driven through its command line,
//! the line protocol, the web server (with a real headless Chromium) and the Redis broker
//! (with a real redis-server). Helpers live in [`common`].
//!
//! Run one area with a filter: `cargo test --release --test it serve::`.

mod broker;
mod broker_acl;
mod broker_hostile;
mod broker_tls;
mod cli_book;
mod cli_bounds;
mod cli_egtb;
mod cli_gpu;
mod cli_ladder;
mod cli_pit_batched;
mod cli_pit_engine;
mod cli_play;
mod cli_report;
mod cli_train;
mod common;
mod layers;
mod serve;
mod soak_resume;
#[cfg(feature = "wgpu")]
mod wgpu_software;
