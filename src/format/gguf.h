// A strict GGUF (v2, v3) reader over a memory-mapped file. Every count, length, offset and
// size is checked against the file before it is used, with overflow-safe arithmetic, so a
// truncated or hostile file gives VKLLM_ERR_FORMAT (naming what is wrong and the byte offset)
// and never a crash or an allocation sized by an unchecked number.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/ggml_types.h"
#include "format/mapped_file.h"

namespace vkllm::format {

enum class ValueType : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};

// Bytes of one value of a fixed-size type; 0 for strings and arrays (variable).
uint64_t scalar_size(ValueType t);

const char *value_type_name(ValueType type);

struct KeyValue {
    std::string key;
    ValueType type;
    ValueType element_type;  // arrays only
    uint64_t count;          // array length; 1 for a scalar
    uint64_t offset;         // file offset of the value (of the first element, for an array)
};

struct TensorInfo {
    std::string name;
    const GgmlType *type;
    uint32_t n_dims;
    uint64_t dims[4];  // innermost first: a matrix is [columns, rows]
    uint64_t n_elements;
    uint64_t n_bytes;
    uint64_t offset;  // absolute file offset of the data
};

class GgufFile {
  public:
    // Throws VKLLM_ERR_IO (cannot read), VKLLM_ERR_FORMAT (malformed) or
    // VKLLM_ERR_UNSUPPORTED (a valid file this reader does not handle: v1, big-endian, a
    // tensor type it does not know).
    explicit GgufFile(const std::string &path);

    // The key-values alone, copied to memory (no tensors, no map of the file kept): what a
    // loaded model keeps to answer questions about its metadata.
    std::unique_ptr<GgufFile> metadata_copy() const;

    const std::string &path() const { return file_->path(); }
    uint32_t version() const { return version_; }
    uint64_t file_size() const { return file_->size(); }
    uint64_t alignment() const { return alignment_; }
    uint64_t data_offset() const { return data_offset_; }

    const std::vector<KeyValue> &keys() const { return keys_; }
    const KeyValue *find(std::string_view key) const;
    const std::vector<TensorInfo> &tensors() const { return tensors_; }
    const TensorInfo *find_tensor(std::string_view name) const;
    const uint8_t *tensor_data(const TensorInfo &t) const { return file_->data() + t.offset; }

    // Typed reads. A missing key gives nullopt (or an empty vector); a key of another type
    // throws VKLLM_ERR_FORMAT naming the key and both types.
    std::optional<std::string_view> get_string(std::string_view key) const;
    std::optional<int64_t> get_int(std::string_view key) const;   // any integer type or bool
    std::optional<double> get_float(std::string_view key) const;  // floats and integers
    std::optional<bool> get_bool(std::string_view key) const;
    std::vector<std::string_view> get_string_array(std::string_view key) const;
    std::vector<float> get_f32_array(std::string_view key) const;
    std::vector<int32_t> get_i32_array(std::string_view key) const;

    // The value's bytes as stored after its type (and, for an array, after the element type
    // and length): what a writer copies to keep a value of any type unchanged.
    std::string_view value_bytes(const KeyValue &kv) const;

    // The value as readable text; arrays show their first `max_elements` and their length.
    std::string value_text(const KeyValue &kv, size_t max_elements = 8) const;

  private:
    explicit GgufFile(std::unique_ptr<MappedFile> file);
    int64_t scalar_int(const KeyValue &kv, uint64_t offset, ValueType type) const;
    double scalar_float(const KeyValue &kv, uint64_t offset, ValueType type) const;
    std::string_view string_at(uint64_t offset) const;

    std::unique_ptr<MappedFile> file_;
    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    uint64_t data_offset_ = 0;
    uint64_t keys_end_ = 0;  // the file offset after the last key-value
    std::vector<KeyValue> keys_;
    std::vector<TensorInfo> tensors_;
    std::unordered_map<std::string, size_t> key_index_;
    std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace vkllm::format
