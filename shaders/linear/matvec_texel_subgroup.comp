#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// matvec_texel.comp for a workgroup that is exactly one subgroup (lavapipe: 8 lanes, subgroups
// of 8): the lanes' partial sums are added with one subgroupAdd per output instead of through
// shared memory, which saves ~10-14% of a short-K matvec there (the reduction and its barrier
// are a fixed cost per workgroup, and a 896-wide row gives each lane only 3-4 units).
#define MATVEC_SUBGROUP_REDUCE
#include "matvec_texel.glsl"
