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

layout(location = 0) out vec4 out_color;

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
    vec3 light = frame.key_color.rgb * wrapped(n, frame.key_dir.xyz, wrap)
        + frame.fill_color.rgb * wrapped(n, frame.fill_dir.xyz, wrap)
        + frame.ambient.rgb;
    vec4 base = push.base_color * texture(base_color_texture, in_uv);
    out_color = vec4(base.rgb * light, 1.0);
}
