#version 460
// Compute skinning with the palette, sources, influences, records and
// the characters to skin (bindings 5, 0, 1, 6, 8) read through uniform texel
// buffers: on llvmpipe a texel fetch is a gather, a storage-buffer load a
// loop over the SIMD lanes (see common.glsl). The pass is skin_main.glsl.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#define PALETTE_TEXELS
#define STREAM_TEXELS
#define RECORD_TEXELS
#include "skin_main.glsl"
