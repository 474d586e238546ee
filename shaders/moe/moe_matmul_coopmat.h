// The bindings, specialization and push constants of moe_matmul_coopmat.comp, declared once for
// the shader and the C++ that dispatches it (shaders/include/interface.h). The push constants
// and bindings are moe_matvec.comp's; the specialization is matmul_coopmat.comp's shapes and
// moe_matvec.comp's choice of input rows.
#ifndef VKLLM_SHADER_MOE_MATMUL_COOPMAT_H
#define VKLLM_SHADER_MOE_MATMUL_COOPMAT_H

#include "coopmat_tile.h"
#include "interface.h"

VKLLM_SPEC_BEGIN(MoeMatmulCoopmatSpec)
VKLLM_SPEC(0, uint, WTYPE, 0)
VKLLM_SPEC(1, uint, X_PER_ENTRY, 0)
VKLLM_SPEC(2, uint, TM, 16)
VKLLM_SPEC(3, uint, TN, 16)
VKLLM_SPEC(4, uint, TK, 16)
VKLLM_SPEC(5, uint, BM, 64)
VKLLM_SPEC(6, uint, BN, 64)
VKLLM_SPEC(7, uint, BK, 32)
VKLLM_SPEC(8, uint, WM, 32)
VKLLM_SPEC(9, uint, WN, 32)
VKLLM_SPEC(10, uint, NSG, 4)
VKLLM_SPEC_END(MoeMatmulCoopmatSpec)
VKLLM_PUSH_BEGIN(MoeMatmulCoopmatPush)
uint rows;
uint cols;
uint k;          // experts per token
uint n_entries;  // n_tokens * k
uint n_expert;
uint e0;  // first expert of this binding
uint n_here;
uint has_bias;
VKLLM_PUSH_END(MoeMatmulCoopmatPush)
VKLLM_BINDINGS_BEGIN(MoeMatmulCoopmatBindings)
VKLLM_BINDING(MoeMatmulCoopmatBindings, 0, w)
VKLLM_BINDING(MoeMatmulCoopmatBindings, 1, x)
VKLLM_BINDING(MoeMatmulCoopmatBindings, 2, y)
VKLLM_BINDING(MoeMatmulCoopmatBindings, 3, route)
VKLLM_BINDING(MoeMatmulCoopmatBindings, 4, bias)
VKLLM_BINDINGS_END(MoeMatmulCoopmatBindings)

#endif
