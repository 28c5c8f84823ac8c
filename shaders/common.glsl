// Shared by skin.comp (compute skinning) and mesh_skinned.vert (vertex-shader
// skinning): the buffer layouts and the one skinning function, so the two
// paths cannot drift apart. Rust mirrors: src/render/layout.rs.

// One skinning matrix: the column-vector matrix stored column-major, which is
// the row-major row-vector matrix (DESIGN.md: `struct BoneMatrix { row_major
// mat4 skin; }`, std430, 64-byte stride), applied as vec4(p, 1.0) * skin. The
// Palette block below holds exactly those bytes but reads them as the
// matrix's four rows (vec4s); `palette_matrix` rebuilds the row_major mat4.

#include "direction.glsl"

// Bind-pose vertex. position.w = 1, normal.w = 0, tangent.w = handedness.
struct SourceVertex {
    vec4 position;
    vec4 normal;
    vec4 tangent;
};

// One influence set (4 joint/weight pairs) of one vertex; joints index the
// instance's palette range.
struct Influence {
    uvec4 joints;
    vec4 weights;
};

// How vertices are stored (layout.rs's PackedVertex): the source stream and
// the skin pass's output alike, 24 bytes instead of 48. `source_vertex`
// unpacks a source into the struct above, which is all the skinning
// functions see; skin_main.glsl packs what they return.
struct PackedVertex {
    float px;
    float py;
    float pz;
    uint normal;       // octahedral snorm16 x2 (x low); ZERO_DIRECTION for none
    uint tangent;      // the tangent's xyz, the same way
    float handedness;  // the tangent's w
};

// How an influence set is stored (layout.rs): 16 bytes instead of 32;
// `influence` unpacks it.
struct PackedInfluence {
    uvec2 joints;   // four u16 palette-relative joints, the first in the low half of x
    uvec2 weights;  // four unorm16 weights, the same order
};

// One non-zero morph delta of one vertex: xyz deltas; position.w holds the
// target index (uintBitsToFloat).
struct MorphEntry {
    vec4 position;
    vec4 normal;
    vec4 tangent;
};

// A skinned vertex, scene space (before the character's world transform):
// what the skinning functions return. The skin pass stores it packed
// (PackedVertex, skin_main.glsl's store_vertex).
struct SkinnedVertex {
    vec4 position;
    vec4 normal;
    vec4 tangent;
};

// One primitive of one character instance to skin.
struct SkinRecord {
    uint source_offset;     // first SourceVertex
    uint vertex_count;
    uint output_offset;     // first vertex in the layout's numbering (plan::PrimitiveOutput); sorted by it
    uint palette_offset;    // first BoneMatrix of this instance's skin
    uint influence_offset;  // first Influence of set 0; set 1 follows at + vertex_count
    uint influence_sets;    // 0: rigid, palette[palette_offset] moves every vertex; 1 or 2
    uint morph_offset;      // first of vertex_count + 1 entries in morph_ranges; NO_MORPHS if none
    uint weight_offset;     // first morph weight of this instance
};

const uint NO_MORPHS = 0xffffffffu;

