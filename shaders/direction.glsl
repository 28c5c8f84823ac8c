// Directions as the GPU's vertex streams store them (layout.rs's
// encode_direction and decode_direction): two snorm16 octahedral
// coordinates, x in the low half; ZERO_DIRECTION for the zero vector.
// Included by common.glsl (the source streams and the skin pass's output)
// and mesh.vert (which draws that output).

const uint ZERO_DIRECTION = 0x80008000u;

// The unit direction (or zero) encode_direction stored.
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

// `v` (a unit vector or zero) on the octahedron |x|+|y|+|z| = 1, its lower
// half folded over, in two snorm16; zero and non-finite vectors give
// ZERO_DIRECTION (packSnorm2x16 never makes it: it stops at -32767).
uint encode_direction(vec3 v) {
    float l1 = abs(v.x) + abs(v.y) + abs(v.z);
    if (!(l1 > 0.0) || isinf(l1)) {
        return ZERO_DIRECTION;
    }
    vec2 e = v.xy / l1;
    if (v.z < 0.0) {
        e = (1.0 - abs(e.yx)) * vec2(e.x >= 0.0 ? 1.0 : -1.0, e.y >= 0.0 ? 1.0 : -1.0);
    }
    return packSnorm2x16(e);
}
