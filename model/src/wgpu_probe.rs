//! Finding a wgpu adapter before burn does, so that a machine without a usable GPU driver gets
//! an error saying what is missing instead of a panic inside the backend.
//!
//! The graphics APIs are asked in the order burn's automatic wgpu device uses (cubecl-wgpu's
//! `AutoGraphicsApi`: Vulkan, then DX12, then OpenGL; Metal on macOS), and like it the probe
//! prefers a real GPU to a software rasterizer.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// The graphics APIs burn's automatic device tries, best first.
fn chain() -> Vec<wgpu::Backend> {
    if cfg!(target_os = "macos") {
        vec![wgpu::Backend::Metal]
    } else {
        vec![
            wgpu::Backend::Vulkan,
            wgpu::Backend::Dx12,
            wgpu::Backend::Gl,
        ]
    }
}

/// Runs a future to its end on this thread. wgpu's native adapter queries complete without
/// waiting on anything, so polling in a loop is enough.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::yield_now();
    }
}

/// The adapters `backend` offers on this machine.
fn adapters(backend: wgpu::Backend) -> Vec<wgpu::AdapterInfo> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: backend.into(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    block_on(instance.enumerate_adapters(backend.into()))
        .iter()
        .map(wgpu::Adapter::get_info)
        .collect()
}

/// Set to `1` to accept a software rasterizer (llvmpipe) as the wgpu device: slower than
/// `--device cpu`, useful only to test the wgpu code path on a machine without a GPU.
pub(crate) const ALLOW_SOFTWARE_ENV: &str = "OWARE_WGPU_SOFTWARE";

/// The adapter burn's default wgpu device would come up on: the first API of the chain with a
/// GPU (burn passes over software rasterizers the same way).
///
/// # Errors
/// When no API finds a GPU: what was asked, what was found, and what is missing, in words. A
/// software rasterizer is an error too unless [`ALLOW_SOFTWARE_ENV`] is `1`.
pub(crate) fn adapter() -> Result<wgpu::AdapterInfo, String> {
    let enabled = wgpu::Instance::enabled_backend_features();
    let asked: Vec<wgpu::Backend> = chain()
        .into_iter()
        .filter(|b| enabled.contains(wgpu::Backends::from(*b)))
        .collect();
    let found: Vec<wgpu::AdapterInfo> = asked.iter().flat_map(|&b| adapters(b)).collect();
    if let Some(gpu) = found
        .iter()
        .find(|a| a.device_type != wgpu::DeviceType::Cpu)
    {
        return Ok(gpu.clone());
    }
    let names: Vec<String> = asked.iter().map(|b| b.to_string()).collect();
    let asked = names.join(", ");
    match found.first() {
        Some(software) if std::env::var(ALLOW_SOFTWARE_ENV).is_ok_and(|v| v == "1") => {
            Ok(software.clone())
        }
        Some(software) => Err(format!(
            "no GPU adapter found (wgpu asked {asked}), only the software rasterizer {} ({}), \
             which is slower than --device cpu (set {ALLOW_SOFTWARE_ENV}=1 to use it anyway); {}",
            software.name,
            software.backend,
            missing_driver()
        )),
        None => Err(format!(
            "no GPU adapter found (wgpu asked {asked}); {}",
            missing_driver()
        )),
    }
}

/// One line about an adapter: name, graphics API, kind and driver.
pub(crate) fn describe(a: &wgpu::AdapterInfo) -> String {
    let driver = [a.driver.as_str(), a.driver_info.as_str()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let software = if a.device_type == wgpu::DeviceType::Cpu {
        ", a software rasterizer, slower than --device cpu"
    } else {
        ""
    };
    format!(
        "wgpu: {} ({}, {:?}, driver {}){software}",
        a.name,
        a.backend,
        a.device_type,
        if driver.is_empty() {
            "unknown"
        } else {
            driver.as_str()
        }
    )
}

/// Folders where the Vulkan loader looks for driver manifests (ICDs) on Linux.
const ICD_DIRS: [&str; 4] = [
    "/usr/share/vulkan/icd.d",
    "/etc/vulkan/icd.d",
    "/usr/local/share/vulkan/icd.d",
    "/usr/local/etc/vulkan/icd.d",
];

/// Folders where the Vulkan loader library usually lives on Linux.
const LIB_DIRS: [&str; 6] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/lib/x86_64-linux-gnu",
    "/usr/local/lib",
];

/// What is missing for Vulkan, as far as the usual places tell (Linux), and how to get it.
fn missing_driver() -> String {
    const ADVICE: &str = "install the GPU's Vulkan driver (NVIDIA: the driver's Vulkan ICD, \
        nvidia_icd.json, and in a container NVIDIA_DRIVER_CAPABILITIES must include graphics, \
        e.g. =all; AMD or Intel: mesa-vulkan-drivers) and the Vulkan loader (libvulkan1); \
        `vulkaninfo --summary` should then list the GPU";
    if !cfg!(target_os = "linux") {
        return format!("no Vulkan, Metal or DX12 driver answered: {ADVICE}");
    }
    let loader = LIB_DIRS
        .iter()
        .any(|d| std::path::Path::new(d).join("libvulkan.so.1").exists());
    let from_env = ["VK_DRIVER_FILES", "VK_ICD_FILENAMES"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
    let manifests: Vec<String> = ICD_DIRS
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path().display().to_string())
        .filter(|p| p.ends_with(".json"))
        .collect();
    let state = if !loader {
        "no Vulkan loader (libvulkan.so.1) was found".to_string()
    } else if manifests.is_empty() && !from_env {
        format!(
            "the Vulkan loader is installed but no Vulkan driver is (no driver manifest in {})",
            ICD_DIRS.join(", ")
        )
    } else {
        format!(
            "Vulkan drivers are installed ({}) but none reports a device",
            if manifests.is_empty() {
                "named by VK_DRIVER_FILES/VK_ICD_FILENAMES".to_string()
            } else {
                manifests.join(", ")
            }
        )
    };
    format!("{state}: {ADVICE}")
}
