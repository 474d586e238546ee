#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// matvec_texel.comp for the stacked QKV projection of a decode step, storing its K and V into
// the KV cache and rotating Q itself (matvec_kv_epilogue.glsl): no kv_store dispatch follows.
#define MATVEC_KV_STORE
#include "matvec_texel.glsl"
