#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// moe_matvec_texel.comp whose partial sums are added with subgroupAdd, as
// matvec_texel_subgroup.comp does (in one subgroup on lavapipe, across several with SUBGROUPS > 1).
#define MATVEC_SUBGROUP_REDUCE
#include "moe_matvec_texel.glsl"
