#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// y[b][y_offset + r] = sum_k W[r][k] * x[b][k], as matvec.comp, for weights whose 32-weight
// units are whole 16-byte texels (F32, F16, BF16, the grouped Q8_0_G8, Q4_0_G8, Q5_0_G8,
// Q4_1_G8, Q5_1_G8, Q6_K_G8 and MXFP4_G16, and Q4_K and Q5_K as stored) and rows of whole units: every
// load is a texelFetch of 16 bytes. On lavapipe a texel fetch is one
// gathered load per lane where a storage-buffer load is a bounds-checked scalar load per lane
// and component, 5-10x dearer (LAVAPIPE.md); GPUs read texels through their texture caches.
// A workgroup owns ROWS rows and NB vectors; its lanes take 32-weight units in turn, load the
// unit's x once for all ROWS rows and each weight once for all NB vectors.
#include "matvec_texel.glsl"
