//! The debug messenger: every validation warning or error is printed and kept,
//! so tests can fail on any message. It never filters or silences a message.

use ash::vk;
use std::ffi::CStr;
use std::sync::Mutex;

/// Validation messages seen so far (warnings and errors only).
#[derive(Debug, Default)]
pub struct ValidationLog {
    messages: Mutex<Vec<String>>,
}

impl ValidationLog {
    /// A copy of every message so far.
    pub fn messages(&self) -> Vec<String> {
        self.messages.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Number of messages so far.
    pub fn count(&self) -> usize {
        self.messages.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Records a problem vkskin's own checks found, as the layer's messages
    /// are recorded (printed, and failing a validated run).
    pub(crate) fn report(&self, message: String) {
        eprintln!("vkskin: validation: {message}");
        self.push(message);
    }

    fn push(&self, message: String) {
        if let Ok(mut m) = self.messages.lock() {
            m.push(message);
        }
    }
}

/// The messenger callback.
///
/// # Safety
/// Called by the Vulkan loader only: `data` is a valid callback-data struct
/// and `user_data` points at a `ValidationLog` that the context keeps alive
/// (shared) for as long as the messenger exists.
pub unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut std::ffi::c_void,
) -> vk::Bool32 {
    if data.is_null() || user_data.is_null() {
        return vk::FALSE;
    }
    // SAFETY: the loader passes a valid callback-data struct; user_data is the
    // context's boxed ValidationLog, which outlives the messenger.
    let (data, log) = unsafe { (&*data, &*(user_data as *const ValidationLog)) };
    let text = if data.p_message.is_null() {
        String::from("(no message)")
    } else {
        // SAFETY: p_message is a NUL-terminated string owned by the layer for this call.
        unsafe { CStr::from_ptr(data.p_message) }.to_string_lossy().into_owned()
    };
    let line = format!("vulkan {severity:?} {kind:?}: {text}");
    eprintln!("{line}");
    if severity.intersects(
        vk::DebugUtilsMessageSeverityFlagsEXT::WARNING | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
    ) {
        log.push(line);
    }
    vk::FALSE
}
