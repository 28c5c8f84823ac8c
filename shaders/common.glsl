// Shared by skin.comp (compute skinning) and mesh_skinned.vert (vertex-shader
// skinning): the buffer layouts and the one skinning function, so the two
// paths cannot drift apart. Rust mirrors: src/render/layout.rs.

// One skinning matrix: the column-vector matrix stored column-major, which is
// the row-major row-vector matrix (DESIGN.md: `struct BoneMatrix { row_major
// mat4 skin; }`, std430, 64-byte stride), applied as vec4(p, 1.0) * skin. The
// Palette block below holds exactly those bytes but reads them as the
// matrix's four rows (vec4s); `palette_matrix` rebuilds the row_major mat4.

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

// How the static streams are stored (layout.rs): 24 and 16 bytes instead
// of 48 and 32. `source_vertex` and `influence` unpack them into the structs
// above, which is all the skinning functions see.
struct PackedSource {
    float px;
    float py;
    float pz;
    uint normal;       // octahedral snorm16 x2 (x low); ZERO_DIRECTION for none
    uint tangent;      // the tangent's xyz, the same way
    float handedness;  // the tangent's w
};

struct PackedInfluence {
    uvec2 joints;   // four u16 palette-relative joints, the first in the low half of x
    uvec2 weights;  // four unorm16 weights, the same order
};

const uint ZERO_DIRECTION = 0x80008000u;

// One non-zero morph delta of one vertex: xyz deltas; position.w holds the
// target index (uintBitsToFloat).
struct MorphEntry {
    vec4 position;
    vec4 normal;
    vec4 tangent;
};

// Skinned output, scene space (before the character's world transform).
struct SkinnedVertex {
    vec4 position;
    vec4 normal;
    vec4 tangent;
};

// One primitive of one character instance to skin.
struct SkinRecord {
    uint source_offset;     // first SourceVertex
    uint vertex_count;
    uint output_offset;     // first SkinnedVertex; records are sorted by it
    uint palette_offset;    // first BoneMatrix of this instance's skin
    uint influence_offset;  // first Influence of set 0; set 1 follows at + vertex_count
    uint influence_sets;    // 0: rigid, palette[palette_offset] moves every vertex; 1 or 2
    uint morph_offset;      // first of vertex_count + 1 entries in morph_ranges; NO_MORPHS if none
    uint weight_offset;     // first morph weight of this instance
};

const uint NO_MORPHS = 0xffffffffu;

layout(std430, set = 0, binding = 0) readonly buffer Sources { PackedSource sources[]; };
layout(std430, set = 0, binding = 1) readonly buffer Influences { PackedInfluence influences[]; };
// morph_ranges[morph_offset + v] .. [morph_offset + v + 1]: vertex v's entries.
layout(std430, set = 0, binding = 2) readonly buffer MorphRanges { uint morph_ranges[]; };
layout(std430, set = 0, binding = 3) readonly buffer MorphEntries { MorphEntry morph_entries[]; };
layout(std430, set = 0, binding = 4) readonly buffer MorphWeights { float morph_weights[]; };
// BoneMatrix i is rows 4i..4i+3 (each row_major row is 16 contiguous bytes).
// Read as whole rows because a row_major mat4 loaded from a buffer becomes
// sixteen strided scalar loads (one per column element), and on lavapipe
// every load with a per-thread address is a loop over the SIMD lanes: vec4
// rows cut the palette's loads by four and the skin dispatch's CPU time by
// about a third (README, Profiling). skin.comp defines PALETTE_TEXELS and
// reads the same bytes through a uniform texel buffer (RGBA32F, one texel
// per row), which llvmpipe gathers without that loop (another fifth).
#ifdef PALETTE_TEXELS
layout(set = 0, binding = 5) uniform samplerBuffer palette_texels;
vec4 palette_row(uint r) {
    return texelFetch(palette_texels, int(r));
}
#else
layout(std430, set = 0, binding = 5) readonly buffer Palette { vec4 palette_rows[]; };
vec4 palette_row(uint r) {
    return palette_rows[r];
}
#endif
// SkinRecord i is words 2i and 2i + 1 (two loads instead of eight; see load_record).
layout(std430, set = 0, binding = 6) readonly buffer Records { uvec4 record_words[]; };

// BoneMatrix i: the row_major mat4 whose rows are palette_rows[4i..4i+3].
// mat4() takes columns, so the rows go in transposed.
mat4 palette_matrix(uint i) {
    uint first = 4u * i;
    return transpose(mat4(palette_row(first), palette_row(first + 1u), palette_row(first + 2u),
                          palette_row(first + 3u)));
}

// SkinRecord i, from its two uvec4 words (field order as in the struct).
SkinRecord load_record(uint i) {
    uvec4 a = record_words[2u * i];
    uvec4 b = record_words[2u * i + 1u];
    return SkinRecord(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}

// Output offset of SkinRecord i (its third word), without loading the rest.
uint record_output_offset(uint i) {
    return record_words[2u * i].z;
}

// Bind-pose vertex v of record r with its morph deltas added (xyz), and the
// tangent's handedness (w): what either skinning method transforms.
// The unit direction (or zero) layout.rs's encode_direction stored.
vec3 decode_direction(uint bits) {
    if (bits == ZERO_DIRECTION) {
        return vec3(0.0);
    }
    vec2 e = unpackSnorm2x16(bits);
    vec3 d = vec3(e, 1.0 - abs(e.x) - abs(e.y));
    if (d.z < 0.0) {
        d.xy = (1.0 - abs(d.yx)) * vec2(e.x >= 0.0 ? 1.0 : -1.0, e.y >= 0.0 ? 1.0 : -1.0);
    }
    return normalize(d);
}

// Source vertex i, unpacked: position.w = 1, normal.w = 0, tangent.w = handedness.
SourceVertex source_vertex(uint i) {
    PackedSource p = sources[i];
    SourceVertex s;
    s.position = vec4(p.px, p.py, p.pz, 1.0);
    s.normal = vec4(decode_direction(p.normal), 0.0);
    s.tangent = vec4(decode_direction(p.tangent), p.handedness);
    return s;
}

// Influence set i, unpacked.
Influence influence(uint i) {
    PackedInfluence p = influences[i];
    Influence f;
    f.joints = uvec4(p.joints.x & 0xffffu, p.joints.x >> 16u, p.joints.y & 0xffffu, p.joints.y >> 16u);
    f.weights = vec4(unpackUnorm2x16(p.weights.x), unpackUnorm2x16(p.weights.y));
    return f;
}

SourceVertex morph_vertex(SkinRecord r, uint v) {
    SourceVertex s = source_vertex(r.source_offset + v);
    if (r.morph_offset != NO_MORPHS) {
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

// Morph deltas first, then linear blend skinning: the GPU twin of
// anim::skinning::SkinningJob (the CPU reference), operation for operation.
SkinnedVertex skin_vertex(SkinRecord r, uint v) {
    SourceVertex s = morph_vertex(r, v);
    vec3 p = s.position.xyz;
    vec3 n = s.normal.xyz;
    vec3 t = s.tangent.xyz;
    mat4 skin;
    if (r.influence_sets == 0u) {
        skin = palette_matrix(r.palette_offset);
    } else {
        skin = mat4(0.0);
        for (uint set = 0u; set < r.influence_sets; ++set) {
            Influence inf = influence(r.influence_offset + set * r.vertex_count + v);
            for (int k = 0; k < 4; ++k) {
                if (inf.weights[k] != 0.0) {
                    skin += inf.weights[k] * palette_matrix(r.palette_offset + inf.joints[k]);
                }
            }
        }
    }
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
