#version 460
#extension GL_GOOGLE_include_directive : require
// Key + fill directional lights and ambient, Lambert with a little wrap,
// two-sided, times base colour factor and texture. Writes linear colour to an
// sRGB target (the hardware encodes).

#include "mesh_common.glsl"

layout(set = 2, binding = 0) uniform sampler2D base_color_texture; // sRGB image, 1x1 white if absent

layout(location = 0) in vec3 in_world_pos;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec2 in_uv;
layout(location = 3) in float in_heat;

// Weight heat map variant: the selected joint's weight replaces the
// material's colour (blue 0 -> cyan -> green -> yellow -> red 1), still lit so
// the shape reads.
layout(constant_id = 0) const bool HEAT = false;

vec3 heat_ramp(float w) {
    w = clamp(w, 0.0, 1.0);
    vec3 c = clamp(vec3(4.0 * w - 2.0, 2.0 - abs(4.0 * w - 2.0), 2.0 - 4.0 * w), 0.0, 1.0);
    return c * c; // roughly linear-light for the sRGB target
}

layout(location = 0) out vec4 out_color;

// The key light's cascaded shadow maps (set 1, binding 3): depth compare,
// linear filtering (2x2 PCF per tap). A 1x1 map at depth 1 when unused.
layout(set = 1, binding = 3) uniform sampler2DArrayShadow shadow_maps;

// How much of the key light reaches `p` (1 lit, 0 in shadow): the cascade
// that holds p's view depth, 3x3 taps.
float key_light_visibility(vec3 p) {
    if (frame.shadow.x == 0.0) {
        return 1.0;
    }
    float depth = dot(p - frame.camera_pos.xyz, frame.camera_forward.xyz);
    int c = 0;
    while (c < 3 && depth > frame.cascade_far[c]) {
        ++c;
    }
    vec4 q = frame.cascade_view_proj[c] * vec4(p, 1.0);
    vec3 ndc = q.xyz / q.w;
    vec2 uv = ndc.xy * 0.5 + 0.5;
    if (any(lessThan(uv, vec2(0.0))) || any(greaterThan(uv, vec2(1.0))) || ndc.z > 1.0) {
        return 1.0;
    }
    float lit = 0.0;
    for (int y = -1; y <= 1; ++y) {
        for (int x = -1; x <= 1; ++x) {
            vec2 at = uv + vec2(x, y) * frame.shadow.z;
            lit += texture(shadow_maps, vec4(at, float(c), ndc.z - frame.shadow.y));
        }
    }
    return lit / 9.0;
}

float wrapped(vec3 n, vec3 l, float wrap) {
    return max((dot(n, l) + wrap) / (1.0 + wrap), 0.0);
}

void main() {
    vec3 to_eye = frame.camera_pos.xyz - in_world_pos;
    vec3 n = in_normal;
    if (dot(n, n) < 1e-12) {
        // No usable vertex normal: the face normal from screen-space derivatives.
        n = cross(dFdx(in_world_pos), dFdy(in_world_pos));
    }
    n = dot(n, n) > 0.0 ? normalize(n) : normalize(to_eye);
    // Two-sided: light the side facing the camera (mirrored or back faces too).
    if (dot(n, to_eye) < 0.0) {
        n = -n;
    }
    float wrap = frame.key_dir.w;
    vec3 light = frame.key_color.rgb * wrapped(n, frame.key_dir.xyz, wrap) * key_light_visibility(in_world_pos)
        + frame.fill_color.rgb * wrapped(n, frame.fill_dir.xyz, wrap)
        + frame.ambient.rgb;
    vec4 base = HEAT ? vec4(heat_ramp(in_heat), 1.0) : push.base_color * texture(base_color_texture, in_uv);
    out_color = vec4(base.rgb * light, 1.0);
}
