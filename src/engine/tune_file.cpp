#include "engine/tune_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "common/platform.h"
#include "gpu/device.h"
#include "gpu/kernels/weight_layout.h"

namespace vkllm::engine {

namespace {

constexpr std::string_view kMagic = "vkllm-tune ";
constexpr uint32_t kFormatVersion = 1;
// Matrix rows and columns lie in [1, 2^31): the kernels index them with 32-bit signed values.
constexpr uint64_t kMaxMatrixDim = (uint64_t(1) << 31) - 1;

bool printable(char c) {
    return c >= 0x20 && c <= 0x7e;
}

// `s` as one line of printable ASCII: anything else becomes '?'.
std::string sanitize(std::string_view s) {
    std::string out(s);
    for (char &c : out)
        if (!printable(c)) c = '?';
    return out;
}

// File text quoted in a reason: printable and short, so the reason stays one line.
std::string quote(std::string_view s) {
    constexpr size_t kMax = 40;
    std::string out = "\"" + sanitize(s.substr(0, kMax));
    return out + (s.size() > kMax ? "...\"" : "\"");
}

std::string version_string() {
    return sformat("%d.%d.%d", VKLLM_VERSION_MAJOR, VKLLM_VERSION_MINOR, VKLLM_VERSION_PATCH);
}

const char *family_name(gpu::MatvecFamily f) {
    switch (f) {
        case gpu::MatvecFamily::Dense:
            return "dense";
        case gpu::MatvecFamily::Moe:
            return "moe";
    }
    return nullptr;
}

bool family_from_name(std::string_view name, gpu::MatvecFamily *f) {
    for (gpu::MatvecFamily each : {gpu::MatvecFamily::Dense, gpu::MatvecFamily::Moe})
        if (name == family_name(each)) {
            *f = each;
            return true;
        }
    return false;
}

// What is wrong with one entry's numbers, or "" (shared by the writer and the reader, so that
// what one writes the other reads).
std::string entry_problem(const gpu::MatvecKey &k, const gpu::MatvecVariant &v) {
    if (k.rows < 1 || k.rows > kMaxMatrixDim)
        return sformat("matrix rows %u are not in [1, 2^31)", k.rows);
    if (k.cols < 1 || k.cols > kMaxMatrixDim)
        return sformat("matrix columns %u are not in [1, 2^31)", k.cols);
    if (k.cols % 32 != 0) return sformat("matrix columns %u are not a multiple of 32", k.cols);
    if (v.wg < 1 || v.wg > gpu::kMaxVariantWg || (v.wg & (v.wg - 1)) != 0)
        return sformat("wg=%u is not a power of two in [1, %u]", v.wg, gpu::kMaxVariantWg);
    if (v.rows < 1 || v.rows > gpu::kMaxVariantRows)
        return sformat("rows=%u is not in [1, %u]", v.rows, gpu::kMaxVariantRows);
    return "";
}

// A canonical decimal number (no sign, no leading zero) of at most `max`.
bool parse_number(std::string_view s, uint64_t max, uint32_t *out) {
    if (s.empty() || s.size() > 10 || (s.size() > 1 && s[0] == '0')) return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + uint64_t(c - '0');
    }
    if (v > max) return false;
    *out = uint32_t(v);
    return true;
}

// `token` as NAME=VALUE with VALUE a number of at most `max`.
bool parse_field(std::string_view token, std::string_view name, uint64_t max, uint32_t *out) {
    return token.size() > name.size() && token.substr(0, name.size()) == name &&
           token[name.size()] == '=' && parse_number(token.substr(name.size() + 1), max, out);
}

std::vector<std::string_view> split(std::string_view line) {
    std::vector<std::string_view> tokens;
    size_t start = 0;
    for (size_t sp; (sp = line.find(' ', start)) != std::string_view::npos; start = sp + 1)
        tokens.push_back(line.substr(start, sp - start));
    tokens.push_back(line.substr(start));
    return tokens;
}

// One "matvec" line into *key and *variant, or the reason it is malformed.
std::string parse_entry(std::string_view line, gpu::MatvecKey *key, gpu::MatvecVariant *variant) {
    std::vector<std::string_view> t = split(line);
    if (t.size() != 8)
        return sformat("an entry has 8 fields separated by single spaces, not %zu", t.size());
    if (!family_from_name(t[1], &key->family)) return "unknown kernel family " + quote(t[1]);
    if (!gpu::weight_type_from_name(t[2], &key->type)) return "unknown weight type " + quote(t[2]);
    // Numbers are read up to UINT32_MAX here; entry_problem says which bound one breaks.
    const uint64_t any = UINT32_MAX;
    if (!parse_number(t[3], any, &key->rows)) return "matrix rows " + quote(t[3]) + " malformed";
    if (!parse_number(t[4], any, &key->cols)) return "matrix columns " + quote(t[4]) + " malformed";
    if (!parse_field(t[5], "wg", any, &variant->wg)) return quote(t[5]) + " is not wg=N";
    if (!parse_field(t[6], "rows", any, &variant->rows)) return quote(t[6]) + " is not rows=N";
    uint32_t subgroup = 0;
    if (!parse_field(t[7], "subgroup", 1, &subgroup))
        return quote(t[7]) + " is not subgroup=0 or subgroup=1";
    variant->subgroup = subgroup != 0;
    return entry_problem(*key, *variant);
}

std::string hex(const uint8_t *bytes, size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i)
        out += sformat("%02x", bytes[i]);
    return out;
}

}  // namespace

