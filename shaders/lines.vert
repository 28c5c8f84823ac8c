#version 460
// Debug lines (the skeleton): positions in the character's space, placed by
// view_proj * world (one matrix, pushed per draw). Rust mirror:
// src/render/bone_lines.rs (LineVertex, LinePush).

layout(push_constant) uniform Push {
    mat4 view_proj_world; // character space -> Vulkan clip space, column-major
} push;

layout(location = 0) in vec3 in_position;
layout(location = 1) in vec4 in_color; // linear RGBA (R8G8B8A8_UNORM)

layout(location = 0) out vec4 out_color;

void main() {
    gl_Position = push.view_proj_world * vec4(in_position, 1.0);
    out_color = in_color;
}
