// Compute skinning, one dispatch per batch (skin_pass::batches): the
// characters of one run (plan::SkinRun: alike characters, records at a
// fixed stride) drawn at one detail level, placed in one output window.
// Each character takes whole workgroups; its thread t skins the t-th
// vertex its level draws, its records' vertices one after the other (at a
// coarser level, the t-th of the primitive's list: level_vertex), into the
// t-th vertex of the character's place in the frame's output (the draws
// find it through the level's map, skin_levels::append_maps), morphing and
// skinning it with the shared skin_vertex (common.glsl), the twin of the
// CPU reference anim::skinning::SkinningJob. SkinRun::skinned_by is this
// mapping on the CPU, tested. Included by skin.comp (the palette read
// through a uniform texel buffer) and skin_storage.comp (read as a storage
// buffer); SkinPass picks one (PaletteReads).
#include "common.glsl"

// Set by SkinPass for SkinningMethod::DualQuaternion: skin_vertex_dqs.
layout(constant_id = 1) const bool DUAL_QUATERNION = false;

// Keep in sync with skin_pass::WORKGROUP_SIZE. (gl_WorkGroupSize is not used:
// for SPIR-V 1.6 glslang would emit LocalSizeId, which needs maintenance4.)
const uint WORKGROUP_SIZE = 64u;
layout(local_size_x = 64) in;

// One window of the frame's output: a crowd's output may be larger than one
// binding (maxStorageBufferRange) or one buffer, so it is split into
// windows (skin_pass::OutputWindows), each its own buffer; a batch lies in
// one (skin_pass::batches), bound here.
// Bound, not written by pointer:
// on llvmpipe pointer stores made the dispatch about a quarter slower, and
// the validation layer checks bound writes. Each vertex is a PackedVertex
// (24 bytes), written as three 8-byte words: one store each, where the
// struct's six members would be six (on llvmpipe a store per thread is a
// loop over the SIMD lanes).
layout(std430, set = 0, binding = 7) writeonly buffer Outputs { uvec2 out_words[]; };

// Output vertex i: `s` packed as PackedVertex (mesh.vert unpacks it).
void store_vertex(uint i, SkinnedVertex s) {
    uint w = 3u * i;
    out_words[w] = floatBitsToUint(s.position.xy);
    out_words[w + 1u] = uvec2(floatBitsToUint(s.position.z), encode_direction(s.normal.xyz));
    out_words[w + 2u] = uvec2(encode_direction(s.tangent.xyz), floatBitsToUint(s.tangent.w));
}

// The characters each batch skins, listed by the host from the frame's
// draw order (skin_pass::batches), a word each.
#ifdef RECORD_TEXELS
layout(set = 0, binding = 8) uniform usamplerBuffer work_texels;
uint work_word(uint i) {
    return texelFetch(work_texels, int(i)).x;
}
#else
layout(std430, set = 0, binding = 8) readonly buffer Work { uint work_words[]; };
uint work_word(uint i) {
    return work_words[i];
}
#endif

layout(push_constant) uniform Push {
    // The batch's run: its first record, records per character, first character.
    uint first_record;
    uint records_per_character;
    uint first_character;
    // The batch's level, the vertices and workgroups one character takes
    // there, how many characters, and the work word listing them (NO_ORDER:
    // the run's characters in order).
    uint level;
    uint level_vertices;
    uint groups_per_character;
    uint characters;
    uint order_first;
    // Record buffer words: the run's record starts at this level, the level
    // tables; and the record count (record_tables start at 8 * it).
    uint starts;
    uint level_words;
    uint record_count;
    // With NO_ORDER, the batch's first character's index in the run.
    uint first_slot;
    // Where the batch's first character's output starts in the window's
    // buffer; the others follow, level_vertices each.
    uint first_vertex;
    uint pad;
    uvec2 palette_address;  // the palette skin_storage.comp reads (unused by skin.comp)
} pc;

uvec2 palette_address() {
    return pc.palette_address;
}

// Keep in sync with skin_levels::NO_SKIN_LEVELS and skin_pass::batches::NO_ORDER.
const uint NO_SKIN_LEVELS = 0xffffffffu;
const uint NO_ORDER = 0xffffffffu;

// Word w of the record buffer (records, then skin_pass::plan's
// RecordBufferWords).
uint record_buffer_word(uint w) {
    return record_word(w >> 2)[w & 3u];
}

// The vertex of record `index` that its v-th thread skins at the batch's
// level (skin_levels::level_vertex): v at level 0 and for a primitive
// without a table, else the v-th of the level's list.
uint level_vertex(uint index, uint v) {
    if (pc.level == 0u) {
        return v;
    }
    uint table = record_buffer_word(8u * pc.record_count + index);
    if (table == NO_SKIN_LEVELS) {
        return v;
    }
    uint t = pc.level_words + table;
    // A count and a start per coarser level (skin_levels::header).
    return record_buffer_word(t + record_buffer_word(t + 2u * (pc.level - 1u) + 1u) + v);
}

void main() {
    // Large batches may need more than maxComputeWorkGroupCount[0] groups:
    // the host then spreads them over y, rows of gl_NumWorkGroups.x groups each.
    uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint slot = group / pc.groups_per_character;
    if (slot >= pc.characters) {
        return;
    }
    uint t = (group - slot * pc.groups_per_character) * WORKGROUP_SIZE + gl_LocalInvocationID.x;
    if (t >= pc.level_vertices) {
        return;
    }
    // The character's place in its run.
    uint character =
        pc.order_first == NO_ORDER ? pc.first_slot + slot : work_word(pc.order_first + slot) - pc.first_character;
    // Its record whose vertices hold thread t (the first, for most models).
    uint p = 0u;
    while (p + 1u < pc.records_per_character && record_buffer_word(pc.starts + p + 1u) <= t) {
        p += 1u;
    }
    uint index = pc.first_record + character * pc.records_per_character + p;
    uint v = p == 0u ? t : t - record_buffer_word(pc.starts + p);
    uint vertex = level_vertex(index, v);
    SkinRecord r = load_record(index);
    // Thread t writes the t-th vertex of the character's place in the
    // frame's output: its level's vertices one after the other (skin_levels).
    uint out_index = pc.first_vertex + slot * pc.level_vertices + t;
    store_vertex(out_index, DUAL_QUATERNION ? skin_vertex_dqs(r, vertex) : skin_vertex(r, vertex));
}
