// Dual-quaternion skinning: the GPU twin of anim::dual_quat (DqBlend,
// SkinDualQuat) and SkinningJob's DualQuaternion method, operation for
// operation. Included at the end of common.glsl (it uses its buffers and
// morph_vertex). Each palette matrix is converted here, per influence
// (unless the CPU already did: PALETTE_DUAL_QUATERNIONS below):
// M = [R | t] * [S | 0], R the rotation of the 3x3 part's polar
// decomposition and S = R^T A its scale/shear; S is blended linearly and
// applied first, then the blended unit dual quaternion of (R, t).
// Quaternions are vec4(x, y, z, w).

// Keep equal to anim::dual_quat's constants.
const int DQ_POLAR_ITERATIONS = 16;
const float DQ_POLAR_TOLERANCE = 1e-5;
const float DQ_SINGULAR_DETERMINANT = 1e-8;

float dq_frobenius(mat3 m) {
    return sqrt(dot(m[0], m[0]) + dot(m[1], m[1]) + dot(m[2], m[2]));
}

// Cofactor matrix (det * inverse-transpose) of a column-vector 3x3.
mat3 dq_cofactor(mat3 a) {
    return mat3(cross(a[1], a[2]), cross(a[2], a[0]), cross(a[0], a[1]));
}

// anim::dual_quat::rotation_part: scaled Newton polar iteration on the
// unit-scaled matrix; identity for a zero, non-finite or singular one.
mat3 dq_rotation_part(mat3 a) {
    float norm = dq_frobenius(a);
    if (!(norm > 0.0) || isinf(norm) || isnan(norm)) {
        return mat3(1.0);
    }
    mat3 x = a * (1.0 / norm);
    float det = dot(x[0], cross(x[1], x[2]));
    if (!(abs(det) > DQ_SINGULAR_DETERMINANT)) {
        return mat3(1.0);
    }
    if (det < 0.0) {
        x = -x;
    }
    for (int i = 0; i < DQ_POLAR_ITERATIONS; ++i) {
        mat3 cof = dq_cofactor(x);
        mat3 inv_t = cof * (1.0 / dot(x[0], cof[0]));
        float gamma = sqrt(dq_frobenius(inv_t) / dq_frobenius(x));
        mat3 next = (x * gamma + inv_t * (1.0 / gamma)) * 0.5;
        float change = dq_frobenius(next - x);
        x = next;
        if (change <= DQ_POLAR_TOLERANCE) {
            break;
        }
    }
    return x;
}

// Shepperd's method, branch for branch as nalgebra's
// UnitQuaternion::from_rotation_matrix; m[c][r] is row r, column c.
vec4 dq_quat_from_rotation(mat3 m) {
    float tr = m[0][0] + m[1][1] + m[2][2];
    vec4 q;
    if (tr > 0.0) {
        float denom = sqrt(tr + 1.0) * 2.0;
        q = vec4((m[1][2] - m[2][1]) / denom, (m[2][0] - m[0][2]) / denom, (m[0][1] - m[1][0]) / denom,
                 0.25 * denom);
    } else if (m[0][0] > m[1][1] && m[0][0] > m[2][2]) {
        float denom = sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]) * 2.0;
        q = vec4(0.25 * denom, (m[1][0] + m[0][1]) / denom, (m[2][0] + m[0][2]) / denom,
                 (m[1][2] - m[2][1]) / denom);
    } else if (m[1][1] > m[2][2]) {
        float denom = sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]) * 2.0;
        q = vec4((m[1][0] + m[0][1]) / denom, 0.25 * denom, (m[2][1] + m[1][2]) / denom,
                 (m[2][0] - m[0][2]) / denom);
    } else {
        float denom = sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]) * 2.0;
        q = vec4((m[2][0] + m[0][2]) / denom, (m[2][1] + m[1][2]) / denom, 0.25 * denom,
                 (m[0][1] - m[1][0]) / denom);
    }
    return normalize(q);
}

