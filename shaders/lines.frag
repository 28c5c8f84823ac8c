#version 460
// Unlit debug lines: the vertex colour, linear (an sRGB target encodes).

layout(location = 0) in vec4 in_color;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = in_color;
}
