// The bits of a linear kernel's EPILOGUE specialization constant (linear_epilogue.glsl), which
// its interface header includes: C++ sets EPILOGUE from these names, the shaders test them.
#ifndef VKLLM_SHADER_LINEAR_EPILOGUE_H
#define VKLLM_SHADER_LINEAR_EPILOGUE_H

#include "interface.h"

VKLLM_CONST(EPILOGUE_BIAS, 1)        // add bias[col]
VKLLM_CONST(EPILOGUE_ACCUMULATE, 2)  // add what y already holds (a residual, in place)
VKLLM_CONST(EPILOGUE_SCALE, 4)       // multiply by the push constant scale

#endif