vec4 dq_quat_mul(vec4 a, vec4 b) {
    return vec4(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

// v rotated by the unit quaternion q.
vec3 dq_rotate(vec4 q, vec3 v) {
    return v + 2.0 * cross(q.xyz, cross(q.xyz, v) + q.w * v);
}

// One palette matrix split for DQS (anim::dual_quat::SkinDualQuat).
struct JointDq {
    vec4 real;
    vec4 dual;
    mat3 scale;
};

JointDq dq_from_skin(mat4 skin) {
    // Column-vector 3x3 part and translation of the row-vector matrix.
    mat3 a = transpose(mat3(skin));
    vec3 t = vec3(skin[0][3], skin[1][3], skin[2][3]);
    mat3 r = dq_rotation_part(a);
    JointDq j;
    j.scale = transpose(r) * a;
    j.real = dq_quat_from_rotation(r);
    j.dual = dq_quat_mul(vec4(t, 0.0), j.real) * 0.5;
    return j;
}

// Set by SkinPass/MeshPass for DqsSplit::Cpu (skinning.rs): skin joints'
// palette entries are already split on the CPU (layout::PaletteDualQuat:
// rotation, translation, column-major scale in 16 floats) instead of being
// matrices; unskinned nodes' entries stay matrices (skin_vertex reads them).
layout(constant_id = 2) const bool PALETTE_DUAL_QUATERNIONS = false;

// Palette entry i as PaletteDualQuat: the rows are (real), (t.xyz, s0),
// (s1..s4), (s5..s8), s the scale's nine floats column by column.
JointDq dq_from_palette(uint i) {
    uint first = 4u * i;
    vec4 r0 = palette_row(first);
    vec4 r1 = palette_row(first + 1u);
    vec4 r2 = palette_row(first + 2u);
    vec4 r3 = palette_row(first + 3u);
    JointDq j;
    j.real = r0;
    j.dual = dq_quat_mul(vec4(r1.xyz, 0.0), r0) * 0.5;
    j.scale = mat3(vec3(r1.w, r2.xy), vec3(r2.zw, r3.x), r3.yzw);
    return j;
}

// Palette entry i of a skin joint, split.
JointDq dq_joint(uint i) {
    if (PALETTE_DUAL_QUATERNIONS) {
        return dq_from_palette(i);
    }
    return dq_from_skin(palette_matrix(i));
}

// The blend being accumulated: sums of signed dual quaternions and of scales.
struct DqSum {
    vec4 real;
    vec4 dual;
    mat3 scale;
};

// Adds weight w of j, flipped into the hemisphere of `hemisphere`.
void dq_add(inout DqSum sum, JointDq j, float w, vec4 hemisphere) {
    float signed_w = dot(j.real, hemisphere) < 0.0 ? -w : w;
    sum.real += j.real * signed_w;
    sum.dual += j.dual * signed_w;
    sum.scale += j.scale * w;
}

// Morph deltas first, then dual-quaternion skinning: the GPU twin of
// SkinningJob with SkinningMethod::DualQuaternion. Rigid records (no
// influences) use their one matrix, as skin_vertex does.
SkinnedVertex skin_vertex_dqs(SkinRecord r, uint v) {
    if (r.influence_sets == 0u) {
        return skin_vertex(r, v);
    }
    SourceVertex s = morph_vertex(r, v);
    // The most-weighted influence (the first of equal ones) sets the
    // hemisphere and is accumulated first.
    float best = 0.0;
    uint pivot = 0xffffffffu;  // set * 4 + k
    for (uint set = 0u; set < r.influence_sets; ++set) {
        vec4 weights = influence(r.influence_offset + set * r.vertex_count + v).weights;
        for (uint k = 0u; k < 4u; ++k) {
            if (weights[k] > best) {
                best = weights[k];
                pivot = set * 4u + k;
            }
        }
    }
    DqSum sum;
    sum.real = vec4(0.0);
    sum.dual = vec4(0.0);
    sum.scale = mat3(0.0);
    vec4 hemisphere = vec4(0.0);
    if (pivot != 0xffffffffu) {
        Influence inf = influence(r.influence_offset + (pivot / 4u) * r.vertex_count + v);
        JointDq j = dq_joint(r.palette_offset + inf.joints[pivot % 4u]);
        hemisphere = j.real;
        dq_add(sum, j, inf.weights[pivot % 4u], hemisphere);
    }
    for (uint set = 0u; set < r.influence_sets; ++set) {
        Influence inf = influence(r.influence_offset + set * r.vertex_count + v);
        for (uint k = 0u; k < 4u; ++k) {
            if (inf.weights[k] != 0.0 && set * 4u + k != pivot) {
                JointDq j = dq_joint(r.palette_offset + inf.joints[k]);
                dq_add(sum, j, inf.weights[k], hemisphere);
            }
        }
    }
    vec4 q = vec4(0.0, 0.0, 0.0, 1.0);
    vec3 translation = vec3(0.0);
    float len = length(sum.real);
    if (len > 0.0) {
        q = sum.real * (1.0 / len);
        vec4 d = sum.dual * (1.0 / len);
        // Vector part of 2 * d * conjugate(q).
        translation = 2.0 * (q.w * d.xyz - d.w * q.xyz + cross(q.xyz, d.xyz));
    }
    mat3 sc = sum.scale;
    SkinnedVertex o;
    o.position = vec4(dq_rotate(q, sc * s.position.xyz) + translation, 1.0);
    float det_sign = dot(sc[0], cross(sc[1], sc[2])) < 0.0 ? -1.0 : 1.0;
    vec3 nn = dq_rotate(q, dq_cofactor(sc) * (s.normal.xyz * det_sign));
    float nl = length(nn);
    o.normal = vec4(nl > 0.0 ? nn / nl : vec3(0.0), 0.0);
    vec3 tt = dq_rotate(q, sc * s.tangent.xyz);
    float tl = length(tt);
    o.tangent = vec4(tl > 0.0 ? tt / tl : vec3(0.0), s.tangent.w);
    return o;
}
