//! Shader modules from the SPIR-V that build.rs compiled into OUT_DIR. It
//! never compiles shaders at run time.

use super::context::GpuContext;
use super::error::{GpuError, VkResultExt};
use ash::vk;

/// SPIR-V of a shader in `shaders/`, e.g. `spirv!("skin.comp")`.
#[macro_export]
macro_rules! spirv {
    ($name:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".spv"))
    };
}

/// Creates a shader module from SPIR-V bytes (any alignment).
pub fn create_module(ctx: &GpuContext, name: &str, spirv: &[u8]) -> Result<vk::ShaderModule, GpuError> {
    let words = ash::util::read_spv(&mut std::io::Cursor::new(spirv))
        .map_err(|e| GpuError::new(format!("{name}: bad SPIR-V: {e}")))?;
    let info = vk::ShaderModuleCreateInfo::default().code(&words);
    // SAFETY: the words are SPIR-V produced by shaderc at build time.
    let module = unsafe { ctx.device.create_shader_module(&info, None) }.call("vkCreateShaderModule")?;
    ctx.set_name(module, name);
    Ok(module)
}
