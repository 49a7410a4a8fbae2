//! A network's weights as bytes in memory (burn's burnpack format, the bytes of a checkpoint's
//! `model.bpk`): what `oware train --broker` publishes to its workers, and the decoder that the
//! checkpoint loader shares.

use crate::config::ModelConfig;
use crate::evaluator::NetEvaluator;
use crate::net::PolicyValueNet;
use burn::module::Module;
use burn::store::{ModuleRecord, RecordError};
use burn::tensor::{Bytes, Device};
use oware_engine::panic::panic_message;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Why weights could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeightsError {
    /// The bytes do not fit a network of the given shape.
    #[error("weights do not fit a network of shape {config}: {detail}")]
    Shape {
        /// The shape they were loaded into.
        config: String,
        /// burn's description of the mismatched, missing or unused tensors.
        detail: String,
    },
    /// The bytes cannot be decoded.
    #[error("damaged weights: {0}")]
    Damaged(String),
    /// The weights hold NaN or infinite numbers.
    #[error("the weights hold NaN or infinite numbers (a diverged network)")]
    NonFinite,
    /// burn could not serialise the weights.
    #[error("could not encode the weights: {0}")]
    Encode(String),
}

/// The weights of `net` as burnpack bytes; refused when not all finite.
pub fn encode_weights(net: &PolicyValueNet) -> Result<Vec<u8>, WeightsError> {
    if !net.all_finite().map_err(WeightsError::Encode)? {
        return Err(WeightsError::NonFinite);
    }
    net.clone()
        .into_record()
        .into_bytes()
        .map(|bytes| bytes.to_vec())
        .map_err(|e| WeightsError::Encode(e.to_string()))
}

/// A network of shape `config` on `device` with the weights `bytes` (from [`encode_weights`]
/// or a checkpoint's `model.bpk`). Bytes of another shape, damaged bytes and non-finite weights
/// are errors, never a panic.
pub fn decode_weights(
    config: &ModelConfig,
    bytes: Vec<u8>,
    device: &Device,
) -> Result<PolicyValueNet, WeightsError> {
    config
        .validate()
        .map_err(|e| WeightsError::Damaged(format!("model.{e}")))?;
    // At least a byte per parameter: a config describing a network far larger than its
    // weights is refused before that network is built (it could take gigabytes).
    let params = config.num_params() as u64;
    if (bytes.len() as u64) < params {
        return Err(WeightsError::Damaged(format!(
            "{} bytes are too few for the {params} parameters of the network {config}",
            bytes.len()
        )));
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes))?;
        config.init(device).try_load_record(record)
    }));
    match result {
        Ok(Ok(model)) => match model.all_finite() {
            Ok(true) => Ok(model),
            Ok(false) => Err(WeightsError::NonFinite),
            Err(reason) => Err(WeightsError::Damaged(reason)),
        },
        Ok(Err(RecordError::Validation(detail))) => Err(WeightsError::Shape {
            config: config.to_string(),
            detail,
        }),
        Ok(Err(RecordError::Io(reason))) => Err(WeightsError::Damaged(reason)),
        Err(payload) => Err(WeightsError::Damaged(
            panic_message(&*payload).unwrap_or_else(|| "the decoder panicked".to_string()),
        )),
    }
}

impl NetEvaluator {
    /// The weights as burnpack bytes (see [`encode_weights`]).
    pub fn weights_bytes(&self) -> Result<Vec<u8>, WeightsError> {
        encode_weights(self.model())
    }

    /// An evaluator of shape `config` on `device` (without autodiff) from burnpack bytes (see
    /// [`decode_weights`]).
    pub fn from_weights_bytes(
        config: &ModelConfig,
        bytes: Vec<u8>,
        device: &Device,
    ) -> Result<NetEvaluator, WeightsError> {
        let device = device.clone().without_autodiff();
        let model = decode_weights(config, bytes, &device)?;
        Ok(NetEvaluator::new(&model, config.clone(), &device))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oware_engine::Position;

    #[test]
    fn weights_round_trip_through_bytes() {
        let device = Device::flex();
        let config = ModelConfig::new().with_hidden(16).with_blocks(1);
        let net = NetEvaluator::random(&config, &device);
        let bytes = net.weights_bytes().expect("encode");
        let back =
            NetEvaluator::from_weights_bytes(&config, bytes.clone(), &device).expect("decode");
        let positions = [Position::start()];
        assert_eq!(
            net.raw_outputs(&positions).expect("eval"),
            back.raw_outputs(&positions).expect("eval")
        );
        // Another shape, and damaged bytes, are errors.
        let wider = config.clone().with_hidden(17);
        assert!(matches!(
            NetEvaluator::from_weights_bytes(&wider, bytes.clone(), &device),
            Err(WeightsError::Shape { .. })
        ));
        let mut cut = bytes;
        cut.truncate(cut.len() / 2);
        assert!(NetEvaluator::from_weights_bytes(&config, cut, &device).is_err());
        assert!(NetEvaluator::from_weights_bytes(&config, vec![7; 40], &device).is_err());
    }
}
