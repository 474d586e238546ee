#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// moe_matvec_texel.comp for a workgroup that is exactly one subgroup (lavapipe): partial sums
// are added with subgroupAdd, as matvec_texel_subgroup.comp does.
#define MATVEC_SUBGROUP_REDUCE
#include "moe_matvec_texel.glsl"
