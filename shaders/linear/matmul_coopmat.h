// The bindings, specialization and push constants of matmul_coopmat.comp, declared once for the
// shader and the C++ that dispatches it (shaders/include/interface.h). The push constants and
// bindings are matmul.comp's; the specialization adds the shapes: the device's cooperative
// matrix (TM x TN x TK), the workgroup's tile (BM x BN, K slices of BK) and each subgroup's
// warp tile (WM x WN), and how many subgroups the tile is cut for (NSG).
#ifndef VKLLM_SHADER_MATMUL_COOPMAT_H
#define VKLLM_SHADER_MATMUL_COOPMAT_H

#include "coopmat_tile.h"
#include "interface.h"
#include "linear_epilogue.h"

VKLLM_SPEC_BEGIN(MatmulCoopmatSpec)
VKLLM_SPEC(0, uint, WTYPE, 0)
VKLLM_SPEC(1, uint, EPILOGUE, 0)  // see linear_epilogue.glsl
VKLLM_SPEC(2, uint, TM, 16)
VKLLM_SPEC(3, uint, TN, 16)
VKLLM_SPEC(4, uint, TK, 16)
VKLLM_SPEC(5, uint, BM, 64)
VKLLM_SPEC(6, uint, BN, 64)
VKLLM_SPEC(7, uint, BK, 32)
VKLLM_SPEC(8, uint, WM, 32)
VKLLM_SPEC(9, uint, WN, 32)
VKLLM_SPEC(10, uint, NSG, 4)
VKLLM_SPEC_END(MatmulCoopmatSpec)
VKLLM_PUSH_BEGIN(MatmulCoopmatPush)
uint m;  // activation rows
uint n;  // weight rows in this chunk
uint k;
uint ldy;  // row stride of Y
uint y_col0;
float scale;  // EPILOGUE_SCALE
VKLLM_PUSH_END(MatmulCoopmatPush)
VKLLM_BINDINGS_BEGIN(MatmulCoopmatBindings)
VKLLM_BINDING(MatmulCoopmatBindings, 0, w)
VKLLM_BINDING(MatmulCoopmatBindings, 1, x)
VKLLM_BINDING(MatmulCoopmatBindings, 2, y)
VKLLM_BINDING(MatmulCoopmatBindings, 3, bias)
VKLLM_BINDINGS_END(MatmulCoopmatBindings)

#endif
