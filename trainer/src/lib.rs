//! # oware-trainer
//!
//! Self-play, replay buffer, learner, evaluation, the run directory and TensorBoard logging.

pub mod replay;
pub mod rundir;
pub mod tensorboard;
