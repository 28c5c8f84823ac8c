//! GPU failures end as typed errors that say what happened, never as a hang
//! or a panic: a buffer larger than the device can hold says how many bytes
//! were asked, and a wait that runs out is a timeout after which nothing the
//! GPU may still use is freed. (A lost device cannot be caused on purpose;
//! its mapping and message are unit-tested in `gpu::error` and `cli`.)

use ash::vk;
use gpu_allocator::MemoryLocation;
use std::time::Duration;
use vkskin::gpu::{Buffer, GpuContext, GpuError};

/// A context without validation: these tests ask for what a program must
/// not ask for (a buffer past the device's limits, a fence never
/// submitted), to see what the driver and allocator answer.
fn unvalidated() -> Option<GpuContext> {
    match GpuContext::headless(false, None) {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            crate::common::skip(&format!("no Vulkan device ({e})"));
            None
        }
    }
}

#[test]
fn a_buffer_larger_than_the_device_says_how_much_was_asked() {
    let Some(ctx) = unvalidated() else { return };
    // SAFETY: a live physical device.
    let memory = unsafe { ctx.instance.get_physical_device_memory_properties(ctx.physical) };
    let largest = memory.memory_heaps_as_slice().iter().map(|h| h.size).max().unwrap();
    let size = largest.next_power_of_two() * 2;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let error = Buffer::new(&ctx, "skinned output", size, usage, MemoryLocation::GpuOnly).unwrap_err();
    assert!(error.is_out_of_device_memory(), "{error:?}");
    assert!(!error.is_device_lost());
    let message = error.to_string();
    // For the log: which layer answered (the driver at creation, or the allocator).
    eprintln!("{message}");
    assert!(message.contains(&format!("{size} bytes")) && message.contains("skinned output"), "{message}");
    assert!(
        matches!(error, GpuError::Allocation { bytes, .. } | GpuError::Creation { bytes, .. } if bytes >= size)
    );
    // The device is still usable afterwards.
    let small = Buffer::new(&ctx, "small", 256, usage, MemoryLocation::GpuOnly).unwrap();
    small.destroy(&ctx);
}

#[test]
fn a_wait_that_runs_out_is_a_timeout_not_a_hang() {
    let Some(ctx) = unvalidated() else { return };
    // SAFETY: a fence on a live device; it is never submitted, so it never signals.
    let fence = unsafe { ctx.device.create_fence(&vk::FenceCreateInfo::default(), None) }.unwrap();
    let error = ctx.wait_for_fence_within(fence, Duration::from_millis(20)).unwrap_err();
    assert!(error.is_timeout() && !error.is_device_lost(), "{error:?}");
    assert!(error.to_string().starts_with("the GPU did not finish within 20ms (vkWaitForFences)"), "{error}");
    // From now on submitted work may still run: no unbounded wait, nothing freed.
    assert!(ctx.is_stalled());
    assert!(ctx.wait_idle().is_err());
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let before = ctx.allocated_bytes();
    Buffer::new(&ctx, "kept", 256, usage, MemoryLocation::GpuOnly).unwrap().destroy(&ctx);
    assert!(ctx.allocated_bytes() >= before + 256, "a buffer was freed after the timeout");
    // Dropping the context leaks the device instead of destroying it under running work.
    drop(ctx);
}

/// `render --detail full` of a crowd whose skinned vertices pass what the
/// device's 64 output buffers hold, or its memory (100,000 Foxes: 4.1 GB
/// of output):
/// exit code 1 and a last line that says how many bytes were
/// asked and what the limit is, no image left behind. A device with room
/// for them would render them; the check then does not apply.
#[test]
fn a_scene_too_big_for_the_device_ends_with_one_line() {
    let Some(fox) = crate::common::shared_file("Fox/Fox.glb", "the scene-too-big check") else { return };
    let Some(ctx) = unvalidated() else { return };
    let limits = ctx.buffer_limits;
    drop(ctx);
    // 100000 Foxes skin 4147200000 bytes of output vertices (checked up
    // front by `render::crowd_fit`, before a character is posed).
    let model = vkskin::asset::load(&fox).unwrap();
    let need = vkskin::render::crowd_fit::CrowdNeed::of(&model, 1, vkskin::render::DrawDetail::Full).unwrap();
    let needed = 100_000 * need.output_per_character;
    assert_eq!(needed, 4_147_200_000);
    let memory = 100_000 * (need.output_per_character + need.palette_per_character);
    // An output buffer holds whole workgroups of 64 vertices of 24 bytes,
    // and whole characters.
    let window = limits.output_buffer_bytes / (64 * 24) * (64 * 24);
    let in_windows = window / need.output_per_character * 64 >= 100_000;
    let heap = limits.device_local_bytes;
    if in_windows && heap >= memory {
        eprintln!("not applicable: 64 buffers of {window} bytes and the heap's {heap} hold 100,000 Foxes");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("crowd.png");
    let args = [
        "render",
        fox.to_str().unwrap(),
        "--characters",
        "100000",
        "--detail",
        "full",
        "--size",
        "32x32",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = crate::common::bounded::run(&args, Duration::from_secs(600));
    let what = o.describe(&args);
    assert!(!o.timed_out, "{what}");
    assert_eq!(o.code, Some(1), "{what}");
    let last = o.stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("vkskin: --characters 100000: ") && !last.contains("internal error"), "{what}");
    let (bytes, limit) = if !in_windows {
        (
            format!("need {needed} bytes of skinned output,"),
            format!("64 largest output buffers ({} bytes", 64 * window),
        )
    } else {
        (
            format!("need {memory} bytes of skinned output and the device palette"),
            format!("device-local heap ({heap} bytes"),
        )
    };
    assert!(last.contains(&bytes) && last.contains(&limit), "{what}");
    assert!(!out.exists(), "{what}: an image was left behind");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{what}: a temporary file was left behind");
}

/// `render --size 16384x16384` asks for a 4 GiB multisampled colour target:
/// on a device whose memory heaps are smaller (lavapipe's here), exit code 1
/// and a last line saying how many bytes were asked, no image left behind.
/// A device with room enough would render it; the check then does not apply.
#[test]
fn a_target_larger_than_the_device_memory_says_how_much_was_asked() {
    let Some(fox) = crate::common::shared_file("Fox/Fox.glb", "the out-of-memory check") else { return };
    let Some(ctx) = unvalidated() else { return };
    // SAFETY: a live physical device.
    let memory = unsafe { ctx.instance.get_physical_device_memory_properties(ctx.physical) };
    let largest = memory.memory_heaps_as_slice().iter().map(|h| h.size).max().unwrap();
    drop(ctx);
    let asked: u64 = 16384 * 16384 * 4 * 4;
    if largest >= asked {
        eprintln!("not applicable: the largest heap holds {largest} bytes, room for a {asked}-byte target");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("huge.png");
    let args = ["render", fox.to_str().unwrap(), "--size", "16384x16384", "--out", out.to_str().unwrap()];
    let o = crate::common::bounded::run(&args, Duration::from_secs(300));
    let what = o.describe(&args);
    assert_eq!(o.code, Some(1), "{what}");
    let last = o.stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("vkskin: allocating ") && last.ends_with("the GPU is out of memory"), "{what}");
    assert!(last.contains(&format!("({asked} bytes)")), "{what}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{what}: a file was left behind");
}
