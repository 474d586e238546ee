// The bindings, specialization and push constants of matvec.glsl, declared once for the shader and
// the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_MATVEC_H
#define VKLLM_SHADER_MATVEC_H

#include "interface.h"
#include "linear_epilogue.h"

VKLLM_SPEC_BEGIN(MatvecSpec)
VKLLM_SPEC(0, uint, WG, 64)
VKLLM_SPEC(1, uint, ROWS, 4)
VKLLM_SPEC(2, uint, WTYPE, 0)
VKLLM_SPEC(3, uint, NB, 1)
VKLLM_SPEC(4, uint, EPILOGUE, 0)  // see linear_epilogue.glsl
// The *_subgroup shader's subgroups per workgroup at most (matvec_reduce.glsl): 1 where the
// workgroup is one subgroup.
VKLLM_SPEC(5, uint, SUBGROUPS, 1)
VKLLM_SPEC_END(MatvecSpec)
VKLLM_PUSH_BEGIN(MatvecPush)
uint rows;  // rows in this chunk
uint cols;
uint y_offset;
uint n;         // vectors in the batch
uint y_stride;  // floats between the outputs of consecutive vectors
float scale;    // EPILOGUE_SCALE
VKLLM_PUSH_END(MatvecPush)
VKLLM_BINDINGS_BEGIN(MatvecBindings)
VKLLM_BINDING(MatvecBindings, 0, w)
VKLLM_BINDING(MatvecBindings, 1, x)
VKLLM_BINDING(MatvecBindings, 2, y)
VKLLM_BINDING(MatvecBindings, 3, bias)
VKLLM_BINDINGS_END(MatvecBindings)

#endif
