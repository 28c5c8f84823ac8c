// The comparison path: skins in the vertex shader with the same function and
// buffers (set 0) as skin.comp. Indices are primitive-local, so
// gl_VertexIndex is the vertex within the draw character's record.
// Included by mesh_skinned.vert (the palette read as texels, as skin.comp
// reads it) and mesh_skinned_storage.vert (by pointer, as
// skin_storage.comp); MeshPass picks the one of the device's PaletteReads.

#include "common.glsl"
#include "mesh_common.glsl"

// Set by MeshPass for SkinningMethod::DualQuaternion: skin_vertex_dqs.
layout(constant_id = 1) const bool DUAL_QUATERNION = false;

uvec2 palette_address() {
    return push.palette_address;
}

layout(location = 2) in vec2 in_uv;
layout(location = 3) in float in_heat;    // selected joint's weight (heat view; 0 otherwise)

layout(location = 0) out vec3 out_world_pos;
layout(location = 1) out vec3 out_normal;
layout(location = 2) out vec2 out_uv;
layout(location = 3) out float out_heat;

void main() {
    // The instance's character, and that counted from the draw's first one.
    uint instance = draw_order[gl_InstanceIndex];
    uint character = instance - push.first_character;
    SkinRecord r = load_record(push.record + character * push.records_per_character);
    uint v = uint(gl_VertexIndex);
    SkinnedVertex s = DUAL_QUATERNION ? skin_vertex_dqs(r, v) : skin_vertex(r, v);
    mat4 world = instance_world[instance];
    // The depth prepass draws with this shader too, and the main pass tests
    // LESS_OR_EQUAL against its depth: both must compute the same position.
    // `precise` forbids contractions (fma) that could differ between the two
    // pipelines. (`invariant gl_Position` would say this too, but glslang
    // puts its decoration on a struct member, which SPIR-V validation flags.)
    precise vec4 world_pos = world * vec4(s.position.xyz, 1.0);
    precise vec4 clip = frame.view_proj * world_pos;
    gl_Position = clip;
    out_world_pos = world_pos.xyz;
    out_normal = transpose(inverse(mat3(world))) * s.normal.xyz;
    out_uv = in_uv;
    out_heat = in_heat;
}
