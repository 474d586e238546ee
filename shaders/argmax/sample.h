// The bindings, specialization and push constants of sample.comp, and the layout of its per-row
// options, declared once for the shader and the C++ that dispatches it
// (shaders/include/interface.h).
#ifndef VKLLM_SHADER_SAMPLE_H
#define VKLLM_SHADER_SAMPLE_H

#include "interface.h"

// The 32-bit words of one row's options in the `options` binding (floats as their bits).
#define SAMPLE_TEMPERATURE 0     // <= 0: greedy
#define SAMPLE_TOP_K 1           // int; 1 to 512 sorts, anything else keeps every token
#define SAMPLE_TOP_P 2           // >= 1: off
#define SAMPLE_MIN_P 3           // <= 0: off
#define SAMPLE_TYPICAL_P 4       // >= 1: off
#define SAMPLE_REPEAT_PENALTY 5  // the penalties read the last REPEAT_LAST_N tokens of history
#define SAMPLE_PRESENCE 6
#define SAMPLE_FREQUENCY 7
#define SAMPLE_REPEAT_LAST_N 8  // 0: no penalties; at most the history's capacity
#define SAMPLE_SEED_LO 9        // the generator's key
#define SAMPLE_SEED_HI 10
#define SAMPLE_SEQUENCE 11    // the generator's second counter word
#define SAMPLE_BIAS_FIRST 12  // the row's (id, bias) pairs in `bias`: no id twice
#define SAMPLE_BIAS_COUNT 13
#define SAMPLE_ROW_WORDS 16

VKLLM_SPEC_BEGIN(SampleSpec)
VKLLM_SPEC(0, uint, WG, 256)  // a power of two, at most 256
VKLLM_SPEC_END(SampleSpec)
VKLLM_PUSH_BEGIN(SamplePush)
uint rows;      // rows in this chunk
uint cols;      // the row stride
uint row0;      // first row of this chunk (of options, history, state and ids)
uint n;         // candidates: the first n of each row, 1 to cols
uint capacity;  // tokens of history kept per row, >= 1
VKLLM_PUSH_END(SamplePush)
VKLLM_BINDINGS_BEGIN(SampleBindings)
VKLLM_BINDING(SampleBindings, 0, x)        // logits [rows][cols] F32, changed in place
VKLLM_BINDING(SampleBindings, 1, options)  // [rows][SAMPLE_ROW_WORDS]
VKLLM_BINDING(SampleBindings, 2, bias)     // (id, bias bits) pairs
VKLLM_BINDING(SampleBindings, 3, history)  // [rows][capacity] token ids, a ring
VKLLM_BINDING(SampleBindings, 4, state)    // [rows][2]: tokens in history so far, draws so far
VKLLM_BINDING(SampleBindings, 5, ids)      // [rows] the chosen token
VKLLM_BINDINGS_END(SampleBindings)

#endif
