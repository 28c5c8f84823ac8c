#version 460
// Compute skinning: every primitive of every character instance in one
// dispatch. Thread g skins output vertex g: it finds the SkinRecord whose
// output region holds g (records are sorted by output_offset and their
// regions are contiguous), then morphs and skins that record's vertex
// g - output_offset with the shared skin_vertex (common.glsl), the twin of
// the CPU reference anim::skinning::SkinningJob.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

// Set by SkinPass for SkinningMethod::DualQuaternion: skin_vertex_dqs.
layout(constant_id = 1) const bool DUAL_QUATERNION = false;

// Keep in sync with skin_pass::WORKGROUP_SIZE. (gl_WorkGroupSize is not used:
// for SPIR-V 1.6 glslang would emit LocalSizeId, which needs maintenance4.)
const uint WORKGROUP_SIZE = 64u;
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 7) writeonly buffer Outputs { SkinnedVertex out_vertices[]; };

layout(push_constant) uniform Push {
    uint record_count;   // >= 1 whenever anything is dispatched
    uint total_vertices; // output vertices; threads at or past it do nothing
} pc;

void main() {
    // Large scenes may need more than maxComputeWorkGroupCount[0] groups: the
    // host then spreads them over y, rows of gl_NumWorkGroups.x groups each.
    uint g = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WORKGROUP_SIZE
        + gl_LocalInvocationID.x;
    if (g >= pc.total_vertices) {
        return;
    }
    // Last record with output_offset <= g. Invariant: records[lo].output_offset
    // <= g (record 0 starts at 0) and every record at or past hi starts after g.
    uint lo = 0u;
    uint hi = pc.record_count;
    while (hi - lo > 1u) {
        uint mid = (lo + hi) >> 1u;
        if (records[mid].output_offset <= g) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    SkinRecord r = records[lo];
    uint v = g - r.output_offset;
    out_vertices[g] = DUAL_QUATERNION ? skin_vertex_dqs(r, v) : skin_vertex(r, v);
}
