//! The Vulkan instance, debug messenger, chosen device, its queue and the
//! memory allocator, created together and destroyed in reverse order. It
//! records no commands and knows nothing of frames or passes.

use super::device_select::{self, Candidate};
use super::error::{GPU_WAIT_TIMEOUT, GpuError, VkResultExt};
use super::validation::{ValidationLog, debug_callback};
use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use std::ffi::{CStr, CString, c_char};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// How to create the context.
#[derive(Debug, Clone, Default)]
pub struct GpuOptions {
    /// Enable the Khronos validation layer with synchronization validation,
    /// and record every warning and error.
    pub validation: bool,
    /// Device to use: an index or part of a name; `None` picks the best.
    pub device: Option<String>,
    /// Extra instance extensions (e.g. for a window surface).
    pub instance_extensions: Vec<&'static CStr>,
    /// Extra device extensions (e.g. the swapchain).
    pub device_extensions: Vec<&'static CStr>,
    /// Print the chosen device on stderr.
    pub announce_device: bool,
}

/// Optional device features that were found and enabled.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnabledFeatures {
    /// Wireframe drawing (`fillModeNonSolid`).
    pub fill_mode_non_solid: bool,
    /// Timestamp queries on the graphics+compute queue.
    pub timestamps: bool,
    /// VK_EXT_calibrated_timestamps with the device and CLOCK_MONOTONIC
    /// time domains: GPU timestamps can be placed on the host clock
    /// ([`GpuContext::calibrated_timestamps`]).
    pub calibrated_timestamps: bool,
}

/// How large one buffer may be, and how much device-local memory there is:
/// what limits a crowd once no binding range does (`render::crowd_fit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferLimits {
    /// `maxBufferSize` (Vulkan 1.3).
    pub max_buffer_size: u64,
    /// `maxMemoryAllocationSize` (Vulkan 1.1): a buffer is bound to one allocation.
    pub max_allocation_size: u64,
    /// The largest device-local memory heap.
    pub device_local_bytes: u64,
    /// What this process may allocate of that heap as the device was
    /// opened (VK_EXT_memory_budget's `heapBudget`: less where other
    /// processes hold some of it), or the whole heap without the
    /// extension. Never more than `device_local_bytes`.
    pub device_local_budget: u64,
    /// The most bytes one of a crowd's skinned output buffers holds: the
    /// largest buffer the device makes, within `maxStorageBufferRange` (the
    /// skin pass binds each whole). Tests lower it, so that lavapipe splits
    /// a small crowd's output the way a GPU splits a huge one.
    pub output_buffer_bytes: u64,
}

impl BufferLimits {
    /// The largest single buffer the device can make.
    pub fn largest_buffer(&self) -> u64 {
        self.max_buffer_size.min(self.max_allocation_size)
    }
}

/// GPU memory in use (`GpuContext::memory_use`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryUse {
    /// Bytes in live allocations.
    pub allocated_bytes: u64,
    /// Bytes of the memory blocks those allocations sit in.
    pub reserved_bytes: u64,
}

/// Everything a Vulkan program needs before it records a command.
pub struct GpuContext {
    /// The loader.
    pub entry: ash::Entry,
    /// The instance.
    pub instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    debug_device: Option<ash::ext::debug_utils::Device>,
    /// VK_EXT_calibrated_timestamps, when `features.calibrated_timestamps`.
    calibration: Option<ash::ext::calibrated_timestamps::Device>,
    /// Debug-utils regions open in the command buffer being recorded
    /// (`begin_region` minus `end_region`; 0 between frames).
    open_regions: std::sync::atomic::AtomicUsize,
    log: Arc<ValidationLog>,
    /// The chosen physical device.
    pub physical: vk::PhysicalDevice,
    /// Its name, as the driver reports it.
    pub device_name: String,
    /// Its properties (limits, timestamp period).
    pub properties: vk::PhysicalDeviceProperties,
    /// Its buffer size limits and device-local memory.
    pub buffer_limits: BufferLimits,
    /// The logical device.
    pub device: ash::Device,
    /// The graphics+compute queue all work is submitted to.
    pub queue: vk::Queue,
    /// Its family index.
    pub queue_family: u32,
    /// Optional features found.
    pub features: EnabledFeatures,
    allocator: ManuallyDrop<Mutex<Allocator>>,
    /// A wait for the GPU timed out: submitted work may still run, so
    /// nothing it might use is freed from then on (it is leaked instead).
    stalled: AtomicBool,
    /// A submission or a wait returned `VK_ERROR_DEVICE_LOST` (or the
    /// test-only switch made one do so): every later submit and wait
    /// reports the loss at once.
    lost: AtomicBool,
    /// Submissions made so far (through [`submit`](Self::submit)).
    submits: AtomicU64,
    /// Test-only (`VKSKIN_TEST_LOSE_DEVICE_AFTER=N`): the submission after
    /// the first N fails with `VK_ERROR_DEVICE_LOST`.
    lose_device_after: Option<u64>,
}

