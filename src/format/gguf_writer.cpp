#include "format/gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "common/error.h"
#include "common/platform.h"

namespace vkllm::format {

namespace {

std::string encode_string(std::string_view s) {
    std::string out(8, '\0');
    uint64_t n = s.size();
    std::memcpy(&out[0], &n, 8);
    out.append(s.data(), s.size());
    return out;
}

// A FILE written front to back; every failure is VKLLM_ERR_IO naming the file.
class Output {
  public:
    explicit Output(const std::string &path) : path_(path) {
        f_ = platform::open_file(path, "wb");
        if (!f_) fail(VKLLM_ERR_IO, "cannot create %s: %s", path.c_str(), std::strerror(errno));
        // Tensor data goes out in large pieces anyway; this batches the small header writes.
        std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
    }
    ~Output() {
        if (f_) std::fclose(f_);
    }
    Output(const Output &) = delete;
    Output &operator=(const Output &) = delete;

    uint64_t pos() const { return pos_; }

    void bytes(const void *p, uint64_t n) {
        if (n && std::fwrite(p, 1, size_t(n), f_) != size_t(n))
            fail(VKLLM_ERR_IO, "cannot write %s at byte %" PRIu64 ": %s", path_.c_str(), pos_,
                 std::strerror(errno));
        pos_ += n;
    }
    template <typename T>
    void value(T v) {
        bytes(&v, sizeof v);
    }
    void string(std::string_view s) {
        value(uint64_t(s.size()));
        bytes(s.data(), s.size());
    }
    void pad_to(uint64_t alignment) {
        static const char zeros[256] = {};
        uint64_t n = (alignment - pos_ % alignment) % alignment;
        for (; n > 0; n -= std::min<uint64_t>(n, sizeof zeros))
            bytes(zeros, std::min<uint64_t>(n, sizeof zeros));
    }

    // Flushed and synced before the rename, so the name never points at missing data.
    void close() {
        FILE *f = f_;
        f_ = nullptr;
        bool ok = platform::sync_file(f);
        int err = errno;
        if (std::fclose(f) != 0 && ok) {
            ok = false;
            err = errno;
        }
        if (!ok) fail(VKLLM_ERR_IO, "cannot write %s: %s", path_.c_str(), std::strerror(err));
    }

  private:
    std::string path_;
    FILE *f_ = nullptr;
    uint64_t pos_ = 0;
};

}  // namespace

void GgufWriter::set(const std::string &key, ValueType type, ValueType element_type, uint64_t count,
                     std::string bytes) {
    if (key.empty()) fail(VKLLM_ERR_INVALID_ARGUMENT, "GGUF metadata keys cannot be empty");
    for (Entry &e : entries_)
        if (e.key == key) {
            e = Entry{key, type, element_type, count, std::move(bytes)};
            return;
        }
    entries_.push_back(Entry{key, type, element_type, count, std::move(bytes)});
}

template <typename T>
void GgufWriter::set_scalar(const std::string &key, ValueType type, T v) {
    std::string bytes(sizeof v, '\0');
    std::memcpy(&bytes[0], &v, sizeof v);
    set(key, type, type, 1, std::move(bytes));
}

void GgufWriter::copy_key(const GgufFile &from, const KeyValue &kv) {
    std::string_view b = from.value_bytes(kv);
    set(kv.key, kv.type, kv.element_type, kv.count, std::string(b));
}

void GgufWriter::copy_keys(const GgufFile &from) {
    for (const KeyValue &kv : from.keys())
        copy_key(from, kv);
}

void GgufWriter::set_u8(const std::string &k, uint8_t v) {
    set_scalar(k, ValueType::U8, v);
}
void GgufWriter::set_i8(const std::string &k, int8_t v) {
    set_scalar(k, ValueType::I8, v);
}
void GgufWriter::set_u16(const std::string &k, uint16_t v) {
    set_scalar(k, ValueType::U16, v);
}
void GgufWriter::set_i16(const std::string &k, int16_t v) {
    set_scalar(k, ValueType::I16, v);
}
void GgufWriter::set_u32(const std::string &k, uint32_t v) {
    set_scalar(k, ValueType::U32, v);
}
void GgufWriter::set_i32(const std::string &k, int32_t v) {
    set_scalar(k, ValueType::I32, v);
}
void GgufWriter::set_u64(const std::string &k, uint64_t v) {
    set_scalar(k, ValueType::U64, v);
}
void GgufWriter::set_i64(const std::string &k, int64_t v) {
    set_scalar(k, ValueType::I64, v);
}
void GgufWriter::set_f32(const std::string &k, float v) {
    set_scalar(k, ValueType::F32, v);
}
void GgufWriter::set_f64(const std::string &k, double v) {
    set_scalar(k, ValueType::F64, v);
}
void GgufWriter::set_bool(const std::string &k, bool v) {
    set_scalar(k, ValueType::Bool, uint8_t(v ? 1 : 0));
}

void GgufWriter::set_string(const std::string &k, std::string_view v) {
    set(k, ValueType::String, ValueType::String, 1, encode_string(v));
}

void GgufWriter::set_string_array(const std::string &k, const std::vector<std::string> &v) {
    std::string bytes;
    for (const std::string &s : v)
        bytes += encode_string(s);
    set(k, ValueType::Array, ValueType::String, v.size(), std::move(bytes));
}

void GgufWriter::set_array(const std::string &k, ValueType element_type, const void *data,
                           uint64_t count) {
    uint64_t size = scalar_size(element_type);
    if (size == 0)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: set_array takes scalar elements, not %s", k.c_str(),
             value_type_name(element_type));
    if (count > UINT64_MAX / size)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: array too long", k.c_str());
    std::string bytes(size_t(count * size), '\0');
    if (count) std::memcpy(&bytes[0], data, bytes.size());
    set(k, ValueType::Array, element_type, count, std::move(bytes));
}

