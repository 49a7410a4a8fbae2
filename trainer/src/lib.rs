//! # oware-trainer
//!
//! Everything that turns self-play into a stronger network: the training configuration,
//! self-play workers running the batched MCTS driver, the replay buffer, the learner loop,
//! evaluation matches, the run directory with atomic checkpoints and resume, TensorBoard
//! logging, and the Redis broker that brings in games from `oware worker` processes on other
//! machines.

pub mod auto_ms;
pub mod bench;
pub mod broker;
pub mod config;
pub mod eval;
pub mod inference;
pub mod rates;
pub mod replay;
pub mod replay_store;
pub mod rundir;
pub mod selfplay;
pub mod selfplay_egtb;
pub mod selfplay_records;
pub mod state;
pub mod tensorboard;
pub mod train;

pub use config::TrainConfig;
pub use train::{TrainOptions, install_ctrl_c, train};