/// The test-only switch that simulates a lost device (see `guide::testing`).
const LOSE_DEVICE_AFTER: &str = "VKSKIN_TEST_LOSE_DEVICE_AFTER";

/// The test-only switch that leaves VK_EXT_calibrated_timestamps off, so
/// frame traces take their other clock (GPU spans aligned at submit).
const NO_CALIBRATED_TIMESTAMPS: &str = "VKSKIN_TEST_NO_CALIBRATED_TIMESTAMPS";

/// The test-only switch that lowers `BufferLimits::output_buffer_bytes`,
/// so that a process run whole (`vkskin bench`) meets on lavapipe, with a
/// small crowd, the output limits a GPU meets with a huge one.
const OUTPUT_BUFFER_BYTES: &str = "VKSKIN_TEST_OUTPUT_BUFFER_BYTES";

impl GpuContext {
    /// Creates instance, device and allocator. `queue_ok(physical, family)`
    /// may reject families (a window needs presentation support).
    pub fn new(
        options: &GpuOptions,
        queue_ok: &dyn Fn(&ash::Entry, &ash::Instance, vk::PhysicalDevice, u32) -> bool,
    ) -> Result<Self, GpuError> {
        // SAFETY: loading the system Vulkan loader; failure is reported, not assumed.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| GpuError::new(format!("cannot load the Vulkan loader (install libvulkan1): {e}")))?;
        let log = Arc::<ValidationLog>::default();
        let labels = debug_utils_available(&entry);
        let instance = create_instance(&entry, options, &log, labels)?;
        let debug = if options.validation {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &instance);
            let info = messenger_info(&log);
            // SAFETY: info points at the shared log, which the context keeps alive until after the messenger is destroyed.
            let messenger = unsafe { loader.create_debug_utils_messenger(&info, None) };
            match messenger {
                Ok(m) => Some((loader, m)),
                Err(e) => {
                    // SAFETY: nothing else was created from the instance yet.
                    unsafe { instance.destroy_instance(None) };
                    return Err(GpuError::vk("vkCreateDebugUtilsMessengerEXT", e));
                }
            }
        } else {
            None
        };
        let (candidate, properties, buffer_limits, features, device, queue, allocator) =
            match create_device(&entry, &instance, options, queue_ok) {
                Ok(parts) => parts,
                Err(e) => {
                    // SAFETY: device creation failed; nothing else uses the instance.
                    unsafe {
                        if let Some((loader, messenger)) = &debug {
                            loader.destroy_debug_utils_messenger(*messenger, None);
                        }
                        instance.destroy_instance(None);
                    }
                    return Err(e);
                }
            };
        // Object names and command-buffer regions, for validation messages and
        // for captures (RenderDoc, Nsight expose the extension themselves).
        let debug_device =
            (labels || options.validation).then(|| ash::ext::debug_utils::Device::new(&instance, &device));
        let calibration = features
            .calibrated_timestamps
            .then(|| ash::ext::calibrated_timestamps::Device::new(&instance, &device));
        if options.announce_device {
            eprintln!(
                "vkskin: using device {} \"{}\" ({:?})",
                candidate.index, candidate.name, candidate.kind
            );
        }
        Ok(GpuContext {
            entry,
            instance,
            debug,
            debug_device,
            calibration,
            open_regions: Default::default(),
            log,
            physical: candidate.physical,
            device_name: candidate.name,
            properties,
            buffer_limits,
            device,
            queue,
            queue_family: candidate.queue_family,
            features,
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            stalled: AtomicBool::new(false),
            lost: AtomicBool::new(false),
            submits: AtomicU64::new(0),
            lose_device_after: std::env::var(LOSE_DEVICE_AFTER).ok().and_then(|n| n.trim().parse().ok()),
        })
    }

    /// A headless context (no surface), with validation as asked.
    pub fn headless(validation: bool, device: Option<String>) -> Result<Self, GpuError> {
        let options = GpuOptions { validation, device, ..Default::default() };
        Self::new(&options, &|_, _, _, _| true)
    }

    /// Validation warnings and errors recorded so far (empty without validation).
    pub fn validation_messages(&self) -> Vec<String> {
        self.log.messages()
    }

    /// The validation log itself, which outlives the context: messages the
    /// layer prints while the device and instance are destroyed (leaked
    /// objects) can be checked after the context is dropped.
    pub fn validation_log(&self) -> Arc<ValidationLog> {
        Arc::clone(&self.log)
    }

    /// Destroys the device and instance (the caller destroyed its own
    /// objects first) and returns every validation message, including the
    /// leaked-object reports the layer makes during that destruction.
    pub fn finish(self) -> Vec<String> {
        let log = self.validation_log();
        drop(self);
        log.messages()
    }

    /// GPU memory gpu-allocator holds: bytes in live allocations, and bytes
    /// reserved in its memory blocks.
    pub fn memory_use(&self) -> MemoryUse {
        let report = self.allocator().generate_report();
        MemoryUse {
            allocated_bytes: report.total_allocated_bytes,
            reserved_bytes: report.total_capacity_bytes,
        }
    }

    /// The driver's name and version (VkPhysicalDeviceDriverProperties),
    /// e.g. `llvmpipe Mesa 22.3.6 (LLVM 15.0.6)`.
    pub fn driver(&self) -> String {
        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        let mut properties = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
        // SAFETY: a live physical device; Vulkan 1.2 core query.
        unsafe { self.instance.get_physical_device_properties2(self.physical, &mut properties) };
        let text =
            |c: Result<&std::ffi::CStr, _>| c.map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let (name, info) = (text(driver.driver_name_as_c_str()), text(driver.driver_info_as_c_str()));
        format!("{name} {info}").trim().to_string()
    }

    /// Whether the validation layer is on.
    pub fn validation_enabled(&self) -> bool {
        self.debug.is_some()
    }

    /// The allocator, locked.
    pub fn allocator(&self) -> std::sync::MutexGuard<'_, Allocator> {
        // A poisoned lock only means another thread panicked mid-allocation;
        // the allocator's state is still consistent for freeing.
        self.allocator.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes currently allocated through the allocator.
    pub fn allocated_bytes(&self) -> u64 {
        self.allocator().generate_report().total_allocated_bytes
    }

    /// Names a Vulkan object for validation messages and debuggers.
    pub fn set_name<H: vk::Handle>(&self, handle: H, name: &str) {
        if let Some(debug) = &self.debug_device
            && let Ok(name) = CString::new(name)
        {
            let info = vk::DebugUtilsObjectNameInfoEXT::default().object_handle(handle).object_name(&name);
            // SAFETY: the handle belongs to this device; naming is best effort.
            let _ = unsafe { debug.set_debug_utils_object_name(&info) };
        }
    }

    /// Opens a named region in `cmd` (a pass: "skin", "shadow cascade 2",
    /// ...), closed by [`end_region`](Self::end_region), so that GPU captures
    /// and validation messages read by name. Nothing without debug utils.
    /// Names are C strings known when the code is written: a frame
    /// allocates nothing for them.
    pub fn begin_region(&self, cmd: vk::CommandBuffer, name: &std::ffi::CStr) {
        self.open_regions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some(debug) = &self.debug_device {
            let label = vk::DebugUtilsLabelEXT::default().label_name(name);
            // SAFETY: cmd is recording on this device.
            unsafe { debug.cmd_begin_debug_utils_label(cmd, &label) };
        }
    }

    /// Closes the region `begin_region` opened last in `cmd`.
    pub fn end_region(&self, cmd: vk::CommandBuffer) {
        let _ = self.open_regions.fetch_update(
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
            |n| n.checked_sub(1),
        );
        if let Some(debug) = &self.debug_device {
            // SAFETY: cmd is recording on this device, inside a region it opened.
            unsafe { debug.cmd_end_debug_utils_label(cmd) };
        }
    }

    /// Closes the regions a recording left open, before its command buffer
    /// ends: the passes open and close them in pairs, so any left is a bug,
    /// reported in the validation log (a validated run fails on it).
    pub(crate) fn close_open_regions(&self, cmd: vk::CommandBuffer) {
        let open = self.open_regions.swap(0, std::sync::atomic::Ordering::Relaxed);
        if open == 0 {
            return;
        }
        self.log.report(format!("{open} debug-utils region(s) left open in a frame (internal error)"));
        for _ in 0..open {
            if let Some(debug) = &self.debug_device {
                // SAFETY: cmd is recording on this device, inside a region it opened.
                unsafe { debug.cmd_end_debug_utils_label(cmd) };
            }
        }
    }

    /// Nanoseconds per timestamp tick.
    pub fn timestamp_period_ns(&self) -> f64 {
        self.properties.limits.timestamp_period as f64
    }

    /// The device's timestamp clock and CLOCK_MONOTONIC sampled together
    /// (VK_EXT_calibrated_timestamps): `(gpu_ticks, monotonic_ns)`, or
    /// `None` when the device lacks the extension or the call fails. Frame
    /// traces place GPU timestamps on the host clock with it. Allocates nothing.
    pub fn calibrated_timestamps(&self) -> Option<(u64, u64)> {
        let calibration = self.calibration.as_ref()?;
        let infos = [
            vk::CalibratedTimestampInfoEXT::default().time_domain(vk::TimeDomainEXT::DEVICE),
            vk::CalibratedTimestampInfoEXT::default().time_domain(vk::TimeDomainEXT::CLOCK_MONOTONIC),
        ];
        let mut stamps = [0u64; 2];
        let mut deviation = 0u64;
        // SAFETY: both domains were reported calibrateable for this device
        // and the extension was enabled; the arrays hold `infos.len()` values.
        let result = unsafe {
            (calibration.fp().get_calibrated_timestamps_ext)(
                calibration.device(),
                infos.len() as u32,
                infos.as_ptr(),
                stamps.as_mut_ptr(),
                &mut deviation,
            )
        };
        (result == vk::Result::SUCCESS).then_some((stamps[0], stamps[1]))
    }

    /// Submits `submits` to the queue, `fence` signalled when they finish:
    /// every submission of vkskin goes through here. After the device was
    /// lost it fails at once with `VK_ERROR_DEVICE_LOST`, as a lost device
    /// does, and the error marks the context lost (see
    /// [`is_device_lost`](Self::is_device_lost)).
    pub fn submit(&self, submits: &[vk::SubmitInfo2], fence: vk::Fence) -> Result<(), GpuError> {
        let index = self.submits.fetch_add(1, Ordering::Relaxed);
        let simulated = self.lose_device_after.is_some_and(|n| index >= n);
        let submitted = if self.is_device_lost() || simulated {
            Err(vk::Result::ERROR_DEVICE_LOST)
        } else {
            // SAFETY: the caller's command buffers are recorded and ended, its
            // fence unsignalled and unused; one thread submits at a time.
            unsafe { self.device.queue_submit2(self.queue, submits, fence) }
        };
        let submitted = submitted.call("vkQueueSubmit2");
        if let Err(e) = &submitted {
            self.note(e);
        }
        submitted
    }

    /// Waits until the device is idle. After a timed-out wait (see
    /// [`is_stalled`](Self::is_stalled)) it returns an error at once rather
    /// than wait without a bound (Vulkan's idle wait has no timeout). After
    /// a loss it reports `VK_ERROR_DEVICE_LOST` (having waited for what a
    /// simulated loss left running, so objects can then be destroyed).
    pub fn wait_idle(&self) -> Result<(), GpuError> {
        if self.is_stalled() {
            return Err(GpuError::new("the GPU is still busy with work whose wait timed out"));
        }
        // SAFETY: the device is valid; no other thread submits concurrently.
        let idle = unsafe { self.device.device_wait_idle() }.call("vkDeviceWaitIdle");
        let idle = idle.and_then(|_| self.lost_error("vkDeviceWaitIdle"));
        if let Err(e) = &idle {
            self.note(e);
        }
        idle
    }

    /// Waits for `fence` at most [`GPU_WAIT_TIMEOUT`]. A device loss comes
    /// back as `VK_ERROR_DEVICE_LOST`, a wait that runs out as
    /// [`GpuError::Timeout`] (and marks the context stalled).
    pub fn wait_for_fence(&self, fence: vk::Fence) -> Result<(), GpuError> {
        self.wait_for_fence_within(fence, GPU_WAIT_TIMEOUT)
    }

    /// [`wait_for_fence`](Self::wait_for_fence) with another bound. After
    /// a loss it waits for nothing that could never signal: it returns
    /// `VK_ERROR_DEVICE_LOST` once the queue has drained.
    pub fn wait_for_fence_within(&self, fence: vk::Fence, timeout: Duration) -> Result<(), GpuError> {
        if self.is_device_lost() {
            return self.wait_idle();
        }
        let nanos = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        // SAFETY: the fence belongs to this device.
        let waited = unsafe { self.device.wait_for_fences(&[fence], true, nanos) }.map_err(|e| match e {
            vk::Result::TIMEOUT => GpuError::Timeout { call: "vkWaitForFences", waited: timeout },
            e => GpuError::vk("vkWaitForFences", e),
        });
        if let Err(e) = &waited {
            self.note(e);
        }
        waited
    }

    /// `VK_ERROR_DEVICE_LOST` from `call` once the device is lost.
    fn lost_error(&self, call: &'static str) -> Result<(), GpuError> {
        if self.is_device_lost() { Err(GpuError::vk(call, vk::Result::ERROR_DEVICE_LOST)) } else { Ok(()) }
    }

    /// Whether the device was lost (a submission or wait returned
    /// `VK_ERROR_DEVICE_LOST`): nothing more can run on it.
    pub fn is_device_lost(&self) -> bool {
        self.lost.load(Ordering::Relaxed)
    }

    /// Records what an error says about the device: after a timeout the
    /// context is stalled; after `VK_ERROR_DEVICE_LOST`, lost.
    fn note(&self, error: &GpuError) {
        if error.is_timeout() {
            self.stalled.store(true, Ordering::Relaxed);
        }
        if error.vk_result() == Some(vk::Result::ERROR_DEVICE_LOST) {
            self.lost.store(true, Ordering::Relaxed);
        }
    }

    /// Whether a wait for the GPU timed out. Submitted work may then still
    /// be running: the GPU layer leaks buffers, images, frame slots and the
    /// device instead of freeing memory the GPU may still use (the process
    /// is about to report the error and exit).
    pub fn is_stalled(&self) -> bool {
        self.stalled.load(Ordering::Relaxed)
    }
}

