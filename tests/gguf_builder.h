// Writes GGUF files for tests, byte by byte, so that tests can also write broken ones.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

class GgufBuilder {
  public:
    explicit GgufBuilder(uint32_t version = 3) { raw("GGUF", 4), u32(version); }

    // Header counts are written by finish() unless overridden here.
    uint64_t n_tensors_override = UINT64_MAX;
    uint64_t n_kv_override = UINT64_MAX;

    void kv_u32(const std::string &k, uint32_t v) { key(k, 4), u32(v); }
    void kv_i32(const std::string &k, int32_t v) { key(k, 5), u32(uint32_t(v)); }
    void kv_f32(const std::string &k, float v) { key(k, 6), f32(v); }
    void kv_bool(const std::string &k, bool v) { key(k, 7), u8(v); }
    void kv_u64(const std::string &k, uint64_t v) { key(k, 10), u64(v); }
    void kv_f64(const std::string &k, double v) {
        key(k, 12);
        raw(&v, 8);
    }
    void kv_string(const std::string &k, const std::string &v) { key(k, 8), str(v); }
    void kv_strings(const std::string &k, const std::vector<std::string> &v) {
        key(k, 9), u32(8), u64(v.size());
        for (const auto &s : v)
            str(s);
    }
    void kv_f32s(const std::string &k, const std::vector<float> &v) {
        key(k, 9), u32(6), u64(v.size());
        for (float f : v)
            f32(f);
    }
    void kv_i32s(const std::string &k, const std::vector<int32_t> &v) {
        key(k, 9), u32(5), u64(v.size());
        for (int32_t i : v)
            u32(uint32_t(i));
    }

    // A tensor of ggml `type` with `dims` (innermost first) and `bytes` of data.
    void tensor(const std::string &name, uint32_t type, std::vector<uint64_t> dims,
                std::vector<uint8_t> bytes) {
        infos_.push_back(Info{name, type, dims, bytes, UINT64_MAX});
    }
    void tensor_at(const std::string &name, uint32_t type, std::vector<uint64_t> dims,
                   std::vector<uint8_t> bytes, uint64_t offset) {
        infos_.push_back(Info{name, type, dims, bytes, offset});
    }

    std::vector<uint8_t> finish(uint64_t alignment = 32) const {
        std::vector<uint8_t> out(head_.begin(), head_.begin() + 8);
        auto put64 = [&out](uint64_t v) {
            for (int i = 0; i < 8; ++i)
                out.push_back(uint8_t(v >> (8 * i)));
        };
        put64(n_tensors_override != UINT64_MAX ? n_tensors_override : infos_.size());
        put64(n_kv_override != UINT64_MAX ? n_kv_override : n_kv_);
        out.insert(out.end(), head_.begin() + 8, head_.end());
        std::vector<uint64_t> offsets;
        uint64_t off = 0;
        for (const Info &t : infos_) {
            uint64_t o = t.offset != UINT64_MAX ? t.offset : off;
            offsets.push_back(o);
            off = (std::max(off, o + t.bytes.size()) + alignment - 1) / alignment * alignment;
        }
        for (size_t i = 0; i < infos_.size(); ++i) {
            const Info &t = infos_[i];
            put64(t.name.size());
            out.insert(out.end(), t.name.begin(), t.name.end());
            for (int b = 0; b < 4; ++b)
                out.push_back(uint8_t(t.dims.size() >> (8 * b)));
            for (uint64_t d : t.dims)
                put64(d);
            for (int b = 0; b < 4; ++b)
                out.push_back(uint8_t(t.type >> (8 * b)));
            put64(offsets[i]);
        }
        if (infos_.empty()) return out;
        while (out.size() % alignment)
            out.push_back(0);
        size_t data = out.size();
        for (size_t i = 0; i < infos_.size(); ++i) {
            if (out.size() < data + offsets[i] + infos_[i].bytes.size())
                out.resize(data + offsets[i] + infos_[i].bytes.size());
            if (!infos_[i].bytes.empty())
                std::memcpy(out.data() + data + offsets[i], infos_[i].bytes.data(),
                            infos_[i].bytes.size());
        }
        return out;
    }

    // Raw bytes at the current end of the metadata (for hand-made broken values).
    void raw(const void *p, size_t n) {
        const uint8_t *b = static_cast<const uint8_t *>(p);
        head_.insert(head_.end(), b, b + n);
    }
    void u8(uint8_t v) { raw(&v, 1); }
    void u32(uint32_t v) { raw(&v, 4); }
    void u64(uint64_t v) { raw(&v, 8); }
    void f32(float v) { raw(&v, 4); }
    void str(const std::string &s) { u64(s.size()), raw(s.data(), s.size()); }
    void key(const std::string &k, uint32_t type) { ++n_kv_, str(k), u32(type); }

  private:
    struct Info {
        std::string name;
        uint32_t type;
        std::vector<uint64_t> dims;
        std::vector<uint8_t> bytes;
        uint64_t offset;
    };
    std::vector<uint8_t> head_;  // magic, version, then key-values (counts go in at finish)
    std::vector<Info> infos_;
    uint64_t n_kv_ = 0;
};
