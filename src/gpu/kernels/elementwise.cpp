#include "gpu/kernels/elementwise.h"

#include <cmath>
#include <cstdint>

#include "elementwise/eltwise.h"
#include "elementwise/get_rows.h"
#include "elementwise/layer_norm.h"
#include "elementwise/rms_norm.h"
#include "elementwise/softmax.h"
#include "gpu/kernels/weight_layout.h"
#include "shader_names.h"

namespace vkllm::gpu {

// A Binary or Unary is passed as eltwise's OP as it is.
static_assert(uint32_t(Binary::Add) == shaders::OP_ADD &&
                  uint32_t(Binary::Mul) == shaders::OP_MUL &&
                  uint32_t(Binary::SwiGLU) == shaders::OP_SWIGLU &&
                  uint32_t(Binary::SwiGLUOai) == shaders::OP_SWIGLU_OAI &&
                  uint32_t(Binary::GeGLU) == shaders::OP_GEGLU,
              "gpu::Binary and shaders/elementwise/eltwise.h differ");
static_assert(uint32_t(Unary::SiLU) == shaders::OP_SILU &&
                  uint32_t(Unary::GELU) == shaders::OP_GELU &&
                  uint32_t(Unary::SoftCap) == shaders::OP_SOFTCAP,
              "gpu::Unary and shaders/elementwise/eltwise.h differ");

void ElementwiseKernels::rms_norm(Recording &rec, const BufferRange &x, const BufferRange &weight,
                                  const BufferRange &y, uint32_t rows, uint32_t cols, float eps) {
    require(x, uint64_t(rows) * cols * 4, "rms_norm", "x");
    require(weight, uint64_t(cols) * 4, "rms_norm", "weight");
    require(y, uint64_t(rows) * cols * 4, "rms_norm", "y");
    check_loops(2 * (cols / env_.norm_wg + 1), "rms_norm", cols);
    shaders::RmsNormSpec spec;
    spec.WG = env_.norm_wg;
    const Pipeline &p = env_.pipelines.get<shaders::RmsNormBindings>(shaders::rms_norm, spec);
    shaders::RmsNormBindings b;
    b.x = x;
    b.weight = weight;
    b.y = y;
    shaders::RmsNormPush push{};
    push.cols = cols;
    push.eps = eps;
    env_.dispatch_1d(rec, p, b, &push, sizeof push, rows);
}

void ElementwiseKernels::layer_norm(Recording &rec, const BufferRange &x, const BufferRange &weight,
                                    const BufferRange &bias, const BufferRange &y, uint32_t rows,
                                    uint32_t cols, float eps) {
    require(x, uint64_t(rows) * cols * 4, "layer_norm", "x");
    require(weight, uint64_t(cols) * 4, "layer_norm", "weight");
    require(bias, uint64_t(cols) * 4, "layer_norm", "bias");
    require(y, uint64_t(rows) * cols * 4, "layer_norm", "y");
    check_loops(3 * (cols / env_.norm_wg + 1), "layer_norm", cols);
    shaders::LayerNormSpec spec;
    spec.WG = env_.norm_wg;
    const Pipeline &p = env_.pipelines.get<shaders::LayerNormBindings>(shaders::layer_norm, spec);
    shaders::LayerNormBindings b;
    b.x = x;
    b.weight = weight;
    b.bias = bias;
    b.y = y;
    shaders::LayerNormPush push{};
    push.cols = cols;
    push.eps = eps;
    env_.dispatch_1d(rec, p, b, &push, sizeof push, rows);
}

void ElementwiseKernels::softmax(Recording &rec, const BufferRange &x, const BufferRange &y,
                                 uint32_t rows, uint32_t cols, float scale) {
    require(x, uint64_t(rows) * cols * 4, "softmax", "x");
    require(y, uint64_t(rows) * cols * 4, "softmax", "y");
    check_loops(3 * (cols / env_.norm_wg + 1), "softmax", cols);
    shaders::SoftmaxSpec spec;
    spec.WG = env_.norm_wg;
    const Pipeline &p = env_.pipelines.get<shaders::SoftmaxBindings>(shaders::softmax, spec);
    shaders::SoftmaxBindings b;
    b.x = x;
    b.y = y;
    shaders::SoftmaxPush push{};
    push.cols = cols;
    push.scale = scale;
    env_.dispatch_1d(rec, p, b, &push, sizeof push, rows);
}

void ElementwiseKernels::binary(Recording &rec, Binary op, const BufferRange &a,
                                const BufferRange &b, const BufferRange &y, uint32_t n,
                                uint32_t nb) {
    if (nb == 0 || nb > n) fail(VKLLM_ERR_INTERNAL, "binary: broadcast period %u for %u", nb, n);
    require(a, uint64_t(n) * 4, "binary", "a");
    require(b, uint64_t(nb) * 4, "binary", "b");
    require(y, uint64_t(n) * 4, "binary", "y");
    shaders::EltwiseSpec spec;
    spec.OP = uint32_t(op);
    const Pipeline &p = env_.pipelines.get<shaders::EltwiseBindings>(shaders::eltwise, spec);
    shaders::EltwiseBindings bind;
    bind.a = a;
    bind.b = b;
    bind.y = y;
    shaders::EltwisePush push{};
    push.n = n;
    push.nb = nb;
    env_.dispatch_1d(rec, p, bind, &push, sizeof push, (uint64_t(n) + 63) / 64);
}

void ElementwiseKernels::unary(Recording &rec, Unary op, const BufferRange &x, const BufferRange &y,
                               uint32_t n, float param) {
    if (op == Unary::SoftCap && !(param > 0 && std::isfinite(param)))
        fail(VKLLM_ERR_INTERNAL, "unary: a soft cap of %g", double(param));
    require(x, uint64_t(n) * 4, "unary", "x");
    require(y, uint64_t(n) * 4, "unary", "y");
    shaders::EltwiseSpec spec;
    spec.OP = uint32_t(op);
    const Pipeline &p = env_.pipelines.get<shaders::EltwiseBindings>(shaders::eltwise, spec);
    shaders::EltwiseBindings b;
    b.a = x;
    b.b = x;  // never read by a unary operation
    b.y = y;
    shaders::EltwisePush push{};
    push.n = n;
    push.nb = n;
    push.param = param;
    env_.dispatch_1d(rec, p, b, &push, sizeof push, (uint64_t(n) + 63) / 64);
}

void ElementwiseKernels::get_rows(Recording &rec, const Matrix &table, const BufferRange &ids,
                                  const BufferRange &out, uint32_t n_ids, float scale) {
    require(ids, uint64_t(n_ids) * 4, "get_rows", "ids");
    require(out, uint64_t(n_ids) * table.cols * 4, "get_rows", "out");
    shaders::GetRowsSpec spec;
    spec.WTYPE = uint32_t(table.type);
    const Pipeline &p = env_.pipelines.get<shaders::GetRowsBindings>(shaders::get_rows, spec);
    shaders::GetRowsBindings b;
    b.ids = ids;
    b.out = out;
    // An invocation decodes 8 weights of a block-quantized table (rows are whole blocks).
    uint64_t n = uint64_t(n_ids) * table.cols / (block_weights(table.type) > 1 ? 8 : 1);
    for (const KernelEnv::Chunk &c : env_.split_rows(table)) {
        shaders::GetRowsPush push{};
        push.n_ids = n_ids;
        push.cols = table.cols;
        push.row0 = c.row0;
        push.rows = c.rows;
        push.total_rows = table.rows;
        push.scale = scale;
        b.table = c.data;
        env_.dispatch_1d(rec, p, b, &push, sizeof push, (n + 63) / 64);
    }
}

}  // namespace vkllm::gpu