impl Drop for GpuContext {
    fn drop(&mut self) {
        if self.is_stalled() {
            // Work may still run on the device: destroying it (or freeing
            // its memory) could pull memory from under it. Leaked instead.
            return;
        }
        // SAFETY: destruction in reverse creation order after the GPU is idle;
        // callers destroy their own resources before dropping the context.
        unsafe {
            let _ = self.device.device_wait_idle();
            ManuallyDrop::drop(&mut self.allocator);
            self.device.destroy_device(None);
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

type DeviceParts = (
    Candidate,
    vk::PhysicalDeviceProperties,
    BufferLimits,
    EnabledFeatures,
    ash::Device,
    vk::Queue,
    Allocator,
);

fn create_device(
    entry: &ash::Entry,
    instance: &ash::Instance,
    options: &GpuOptions,
    queue_ok: &dyn Fn(&ash::Entry, &ash::Instance, vk::PhysicalDevice, u32) -> bool,
) -> Result<DeviceParts, GpuError> {
    let list = device_select::candidates(instance, &|p, f| queue_ok(entry, instance, p, f))?;
    let candidate = device_select::choose(&list, options.device.as_deref())?;
    // SAFETY: the physical device comes from this instance.
    let (properties, supported, families) = unsafe {
        (
            instance.get_physical_device_properties(candidate.physical),
            instance.get_physical_device_features(candidate.physical),
            instance.get_physical_device_queue_family_properties(candidate.physical),
        )
    };
    let buffer_limits = buffer_limits(instance, candidate.physical);
    let timestamps = families[candidate.queue_family as usize].timestamp_valid_bits > 0
        && properties.limits.timestamp_compute_and_graphics == vk::TRUE;
    let features = EnabledFeatures {
        fill_mode_non_solid: supported.fill_mode_non_solid == vk::TRUE,
        timestamps,
        calibrated_timestamps: timestamps
            && std::env::var_os(NO_CALIBRATED_TIMESTAMPS).is_none()
            && calibration_available(entry, instance, candidate.physical),
    };
    let priorities = [1.0f32];
    let queue_info = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(candidate.queue_family)
        .queue_priorities(&priorities)];
    let core = vk::PhysicalDeviceFeatures::default().fill_mode_non_solid(features.fill_mode_non_solid);
    // bufferDeviceAddress (required of every Vulkan 1.3 device): the draws
    // read the skinned output (and, where texels cannot hold them, the
    // palettes) through pointers, so no binding range caps a crowd.
    let mut vk12 =
        vk::PhysicalDeviceVulkan12Features::default().host_query_reset(true).buffer_device_address(true);
    // maintenance4 (required of every Vulkan 1.3 device): shaderc targeting
    // Vulkan 1.3 emits SPIR-V 1.6, whose compute shaders declare LocalSizeId.
    let mut vk13 = vk::PhysicalDeviceVulkan13Features::default()
        .dynamic_rendering(true)
        .synchronization2(true)
        .maintenance4(true);
    let mut extensions: Vec<*const c_char> = options.device_extensions.iter().map(|e| e.as_ptr()).collect();
    if features.calibrated_timestamps {
        extensions.push(ash::ext::calibrated_timestamps::NAME.as_ptr());
    }
    let info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queue_info)
        .enabled_features(&core)
        .enabled_extension_names(&extensions)
        .push_next(&mut vk12)
        .push_next(&mut vk13);
    // SAFETY: valid create info; every pointer lives until the call returns.
    let device = unsafe { instance.create_device(candidate.physical, &info, None) }.call("vkCreateDevice")?;
    // SAFETY: family and index were requested at device creation.
    let queue = unsafe { device.get_device_queue(candidate.queue_family, 0) };
    let allocator = Allocator::new(&AllocatorCreateDesc {
        instance: instance.clone(),
        device: device.clone(),
        physical_device: candidate.physical,
        debug_settings: Default::default(),
        buffer_device_address: true,
        allocation_sizes: Default::default(),
    });
    let allocator = match allocator {
        Ok(a) => a,
        Err(e) => {
            // SAFETY: nothing was created from the device yet.
            unsafe { device.destroy_device(None) };
            return Err(GpuError::new(format!("gpu-allocator cannot start: {e}")));
        }
    };
    Ok((candidate, properties, buffer_limits, features, device, queue, allocator))
}

/// The buffer limits of `physical` (`BufferLimits`).
fn buffer_limits(instance: &ash::Instance, physical: vk::PhysicalDevice) -> BufferLimits {
    let mut vk11 = vk::PhysicalDeviceVulkan11Properties::default();
    let mut vk13 = vk::PhysicalDeviceVulkan13Properties::default();
    let mut properties = vk::PhysicalDeviceProperties2::default().push_next(&mut vk11).push_next(&mut vk13);
    let mut budget = vk::PhysicalDeviceMemoryBudgetPropertiesEXT::default();
    let has_budget = device_offers(instance, physical, ash::ext::memory_budget::NAME);
    let mut memory = vk::PhysicalDeviceMemoryProperties2::default();
    if has_budget {
        memory = memory.push_next(&mut budget);
    }
    // SAFETY: the physical device comes from this instance and offers the
    // extension whose structure is chained; the chains live until the
    // calls return.
    unsafe {
        instance.get_physical_device_properties2(physical, &mut properties);
        instance.get_physical_device_memory_properties2(physical, &mut memory);
    }
    let memory = memory.memory_properties;
    let heaps = &memory.memory_heaps[..memory.memory_heap_count as usize];
    let device_local = |h: &&vk::MemoryHeap| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL);
    let largest_heap = heaps.iter().enumerate().filter(|(_, h)| device_local(h)).max_by_key(|(_, h)| h.size);
    let (device_local_bytes, device_local_budget) = match largest_heap {
        // A driver that reports no budget (0) is taken at its heap's size.
        Some((i, h)) if has_budget && budget.heap_budget[i] > 0 => {
            (h.size, budget.heap_budget[i].min(h.size))
        }
        Some((_, h)) => (h.size, h.size),
        None => (0, 0),
    };
    let bound = u64::from(properties.properties.limits.max_storage_buffer_range);
    let largest = vk13.max_buffer_size.min(vk11.max_memory_allocation_size);
    let lowered = std::env::var(OUTPUT_BUFFER_BYTES).ok().and_then(|n| n.trim().parse::<u64>().ok());
    BufferLimits {
        max_buffer_size: vk13.max_buffer_size,
        max_allocation_size: vk11.max_memory_allocation_size,
        device_local_bytes,
        device_local_budget,
        output_buffer_bytes: largest.min(bound).min(lowered.unwrap_or(u64::MAX)),
    }
}

