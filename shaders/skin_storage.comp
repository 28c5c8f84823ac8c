#version 460
// Compute skinning with the palette (binding 5) read as a storage buffer, as
// the vertex path reads it: for devices whose maxTexelBufferElements cannot
// hold the palettes (SkinPass's PaletteReads). The pass is skin_main.glsl.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#include "skin_main.glsl"
