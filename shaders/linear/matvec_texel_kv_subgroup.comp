#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// matvec_texel_subgroup.comp for the stacked QKV projection of a decode step, storing its K and
// V into the KV cache and rotating Q itself (matvec_kv_epilogue.glsl).
#define MATVEC_SUBGROUP_REDUCE
#define MATVEC_KV_STORE
#include "matvec_texel.glsl"