/// Whether `physical` offers the device extension `name`.
fn device_offers(instance: &ash::Instance, physical: vk::PhysicalDevice, name: &std::ffi::CStr) -> bool {
    // SAFETY: plain enumeration on a physical device of this instance.
    let extensions = unsafe { instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
    extensions.iter().any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
}

fn messenger_info(log: &ValidationLog) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(debug_callback))
        .user_data(log as *const ValidationLog as *mut std::ffi::c_void)
}

/// Whether `physical` offers VK_EXT_calibrated_timestamps with both the
/// device's timestamp clock and CLOCK_MONOTONIC (the clock frame traces use).
fn calibration_available(entry: &ash::Entry, instance: &ash::Instance, physical: vk::PhysicalDevice) -> bool {
    if !device_offers(instance, physical, ash::ext::calibrated_timestamps::NAME) {
        return false;
    }
    let loader = ash::ext::calibrated_timestamps::Instance::new(entry, instance);
    // SAFETY: the device offers the extension whose query this is.
    let domains =
        unsafe { loader.get_physical_device_calibrateable_time_domains(physical) }.unwrap_or_default();
    domains.contains(&vk::TimeDomainEXT::DEVICE) && domains.contains(&vk::TimeDomainEXT::CLOCK_MONOTONIC)
}

