#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
// Vertex-shader skinning with the palette read by pointer
// (push.palette_address), as skin_storage.comp reads it: for devices whose
// maxTexelBufferElements cannot hold the palettes (PaletteReads). The pass
// is mesh_skinned_main.glsl.
#include "mesh_skinned_main.glsl"
