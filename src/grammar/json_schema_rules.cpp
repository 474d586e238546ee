#include "grammar/json_schema_rules.h"

#include <algorithm>
#include <map>
#include <memory>

#include "common/error.h"
#include "tokenizer/unicode.h"

namespace vkllm::grammar::schema {

namespace {

struct Primitive {
    const char *name;
    const char *body;
    std::vector<std::string> deps;
};

// Bounded where a value is otherwise unbounded (whitespace, digits), so that a model can never
// loop inside a number or between tokens; two exponent digits keep every number finite as a
// double (1e999 would be infinity to most readers). Dates are exact (month lengths, leap years, no
// year 0000) because validators parse them.
const std::vector<Primitive> &primitives() {
    static const std::vector<Primitive> table = {
        {"space", R"("" | " " | "\n" [ \t]{0,20})", {}},
        // The empty language: a schema no value satisfies ({"enum": []}, false).
        {"nothing", R"([^\x00-\U0010FFFF])", {}},
        // \u escapes of surrogates are left out: a lone one is not text, and validators differ on
        // it.
        {"char",
         R"([^"\\\x7F\x00-\x1F] | [\\] (["\\/bfnrt] | "u" ([0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2})))",
         {}},
        {"key-char", R"([^"\\\x7F\x00-\x1F])", {}},
        // What follows a key's first character off the declared names' trie: one rule for all
        // the trie's nodes, so that its repetition is expanded once.
        {"key-rest", R"(key-char{0,63} "\"")", {"key-char"}},
        {"string", R"("\"" char* "\"" space)", {"char", "space"}},
        {"integral", R"([0] | [1-9] [0-9]{0,15})", {}},
        {"number",
         R"("-"? integral ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,2})? space)",
         {"integral", "space"}},
        {"integer", R"("-"? integral space)", {"integral", "space"}},
        {"boolean", R"(("true" | "false") space)", {"space"}},
        {"null", R"("null" space)", {"space"}},
        {"value",
         "object | array | string | number | boolean | null",
         {"object", "array", "string", "number", "boolean", "null"}},
        {"object",
         R"("{" space (string ":" space value ("," space string ":" space value)*)? "}" space)",
         {"space", "string", "value"}},
        {"array", R"("[" space (value ("," space value)*)? "]" space)", {"space", "value"}},
        {"year", R"([0-9]{3} [1-9] | [0-9]{2} [1-9] "0" | [0-9] [1-9] "00" | [1-9] "000")", {}},
        {"leap-year",
         R"([0-9] [0-9] ("0" [48] | [2468] [048] | [13579] [26]) | ("0" [48] | [2468] [048] | [13579] [26]) "00")",
         {}},
        {"date",
         R"(year "-" ("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | )"
         R"(year "-" ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | )"
         R"(year "-02-" ("0" [1-9] | "1" [0-9] | "2" [0-8]) | leap-year "-02-29")",
         {"year", "leap-year"}},
        {"time",
         R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,6})? )"
         R"(("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]))",
         {}},
        {"date-time", R"(date "T" time)", {"date", "time"}},
        {"uuid",
         R"([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})",
         {}},
        // RFC 5322's dot-atom on both sides of the @, no quoted local part and no address
        // literal; the local part at most 64 characters (32 + 2 x 16), the domain 2 to 4
        // labels of at most 60 characters, the last one 2 to 24 letters.
        {"email-atom", R"([A-Za-z0-9!#$%&'*+/=?^_`{|}~-])", {}},
        {"email-label", R"([A-Za-z0-9] ([A-Za-z0-9-]{0,58} [A-Za-z0-9])?)", {}},
        {"email",
         R"(email-atom{1,32} ("." email-atom{1,15}){0,2} "@" (email-label "."){1,3} [A-Za-z]{2,24})",
         {"email-atom", "email-label"}},
        {"email-string", R"("\"" email "\"" space)", {"email", "space"}},
        {"date-string", R"("\"" date "\"" space)", {"date", "space"}},
        {"time-string", R"("\"" time "\"" space)", {"time", "space"}},
        {"date-time-string", R"("\"" date-time "\"" space)", {"date-time", "space"}},
        {"uuid-string", R"("\"" uuid "\"" space)", {"uuid", "space"}},
    };
    return table;
}

