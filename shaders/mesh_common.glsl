// Shared by mesh.vert, mesh_skinned.vert and mesh.frag: the per-frame
// uniforms and per-draw push constants of the draw pass. Rust mirrors:
// src/render/frame_uniforms.rs (FrameUniforms), src/render/mesh_pass.rs (DrawPush).

// Set 1: per-frame camera and lights (world space).
layout(std140, set = 1, binding = 0) uniform Frame {
    mat4 view_proj;     // world -> Vulkan clip space (y down, depth 0..1)
    vec4 camera_pos;    // xyz: eye position
    vec4 key_dir;       // xyz: unit direction towards the key light; w: wrap
    vec4 key_color;     // rgb
    vec4 fill_dir;      // xyz: unit direction towards the fill light
    vec4 fill_color;    // rgb
    vec4 ambient;       // rgb
    // Cascaded shadow maps of the key light (shadow.rs; used when shadow.x is 1).
    mat4 cascade_view_proj[4]; // world -> each cascade's light clip space
    vec4 cascade_far;          // view depth where each cascade ends
    vec4 camera_forward;       // xyz: unit view direction (view depth = dot(p - eye, it))
    vec4 shadow;               // x: 1 = sample the shadow maps; y: depth bias; z: one texel in uv
} frame;

// Set 1, binding 1: every character's world matrix (applied after skinning),
// indexed by the scene's character index.
layout(std430, set = 1, binding = 1) readonly buffer Instances { mat4 instance_world[]; };

// Set 1, binding 2: the frame's draw order, the character each instance
// draws. One instanced draw per primitive and detail level draws that
// level of every character at it: they lie together in this order
// (src/render/draw_order.rs).
layout(std430, set = 1, binding = 2) readonly buffer DrawOrder { uint draw_order[]; };

// Per draw: the material's base colour factor and where the draw's first
// character's data lies; character c = draw_order[gl_InstanceIndex] -
// first_character finds its own records at fixed strides (every character
// of a model has the same layout in the skin pass), and its skinned
// vertices where the frame placed them (mesh.vert's OutputPlaces).
layout(push_constant) uniform Push {
    vec4 base_color;
    uint first_character;        // the draw's first character (its run's)
    uint record;                 // vertex skinning: the first character's SkinRecord
    uint records_per_character;
    uint output_offset;          // pre-skinned: where the primitive's vertices start in a character's output at the draw's level
    uvec2 output_places;         // pre-skinned (mesh.vert): where the frame placed each character's output
    uvec2 palette_address;       // vertex skinning (mesh_skinned.vert): the palette the frame reads
    uvec2 level_map;             // pre-skinned: the level's map from a vertex to its output place (0: none)
} push;
