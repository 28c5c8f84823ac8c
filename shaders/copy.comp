#version 460
// The benchmark's bandwidth ceiling: copies `count` 16-byte elements from
// one device-local buffer to another, one element per thread, coalesced.
// Sized by the host to the bytes the skin pass reads and writes in a frame.

// Keep in sync with copy_kernel::WORKGROUP_SIZE.
const uint WORKGROUP_SIZE = 256u;
layout(local_size_x = 256) in;

layout(std430, set = 0, binding = 0) readonly buffer Source { uvec4 source[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Destination { uvec4 destination[]; };

layout(push_constant) uniform Push {
    uint count; // elements to copy
} pc;

void main() {
    // Large copies spread their groups over y (rows of gl_NumWorkGroups.x).
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WORKGROUP_SIZE
        + gl_LocalInvocationID.x;
    if (i < pc.count) {
        destination[i] = source[i];
    }
}
