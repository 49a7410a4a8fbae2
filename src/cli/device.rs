//! The `--device` option shared by the subcommands that run a network.

use oware_model::DeviceKind;

/// Parses `cpu`, `wgpu` or `cuda`.
pub(super) fn parse_device(s: &str) -> Result<DeviceKind, String> {
    s.parse::<DeviceKind>().map_err(|e| e.to_string())
}

/// The variable libwayland reads to find the compositor's socket.
#[cfg(all(feature = "wgpu", target_os = "linux"))]
const RUNTIME_DIR: &str = "XDG_RUNTIME_DIR";

/// Keeps the Vulkan stack's `XDG_RUNTIME_DIR` complaint off the terminal; called first in
/// `main`, before any thread starts.
///
/// When wgpu creates a Vulkan instance it enables the Wayland surface extension, and Mesa's
/// device-select layer (an implicit layer that comes with `mesa-vulkan-drivers`) then asks
/// libwayland for a display, which prints `error: XDG_RUNTIME_DIR is invalid or not set in the
/// environment.` for every instance when the variable is unset or not an absolute path, as on a
/// server or in a container. The message is harmless (there is no Wayland display to find) but
/// reads like a failure of ours. So when the command line asks for `--device wgpu` and the
/// variable is unset or invalid, the process replaces itself (`exec`, same process id, so
/// signals and kills reach the same process) with the same command and the variable set to a
/// private folder of this user's, `oware-runtime-UID` in the temporary folder (mode 0700, as
/// the XDG spec asks). A set variable is left alone. Setting it in this process instead is
/// `unsafe` in edition 2024 (other threads may read the environment), which the workspace
/// forbids.
///
/// Returns only when nothing had to be done, or with a line explaining the complaint when the
/// folder or the `exec` failed (the command then goes on, and the loader's lines may follow).
#[cfg(all(feature = "wgpu", target_os = "linux"))]
pub(crate) fn quiet_vulkan_loader() -> Option<String> {
    use std::os::unix::process::CommandExt;
    let valid =
        std::env::var_os(RUNTIME_DIR).is_some_and(|v| std::path::Path::new(&v).is_absolute());
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if valid || !wants_wgpu(args.iter().skip(1)) {
        return None;
    }
    let explain = |why: String| {
        format!(
            "note: {why}; the Vulkan loader may print `{RUNTIME_DIR} is invalid or not set` \
             lines, which are harmless (set {RUNTIME_DIR} to a private folder to silence them)"
        )
    };
    let dir = match private_runtime_dir() {
        Ok(dir) => dir,
        Err(e) => return Some(explain(format!("no private {RUNTIME_DIR}: {e}"))),
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return Some(explain(format!(
                "cannot find this program to restart it: {e}"
            )));
        }
    };
    let mut cmd = std::process::Command::new(exe);
    if let Some(arg0) = args.first() {
        cmd.arg0(arg0);
    }
    // `exec` returns only on failure.
    let err = cmd.args(args.iter().skip(1)).env(RUNTIME_DIR, &dir).exec();
    Some(explain(format!(
        "could not restart with {RUNTIME_DIR}={}: {err}",
        dir.display()
    )))
}

/// Whether `args` (without the program name) hold `--device wgpu` (or `--device=wgpu`, or
/// the alias `gpu`).
#[cfg(all(feature = "wgpu", target_os = "linux"))]
fn wants_wgpu<'a>(args: impl Iterator<Item = &'a std::ffi::OsString>) -> bool {
    let is_wgpu = |v: &str| v.parse::<DeviceKind>() == Ok(DeviceKind::Wgpu);
    let mut after_flag = false;
    for arg in args {
        let Some(arg) = arg.to_str() else {
            after_flag = false;
            continue;
        };
        if after_flag && is_wgpu(arg) {
            return true;
        }
        if arg.strip_prefix("--device=").is_some_and(is_wgpu) {
            return true;
        }
        after_flag = arg == "--device";
    }
    false
}

/// `oware-runtime-UID` in the temporary folder: made with mode 0700 when missing; an existing
/// one must be a folder of this user's that no one else can enter.
#[cfg(all(feature = "wgpu", target_os = "linux"))]
fn private_runtime_dir() -> std::io::Result<std::path::PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let uid = std::fs::metadata("/proc/self")?.uid();
    let dir = std::env::temp_dir().join(format!("oware-runtime-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(std::io::Error::other(format!(
            "{} is not a folder of user {uid} closed to others",
            dir.display()
        )));
    }
    Ok(dir)
}