/// Whether the instance offers VK_EXT_debug_utils (object names and
/// command-buffer regions) without the validation layer.
fn debug_utils_available(entry: &ash::Entry) -> bool {
    // SAFETY: plain enumeration on a loaded entry.
    let extensions = unsafe { entry.enumerate_instance_extension_properties(None) }.unwrap_or_default();
    extensions.iter().any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == ash::ext::debug_utils::NAME))
}

fn create_instance(
    entry: &ash::Entry,
    options: &GpuOptions,
    log: &ValidationLog,
    labels: bool,
) -> Result<ash::Instance, GpuError> {
    let app = vk::ApplicationInfo::default()
        .application_name(c"vkskin")
        .engine_name(c"vkskin")
        .api_version(vk::API_VERSION_1_3);
    let mut extensions: Vec<*const c_char> = options.instance_extensions.iter().map(|e| e.as_ptr()).collect();
    let mut layers: Vec<*const c_char> = Vec::new();
    if options.validation {
        // SAFETY: plain enumeration on a loaded entry.
        let available = unsafe { entry.enumerate_instance_layer_properties() }
            .call("vkEnumerateInstanceLayerProperties")?;
        let found = available.iter().any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER));
        if !found {
            return Err(GpuError::new(
                "validation requested but VK_LAYER_KHRONOS_validation is not installed (apt-get install vulkan-validationlayers)",
            ));
        }
        layers.push(VALIDATION_LAYER.as_ptr());
        extensions.push(ash::ext::debug_utils::NAME.as_ptr());
    } else if labels {
        extensions.push(ash::ext::debug_utils::NAME.as_ptr());
    }
    let enables = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
    let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enables);
    // Chained so that instance creation and destruction are validated too.
    let mut messenger = messenger_info(log);
    let mut info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&layers)
        .enabled_extension_names(&extensions);
    if options.validation {
        info = info.push_next(&mut features).push_next(&mut messenger);
    }
    // SAFETY: valid create info; all pointers outlive the call.
    unsafe { entry.create_instance(&info, None) }.call("vkCreateInstance")
}