// skin.comp defines STREAM_TEXELS and RECORD_TEXELS (with PALETTE_TEXELS,
// below) and reads the same bytes through uniform texel buffers, which
// llvmpipe gathers where a storage-buffer load is a loop over the SIMD lanes
// (the guide's profiling page, `cargo doc --open`): a PackedVertex is three
// RG32UI texels, a PackedInfluence one RGBA32UI texel, a record's words
// RGBA32UI texels.
#ifdef STREAM_TEXELS
layout(set = 0, binding = 0) uniform usamplerBuffer source_texels;
layout(set = 0, binding = 1) uniform usamplerBuffer influence_texels;
PackedVertex packed_source(uint i) {
    int t = int(3u * i);
    uvec2 a = texelFetch(source_texels, t).xy;
    uvec2 b = texelFetch(source_texels, t + 1).xy;
    uvec2 c = texelFetch(source_texels, t + 2).xy;
    return PackedVertex(uintBitsToFloat(a.x), uintBitsToFloat(a.y), uintBitsToFloat(b.x), b.y, c.x,
                        uintBitsToFloat(c.y));
}
PackedInfluence packed_influence(uint i) {
    uvec4 a = texelFetch(influence_texels, int(i));
    return PackedInfluence(a.xy, a.zw);
}
#else
layout(std430, set = 0, binding = 0) readonly buffer Sources { PackedVertex sources[]; };
layout(std430, set = 0, binding = 1) readonly buffer Influences { PackedInfluence influences[]; };
PackedVertex packed_source(uint i) {
    return sources[i];
}
PackedInfluence packed_influence(uint i) {
    return influences[i];
}
#endif
// morph_ranges[morph_offset + v] .. [morph_offset + v + 1]: vertex v's entries.
layout(std430, set = 0, binding = 2) readonly buffer MorphRanges { uint morph_ranges[]; };
layout(std430, set = 0, binding = 3) readonly buffer MorphEntries { MorphEntry morph_entries[]; };
layout(std430, set = 0, binding = 4) readonly buffer MorphWeights { float morph_weights[]; };
// BoneMatrix i is rows 4i..4i+3 (each row_major row is 16 contiguous bytes).
// Read as whole rows because a row_major mat4 loaded from a buffer becomes
// sixteen strided scalar loads (one per column element), and on lavapipe
// every load with a per-thread address is a loop over the SIMD lanes: vec4
// rows cut the palette's loads by four and the skin dispatch's CPU time by
// about a third (the guide's profiling page, `cargo doc --open`). skin.comp
// defines PALETTE_TEXELS and reads the same bytes through a uniform texel
// buffer (RGBA32F, one texel per row), which llvmpipe gathers without that
// loop (another fifth).
#ifdef PALETTE_TEXELS
layout(set = 0, binding = 5) uniform samplerBuffer palette_texels;
vec4 palette_row(uint r) {
    return texelFetch(palette_texels, int(r));
}
#else
// Read by pointer (the including shader's push constants say where:
// `palette_address`), not through a binding: no maxStorageBufferRange caps
// the palettes of a crowd.
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer PaletteRows { vec4 rows[]; };
uvec2 palette_address();
vec4 palette_row(uint r) {
    return PaletteRows(palette_address()).rows[r];
}
#endif
// SkinRecord i is words 2i and 2i + 1 (two loads instead of eight; see load_record).
#ifdef RECORD_TEXELS
layout(set = 0, binding = 6) uniform usamplerBuffer record_texels;
uvec4 record_word(uint i) {
    return texelFetch(record_texels, int(i));
}
#else
layout(std430, set = 0, binding = 6) readonly buffer Records { uvec4 record_words[]; };
uvec4 record_word(uint i) {
    return record_words[i];
}
#endif

// BoneMatrix i: the row_major mat4 whose rows are palette_rows[4i..4i+3].
// mat4() takes columns, so the rows go in transposed.
mat4 palette_matrix(uint i) {
    uint first = 4u * i;
    return transpose(mat4(palette_row(first), palette_row(first + 1u), palette_row(first + 2u),
                          palette_row(first + 3u)));
}

