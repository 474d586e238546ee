// The bindings, specialization and push constants of matmul.comp, declared once for the shader and
// the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_MATMUL_H
#define VKLLM_SHADER_MATMUL_H

#include "interface.h"
#include "linear_epilogue.h"

VKLLM_SPEC_BEGIN(MatmulSpec)
VKLLM_SPEC(0, uint, WTYPE, 0)
VKLLM_SPEC(1, uint, EPILOGUE, 0)  // see linear_epilogue.glsl
VKLLM_SPEC_END(MatmulSpec)
VKLLM_PUSH_BEGIN(MatmulPush)
uint m;  // activation rows
uint n;  // weight rows in this chunk
uint k;
uint ldy;  // row stride of Y
uint y_col0;
float scale;  // EPILOGUE_SCALE
VKLLM_PUSH_END(MatmulPush)
VKLLM_BINDINGS_BEGIN(MatmulBindings)
VKLLM_BINDING(MatmulBindings, 0, w)
VKLLM_BINDING(MatmulBindings, 1, x)
VKLLM_BINDING(MatmulBindings, 2, y)
VKLLM_BINDING(MatmulBindings, 3, bias)
VKLLM_BINDINGS_END(MatmulBindings)

#endif
