//! The `--device` option shared by the subcommands that run a network.

use oware_model::DeviceKind;

/// Parses `cpu`, `wgpu` or `cuda`.
pub(super) fn parse_device(s: &str) -> Result<DeviceKind, String> {
    s.parse::<DeviceKind>().map_err(|e| e.to_string())
}
