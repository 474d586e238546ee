#include "format/gguf.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>

#include "common/error.h"

namespace vkllm::format {

uint64_t scalar_size(ValueType t) {
    switch (t) {
        case ValueType::U8:
        case ValueType::I8:
        case ValueType::Bool:
            return 1;
        case ValueType::U16:
        case ValueType::I16:
            return 2;
        case ValueType::U32:
        case ValueType::I32:
        case ValueType::F32:
            return 4;
        case ValueType::U64:
        case ValueType::I64:
        case ValueType::F64:
            return 8;
        default:
            return 0;  // string, array: variable
    }
}

namespace {

const uint64_t kMaxDims = 4;

// Reads the file front to back; every read is checked against what is left.
class Cursor {
  public:
    Cursor(const MappedFile &f) : file_(f) {}

    uint64_t pos() const { return pos_; }
    uint64_t left() const { return file_.size() - pos_; }

    void need(uint64_t n, const char *what) const {
        if (n > left())
            fail(VKLLM_ERR_FORMAT,
                 "%s: truncated at byte %" PRIu64 ": %s needs %" PRIu64 " bytes, %" PRIu64
                 " are left",
                 file_.path().c_str(), pos_, what, n, left());
    }

    template <typename T>
    T read(const char *what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, file_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    std::string_view string(const char *what) {
        uint64_t at = pos_;
        uint64_t n = read<uint64_t>(what);
        if (n > left()) {
            pos_ = at;
            fail(VKLLM_ERR_FORMAT,
                 "%s: %s at byte %" PRIu64 " claims %" PRIu64 " bytes, only %" PRIu64
                 " are left in the file",
                 file_.path().c_str(), what, at, n, left() - 8);
        }
        std::string_view s(reinterpret_cast<const char *>(file_.data() + pos_), size_t(n));
        pos_ += n;
        return s;
    }

    void skip(uint64_t n, const char *what) {
        need(n, what);
        pos_ += n;
    }

  private:
    const MappedFile &file_;
    uint64_t pos_ = 0;
};

bool valid_type(uint32_t t) {
    return t <= uint32_t(ValueType::F64);
}

}  // namespace

const char *value_type_name(ValueType t) {
    static const char *names[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                  "bool", "string", "array", "u64", "i64", "f64"};
    return uint32_t(t) <= uint32_t(ValueType::F64) ? names[uint32_t(t)] : "invalid";
}

GgufFile::GgufFile(const std::string &path) : GgufFile(std::make_unique<MappedFile>(path)) {}

GgufFile::GgufFile(std::unique_ptr<MappedFile> file) : file_(std::move(file)) {
    const char *p = file_->path().c_str();
    Cursor c(*file_);
    if (file_->size() < 4 || std::memcmp(file_->data(), "GGUF", 4) != 0)
        fail(VKLLM_ERR_FORMAT, "%s: not a GGUF file (no \"GGUF\" magic at byte 0)", p);
    c.skip(4, "magic");
    version_ = c.read<uint32_t>("version");
    if (version_ == 1)
        fail(VKLLM_ERR_UNSUPPORTED, "%s: GGUF version 1 is not supported (re-convert the model)",
             p);
    if (version_ > 0xFFFF && (version_ >> 24) >= 2 && (version_ >> 24) <= 3)
        fail(VKLLM_ERR_UNSUPPORTED, "%s: big-endian GGUF is not supported", p);
    if (version_ != 2 && version_ != 3)
        fail(VKLLM_ERR_UNSUPPORTED, "%s: GGUF version %u is not supported (2 and 3 are)", p,
             version_);
    uint64_t n_tensors = c.read<uint64_t>("tensor count");
    uint64_t n_kv = c.read<uint64_t>("metadata count");

    // The smallest key-value is 8 (key length) + 1 (key) + 4 (type) + 1 (value) bytes; the
    // smallest tensor info 8 + 1 + 4 + 8 + 4 + 8. Larger counts cannot fit in the file.
    if (n_kv > c.left() / 14)
        fail(VKLLM_ERR_FORMAT,
             "%s: metadata count %" PRIu64 " at byte 16 cannot fit in %" PRIu64 " bytes", p, n_kv,
             c.left());
    if (n_tensors > c.left() / 33)
        fail(VKLLM_ERR_FORMAT,
             "%s: tensor count %" PRIu64 " at byte 8 cannot fit in %" PRIu64 " bytes", p, n_tensors,
             c.left());

    keys_.reserve(size_t(n_kv));
    for (uint64_t i = 0; i < n_kv; ++i) {
        uint64_t at = c.pos();
        KeyValue kv;
        kv.key = std::string(c.string("metadata key"));
        if (kv.key.empty())
            fail(VKLLM_ERR_FORMAT, "%s: empty metadata key at byte %" PRIu64, p, at);
        uint64_t type_at = c.pos();
        uint32_t type = c.read<uint32_t>("metadata type");
        if (!valid_type(type))
            fail(VKLLM_ERR_FORMAT, "%s: key %s has invalid value type %u at byte %" PRIu64, p,
                 kv.key.c_str(), type, type_at);
        kv.type = ValueType(type);
        kv.element_type = kv.type;
        kv.count = 1;
        if (kv.type == ValueType::Array) {
            uint64_t et_at = c.pos();
            uint32_t et = c.read<uint32_t>("array element type");
            if (!valid_type(et))
                fail(VKLLM_ERR_FORMAT,
                     "%s: key %s has invalid array element type %u at byte %" PRIu64, p,
                     kv.key.c_str(), et, et_at);
            if (ValueType(et) == ValueType::Array)
                fail(VKLLM_ERR_UNSUPPORTED, "%s: key %s is an array of arrays (byte %" PRIu64 ")",
                     p, kv.key.c_str(), et_at);
            kv.element_type = ValueType(et);
            uint64_t count_at = c.pos();
            kv.count = c.read<uint64_t>("array length");
            uint64_t min_size =
                kv.element_type == ValueType::String ? 8 : scalar_size(kv.element_type);
            if (kv.count > c.left() / min_size)
                fail(VKLLM_ERR_FORMAT,
                     "%s: key %s: array of %" PRIu64 " %s at byte %" PRIu64
                     " cannot fit in the %" PRIu64 " bytes left",
                     p, kv.key.c_str(), kv.count, value_type_name(kv.element_type), count_at,
                     c.left());
        }
        kv.offset = c.pos();
        if (kv.element_type == ValueType::String) {
            for (uint64_t j = 0; j < kv.count; ++j)
                c.string("string value");
        } else {
            uint64_t n = scalar_size(kv.element_type) * kv.count;  // count checked above
            c.skip(n, "metadata value");
        }
        if (key_index_.count(kv.key))
            fail(VKLLM_ERR_FORMAT, "%s: duplicate metadata key %s at byte %" PRIu64, p,
                 kv.key.c_str(), at);
        key_index_[kv.key] = keys_.size();
        keys_.push_back(std::move(kv));
    }
    keys_end_ = c.pos();

    if (const KeyValue *a = find("general.alignment")) {
        if (a->type != ValueType::U32)
            fail(VKLLM_ERR_FORMAT, "%s: general.alignment is %s, must be u32", p,
                 value_type_name(a->type));
        uint32_t v;
        std::memcpy(&v, file_->data() + a->offset, 4);
        if (v == 0 || (v & (v - 1)) != 0)
            fail(VKLLM_ERR_FORMAT, "%s: general.alignment %u is not a power of two", p, v);
        alignment_ = v;
    }

    tensors_.reserve(size_t(n_tensors));
    for (uint64_t i = 0; i < n_tensors; ++i) {
        uint64_t at = c.pos();
        TensorInfo t{};
        t.name = std::string(c.string("tensor name"));
        const char *name = t.name.c_str();
        if (t.name.empty()) fail(VKLLM_ERR_FORMAT, "%s: empty tensor name at byte %" PRIu64, p, at);
        t.n_dims = c.read<uint32_t>("tensor dimension count");
        if (t.n_dims == 0 || t.n_dims > kMaxDims)
            fail(VKLLM_ERR_FORMAT,
                 "%s: tensor %s has %u dimensions (1 to 4 allowed), byte %" PRIu64, p, name,
                 t.n_dims, at);
        t.n_elements = 1;
        for (uint32_t d = 0; d < t.n_dims; ++d) {
            t.dims[d] = c.read<uint64_t>("tensor dimension");
            if (t.dims[d] == 0 || t.dims[d] > uint64_t(INT64_MAX) ||
                t.n_elements > uint64_t(INT64_MAX) / t.dims[d])
                fail(VKLLM_ERR_FORMAT,
                     "%s: tensor %s: dimension %u = %" PRIu64 " is zero or overflows (byte %" PRIu64
                     ")",
                     p, name, d, t.dims[d], c.pos() - 8);
            t.n_elements *= t.dims[d];
        }
        for (uint32_t d = t.n_dims; d < kMaxDims; ++d)
            t.dims[d] = 1;
        uint32_t type = c.read<uint32_t>("tensor type");
        t.type = ggml_type(type);
        if (!t.type)
            fail(VKLLM_ERR_UNSUPPORTED, "%s: tensor %s has unknown ggml type %u", p, name, type);
        if (t.dims[0] % t.type->block_elements != 0)
            fail(VKLLM_ERR_FORMAT,
                 "%s: tensor %s: row of %" PRIu64
                 " elements is not a whole number of %s blocks of %u",
                 p, name, t.dims[0], t.type->name, t.type->block_elements);
        uint64_t blocks = t.n_elements / t.type->block_elements;
        if (blocks > UINT64_MAX / t.type->block_bytes)
            fail(VKLLM_ERR_FORMAT, "%s: tensor %s: byte size overflows", p, name);
        t.n_bytes = blocks * t.type->block_bytes;
        uint64_t off_at = c.pos();
        t.offset = c.read<uint64_t>("tensor offset");
        if (t.offset % alignment_ != 0)
            fail(VKLLM_ERR_FORMAT,
                 "%s: tensor %s: offset %" PRIu64 " (byte %" PRIu64
                 ") is not a multiple of the "
                 "alignment %" PRIu64,
                 p, name, t.offset, off_at, alignment_);
        if (tensor_index_.count(t.name))
            fail(VKLLM_ERR_FORMAT, "%s: duplicate tensor name %s at byte %" PRIu64, p, name, at);
        tensor_index_[t.name] = tensors_.size();
        tensors_.push_back(std::move(t));
    }

    // The data section starts at the next multiple of the alignment.
    uint64_t pad = (alignment_ - c.pos() % alignment_) % alignment_;
    data_offset_ = c.pos() + pad;
    if (tensors_.empty()) return;
    if (pad > c.left())
        fail(VKLLM_ERR_FORMAT,
             "%s: truncated: the data section would start at byte %" PRIu64
             " past the end (%" PRIu64 " bytes)",
             p, data_offset_, file_->size());
    uint64_t data_size = file_->size() - data_offset_;
    std::vector<const TensorInfo *> by_offset;
    for (TensorInfo &t : tensors_) {
        if (t.offset > data_size || t.n_bytes > data_size - t.offset)
            fail(VKLLM_ERR_FORMAT,
                 "%s: tensor %s: %" PRIu64 " bytes at data offset %" PRIu64
                 " run past the end of the file (data section has %" PRIu64 " bytes)",
                 p, t.name.c_str(), t.n_bytes, t.offset, data_size);
        t.offset += data_offset_;
        by_offset.push_back(&t);
    }
    std::sort(by_offset.begin(), by_offset.end(),
              [](const TensorInfo *a, const TensorInfo *b) { return a->offset < b->offset; });
    for (size_t i = 1; i < by_offset.size(); ++i)
        if (by_offset[i - 1]->offset + by_offset[i - 1]->n_bytes > by_offset[i]->offset)
            fail(VKLLM_ERR_FORMAT, "%s: tensors %s and %s overlap", p,
                 by_offset[i - 1]->name.c_str(), by_offset[i]->name.c_str());
}

const KeyValue *GgufFile::find(std::string_view key) const {
    auto it = key_index_.find(std::string(key));
    return it == key_index_.end() ? nullptr : &keys_[it->second];
}

const TensorInfo *GgufFile::find_tensor(std::string_view name) const {
    auto it = tensor_index_.find(std::string(name));
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::string_view GgufFile::string_at(uint64_t offset) const {
    uint64_t n;
    std::memcpy(&n, file_->data() + offset, 8);  // validated while parsing
    return std::string_view(reinterpret_cast<const char *>(file_->data() + offset + 8), size_t(n));
}

std::string_view GgufFile::value_bytes(const KeyValue &kv) const {
    uint64_t size = scalar_size(kv.element_type) * kv.count;  // bounded while parsing
    if (kv.element_type == ValueType::String) {
        size = 0;
        for (uint64_t i = 0; i < kv.count; ++i)
            size += 8 + string_at(kv.offset + size).size();
    }
    return std::string_view(reinterpret_cast<const char *>(file_->data() + kv.offset),
                            size_t(size));
}

static void wrong_type(const std::string &path, const KeyValue &kv, const char *want) {
    std::string have = value_type_name(kv.type);
    if (kv.type == ValueType::Array) have += std::string(" of ") + value_type_name(kv.element_type);
    fail(VKLLM_ERR_FORMAT, "%s: key %s is %s, expected %s", path.c_str(), kv.key.c_str(),
         have.c_str(), want);
}

int64_t GgufFile::scalar_int(const KeyValue &kv, uint64_t off, ValueType t) const {
    const uint8_t *d = file_->data() + off;
    auto get = [d](auto v) {
        std::memcpy(&v, d, sizeof v);
        return v;
    };
    switch (t) {
        case ValueType::U8:
            return get(uint8_t());
        case ValueType::I8:
            return get(int8_t());
        case ValueType::U16:
            return get(uint16_t());
        case ValueType::I16:
            return get(int16_t());
        case ValueType::U32:
            return get(uint32_t());
        case ValueType::I32:
            return get(int32_t());
        case ValueType::I64:
            return get(int64_t());
        case ValueType::Bool:
            return get(uint8_t()) != 0;
        case ValueType::U64: {
            uint64_t v = get(uint64_t());
            if (v > uint64_t(INT64_MAX))
                fail(VKLLM_ERR_FORMAT, "%s: key %s: value %" PRIu64 " is out of range",
                     path().c_str(), kv.key.c_str(), v);
            return int64_t(v);
        }
        default:
            wrong_type(path(), kv, "an integer");
            return 0;
    }
}

double GgufFile::scalar_float(const KeyValue &kv, uint64_t off, ValueType t) const {
    if (t == ValueType::F32) {
        float v;
        std::memcpy(&v, file_->data() + off, 4);
        return v;
    }
    if (t == ValueType::F64) {
        double v;
        std::memcpy(&v, file_->data() + off, 8);
        return v;
    }
    return double(scalar_int(kv, off, t));
}

std::optional<std::string_view> GgufFile::get_string(std::string_view key) const {
    const KeyValue *kv = find(key);
    if (!kv) return std::nullopt;
    if (kv->type != ValueType::String) wrong_type(path(), *kv, "a string");
    return string_at(kv->offset);
}

std::optional<int64_t> GgufFile::get_int(std::string_view key) const {
    const KeyValue *kv = find(key);
    if (!kv) return std::nullopt;
    if (kv->type == ValueType::Array || kv->type == ValueType::String ||
        kv->type == ValueType::F32 || kv->type == ValueType::F64)
        wrong_type(path(), *kv, "an integer");
    return scalar_int(*kv, kv->offset, kv->type);
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
    const KeyValue *kv = find(key);
    if (!kv) return std::nullopt;
    if (kv->type == ValueType::Array || kv->type == ValueType::String)
        wrong_type(path(), *kv, "a number");
    return scalar_float(*kv, kv->offset, kv->type);
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
    const KeyValue *kv = find(key);
    if (!kv) return std::nullopt;
    if (kv->type != ValueType::Bool) wrong_type(path(), *kv, "a bool");
    return file_->data()[kv->offset] != 0;
}

std::vector<std::string_view> GgufFile::get_string_array(std::string_view key) const {
    std::vector<std::string_view> out;
    const KeyValue *kv = find(key);
    if (!kv) return out;
    if (kv->type != ValueType::Array || kv->element_type != ValueType::String)
        wrong_type(path(), *kv, "an array of strings");
    out.reserve(size_t(kv->count));
    uint64_t off = kv->offset;
    for (uint64_t i = 0; i < kv->count; ++i) {
        out.push_back(string_at(off));
        off += 8 + out.back().size();
    }
    return out;
}

std::vector<float> GgufFile::get_f32_array(std::string_view key) const {
    std::vector<float> out;
    const KeyValue *kv = find(key);
    if (!kv) return out;
    if (kv->type != ValueType::Array || kv->element_type != ValueType::F32)
        wrong_type(path(), *kv, "an array of f32");
    out.resize(size_t(kv->count));
    std::memcpy(out.data(), file_->data() + kv->offset, out.size() * 4);
    return out;
}

std::vector<int32_t> GgufFile::get_i32_array(std::string_view key) const {
    std::vector<int32_t> out;
    const KeyValue *kv = find(key);
    if (!kv) return out;
    if (kv->type != ValueType::Array || kv->element_type != ValueType::I32)
        wrong_type(path(), *kv, "an array of i32");
    out.resize(size_t(kv->count));
    std::memcpy(out.data(), file_->data() + kv->offset, out.size() * 4);
    return out;
}

static std::string quoted(std::string_view s, size_t max_bytes) {
    std::string out = "\"";
    for (size_t i = 0; i < s.size() && i < max_bytes; ++i) {
        unsigned char ch = static_cast<unsigned char>(s[i]);
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += char(ch);
        } else if (ch == '\n') {
            out += "\\n";
        } else if (ch < 0x20 || ch == 0x7f) {
            out += sformat("\\x%02x", ch);
        } else {
            out += char(ch);
        }
    }
    if (s.size() > max_bytes)
        out += sformat("...\" (%zu bytes)", s.size());
    else
        out += '"';
    return out;
}

std::string GgufFile::value_text(const KeyValue &kv, size_t max_elements) const {
    auto one = [&](uint64_t off, ValueType t) -> std::string {
        if (t == ValueType::String) return quoted(string_at(off), 200);
        if (t == ValueType::Bool) return file_->data()[off] ? "true" : "false";
        if (t == ValueType::F32 || t == ValueType::F64)
            return sformat("%g", scalar_float(kv, off, t));
        if (t == ValueType::U64) {
            uint64_t v;
            std::memcpy(&v, file_->data() + off, 8);
            return sformat("%" PRIu64, v);
        }
        return sformat("%" PRId64, scalar_int(kv, off, t));
    };
    if (kv.type != ValueType::Array) return one(kv.offset, kv.type);
    std::string out = "[";
    uint64_t off = kv.offset;
    for (uint64_t i = 0; i < kv.count && i < max_elements; ++i) {
        if (i) out += ", ";
        out += one(off, kv.element_type);
        off += kv.element_type == ValueType::String ? 8 + string_at(off).size()
                                                    : scalar_size(kv.element_type);
    }
    if (kv.count > max_elements) out += sformat(", ... %" PRIu64 " in all", kv.count);
    return out + "]";
}

std::unique_ptr<GgufFile> GgufFile::metadata_copy() const {
    // The header and the key-values as they are, with a tensor count of 0: a valid file.
    std::vector<uint8_t> head(file_->data(), file_->data() + keys_end_);
    uint64_t n_tensors = 0;
    std::memcpy(head.data() + 8, &n_tensors, sizeof n_tensors);
    return std::unique_ptr<GgufFile>(
        new GgufFile(std::make_unique<MappedFile>(file_->path(), std::move(head))));
}

}  // namespace vkllm::format
