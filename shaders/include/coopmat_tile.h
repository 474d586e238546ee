// What the cooperative-matrix matmuls (shaders/include/coopmat_tile.glsl) share with the C++
// that dispatches them: their fixed workgroup size (a specialized one needs maintenance4 under
// the validation layer). The subgroups it holds depend on the device (16 on lavapipe, 4 on
// NVIDIA).
#ifndef VKLLM_SHADER_COOPMAT_TILE_H
#define VKLLM_SHADER_COOPMAT_TILE_H

#define COOPMAT_WG 128

#endif
