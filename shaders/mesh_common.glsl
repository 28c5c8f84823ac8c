// Shared by mesh.vert, mesh_skinned.vert and mesh.frag: the per-frame
// uniforms and per-draw push constants of the draw pass. Rust mirrors:
// src/render/mesh_pass.rs (FrameUniforms, DrawPush).

// Set 1: per-frame camera and lights (world space).
layout(std140, set = 1, binding = 0) uniform Frame {
    mat4 view_proj;     // world -> Vulkan clip space (y down, depth 0..1)
    vec4 camera_pos;    // xyz: eye position
    vec4 key_dir;       // xyz: unit direction towards the key light; w: wrap
    vec4 key_color;     // rgb
    vec4 fill_dir;      // xyz: unit direction towards the fill light
    vec4 fill_color;    // rgb
    vec4 ambient;       // rgb
} frame;

// Per draw: the character's world matrix (applied after skinning), the
// material's base colour factor and, for vertex skinning, the SkinRecord.
layout(push_constant) uniform Push {
    mat4 world;
    vec4 base_color;
    uint record;
    uint pad0;
    uint pad1;
    uint pad2;
} push;
