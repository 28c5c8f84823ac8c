#version 460
#extension GL_GOOGLE_include_directive : require
// Vertex-shader skinning with the palette (set 0, binding 5) read through a
// uniform texel buffer, as skin.comp reads it: on llvmpipe a texel fetch is
// a gather, a pointer or storage-buffer load a loop over the SIMD lanes.
// The pass is mesh_skinned_main.glsl.
#define PALETTE_TEXELS
#include "mesh_skinned_main.glsl"
