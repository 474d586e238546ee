#include "tokenizer/unicode.h"

#include "tokenizer/unicode_tables.h"

#include <algorithm>
#include <vector>

namespace vkllm::tokenizer {

Utf8Char utf8_decode(std::string_view s, size_t pos) {
    const Utf8Char invalid{kReplacementChar, 1, false};
    auto byte = [&](size_t i) { return uint32_t(uint8_t(s[i])); };
    uint32_t b0 = byte(pos);
    if (b0 < 0x80) return {b0, 1, true};
    uint32_t len, cp, min;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2, cp = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3, cp = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
        return invalid;
    }
    if (s.size() - pos < len) return invalid;
    for (uint32_t i = 1; i < len; ++i) {
        uint32_t b = byte(pos + i);
        if ((b & 0xC0) != 0x80) return invalid;
        cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return invalid;
    return {cp, len, true};
}

bool utf8_next(std::string_view s, size_t &pos, uint32_t &cp) {
    if (pos >= s.size()) return false;
    Utf8Char c = utf8_decode(s, pos);
    cp = c.cp;
    pos += c.len;
    return true;
}

void utf8_append(std::string &out, uint32_t cp) {
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacementChar;
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

Category category(uint32_t cp) {
    using tables::CategoryRun;
    const CategoryRun *end = tables::kCategoryRuns + tables::kCategoryRunCount;
    // The last run starting at or before cp; the first run starts at 0.
    const CategoryRun *run =
        std::upper_bound(tables::kCategoryRuns, end, cp,
                         [](uint32_t c, const CategoryRun &r) { return c < r.first; });
    return run[-1].category;
}

bool is_han(uint32_t cp) {
    using tables::Range;
    if (cp < tables::kHan[0].first) return false;
    const Range *end = tables::kHan + tables::kHanCount;
    const Range *r = std::upper_bound(tables::kHan, end, cp,
                                      [](uint32_t c, const Range &x) { return c < x.first; });
    return cp <= r[-1].last;
}

bool is_whitespace(uint32_t cp) {
    for (size_t i = 0; i < tables::kWhitespaceCount; ++i)
        if (cp >= tables::kWhitespace[i].first && cp <= tables::kWhitespace[i].last) return true;
    return false;
}

bool is_control_or_format(uint32_t cp) {
    const tables::Range *end = tables::kControl + tables::kControlCount;
    const tables::Range *r =
        std::lower_bound(tables::kControl, end, cp,
                         [](const tables::Range &range, uint32_t c) { return range.last < c; });
    return r != end && cp >= r->first;
}

void append_lowercase(uint32_t cp, std::vector<uint32_t> &out) {
    using tables::Decomposition;
    const Decomposition *end = tables::kLowercase + tables::kLowercaseCount;
    const Decomposition *d =
        std::lower_bound(tables::kLowercase, end, cp,
                         [](const Decomposition &map, uint32_t c) { return map.cp < c; });
    if (d == end || d->cp != cp) {
        out.push_back(cp);
        return;
    }
    out.push_back(d->first);
    if (d->second != 0) out.push_back(d->second);
}

uint8_t combining_class(uint32_t cp) {
    using tables::CombiningRange;
    if (cp < 0x300) return 0;  // below the first combining mark
    const CombiningRange *end = tables::kCombiningRanges + tables::kCombiningRangeCount;
    const CombiningRange *r =
        std::lower_bound(tables::kCombiningRanges, end, cp,
                         [](const CombiningRange &range, uint32_t c) { return range.last < c; });
    return r != end && cp >= r->first ? r->ccc : 0;
}

// Hangul syllables decompose and compose by formula (Unicode 3.12).
static const uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
static const uint32_t kLCount = 19, kVCount = 21, kTCount = 28;
static const uint32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

// Invalid input bytes travel through normalisation as these values, above any code point and so
// in no table: starters (class 0) that compose with nothing, written back as the byte.
static const uint32_t kRawByte = 0x80000000;

static void decompose(uint32_t cp, std::vector<uint32_t> &out) {
    if (cp >= kSBase && cp < kSBase + kSCount) {
        uint32_t s = cp - kSBase;
        out.push_back(kLBase + s / kNCount);
        out.push_back(kVBase + (s % kNCount) / kTCount);
        if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
        return;
    }
    using tables::Decomposition;
    const Decomposition *end = tables::kDecompositions + tables::kDecompositionCount;
    const Decomposition *d =
        std::lower_bound(tables::kDecompositions, end, cp,
                         [](const Decomposition &dec, uint32_t c) { return dec.cp < c; });
    if (d == end || d->cp != cp) {
        out.push_back(cp);
        return;
    }
    decompose(d->first, out);
    if (d->second != 0) decompose(d->second, out);
}

// Stable sort of each run of non-starters by combining class.
static void canonical_order(std::vector<uint32_t> &cps) {
    auto by_class = [](uint32_t a, uint32_t b) { return combining_class(a) < combining_class(b); };
    for (size_t i = 0; i < cps.size();) {
        size_t j = i;
        while (j < cps.size() && combining_class(cps[j]) != 0)
            ++j;
        if (j - i > 1) std::stable_sort(cps.begin() + i, cps.begin() + j, by_class);
        i = j == i ? i + 1 : j;
    }
}

// The primary composite of a + b, or 0.
static uint32_t compose_pair(uint32_t a, uint32_t b) {
    if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
        return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
        b < kTBase + kTCount)
        return a + (b - kTBase);
    using tables::Composition;
    const Composition *end = tables::kCompositions + tables::kCompositionCount;
    const Composition *c = std::lower_bound(tables::kCompositions, end, Composition{a, b, 0},
                                            [](const Composition &x, const Composition &y) {
                                                return x.first < y.first ||
                                                       (x.first == y.first && x.second < y.second);
                                            });
    return c != end && c->first == a && c->second == b ? c->composite : 0;
}

// Canonical composition in place (UAX #15, D117): each character joins the last starter unless
// a character between them is a starter or has a class at least its own. After canonical
// ordering the last character kept has the highest class of those between.
static void compose(std::vector<uint32_t> &cps) {
    size_t out = 0;
    size_t starter = SIZE_MAX;
    uint8_t last_ccc = 0;
    for (uint32_t cp : cps) {
        uint8_t c = combining_class(cp);
        if (starter != SIZE_MAX) {
            bool adjacent = starter == out - 1;
            if (adjacent || last_ccc < c) {
                uint32_t composite = compose_pair(cps[starter], cp);
                if (composite != 0) {
                    cps[starter] = composite;
                    continue;
                }
            }
        }
        if (c == 0) starter = out;
        last_ccc = c;
        cps[out++] = cp;
    }
    cps.resize(out);
}

std::vector<uint32_t> nfd(const std::vector<uint32_t> &cps) {
    std::vector<uint32_t> out;
    out.reserve(cps.size());
    for (uint32_t cp : cps)
        decompose(cp, out);
    canonical_order(out);
    return out;
}

std::string nfc(std::string_view utf8) {
    bool ascii = std::all_of(utf8.begin(), utf8.end(), [](char ch) { return uint8_t(ch) < 0x80; });
    if (ascii) return std::string(utf8);
    std::vector<uint32_t> cps;
    cps.reserve(utf8.size());
    for (size_t pos = 0; pos < utf8.size();) {
        Utf8Char c = utf8_decode(utf8, pos);
        if (c.valid)
            decompose(c.cp, cps);
        else
            cps.push_back(kRawByte | uint8_t(utf8[pos]));
        pos += c.len;
    }
    canonical_order(cps);
    compose(cps);
    std::string out;
    out.reserve(utf8.size());
    for (uint32_t v : cps) {
        if (v >= kRawByte)
            out += char(v & 0xFF);
        else
            utf8_append(out, v);
    }
    return out;
}

}  // namespace vkllm::tokenizer
