// The specialization and push constants of matmul.comp, declared once for the shader and the C++
// that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_MATMUL_H
#define VKLLM_SHADER_MATMUL_H

#include "interface.h"

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
VKLLM_PUSH_END(MatmulPush)

#endif
