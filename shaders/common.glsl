// Shared by skin.comp (compute skinning) and mesh_skinned.vert (vertex-shader
// skinning): the buffer layouts and the one skinning function, so the two
// paths cannot drift apart. Rust mirrors: src/render/layout.rs.

// One skinning matrix: the column-vector matrix stored column-major, which is
// the row-major row-vector matrix, applied as vec4(p, 1.0) * skin. GLSL allows
// no layout on struct members: the Palette block below declares row_major,
// which applies to the matrices of the structs inside it.
struct BoneMatrix {
    mat4 skin;
};

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

layout(std430, set = 0, binding = 0) readonly buffer Sources { SourceVertex sources[]; };
layout(std430, set = 0, binding = 1) readonly buffer Influences { Influence influences[]; };
// morph_ranges[morph_offset + v] .. [morph_offset + v + 1]: vertex v's entries.
layout(std430, set = 0, binding = 2) readonly buffer MorphRanges { uint morph_ranges[]; };
layout(std430, set = 0, binding = 3) readonly buffer MorphEntries { MorphEntry morph_entries[]; };
layout(std430, set = 0, binding = 4) readonly buffer MorphWeights { float morph_weights[]; };
layout(std430, row_major, set = 0, binding = 5) readonly buffer Palette { BoneMatrix palette[]; };
layout(std430, set = 0, binding = 6) readonly buffer Records { SkinRecord records[]; };

// Bind-pose vertex v of record r with its morph deltas added (xyz), and the
// tangent's handedness (w): what either skinning method transforms.
SourceVertex morph_vertex(SkinRecord r, uint v) {
    SourceVertex s = sources[r.source_offset + v];
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
        skin = palette[r.palette_offset].skin;
    } else {
        skin = mat4(0.0);
        for (uint set = 0u; set < r.influence_sets; ++set) {
            Influence inf = influences[r.influence_offset + set * r.vertex_count + v];
            for (int k = 0; k < 4; ++k) {
                if (inf.weights[k] != 0.0) {
                    skin += inf.weights[k] * palette[r.palette_offset + inf.joints[k]].skin;
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