// SkinRecord i, from its two uvec4 words (field order as in the struct).
SkinRecord load_record(uint i) {
    uvec4 a = record_word(2u * i);
    uvec4 b = record_word(2u * i + 1u);
    return SkinRecord(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}

// Source vertex i, unpacked: position.w = 1, normal.w = 0, tangent.w = handedness.
SourceVertex source_vertex(uint i) {
    PackedVertex p = packed_source(i);
    SourceVertex s;
    s.position = vec4(p.px, p.py, p.pz, 1.0);
    s.normal = vec4(decode_direction(p.normal), 0.0);
    s.tangent = vec4(decode_direction(p.tangent), p.handedness);
    return s;
}

// Influence set i, unpacked.
Influence influence(uint i) {
    PackedInfluence p = packed_influence(i);
    Influence f;
    f.joints = uvec4(p.joints.x & 0xffffu, p.joints.x >> 16u, p.joints.y & 0xffffu, p.joints.y >> 16u);
    f.weights = vec4(unpackUnorm2x16(p.weights.x), unpackUnorm2x16(p.weights.y));
    return f;
}

// False when no record of the dispatch has morph targets: SkinPass then
// specializes skin.comp without the morph code, which llvmpipe would
// otherwise run for every vertex with its lanes masked off (branches only
// mask lanes there; about a tenth of the dispatch). The vertex path keeps
// the default.
layout(constant_id = 8) const bool MORPH_TARGETS = true;

// Bind-pose vertex v of record r with its morph deltas added (xyz), and the
// tangent's handedness (w): what either skinning method transforms.
SourceVertex morph_vertex(SkinRecord r, uint v) {
    SourceVertex s = source_vertex(r.source_offset + v);
    if (MORPH_TARGETS && r.morph_offset != NO_MORPHS) {
        uint first = morph_ranges[r.morph_offset + v];
        uint last = morph_ranges[r.morph_offset + v + 1u];
        for (uint e = first; e < last; ++e) {
            MorphEntry m = morph_entries[e];
            float w = morph_weights[r.weight_offset + floatBitsToUint(m.position.w)];
            s.position.xyz += w * m.position.xyz;
            s.normal.xyz += w * m.normal.xyz;
            s.tangent.xyz += w * m.tangent.xyz;
        }
    }
    return s;
}

// The skinning matrix of vertex v of record r: palette[palette_offset] for
// a rigid record, else the weighted sum of its joints' matrices, starting
// from zero, in influence order, skipping zero weights. Written as a loop
// that ends after the last non-zero weight (and with the rigid matrix as
// its one iteration) rather than as four guarded joints plus a separate
// rigid branch: llvmpipe runs a branch's code for all lanes, masked, so the
// guarded form gathered 20 palette rows per vertex however few joints it
// used, while a loop ends when its last lane does (Fox: 2.1 joints per 8
// lanes on average). Same operations in the same order as before, and as
// the CPU reference.
mat4 blended_matrix(SkinRecord r, uint v) {
    bool rigid = r.influence_sets == 0u;
    mat4 skin = mat4(0.0);
    for (uint set = 0u; set < max(r.influence_sets, 1u); ++set) {
        Influence inf;
        if (rigid) {
            inf = Influence(uvec4(0u), vec4(1.0, 0.0, 0.0, 0.0));
        } else {
            inf = influence(r.influence_offset + set * r.vertex_count + v);
        }
        uint end = inf.weights.w != 0.0 ? 4u : inf.weights.z != 0.0 ? 3u : inf.weights.y != 0.0 ? 2u : 1u;
        uint k = 0u;
        do {
            float w = inf.weights[k];
            if (w != 0.0) {
                mat4 m = palette_matrix(r.palette_offset + inf.joints[k]);
                skin = rigid ? m : skin + w * m;
            }
            k += 1u;
        } while (k < end);
    }
    return skin;
}

// Morph deltas first, then linear blend skinning: the GPU twin of
// anim::skinning::SkinningJob (the CPU reference), operation for operation.
SkinnedVertex skin_vertex(SkinRecord r, uint v) {
    SourceVertex s = morph_vertex(r, v);
    vec3 p = s.position.xyz;
    vec3 n = s.normal.xyz;
    vec3 t = s.tangent.xyz;
    mat4 skin = blended_matrix(r, v);
    SkinnedVertex o;
    o.position = vec4(vec4(p, 1.0) * skin);
    o.position.w = 1.0;
    // Column-vector 3x3 part: its columns are the rows of the row-vector matrix.
    mat3 a = transpose(mat3(skin));
    // Cofactor matrix (det * inverse-transpose): correct for non-uniform scale.
    mat3 cof = mat3(cross(a[1], a[2]), cross(a[2], a[0]), cross(a[0], a[1]));
    float det_sign = dot(a[0], cross(a[1], a[2])) < 0.0 ? -1.0 : 1.0;
    vec3 nn = det_sign * (cof * n);
    float nl = length(nn);
    o.normal = vec4(nl > 0.0 ? nn / nl : vec3(0.0), 0.0);
    vec3 tt = a * t;
    float tl = length(tt);
    o.tangent = vec4(tl > 0.0 ? tt / tl : vec3(0.0), s.tangent.w);
    return o;
}

// Dual-quaternion skinning, skin_vertex_dqs (selected by a specialization
// constant in skin.comp and mesh_skinned.vert).
#include "dqs.glsl"
