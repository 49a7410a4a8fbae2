//! Choosing the compute device at run time (`--device cpu|wgpu|cuda`).
//!
//! `cpu` is burn's `flex` backend: pure Rust, always built, no system packages. `wgpu` (Vulkan,
//! Metal, DX12, GL) needs the Cargo feature `wgpu`; `cuda` needs the feature `cuda`, whose build
//! downloads an LLVM bundle from the internet and whose run needs a CUDA toolkit.

use burn::tensor::{Device, Tensor};
use std::fmt;
use std::str::FromStr;

/// The kinds of device the network can run on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// The CPU (burn's `flex` backend).
    #[default]
    Cpu,
    /// A GPU through wgpu (feature `wgpu`).
    Wgpu,
    /// An NVIDIA GPU through CUDA (feature `cuda`).
    Cuda,
}

impl DeviceKind {
    /// All kinds, in the order they are listed in help texts.
    pub const ALL: [DeviceKind; 3] = [DeviceKind::Cpu, DeviceKind::Wgpu, DeviceKind::Cuda];

    /// The name used on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Wgpu => "wgpu",
            DeviceKind::Cuda => "cuda",
        }
    }

    /// Whether this build can run on this kind of device.
    pub const fn is_compiled_in(self) -> bool {
        match self {
            DeviceKind::Cpu => true,
            DeviceKind::Wgpu => cfg!(feature = "wgpu"),
            DeviceKind::Cuda => cfg!(feature = "cuda"),
        }
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a device could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// The name is not one of `cpu`, `wgpu`, `cuda`.
    #[error("unknown device '{0}': expected cpu, wgpu or cuda")]
    Unknown(String),
    /// The device's backend was not compiled into this build.
    #[error(
        "device '{kind}' is not compiled into this build: rebuild with `cargo build --release --features {kind}`{note}"
    )]
    NotCompiled {
        /// The device asked for.
        kind: DeviceKind,
        /// Extra advice (e.g. network access for CUDA).
        note: &'static str,
    },
    /// The backend is built but found no usable device (no GPU, no driver).
    #[error("device '{kind}' failed to start: {reason}")]
    Unavailable {
        /// The device asked for.
        kind: DeviceKind,
        /// What the backend said.
        reason: String,
    },
}

impl FromStr for DeviceKind {
    type Err = DeviceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cpu" | "flex" => Ok(DeviceKind::Cpu),
            "wgpu" | "gpu" => Ok(DeviceKind::Wgpu),
            "cuda" => Ok(DeviceKind::Cuda),
            _ => Err(DeviceError::Unknown(s.to_string())),
        }
    }
}

/// The device of `kind`, without autodiff (call `.autodiff()` to train on it, or let
/// [`crate::Learner::new`] do it). GPU devices are probed with a tiny computation, so a missing
/// GPU or driver is an error here rather than a panic later.
pub fn device(kind: DeviceKind) -> Result<Device, DeviceError> {
    match kind {
        DeviceKind::Cpu => Ok(Device::flex()),
        DeviceKind::Wgpu => wgpu_device(),
        DeviceKind::Cuda => cuda_device(),
    }
}

/// The device in words, as this build would start it: for `cpu` the backend and the cores,
/// for `wgpu` the adapter wgpu finds (name, graphics API, kind, driver).
///
/// # Errors
/// As [`device`], without starting the device.
pub fn describe(kind: DeviceKind) -> Result<String, DeviceError> {
    match kind {
        DeviceKind::Cpu => Ok(format!(
            "cpu (burn flex backend, {} cores)",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        )),
        DeviceKind::Wgpu => describe_wgpu(),
        DeviceKind::Cuda => cuda_device().map(|_| "cuda device 0".to_string()),
    }
}

#[cfg(feature = "wgpu")]
fn describe_wgpu() -> Result<String, DeviceError> {
    let adapter = crate::wgpu_probe::adapter().map_err(|reason| DeviceError::Unavailable {
        kind: DeviceKind::Wgpu,
        reason,
    })?;
    Ok(crate::wgpu_probe::describe(&adapter))
}

#[cfg(not(feature = "wgpu"))]
fn describe_wgpu() -> Result<String, DeviceError> {
    wgpu_device().map(|_| String::new())
}

/// Asks wgpu for an adapter first, so that a machine without a usable GPU driver gets an error
/// that says what is missing; only then does burn start its device (which panics deep inside
/// the backend when it finds none).
#[cfg(feature = "wgpu")]
fn wgpu_device() -> Result<Device, DeviceError> {
    crate::wgpu_probe::adapter().map_err(|reason| DeviceError::Unavailable {
        kind: DeviceKind::Wgpu,
        reason,
    })?;
    probe(
        DeviceKind::Wgpu,
        Device::wgpu(burn::tensor::DeviceKind::DefaultDevice),
    )
}

#[cfg(not(feature = "wgpu"))]
fn wgpu_device() -> Result<Device, DeviceError> {
    Err(DeviceError::NotCompiled {
        kind: DeviceKind::Wgpu,
        note: "",
    })
}

