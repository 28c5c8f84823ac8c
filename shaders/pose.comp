#version 460
// GPU pose evaluation: one workgroup per character samples its clips at the
// times the CPU sent (anim::gpu_pose::PlaybackEntry), blends each layer's
// clips, lays the layers over the base, takes out root motion, accumulates
// the hierarchy by depth in workgroup memory and writes the character's
// palette (world * inverse bind, and world for rigid entries) where the
// skin pass reads it. The formula is src/guide/pose_rebuild.md's, steps 1
// to 4 and 6; the program's word layout is anim::gpu_pose::PoseProgram's.
//
// Everything is read and written by pointer: the program (uploaded once),
// the frame's playback state (host-written) and the palette (device-local).
#extension GL_EXT_buffer_reference : require

// Keep in sync with anim::gpu_pose (MAX_POSE_JOINTS, MAX_POSE_LAYERS).
const uint WORKGROUP_SIZE = 64u;
const uint MAX_JOINTS = 256u;
const uint MAX_LAYERS = 16u;
const uint NONE = 0xFFFFFFFFu;
layout(local_size_x = 64) in;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Words { uint w[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer PaletteRows { vec4 rows[]; };

layout(push_constant) uniform Push {
    Words program;        // PoseProgram words, then the palette map
    Words state;          // this frame's character records, entries, layer weights
    PaletteRows palette;  // the palette the skin pass reads
    uint characters;      // character records in `state`
    uint map_at;          // word where the palette map starts in `program`
    uint map_entries;     // palette entries per character
} pc;

// The header (anim::gpu_pose::PoseProgram's layout).
const uint H_JOINTS = 0u, H_LEVELS = 1u, H_LAYERS = 3u, H_ROOT = 4u, H_NLERP = 5u, H_PARENTS = 6u,
    H_REST = 7u, H_LEVEL_STARTS = 8u, H_ORDER = 9u, H_CLIP_TRACKS = 10u, H_TRACKS = 11u, H_LAYER_TABLE = 12u;

// Each joint's matrix as three rows (row-major 3x4 of the column-vector
// affine matrix): first its local matrix, then, level by level, its world.
shared vec4 rows[MAX_JOINTS * 3];

uint word(uint i) { return pc.program.w[i]; }
float real(uint i) { return uintBitsToFloat(pc.program.w[i]); }
uint header(uint i) { return pc.program.w[i]; }

struct Trs { vec3 t; vec4 r; vec3 s; };

// Sines and arc tangents to about 1e-7: Vulkan only asks 2^-11
// of the built-in ones (llvmpipe's stay near that), far from the CPU's.
const float PI = 3.14159265358979;

// sin(x) for x in [-pi, pi]: Taylor to x^13 on [-pi/2, pi/2] (error < 1e-9).
float precise_sin(float x) {
    if (x > 0.5 * PI) x = PI - x; else if (x < -0.5 * PI) x = -PI - x;
    float z = x * x;
    return x * (1.0 + z * (-1.0 / 6.0 + z * (1.0 / 120.0 + z * (-1.0 / 5040.0 + z * (1.0 / 362880.0
        + z * (-1.0 / 39916800.0 + z * (1.0 / 6227020800.0)))))));
}

// atan(x) for |x| <= tan(pi/8) (Cephes' atanf polynomial, ~1e-7 relative).
float atan_near_zero(float x) {
    float z = x * x;
    return (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * x + x;
}

// atan2(y, x), 0 for the origin.
float precise_atan(float y, float x) {
    float ax = abs(x), ay = abs(y);
    if (ax == 0.0 && ay == 0.0) return 0.0;
    float r = min(ax, ay) / max(ax, ay);
    float a = r > 0.41421356 ? 0.25 * PI + atan_near_zero((r - 1.0) / (r + 1.0)) : atan_near_zero(r);
    if (ay > ax) a = 0.5 * PI - a;
    if (x < 0.0) a = PI - a;
    return y < 0.0 ? -a : a;
}

Trs transform_at(uint at) {
    Trs x;
    x.t = vec3(real(at), real(at + 1u), real(at + 2u));
    x.r = vec4(real(at + 3u), real(at + 4u), real(at + 5u), real(at + 6u));
    x.s = vec3(real(at + 7u), real(at + 8u), real(at + 9u));
    return x;
}

vec4 value_at(uint values, uint slot, uint width) {
    uint at = values + slot * width;
    vec4 v = vec4(real(at), real(at + 1u), real(at + 2u), 0.0);
    if (width == 4u) v.w = real(at + 3u);
    return v;
}

vec4 normalize_or(vec4 q, vec4 fallback) {
    float n = dot(q, q);
    return n > 1e-24 ? q * inversesqrt(n) : fallback;
}

// Short-arc slerp of the keys as stored, as anim::math::slerp computes it
// (the keys normalised only when not unit to 0.1 %, cos their dot product,
// sin from 1 - cos^2 factored to cancel less, the arc result kept, a chord
// normalised): keys a little off unit length (exporters round) then give
// what the CPU gives.
vec4 slerp(vec4 a, vec4 b, float s) {
    if (a == b) return a;
    if (abs(dot(a, a) - 1.0) > 2e-3 || abs(dot(b, b) - 1.0) > 2e-3) {
        a = normalize_or(a, a);
        b = normalize_or(b, b);
    }
    if (dot(a, b) < 0.0) b = -b;
    float cosine = dot(a, b);
    float sine_squared = (1.0 - cosine) * (1.0 + cosine);
    if (!(sine_squared > 0.0)) return normalize_or(mix(a, b, s), a);
    float sine = sqrt(sine_squared);
    float theta = precise_atan(sine, cosine);
    return a * (precise_sin((1.0 - s) * theta) / sine) + b * (precise_sin(s * theta) / sine);
}

// Track `track` at `time` (glTF: clamped to the first and last key, STEP
// holds, LINEAR lerps or slerps/nlerps, CUBICSPLINE is Hermite with
// tangents times the key interval); `width` 3 (xyz) or 4 (rotation xyzw).
vec4 sample_track(uint track, float time, uint width, vec4 fallback) {
    uint row = header(H_TRACKS) + 4u * track;
    uint times = word(row), values = word(row + 1u), keys = word(row + 2u), kind = word(row + 3u);
    bool cubic = kind == 2u;
    uint value_slot = cubic ? 1u : 0u;
    uint stride = cubic ? 3u : 1u;
    if (keys == 1u || time <= real(times)) return value_at(values, value_slot, width);
    if (time >= real(times + keys - 1u)) return value_at(values, (keys - 1u) * stride + value_slot, width);
    uint lo = 0u, hi = keys - 1u;
    while (hi - lo > 1u) {
        uint mid = (lo + hi) / 2u;
        if (real(times + mid) <= time) lo = mid; else hi = mid;
    }
    float t0 = real(times + lo), t1 = real(times + hi);
    float td = t1 - t0;
    float s = (time - t0) / td;
    if (kind == 0u) return value_at(values, lo, width);
    if (kind == 1u) {
        vec4 a = value_at(values, lo, width), b = value_at(values, hi, width);
        if (width == 3u) return mix(a, b, s);
        if (header(H_NLERP) == 0u) return slerp(a, b, s);
        if (dot(a, b) < 0.0) b = -b;
        return normalize_or(mix(a, b, s), fallback);
    }
    vec4 p0 = value_at(values, 3u * lo + 1u, width), m0 = value_at(values, 3u * lo + 2u, width) * td;
    vec4 p1 = value_at(values, 3u * hi + 1u, width), m1 = value_at(values, 3u * hi, width) * td;
    float s2 = s * s, s3 = s2 * s;
    vec4 v = (2.0 * s3 - 3.0 * s2 + 1.0) * p0 + (s3 - 2.0 * s2 + s) * m0 + (-2.0 * s3 + 3.0 * s2) * p1
        + (s3 - s2) * m1;
    return width == 4u ? normalize_or(v, fallback) : v;
}

// Clip `clip`'s transform of joint `j` at `time` (the rest transform for
// properties it does not animate).
Trs sample_joint(uint clip, uint j, float time, Trs rest) {
    uint at = header(H_CLIP_TRACKS) + 3u * (clip * header(H_JOINTS) + j);
    Trs x = rest;
    uint t = word(at), r = word(at + 1u), s = word(at + 2u);
    if (t != NONE) x.t = sample_track(t, time, 3u, vec4(0.0)).xyz;
    if (r != NONE) x.r = sample_track(r, time, 4u, rest.r);
    if (s != NONE) x.s = sample_track(s, time, 3u, vec4(0.0)).xyz;
    return x;
}

vec4 quat_mul(vec4 a, vec4 b) {
    return vec4(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

// `a` towards `b` by `t` on the short arc, normalised (anim::layering's nlerp).
vec4 nlerp(vec4 a, vec4 b, float t) {
    if (dot(a, b) < 0.0) b = -b;
    return normalize_or(a * (1.0 - t) + b * t, a);
}

// root_motion::twist: the turn about +y that q holds, as the unit
// (cos, sin) of half its angle; (1, 0) when it holds none.
vec2 twist(vec4 q) {
    float largest = max(abs(q.w), abs(q.y));
    if (!(largest > 0.0)) return vec2(1.0, 0.0);
    vec2 c = vec2(q.w, q.y) / largest;
    return c / sqrt(dot(c, c));
}

// root_motion::turn_between: `to` times `from`'s inverse, the short way round.
vec2 turn_between(vec2 from, vec2 to) {
    vec2 turn = vec2(dot(to, from), to.y * from.x - to.x * from.y);
    return turn.x < 0.0 ? -turn : turn;
}

// Joint `j`'s local transform: each layer's clips blended (weights
// normalised, rotations summed on the first clip's hemisphere and
// normalised), the layers applied in order, root motion taken out.
Trs local_pose(uint j, uint record, uint layer_count) {
    Trs rest = transform_at(header(H_REST) + 10u * j);
    uint first = pc.state.w[record], count = pc.state.w[record + 1u];
    uint weights_at = pc.state.w[record + 3u];
    Trs pose = rest;
    uint e = first;
    for (uint layer = 0u; layer <= layer_count; ++layer) {
        float layer_weight = layer == 0u ? 1.0 : uintBitsToFloat(pc.state.w[weights_at + layer - 1u]);
        // This layer's clips (entries come layer by layer).
        Trs blended = rest;
        float total = 0.0;
        uint clips = 0u;
        vec4 r0 = vec4(0.0);
        vec3 t = vec3(0.0), s = vec3(0.0);
        vec4 r = vec4(0.0);
        while (e < first + count * 4u && pc.state.w[e + 3u] == layer) {
            uint clip = pc.state.w[e];
            float time = uintBitsToFloat(pc.state.w[e + 1u]);
            float w = uintBitsToFloat(pc.state.w[e + 2u]);
            e += 4u;
            if (!(w > 0.0) || !(layer_weight > 0.0)) continue;
            Trs x = sample_joint(clip, j, time, rest);
            if (clips == 0u) {
                blended = x;
                r0 = x.r;
            }
            t += x.t * w;
            s += x.s * w;
            r += dot(x.r, r0) < 0.0 ? -x.r * w : x.r * w;
            total += w;
            clips += 1u;
        }
        if (clips > 1u) {
            blended.t = t / total;
            blended.s = s / total;
            blended.r = normalize_or(r / total, rest.r);
        }
        if (layer == 0u) {
            pose = blended;
            continue;
        }
        if (!(layer_weight > 0.0)) continue;
        uint row = header(H_LAYER_TABLE) + 4u * (layer - 1u);
        float w = layer_weight * real(word(row + 1u) + j);
        if (!(w > 0.0)) continue;
        if (word(row) == 0u) {
            // Override.
            if (w >= 1.0) {
                pose = blended;
            } else {
                pose.t = mix(pose.t, blended.t, w);
                pose.r = nlerp(pose.r, blended.r, w);
                pose.s = mix(pose.s, blended.s, w);
            }
        } else {
            // Additive: the difference from the reference pose, weighted.
            Trs f = transform_at(word(row + 2u) + 10u * j);
            vec3 dt = blended.t - f.t;
            vec4 inverse_f = vec4(-f.r.xyz, f.r.w) / dot(f.r, f.r);
            vec4 dr = quat_mul(inverse_f, blended.r);
            vec3 fs = mix(f.s, vec3(1.0), equal(f.s, vec3(0.0)));
            vec3 ds = blended.s / fs;
            vec4 turn = w >= 1.0 ? dr : nlerp(vec4(0.0, 0.0, 0.0, 1.0), dr, w);
            pose.t += dt * w;
            pose.r = quat_mul(pose.r, turn);
            pose.s *= mix(vec3(1.0), ds, w);
        }
    }
    if (j == header(H_ROOT)) {
        pose.t.xz = rest.t.xz;
        vec2 undo = turn_between(twist(pose.r), twist(rest.r));
        pose.r = quat_mul(vec4(0.0, undo.y, 0.0, undo.x), pose.r);
    }
    return pose;
}

// T * R * S as three rows (the quaternion's matrix as nalgebra builds it
// from a unit quaternion: keys are used as stored).
void store_local(uint j, Trs x) {
    vec4 q = x.r;
    float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
    float xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z, wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
    vec3 c0 = vec3(1.0 - 2.0 * (yy + zz), 2.0 * (xy + wz), 2.0 * (xz - wy)) * x.s.x;
    vec3 c1 = vec3(2.0 * (xy - wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz + wx)) * x.s.y;
    vec3 c2 = vec3(2.0 * (xz + wy), 2.0 * (yz - wx), 1.0 - 2.0 * (xx + yy)) * x.s.z;
    rows[3u * j] = vec4(c0.x, c1.x, c2.x, x.t.x);
    rows[3u * j + 1u] = vec4(c0.y, c1.y, c2.y, x.t.y);
    rows[3u * j + 2u] = vec4(c0.z, c1.z, c2.z, x.t.z);
}

// rows(a) * rows(b), both affine.
void multiply(uint a, uint b, out vec4 r0, out vec4 r1, out vec4 r2) {
    vec4 b0 = rows[3u * b], b1 = rows[3u * b + 1u], b2 = rows[3u * b + 2u];
    vec4 a0 = rows[3u * a], a1 = rows[3u * a + 1u], a2 = rows[3u * a + 2u];
    r0 = a0.x * b0 + a0.y * b1 + a0.z * b2 + vec4(0.0, 0.0, 0.0, a0.w);
    r1 = a1.x * b0 + a1.y * b1 + a1.z * b2 + vec4(0.0, 0.0, 0.0, a1.w);
    r2 = a2.x * b0 + a2.y * b1 + a2.z * b2 + vec4(0.0, 0.0, 0.0, a2.w);
}

void main() {
    uint c = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (c >= pc.characters) return; // uniform across the workgroup
    uint tid = gl_LocalInvocationID.x;
    uint joints = header(H_JOINTS);
    uint layer_count = min(header(H_LAYERS), MAX_LAYERS - 1u);
    uint record = 4u * c;

    for (uint j = tid; j < joints; j += WORKGROUP_SIZE) {
        store_local(j, local_pose(j, record, layer_count));
    }
    barrier();
    // Depth 0 (the roots) keeps its local matrix; each deeper level
    // multiplies by its parents, finished one barrier earlier.
    uint levels = header(H_LEVELS);
    uint starts = header(H_LEVEL_STARTS), order = header(H_ORDER), parents = header(H_PARENTS);
    for (uint level = 1u; level < levels; ++level) {
        uint begin = word(starts + level), end = word(starts + level + 1u);
        for (uint i = begin + tid; i < end; i += WORKGROUP_SIZE) {
            uint j = word(order + i);
            vec4 r0, r1, r2;
            multiply(word(parents + j), j, r0, r1, r2);
            rows[3u * j] = r0;
            rows[3u * j + 1u] = r1;
            rows[3u * j + 2u] = r2;
        }
        barrier();
    }
    // The palette: 13 words per entry (joint, then the inverse bind's 12
    // floats, row-major 3x4), written as four vec4 columns (BoneMatrix).
    uint base = pc.state.w[record + 2u];
    for (uint k = tid; k < pc.map_entries; k += WORKGROUP_SIZE) {
        uint at = pc.map_at + 13u * k;
        uint j = word(at);
        vec4 w0 = rows[3u * j], w1 = rows[3u * j + 1u], w2 = rows[3u * j + 2u];
        vec4 i0 = vec4(real(at + 1u), real(at + 2u), real(at + 3u), real(at + 4u));
        vec4 i1 = vec4(real(at + 5u), real(at + 6u), real(at + 7u), real(at + 8u));
        vec4 i2 = vec4(real(at + 9u), real(at + 10u), real(at + 11u), real(at + 12u));
        vec4 m0 = w0.x * i0 + w0.y * i1 + w0.z * i2 + vec4(0.0, 0.0, 0.0, w0.w);
        vec4 m1 = w1.x * i0 + w1.y * i1 + w1.z * i2 + vec4(0.0, 0.0, 0.0, w1.w);
        vec4 m2 = w2.x * i0 + w2.y * i1 + w2.z * i2 + vec4(0.0, 0.0, 0.0, w2.w);
        uint out_row = 4u * (base + k);
        pc.palette.rows[out_row] = vec4(m0.x, m1.x, m2.x, 0.0);
        pc.palette.rows[out_row + 1u] = vec4(m0.y, m1.y, m2.y, 0.0);
        pc.palette.rows[out_row + 2u] = vec4(m0.z, m1.z, m2.z, 0.0);
        pc.palette.rows[out_row + 3u] = vec4(m0.w, m1.w, m2.w, 1.0);
    }
}
