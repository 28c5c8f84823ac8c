#version 460
#extension GL_GOOGLE_include_directive : require
// Draws pre-skinned vertices (the compute pass's SkinnedVertex output).

#include "mesh_common.glsl"

layout(location = 0) in vec4 in_position; // scene space, w = 1
layout(location = 1) in vec4 in_normal;   // scene space unit normal (or zero)
layout(location = 2) in vec2 in_uv;
layout(location = 3) in float in_heat;    // selected joint's weight (heat view; 0 otherwise)

layout(location = 0) out vec3 out_world_pos;
layout(location = 1) out vec3 out_normal;
layout(location = 2) out vec2 out_uv;
layout(location = 3) out float out_heat;

void main() {
    vec4 world_pos = push.world * vec4(in_position.xyz, 1.0);
    gl_Position = frame.view_proj * world_pos;
    out_world_pos = world_pos.xyz;
    out_normal = transpose(inverse(mat3(push.world))) * in_normal.xyz;
    out_uv = in_uv;
    out_heat = in_heat;
}
