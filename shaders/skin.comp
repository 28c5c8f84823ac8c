#version 460
// Compute skinning with the palette (binding 5) read through a uniform texel
// buffer: on llvmpipe a texel fetch is a gather, a storage-buffer load a
// loop over the SIMD lanes (see common.glsl). The pass is skin_main.glsl.
#extension GL_GOOGLE_include_directive : require
#define PALETTE_TEXELS
#include "skin_main.glsl"
