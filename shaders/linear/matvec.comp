#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// y[b][y_offset + r] = sum_k W[r][k] * x[b][k] for the rows of one weight chunk and the n
// vectors b of a batch (decode of n sequences at once; n = 1 is the plain matvec).
// A workgroup owns ROWS rows and NB vectors of the batch (gl_WorkGroupID.z picks which) and
// its lanes split K, so each weight is loaded once for all NB vectors and each x[b][k] once
// for all ROWS rows (the shape that is fast on lavapipe, see LAVAPIPE.md); the per-row partial
// sums are reduced in shared memory at the end. Accumulation is F32.
// Weights are loaded 4 words at a time when rows are whole uvec4 (cols a multiple of 4 for F32,
// of 8 for F16/BF16: every real model), else a word (two 16-bit weights) at a time when 16-bit
// rows are whole words, else one weight at a time: on lavapipe a load costs about the same per
// word whatever its width, plus a fixed cost per load (1.7x faster F16 matvec than one weight
// per load, measured). Block-quantized weights (rows are whole blocks) are read as stored, a
// lane taking 32-weight units (one block, or one sub-block of a K-quant) and each x once per
// unit for all ROWS rows.
#include "matvec.glsl"
