#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// matvec_texel.comp whose lanes add their partial sums with subgroupAdd instead of through
// shared memory. In a workgroup of one subgroup (lavapipe: 8 lanes, subgroups of 8) that is one
// subgroupAdd per output, which saves ~10-14% of a short-K matvec there (the reduction and its
// barrier are a fixed cost per workgroup, and a 896-wide row gives each lane only 3-4 units); a
// wider workgroup (SUBGROUPS > 1, a GPU variant) then adds the subgroups' sums.
#define MATVEC_SUBGROUP_REDUCE
#include "matvec_texel.glsl"
