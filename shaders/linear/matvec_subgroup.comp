#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// matvec.comp whose lanes add their partial sums with subgroupAdd (as matvec_texel_subgroup):
// one per output in a workgroup of one subgroup (lavapipe: 8 lanes, subgroups of 8), then across
// the subgroups of a wider workgroup (SUBGROUPS > 1, a GPU variant).
#define MATVEC_SUBGROUP_REDUCE
#include "matvec.glsl"