TuneIdentity tune_identity(const gpu::Device &device) {
    const gpu::DeviceCaps &caps = device.caps();
    const vkllm_device_info &info = caps.info;
    TuneIdentity id;
    id.device = sanitize(sformat("%04x:%04x %s uuid %s", info.vendor_id, info.device_id, info.name,
                                 hex(caps.cache_uuid, VK_UUID_SIZE).c_str()));
    std::string driver = info.driver_name;
    if (info.driver_info[0]) driver += std::string(driver.empty() ? "" : " ") + info.driver_info;
    driver += sformat("%s(0x%08x)", driver.empty() ? "" : " ", caps.driver_version);
    id.driver = sanitize(driver);
    id.vkllm = sanitize(version_string());
    return id;
}

std::string format_tune_file(const TuneIdentity &id, const gpu::MatvecTuning &winners) {
    std::string out = sformat("%.*s%u\n", int(kMagic.size()), kMagic.data(), kFormatVersion);
    out += "device " + sanitize(id.device) + "\n";
    out += "driver " + sanitize(id.driver) + "\n";
    out += "vkllm " + sanitize(id.vkllm) + "\n";
    for (const auto &[k, v] : winners) {  // a std::map: sorted by key
        const char *family = family_name(k.family);
        const char *type = nullptr;
        try {
            type = gpu::weight_type_name(k.type);
        } catch (const Error &) {  // a value outside the table
        }
        std::string problem = !family ? "unknown kernel family"
                              : !type ? "unknown weight type"
                                      : entry_problem(k, v);
        if (!problem.empty())
            fail(VKLLM_ERR_INVALID_ARGUMENT, "cannot store a tuned variant: %s", problem.c_str());
        out += sformat("matvec %s %s %u %u wg=%u rows=%u subgroup=%d\n", family, type, k.rows,
                       k.cols, v.wg, v.rows, v.subgroup ? 1 : 0);
    }
    out += sformat("end %zu\n", winners.size());
    if (out.size() > kMaxTuneFileBytes)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "the tune file would be larger than %zu bytes",
             kMaxTuneFileBytes);
    return out;
}

