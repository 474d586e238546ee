#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// matvec.comp for a workgroup that is exactly one subgroup (lavapipe: 8 lanes, subgroups of 8):
// the lanes' partial sums are added with one subgroupAdd per output (as matvec_texel_subgroup).
#define MATVEC_SUBGROUP_REDUCE
#include "matvec.glsl"
