// Compute skinning: every primitive of every character instance in one
// dispatch. Thread g skins output vertex g: it finds the SkinRecord whose
// output region holds g (records are sorted by output_offset and their
// regions follow one another, with gaps only before a window's start)
// through its workgroup's entry in group_records,
// then morphs and skins that record's vertex g - output_offset (or, when
// its character draws a coarser detail level, the (g - output_offset)-th
// vertex that level uses: level_vertex) with the shared skin_vertex (common.glsl), the twin of the CPU reference
// anim::skinning::SkinningJob. Included by skin.comp (the palette read
// through a uniform texel buffer) and skin_storage.comp (read as a storage
// buffer); SkinPass picks one (PaletteReads).
#include "common.glsl"

// Set by SkinPass for SkinningMethod::DualQuaternion: skin_vertex_dqs.
layout(constant_id = 1) const bool DUAL_QUATERNION = false;

// Keep in sync with skin_pass::WORKGROUP_SIZE. (gl_WorkGroupSize is not used:
// for SPIR-V 1.6 glslang would emit LocalSizeId, which needs maintenance4.)
const uint WORKGROUP_SIZE = 64u;
layout(local_size_x = 64) in;

// One window of the slot's output: a crowd's output may be larger than one
// binding (maxStorageBufferRange) or one buffer, so SkinPass dispatches once
// per window (skin_pass::OutputWindows), each binding its window's own
// buffer, vertex pc.first_group * WORKGROUP_SIZE at index 0. Bound, not written by pointer:
// on llvmpipe pointer stores made the dispatch about a quarter slower, and
// the validation layer checks bound writes.
layout(std430, set = 0, binding = 7) writeonly buffer Outputs { SkinnedVertex out_vertices[]; };

// Per workgroup (skin_pass::group_records): the record holding the group's
// first vertex, with GROUP_SPANS_RECORDS set when a later record starts
// inside the group. Replaces a per-thread binary search over the records,
// which cost about a sixth of the dispatch on lavapipe (the guide's
// profiling page, `cargo doc --open`).
const uint GROUP_SPANS_RECORDS = 0x80000000u;
#ifdef RECORD_TEXELS
layout(set = 0, binding = 8) uniform usamplerBuffer group_record_texels;
uint group_record(uint group) {
    return texelFetch(group_record_texels, int(group)).x;
}
#else
layout(std430, set = 0, binding = 8) readonly buffer GroupRecords { uint group_records[]; };
uint group_record(uint group) {
    return group_records[group];
}
#endif

layout(push_constant) uniform Push {
    uint record_count;      // >= 1 whenever anything is dispatched
    uint total_vertices;    // output vertices; threads at or past it do nothing
    uint first_group;       // the window's first workgroup (its vertex 0)
    uint group_count;       // the window's workgroups; groups past them do nothing
    uvec2 palette_address;  // the palette skin_storage.comp reads (unused by skin.comp)
    // Detail levels (render::skin_levels): the record buffer's words where
    // the level tables and the frame's level per character start, and how
    // many characters have one (0: skin every vertex).
    uint level_words;
    uint frame_levels;
    uint level_characters;
} pc;

uvec2 palette_address() {
    return pc.palette_address;
}

// Levels per primitive past the full mesh; keep in sync with
// skin_levels::TABLE_HEADER (a count and a start per level).
const uint COARSER_LEVELS = 3u;
const uint NO_SKIN_LEVELS = 0xffffffffu;
// The level byte of a character no pass draws (draw_order::HIDDEN).
const uint HIDDEN = 0xffu;

// Word w of the record buffer (records, then skin_pass::plan's
// RecordBufferWords).
uint record_buffer_word(uint w) {
    return record_word(w >> 2)[w & 3u];
}

// The vertex of record `index` that its thread v skins at the character's
// detail level this frame, or NO_SKIN_LEVELS when none: at level k, the
// primitive's table lists the vertices its triangles use and thread v skins
// the v-th; threads past the list have nothing to do. At level 0 v comes
// back as it is (the caller checks it against the record's vertex count).
uint level_vertex(uint index, uint v) {
    if (pc.level_characters == 0u) {
        return v;
    }
    // Per record [character, table], two to a texel.
    uvec4 pair = record_word((8u * pc.record_count + 2u * index) >> 2);
    bool odd = (index & 1u) != 0u;
    uint character = odd ? pair.z : pair.x;
    uint table = odd ? pair.w : pair.y;
    if (character >= pc.level_characters) {
        return v;
    }
    uint bucket = (record_buffer_word(pc.frame_levels + character / 4u) >> (8u * (character % 4u))) & 0xffu;
    if (bucket == HIDDEN) {
        return NO_SKIN_LEVELS;
    }
    // 2 * level, + 1 when only the shadow cascades draw it. Clamped: any
    // byte reads a table of this primitive, whose lists hold its vertices.
    uint level = min(bucket >> 1, COARSER_LEVELS);
    if (level == 0u || table == NO_SKIN_LEVELS) {
        return v;
    }
    uint t = pc.level_words + table;
    if (v >= record_buffer_word(t + level - 1u)) {
        return NO_SKIN_LEVELS;
    }
    return record_buffer_word(t + record_buffer_word(t + COARSER_LEVELS + level - 1u) + v);
}

void main() {
    // Large scenes may need more than maxComputeWorkGroupCount[0] groups: the
    // host then spreads them over y, rows of gl_NumWorkGroups.x groups each.
    uint local_group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint group = pc.first_group + local_group;
    uint g = group * WORKGROUP_SIZE + gl_LocalInvocationID.x;
    if (local_group >= pc.group_count || g >= pc.total_vertices) {
        return;
    }
    // The last record with output_offset <= g: the group's first vertex's
    // record, or (only in groups that hold a record's start) a later one.
    uint entry = group_record(group);
    uint index = entry & ~GROUP_SPANS_RECORDS;
    if ((entry & GROUP_SPANS_RECORDS) != 0u) {
        while (index + 1u < pc.record_count && record_output_offset(index + 1u) <= g) {
            index += 1u;
        }
    }
    uint v = g - record_output_offset(index);
    // Past its level's vertices a thread is done before loading the record
    // (most threads of a distant character).
    uint vertex = level_vertex(index, v);
    if (vertex == NO_SKIN_LEVELS) {
        return;
    }
    SkinRecord r = load_record(index);
    // Vertices between a record's end and the next window's start (where
    // the layout moved a character that would straddle two windows) belong
    // to no record (at level 0, where level_vertex passes v through).
    if (v >= r.vertex_count) {
        return;
    }
    uint out_index = r.output_offset + vertex - pc.first_group * WORKGROUP_SIZE;
    out_vertices[out_index] = DUAL_QUATERNION ? skin_vertex_dqs(r, vertex) : skin_vertex(r, vertex);
}