#[cfg(feature = "cuda")]
fn cuda_device() -> Result<Device, DeviceError> {
    probe(DeviceKind::Cuda, Device::cuda(0))
}

#[cfg(not(feature = "cuda"))]
fn cuda_device() -> Result<Device, DeviceError> {
    Err(DeviceError::NotCompiled {
        kind: DeviceKind::Cuda,
        note: " (the build downloads an LLVM bundle, so it needs network access, and running needs a CUDA toolkit)",
    })
}

/// Runs a tiny computation on `dev`; a backend that panics because it cannot start (the
/// adapter was found but the device could not be created, or CUDA finds no GPU) becomes
/// [`DeviceError::Unavailable`]. burn 0.22 has no fallible way to start a device, so the panic
/// is caught at this one boundary; the default panic hook still prints its message first.
#[cfg_attr(not(any(feature = "wgpu", feature = "cuda")), allow(dead_code))]
fn probe(kind: DeviceKind, dev: Device) -> Result<Device, DeviceError> {
    let check = dev.clone();
    let result = std::panic::catch_unwind(move || {
        let t = Tensor::<1>::from_floats([1.0, 2.0, 3.0], &check);
        (t * 2.0)
            .sum()
            .into_data()
            .convert::<f32>()
            .try_to_vec::<f32>()
    });
    match result {
        Ok(Ok(v)) if v.first().is_some_and(|&x| (x - 12.0).abs() < 1e-4) => Ok(dev),
        Ok(Ok(v)) => Err(DeviceError::Unavailable {
            kind,
            reason: format!("probe computed {v:?} instead of [12.0]"),
        }),
        Ok(Err(e)) => Err(DeviceError::Unavailable {
            kind,
            reason: format!("{e:?}"),
        }),
        Err(payload) => {
            let reason = oware_engine::panic::panic_message(&*payload)
                .unwrap_or_else(|| "the backend panicked".to_string());
            Err(DeviceError::Unavailable { kind, reason })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_kinds() {
        assert_eq!("cpu".parse::<DeviceKind>(), Ok(DeviceKind::Cpu));
        assert_eq!("WGPU".parse::<DeviceKind>(), Ok(DeviceKind::Wgpu));
        assert_eq!("cuda".parse::<DeviceKind>(), Ok(DeviceKind::Cuda));
        let err = "tpu".parse::<DeviceKind>().expect_err("unknown");
        assert_eq!(
            err.to_string(),
            "unknown device 'tpu': expected cpu, wgpu or cuda"
        );
        for k in DeviceKind::ALL {
            assert_eq!(k.name().parse::<DeviceKind>(), Ok(k));
            assert_eq!(k.to_string(), k.name());
        }
    }

    #[test]
    fn cpu_always_works() {
        let dev = device(DeviceKind::Cpu).expect("cpu");
        let t = Tensor::<1>::from_floats([1.0, 2.0], &dev);
        assert_eq!(t.dims(), [2]);
        assert!(probe(DeviceKind::Cpu, dev).is_ok());
    }

    #[test]
    fn missing_features_are_clear_errors() {
        if !cfg!(feature = "cuda") {
            let err = device(DeviceKind::Cuda).expect_err("not built");
            let msg = err.to_string();
            assert!(
                msg.contains("--features cuda") && msg.contains("network"),
                "{msg}"
            );
        }
        if !cfg!(feature = "wgpu") {
            let err = device(DeviceKind::Wgpu).expect_err("not built");
            assert!(err.to_string().contains("--features wgpu"), "{err}");
        }
    }
}

#[cfg(all(test, feature = "wgpu"))]
mod wgpu_tests {
    use super::*;
    use crate::{ModelConfig, NetEvaluator};
    use oware_engine::Position;

    /// On a machine with a GPU (or a software Vulkan/GL driver, with `OWARE_WGPU_SOFTWARE=1`)
    /// the wgpu evaluator computes what the CPU one does; elsewhere asking for the device is a
    /// clean error, not a panic.
    #[test]
    fn wgpu_matches_cpu_or_is_unavailable() {
        match device(DeviceKind::Wgpu) {
            Ok(gpu) => {
                let cpu =
                    NetEvaluator::random(&ModelConfig::new().with_hidden(32), &Device::flex());
                let on_gpu = NetEvaluator::new(cpu.model(), cpu.config().clone(), &gpu);
                let pos = [Position::start(); 3];
                let a = cpu.raw_outputs(&pos).expect("cpu outputs");
                let b = on_gpu.raw_outputs(&pos).expect("gpu outputs");
                assert_eq!(a.len(), b.len());
                for (x, y) in a.iter().zip(&b) {
                    assert!((x - y).abs() < 1e-3, "{x} vs {y}");
                }
            }
            Err(e) => {
                assert!(matches!(e, DeviceError::Unavailable { .. }), "{e}");
                eprintln!("wgpu unavailable here: {e}");
            }
        }
    }
}