// A code point inside [...]: letters and digits as they are, everything else as an escape, so
// that ] ^ - \ and controls never need thought.
std::string class_member(uint32_t cp) {
    if ((cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z'))
        return std::string(1, char(cp));
    if (cp < 0x100) return sformat("\\x%02X", unsigned(cp));
    if (cp < 0x10000) return sformat("\\u%04X", unsigned(cp));
    return sformat("\\U%08X", unsigned(cp));
}

bool plain_key_char(uint32_t cp) {
    return cp >= 0x20 && cp != '"' && cp != '\\' && cp != 0x7F;
}

std::string nines(size_t n) {
    return std::string(n, '9');
}

// Same-length decimal strings lo <= hi: the strings of that length between them.
std::string digits_between(const std::string &lo, const std::string &hi) {
    if (lo.empty()) return "";
    if (lo == hi) return gbnf_literal(lo);
    size_t n = lo.size();
    std::string lo_rest = lo.substr(1), hi_rest = hi.substr(1);
    if (lo[0] == hi[0])
        return gbnf_literal(lo.substr(0, 1)) + " " + digits_between(lo_rest, hi_rest);
    bool lo_zeros = lo_rest.find_first_not_of('0') == std::string::npos;
    bool hi_nines = hi_rest.find_first_not_of('9') == std::string::npos;
    std::string tail = n > 1 ? sformat(" [0-9]{%zu}", n - 1) : "";
    std::vector<std::string> alts;
    if (!lo_zeros)
        alts.push_back(gbnf_literal(lo.substr(0, 1)) + " " + digits_between(lo_rest, nines(n - 1)));
    char first = lo_zeros ? lo[0] : char(lo[0] + 1);
    char last = hi_nines ? hi[0] : char(hi[0] - 1);
    if (first <= last) alts.push_back(sformat("[%c-%c]", first, last) + tail);
    if (!hi_nines)
        alts.push_back(gbnf_literal(hi.substr(0, 1)) + " " +
                       digits_between(std::string(n - 1, '0'), hi_rest));
    std::string out = "(";
    for (size_t i = 0; i < alts.size(); ++i)
        out += (i ? " | " : "") + alts[i];
    return out + ")";
}

// Magnitudes lo <= hi (non-negative) as alternatives, one group of alternatives per length.
void magnitudes(uint64_t lo, uint64_t hi, std::vector<std::string> &alts) {
    std::string a = std::to_string(lo), b = std::to_string(hi);
    for (size_t len = a.size(); len <= b.size(); ++len) {
        std::string low = len == a.size() ? a : "1" + std::string(len - 1, '0');
        std::string high = len == b.size() ? b : nines(len);
        alts.push_back(digits_between(low, high));
    }
}

struct TrieNode {
    std::map<uint32_t, std::unique_ptr<TrieNode>> children;
    bool terminal = false;
};

void write_node(const TrieNode &node, const std::string &name,
                const std::function<std::string()> &fresh,
                std::vector<std::pair<std::string, std::string>> &out) {
    std::string body, excluded;
    size_t slot = out.size();
    out.emplace_back(name, "");
    for (const auto &[cp, child] : node.children) {
        excluded += class_member(cp);
        std::string child_name = fresh();
        std::string cp_text;
        tokenizer::utf8_append(cp_text, cp);
        body += gbnf_literal(cp_text) + " " + child_name + " | ";
        write_node(*child, child_name, fresh, out);
    }
    body += R"([^"\\\x7F\x00-\x1F)" + excluded + "] key-rest";
    if (!node.terminal) body += R"( | "\"")";
    out[slot].second = body;
}

}  // namespace

std::string gbnf_literal(std::string_view text) {
    // A lone surrogate written as \uD800 in the schema decodes to bytes that are not UTF-8.
    for (size_t pos = 0; pos < text.size();) {
        tokenizer::Utf8Char c = tokenizer::utf8_decode(text, pos);
        if (!c.valid)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "JSON Schema string \"%.*s\" is not valid Unicode text (a lone surrogate?)",
                 int(std::min<size_t>(text.size(), 64)), text.data());
        pos += c.len;
    }
    std::string out = "\"";
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c < 0x20 || c == 0x7F) {
            out += sformat("\\x%02X", unsigned(c));
        } else {
            out += char(c);
        }
    }
    return out + "\"";
}

std::optional<std::string> primitive_rule(std::string_view name, std::vector<std::string> &deps) {
    for (const Primitive &p : primitives())
        if (name == p.name) {
            deps = p.deps;
            return std::string(p.body);
        }
    return std::nullopt;
}

const std::vector<std::string> &primitive_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const Primitive &p : primitives())
            v.push_back(p.name);
        return v;
    }();
    return names;
}

std::string integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi) {
    constexpr int64_t kUnbounded = 9999999999999999;  // 16 digits, as `integral`
    // Past 16 digits on the bounded side, the open side reaches the largest bound allowed.
    int64_t low = lo ? *lo : (hi && *hi < -kUnbounded ? -kMaxIntegerBound : -kUnbounded);
    int64_t high = hi ? *hi : (lo && *lo > kUnbounded ? kMaxIntegerBound : kUnbounded);
    std::vector<std::string> alts;
    if (low < 0) {
        std::vector<std::string> neg;
        magnitudes(uint64_t(high < 0 ? -high : 1), uint64_t(-low), neg);
        for (std::string &m : neg)
            alts.push_back("\"-\" " + m);
    }
    if (high >= 0) magnitudes(uint64_t(low > 0 ? low : 0), uint64_t(high), alts);
    std::string out = "(";
    for (size_t i = 0; i < alts.size(); ++i)
        out += (i ? " | " : "") + alts[i];
    return out + ")";
}

std::string key_other_than(const std::vector<std::string> &names,
                           const std::function<std::string()> &fresh,
                           std::vector<std::pair<std::string, std::string>> &out) {
    TrieNode root;
    for (const std::string &name : names) {
        TrieNode *node = &root;
        size_t pos = 0;
        uint32_t cp = 0;
        bool reachable = true;
        while (tokenizer::utf8_next(name, pos, cp)) {
            // A name with a quote, backslash or control character needs an escape, which these
            // keys never use: no key of this rule can spell it.
            if (!plain_key_char(cp)) {
                reachable = false;
                break;
            }
            auto &child = node->children[cp];
            if (!child) child = std::make_unique<TrieNode>();
            node = child.get();
        }
        if (reachable) node->terminal = true;
    }
    std::string first = fresh();
    write_node(root, first, fresh, out);
    return "\"\\\"\" " + first + " space";
}

}  // namespace vkllm::grammar::schema
