//! Physical-device choice: a discrete GPU first, then integrated, virtual and
//! CPU devices (lavapipe), or the one the user names. It creates nothing: it
//! only ranks what the instance reports.

use super::error::{GpuError, VkResultExt};
use ash::vk;

/// One usable physical device and its graphics+compute queue family.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The device.
    pub physical: vk::PhysicalDevice,
    /// Its index in enumeration order (what `--device INDEX` means).
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Its type.
    pub kind: vk::PhysicalDeviceType,
    /// Queue family supporting graphics and compute.
    pub queue_family: u32,
}

fn rank(kind: vk::PhysicalDeviceType) -> u32 {
    match kind {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    }
}

/// Lists the Vulkan 1.3 devices with a graphics+compute queue family that
/// `queue_ok(physical, family)` accepts (e.g. presentation to a surface).
pub fn candidates(
    instance: &ash::Instance,
    queue_ok: &dyn Fn(vk::PhysicalDevice, u32) -> bool,
) -> Result<Vec<Candidate>, GpuError> {
    // SAFETY: the instance is valid for the duration of these queries.
    let devices = unsafe { instance.enumerate_physical_devices() }.call("vkEnumeratePhysicalDevices")?;
    let mut out = Vec::new();
    for (index, &physical) in devices.iter().enumerate() {
        // SAFETY: physical comes from this instance.
        let props = unsafe { instance.get_physical_device_properties(physical) };
        if props.api_version < vk::API_VERSION_1_3 {
            continue;
        }
        let name = props.device_name_as_c_str().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // SAFETY: as above.
        let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
        let wanted = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE;
        let family = families
            .iter()
            .enumerate()
            .position(|(i, f)| f.queue_flags.contains(wanted) && queue_ok(physical, i as u32));
        if let Some(family) = family {
            out.push(Candidate {
                physical,
                index,
                name,
                kind: props.device_type,
                queue_family: family as u32,
            });
        }
    }
    Ok(out)
}

/// Picks by `wanted` (an index, or a case-insensitive part of the name), or
/// the best-ranked device when `wanted` is `None`.
pub fn choose(candidates: &[Candidate], wanted: Option<&str>) -> Result<Candidate, GpuError> {
    let list =
        || candidates.iter().map(|c| format!("{} \"{}\"", c.index, c.name)).collect::<Vec<_>>().join(", ");
    if candidates.is_empty() {
        return Err(GpuError::new(
            "no Vulkan 1.3 device with a graphics+compute queue (install mesa-vulkan-drivers for lavapipe)",
        ));
    }
    match wanted {
        Some(w) => {
            let by_index = w.parse::<usize>().ok().and_then(|i| candidates.iter().find(|c| c.index == i));
            let lower = w.to_lowercase();
            by_index
                .or_else(|| candidates.iter().find(|c| c.name.to_lowercase().contains(&lower)))
                .cloned()
                .ok_or_else(|| GpuError::new(format!("no device matches \"{w}\"; devices: {}", list())))
        }
        None => Ok(candidates.iter().min_by_key(|c| (rank(c.kind), c.index)).cloned().expect("non-empty")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(index: usize, name: &str, kind: vk::PhysicalDeviceType) -> Candidate {
        Candidate { physical: vk::PhysicalDevice::null(), index, name: name.into(), kind, queue_family: 0 }
    }

    #[test]
    fn prefers_discrete_then_falls_back_to_cpu() {
        let list = [
            cand(0, "llvmpipe (LLVM 15.0.6, 256 bits)", vk::PhysicalDeviceType::CPU),
            cand(1, "NVIDIA H200", vk::PhysicalDeviceType::DISCRETE_GPU),
        ];
        assert_eq!(choose(&list, None).unwrap().index, 1);
        assert_eq!(choose(&list[..1], None).unwrap().index, 0);
        assert_eq!(choose(&list, Some("llvm")).unwrap().index, 0);
        assert_eq!(choose(&list, Some("1")).unwrap().index, 1);
        assert!(choose(&list, Some("radeon")).unwrap_err().to_string().contains("llvmpipe"));
        assert!(choose(&[], None).is_err());
    }
}
