#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
// Draws pre-skinned vertices: pulls the compute pass's output (by pointer,
// from where the frame placed the character: push.output_places) for the
// draw's character, so that one instanced draw covers every character of a
// model.

#include "direction.glsl"
#include "mesh_common.glsl"

// The compute pass's output, scene space: a PackedVertex (common.glsl) per
// vertex as three 8-byte words (skin_main.glsl's store_vertex). The draw
// reads the position and the normal, the first two.
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer SkinnedVertices {
    uvec2 words[];
};

// Where the frame placed each character's output (skin_pass::plan::
// OutputPlaces): each window's buffer, then per character its window in the
// top bits and its first vertex there below them. Keep in sync with
// skin_pass::plan::{MAX_OUTPUT_WINDOWS, WINDOW_SHIFT}.
const uint MAX_OUTPUT_WINDOWS = 64u;
const uint WINDOW_SHIFT = 26u;
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer OutputPlaces {
    uvec2 window_addresses[MAX_OUTPUT_WINDOWS];
    uint places[];
};

// A coarser level's map from the primitive's vertex to its place in the
// character's output at that level (skin_levels::append_maps).
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer LevelMap {
    uint places[];
};

layout(location = 2) in vec2 in_uv;
layout(location = 3) in float in_heat;    // selected joint's weight (heat view; 0 otherwise)

layout(location = 0) out vec3 out_world_pos;
layout(location = 1) out vec3 out_normal;
layout(location = 2) out vec2 out_uv;
layout(location = 3) out float out_heat;

void main() {
    // The instance's character, and that counted from the draw's first one.
    uint instance = draw_order[gl_InstanceIndex];
    OutputPlaces placed = OutputPlaces(push.output_places);
    uint character_place = placed.places[instance];
    // The index buffer names the primitive's own vertices; at a coarser
    // level the skin pass wrote only the level's, one after the other.
    uint place = uint(gl_VertexIndex);
    if (push.level_map != uvec2(0u)) {
        place = LevelMap(push.level_map).places[place];
    }
    uint v = (character_place & ((1u << WINDOW_SHIFT) - 1u)) + push.output_offset + place;
    SkinnedVertices skinned = SkinnedVertices(placed.window_addresses[character_place >> WINDOW_SHIFT]);
    uvec2 a = skinned.words[3u * v];
    uvec2 b = skinned.words[3u * v + 1u];
    vec3 position = vec3(uintBitsToFloat(a), uintBitsToFloat(b.x));
    mat4 world = instance_world[instance];
    // The depth prepass draws with this shader too, and the main pass tests
    // LESS_OR_EQUAL against its depth: both must compute the same position.
    // `precise` forbids contractions (fma) that could differ between the two
    // pipelines. (`invariant gl_Position` would say this too, but glslang
    // puts its decoration on a struct member, which SPIR-V validation flags.)
    precise vec4 world_pos = world * vec4(position, 1.0);
    precise vec4 clip = frame.view_proj * world_pos;
    gl_Position = clip;
    out_world_pos = world_pos.xyz;
    out_normal = transpose(inverse(mat3(world))) * decode_direction(b.y);
    out_uv = in_uv;
    out_heat = in_heat;
}
