// Writes GGUF v3 files: metadata copied from another file or set here, then the tensor table
// and the tensor data, each tensor at an offset that is a multiple of general.alignment. The
// file is written as PATH.tmp and renamed to PATH once complete, so a failed write never
// leaves a truncated file under the final name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "format/gguf.h"

namespace vkllm::format {

class GgufWriter {
  public:
    // Metadata keys are written in the order they were first set; setting a key again
    // replaces its value (and type) in place.
    void copy_key(const GgufFile &from, const KeyValue &kv);
    void copy_keys(const GgufFile &from);  // every key, in file order
    void set_u8(const std::string &key, uint8_t v);
    void set_i8(const std::string &key, int8_t v);
    void set_u16(const std::string &key, uint16_t v);
    void set_i16(const std::string &key, int16_t v);
    void set_u32(const std::string &key, uint32_t v);
    void set_i32(const std::string &key, int32_t v);
    void set_u64(const std::string &key, uint64_t v);
    void set_i64(const std::string &key, int64_t v);
    void set_f32(const std::string &key, float v);
    void set_f64(const std::string &key, double v);
    void set_bool(const std::string &key, bool v);
    void set_string(const std::string &key, std::string_view v);
    void set_string_array(const std::string &key, const std::vector<std::string> &v);
    // An array of `count` scalars of `element_type` (not string or array), little-endian
    // at `data`.
    void set_array(const std::string &key, ValueType element_type, const void *data,
                   uint64_t count);
    // Sets general.alignment (u32); VKLLM_ERR_INVALID_ARGUMENT unless a power of two.
    void set_alignment(uint32_t alignment);
    bool remove(const std::string &key);
    bool has(const std::string &key) const;

    // general.alignment if set (it must be a power-of-two u32), else GGUF's default 32.
    uint64_t alignment() const;

    // Tensors, in file order. dims are innermost first, 1 to 4 of them; the row (dims[0])
    // must be whole blocks of the type. `data`, if given, holds tensor_bytes() bytes and must
    // stay valid until write(); without it write() asks its provider. Bad arguments throw
    // VKLLM_ERR_INVALID_ARGUMENT. Returns the tensor's index.
    size_t add_tensor(const std::string &name, uint32_t type, const std::vector<uint64_t> &dims,
                      const void *data = nullptr);
    size_t tensor_count() const { return tensors_.size(); }
    uint64_t tensor_bytes(size_t index) const { return tensors_.at(index).n_bytes; }

    // Returns the bytes of tensor `index` (one added without data); they need only stay
    // valid until the next call. Called in tensor order.
    using DataProvider = std::function<const void *(size_t index)>;

    // Writes the file (VKLLM_ERR_IO when it cannot be created, written or renamed; whatever
    // the provider throws is passed on). Either way nothing is left at PATH.tmp.
    void write(const std::string &path, const DataProvider &provider = nullptr) const;

  private:
    struct Entry {
        std::string key;
        ValueType type;
        ValueType element_type;  // arrays only
        uint64_t count;          // array length
        std::string bytes;       // the encoded value, as GgufFile::value_bytes returns it
    };
    struct Tensor {
        std::string name;
        uint32_t type;
        std::vector<uint64_t> dims;
        uint64_t n_bytes;
        const void *data;
    };

    void set(const std::string &key, ValueType type, ValueType element_type, uint64_t count,
             std::string bytes);
    template <typename T>
    void set_scalar(const std::string &key, ValueType type, T v);

    std::vector<Entry> entries_;
    std::vector<Tensor> tensors_;
};

}  // namespace vkllm::format
