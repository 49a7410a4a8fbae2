//! # oware-report
//!
//! What the commands show a person, apart from their plain text: charts drawn to PNG with
//! `plotters` on an in-memory bitmap with embedded fonts ([`chart`]: the shared drawing
//! helpers; [`plot`]: curves over training time; [`ladder`]: a ratings chart), the report of
//! a run's evaluation log ([`run_report`], `oware report`), and terminal status lines
//! ([`status`] for every command, [`train_status`] for a training run).
//!
//! It may use the rules engine (atomic file writes) and the arena (the evaluation log and
//! ratings it draws); it knows nothing of training, networks or players, so `oware pit` and
//! `oware ladder` show their progress without linking the trainer.

pub mod chart;
pub mod ladder;
pub mod plot;
pub mod run_report;
pub mod status;
pub mod train_status;
