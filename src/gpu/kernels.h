// The compute kernels, as operations on buffer ranges. Each call records its dispatches and a
// barrier into a Recording; it picks the shader variant for the device and splits tensors that
// a single binding could not cover (maxStorageBufferRange).
//
// The families live in gpu/kernels/ (one header each, mirroring tests/test_kernels_*.cpp);
// Kernels is all of them over one device, which is what a Context holds. Code that needs one
// family may include its header alone; the plain data they take is in gpu/tensor.h.
#pragma once

#include "gpu/kernels/argmax.h"
#include "gpu/kernels/attention.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/env.h"
#include "gpu/kernels/linear.h"
#include "gpu/kernels/moe.h"
#include "gpu/kernels/rope_table.h"
#include "gpu/kernels/weight_layout.h"
#include "gpu/tensor.h"

namespace vkllm::gpu {

namespace detail {
// Holds the families' shared state; a base of Kernels so that it is built before them.
struct KernelEnvHolder {
    KernelEnvHolder(Device &device, Pipelines &pipelines, DeviceClass cls)
        : env_storage_(device, pipelines, cls) {}
    KernelEnv env_storage_;
};
}  // namespace detail

class Kernels : private detail::KernelEnvHolder,
                public ElementwiseKernels,
                public AttentionKernels,
                public LinearKernels,
                public MoeKernels,
                public ArgmaxKernels {
  public:
    Kernels(Device &device, Pipelines &pipelines, DeviceClass cls)
        : KernelEnvHolder(device, pipelines, cls),
          ElementwiseKernels(env_storage_),
          AttentionKernels(env_storage_),
          LinearKernels(env_storage_, *this, *this),
          MoeKernels(env_storage_, *this, *this),
          ArgmaxKernels(env_storage_) {}
    Kernels(const Kernels &) = delete;
    Kernels &operator=(const Kernels &) = delete;

    // Whether these kernels take lavapipe's shapes (DeviceClass::Cpu) rather than GPUs'.
    bool cpu_shapes() const { return env_storage_.cpu_class; }
    // The families' shared state: the device class's shapes and the tuned variants.
    KernelEnv &env() { return env_storage_; }
    const KernelEnv &env() const { return env_storage_; }
};

}  // namespace vkllm::gpu
