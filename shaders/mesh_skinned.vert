#version 460
#extension GL_GOOGLE_include_directive : require
// The comparison path: skins in the vertex shader with the same function and
// buffers (set 0) as skin.comp. Indices are primitive-local, so
// gl_VertexIndex is the vertex within records[push.record].

#include "common.glsl"
#include "mesh_common.glsl"

// Set by MeshPass for SkinningMethod::DualQuaternion: skin_vertex_dqs.
layout(constant_id = 1) const bool DUAL_QUATERNION = false;

layout(location = 2) in vec2 in_uv;
layout(location = 3) in float in_heat;    // selected joint's weight (heat view; 0 otherwise)

layout(location = 0) out vec3 out_world_pos;
layout(location = 1) out vec3 out_normal;
layout(location = 2) out vec2 out_uv;
layout(location = 3) out float out_heat;

void main() {
    SkinRecord r = records[push.record];
    uint v = uint(gl_VertexIndex);
    SkinnedVertex s = DUAL_QUATERNION ? skin_vertex_dqs(r, v) : skin_vertex(r, v);
    vec4 world_pos = push.world * vec4(s.position.xyz, 1.0);
    gl_Position = frame.view_proj * world_pos;
    out_world_pos = world_pos.xyz;
    out_normal = transpose(inverse(mat3(push.world))) * s.normal.xyz;
    out_uv = in_uv;
    out_heat = in_heat;
}
