//! # oware-model
//!
//! Oware Zero's policy-value network on burn 0.22.1, and everything around it:
//!
//! - [`encode`]: a position as [`INPUT_SIZE`] floats from the mover's point of view, and the
//!   [`encode::MOVE_FEATURES`] of networks with `move_features`;
//! - [`ModelConfig`] / [`PolicyValueNet`]: a residual MLP with a 6-logit policy head, a `tanh`
//!   value head and an auxiliary seed-margin head;
//! - [`NetEvaluator`]: the engine's [`oware_search::Evaluator`], one forward pass per batch on a
//!   non-autodiff copy of the weights, shareable between threads;
//! - [`InferenceService`]: one thread owning the network, evaluating the merged batches of many
//!   callers ([`ServiceClient`]s) in one forward pass, with weights swapped between batches;
//! - [`Learner`]: the trainable network, its optimizer and the loss, one [`Learner::step`] per
//!   [`TrainBatch`];
//! - [`checkpoint`]: atomic, checksummed checkpoint directories, and a `latest` pointer
//!   ([`write_latest`], [`resolve_checkpoint`]);
//! - [`weights`]: a network's weights as bytes in memory (what a learner publishes to remote
//!   self-play workers);
//! - [`device`]: `cpu` (burn's `flex`, always built), `wgpu` and `cuda` (Cargo features).

mod average;
pub mod checkpoint;
mod config;
pub mod device;
pub mod encode;
mod evaluator;
mod latest;
mod learner;
mod net;
pub mod service;
pub mod weights;
#[cfg(feature = "wgpu")]
mod wgpu_probe;

pub use checkpoint::{
    CheckpointError, CheckpointInfo, CheckpointMeta, ExtraFile, FORMAT_VERSION, checksum,
    load_checkpoint, load_evaluator, read_checkpoint_file, read_checkpoint_info, remove_checkpoint,
    remove_stale_temporaries, save_checkpoint, save_checkpoint_with,
};
pub use config::{ModelConfig, OptimConfig, OptimizerKind};
pub use device::{DeviceError, DeviceKind, describe, device};
pub use encode::{INPUT_SIZE, encode_batch, legal_mask};
pub use evaluator::{NetEvaluator, Prediction};
pub use latest::{CHECKPOINTS_DIR, LATEST_FILE, read_latest, resolve_checkpoint, write_latest};
pub use learner::{Learner, Losses, ReconfigureError, TrainBatch, TrainError};
pub use net::{
    DenseLayer, HEAD_OUTPUTS, MARGIN_COLUMN, NetOutput, PolicyValueNet, ResidualBlock,
    VALUE_COLUMN, reference_forward,
};
pub use service::{InferenceService, ServiceClient, ServiceConfig, ServiceStats};
pub use weights::{WeightsError, decode_weights, encode_weights};

/// The burn device type, re-exported so callers need no direct burn dependency.
pub use burn::tensor::Device;
