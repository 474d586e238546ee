// The bindings, specialization and push constants of get_rows.comp, declared once for the shader
// and the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_GET_ROWS_H
#define VKLLM_SHADER_GET_ROWS_H

#include "interface.h"

VKLLM_SPEC_BEGIN(GetRowsSpec)
VKLLM_SPEC(0, uint, WTYPE, 0)
VKLLM_SPEC_END(GetRowsSpec)
VKLLM_PUSH_BEGIN(GetRowsPush)
uint n_ids;
uint cols;
uint row0;
uint rows;        // rows in this chunk
uint total_rows;  // rows in the whole table
float scale;      // every value times this (Gemma's sqrt(n_embd))
VKLLM_PUSH_END(GetRowsPush)
VKLLM_BINDINGS_BEGIN(GetRowsBindings)
VKLLM_BINDING(GetRowsBindings, 0, table)
VKLLM_BINDING(GetRowsBindings, 1, ids)
VKLLM_BINDING(GetRowsBindings, 2, out)
VKLLM_BINDINGS_END(GetRowsBindings)

#endif