void GgufWriter::set_alignment(uint32_t alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "GGUF alignment %u is not a power of two", alignment);
    set_u32("general.alignment", alignment);
}

bool GgufWriter::remove(const std::string &key) {
    for (size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].key == key) {
            entries_.erase(entries_.begin() + long(i));
            return true;
        }
    return false;
}

bool GgufWriter::has(const std::string &key) const {
    for (const Entry &e : entries_)
        if (e.key == key) return true;
    return false;
}

uint64_t GgufWriter::alignment() const {
    for (const Entry &e : entries_) {
        if (e.key != "general.alignment") continue;
        uint32_t v = 0;
        if (e.type == ValueType::U32) std::memcpy(&v, e.bytes.data(), 4);
        // A reader would reject the file, so refuse to write it.
        if (v == 0 || (v & (v - 1)) != 0)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "general.alignment must be a power-of-two u32 (it is %s %u)",
                 value_type_name(e.type), v);
        return v;
    }
    return 32;
}

size_t GgufWriter::add_tensor(const std::string &name, uint32_t type,
                              const std::vector<uint64_t> &dims, const void *data) {
    const char *n = name.c_str();
    if (name.empty()) fail(VKLLM_ERR_INVALID_ARGUMENT, "GGUF tensor names cannot be empty");
    for (const Tensor &t : tensors_)
        if (t.name == name) fail(VKLLM_ERR_INVALID_ARGUMENT, "duplicate tensor name %s", n);
    const GgmlType *gt = ggml_type(type);
    if (!gt) fail(VKLLM_ERR_INVALID_ARGUMENT, "tensor %s: unknown ggml type %u", n, type);
    if (dims.empty() || dims.size() > 4)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "tensor %s: %zu dimensions (1 to 4 allowed)", n,
             dims.size());
    uint64_t elements = 1;
    for (uint64_t d : dims) {
        if (d == 0 || d > uint64_t(INT64_MAX) || elements > uint64_t(INT64_MAX) / d)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "tensor %s: dimension %" PRIu64 " is zero or overflows", n, d);
        elements *= d;
    }
    if (dims[0] % gt->block_elements != 0)
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "tensor %s: row of %" PRIu64 " elements is not whole %s blocks of %u", n, dims[0],
             gt->name, gt->block_elements);
    uint64_t blocks = elements / gt->block_elements;
    if (blocks > UINT64_MAX / gt->block_bytes)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "tensor %s: byte size overflows", n);
    tensors_.push_back(Tensor{name, type, dims, blocks * gt->block_bytes, data});
    return tensors_.size() - 1;
}

void GgufWriter::write(const std::string &path, const DataProvider &provider) const {
    uint64_t align = alignment();
    for (const Tensor &t : tensors_)
        if (!t.data && !provider)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "tensor %s has no data and no provider was given",
                 t.name.c_str());

    std::string tmp = path + ".tmp";
    try {
        Output out(tmp);
        out.bytes("GGUF", 4);
        out.value(uint32_t(3));
        out.value(uint64_t(tensors_.size()));
        out.value(uint64_t(entries_.size()));
        for (const Entry &e : entries_) {
            out.string(e.key);
            out.value(uint32_t(e.type));
            if (e.type == ValueType::Array) {
                out.value(uint32_t(e.element_type));
                out.value(e.count);
            }
            out.bytes(e.bytes.data(), e.bytes.size());
        }
        uint64_t offset = 0;  // from the start of the data section
        for (const Tensor &t : tensors_) {
            out.string(t.name);
            out.value(uint32_t(t.dims.size()));
            for (uint64_t d : t.dims)
                out.value(d);
            out.value(t.type);
            out.value(offset);
            offset = (offset + t.n_bytes + align - 1) / align * align;
        }
        out.pad_to(align);
        for (size_t i = 0; i < tensors_.size(); ++i) {
            const Tensor &t = tensors_[i];
            const void *data = t.data ? t.data : provider(i);
            if (!data) fail(VKLLM_ERR_INVALID_ARGUMENT, "no data for tensor %s", t.name.c_str());
            out.bytes(data, t.n_bytes);
            out.pad_to(align);
        }
        out.close();
        std::string why;
        if (!platform::replace_file(tmp, path, &why))
            fail(VKLLM_ERR_IO, "cannot rename %s to %s: %s", tmp.c_str(), path.c_str(),
                 why.c_str());
    } catch (...) {
        platform::remove_file(tmp);
        throw;
    }
}

}  // namespace vkllm::format