std::optional<gpu::MatvecTuning> parse_tune_file(std::string_view text,
                                                 const TuneIdentity &expected, std::string *why) {
    auto refuse = [&](const std::string &reason) -> std::optional<gpu::MatvecTuning> {
        if (why) *why = reason;
        return std::nullopt;
    };
    if (text.size() > kMaxTuneFileBytes)
        return refuse(sformat("larger than %zu bytes (%zu)", kMaxTuneFileBytes, text.size()));
    if (text.empty()) return refuse("empty, not a vkllm tune file");
    if (text.back() != '\n') return refuse("truncated: the last line has no line break");

    // Every line whole and printable, before any is read.
    std::vector<std::string_view> lines;
    for (size_t start = 0, nl; start < text.size(); start = nl + 1) {
        nl = text.find('\n', start);
        lines.push_back(text.substr(start, nl - start));
        for (char c : lines.back())
            if (!printable(c))
                return refuse(sformat("line %zu: byte 0x%02x is not printable ASCII", lines.size(),
                                      unsigned(uint8_t(c))));
    }

    std::string_view first = lines[0];
    if (first.substr(0, kMagic.size()) != kMagic)
        return refuse("not a vkllm tune file (line 1 is " + quote(first) + ")");
    if (first.substr(kMagic.size()) != std::to_string(kFormatVersion))
        return refuse("tune file format version " + quote(first.substr(kMagic.size())) +
                      sformat(" is not the one this vkllm reads (%u)", kFormatVersion));

    // The identity: three lines, "KEYWORD VALUE".
    const char *keywords[3] = {"device", "driver", "vkllm"};
    const std::string *wanted[3] = {&expected.device, &expected.driver, &expected.vkllm};
    std::string_view have[3];
    std::string differ;
    for (size_t i = 0; i < 3; ++i) {
        size_t n = i + 2;
        std::string prefix = std::string(keywords[i]) + " ";
        if (lines.size() <= i + 1) return refuse(sformat("truncated after line %zu", n - 1));
        std::string_view line = lines[i + 1];
        if (line.substr(0, prefix.size()) != prefix)
            return refuse(sformat("line %zu: expected \"%s ...\", found ", n, keywords[i]) +
                          quote(line));
        have[i] = line.substr(prefix.size());
        if (have[i] != sanitize(*wanted[i]))
            differ += std::string(differ.empty() ? "" : ", ") + keywords[i];
    }
    if (!differ.empty())
        return refuse("stale (another " + differ + "): made for device " + sanitize(have[0]) +
                      " / driver " + sanitize(have[1]) + " / vkllm " + sanitize(have[2]));

    gpu::MatvecTuning winners;
    size_t i = 4;
    for (; i < lines.size() && lines[i].substr(0, 7) == "matvec "; ++i) {
        gpu::MatvecKey key;
        gpu::MatvecVariant variant;
        std::string problem = parse_entry(lines[i], &key, &variant);
        if (!problem.empty()) return refuse(sformat("line %zu: ", i + 1) + problem);
        if (!winners.emplace(key, variant).second)
            return refuse(sformat("line %zu: the key ", i + 1) +
                          quote(lines[i].substr(0, lines[i].find(" wg="))) + " is listed twice");
    }
    if (i == lines.size()) return refuse(sformat("truncated: no \"end\" line after line %zu", i));
    uint32_t count = 0;
    std::string_view end = lines[i];
    if (end.substr(0, 4) != "end " || !parse_number(end.substr(4), UINT32_MAX, &count))
        return refuse(sformat("line %zu: expected an entry or \"end N\", found ", i + 1) +
                      quote(end));
    if (count != winners.size())
        return refuse(sformat("line %zu: \"end\" counts %u entries, the file has %zu", i + 1, count,
                              winners.size()));
    if (i + 1 != lines.size()) return refuse(sformat("line %zu: text after \"end\"", i + 2));
    return winners;
}

gpu::MatvecTuning read_tune_file(const std::string &path, const TuneIdentity &expected,
                                 const Logger &log) {
    auto ignore = [&](const std::string &why) {
        log(VKLLM_LOG_WARNING, "ignoring the tune file " + path + ": " + why);
        return gpu::MatvecTuning{};
    };
    std::FILE *f = platform::open_file(path, "rb");
    if (!f) {
        if (errno == ENOENT) return {};  // nothing tuned yet
        return ignore(std::string("cannot open it: ") + std::strerror(errno));
    }
    // One byte more than a file may hold, so that a larger one is seen as larger.
    std::string text(kMaxTuneFileBytes + 1, '\0');
    size_t n = std::fread(&text[0], 1, text.size(), f);
    bool failed = std::ferror(f) != 0;
    int err = errno;
    std::fclose(f);
    if (failed) return ignore(std::string("cannot read it: ") + std::strerror(err));
    text.resize(n);
    std::string why;
    std::optional<gpu::MatvecTuning> winners = parse_tune_file(text, expected, &why);
    if (!winners) return ignore(why);
    return *winners;
}

void write_tune_file(const std::string &path, const TuneIdentity &id,
                     const gpu::MatvecTuning &winners) {
    std::string text = format_tune_file(id, winners);
    std::string why;
    if (!platform::write_file_atomically(path, text, &why))
        fail(VKLLM_ERR_IO, "cannot write the tune file %s: %s", path.c_str(), why.c_str());
}

}  // namespace vkllm::engine
