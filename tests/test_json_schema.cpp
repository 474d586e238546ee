// The JSON Schema converter (src/grammar/json_schema) on the corpus in tests/data/json_schema:
// for each NAME.json, every line of NAME.valid.jsonl is a sentence of its grammar and no line of
// NAME.invalid.jsonl is (tests/check_json_schema_samples.py checks the same files with Python's
// jsonschema, so the corpus itself is checked by an independent validator). Random walks
// through each grammar must end in JSON that a small validator written here accepts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "chat/json_value.h"
#include "grammar/json_schema.h"
#include "grammar_test_util.h"
#include "tokenizer/unicode.h"

namespace vkllm::grammar {
namespace {

using chat::Value;
using Kind = chat::Value::Kind;

const std::string kCorpus = std::string(VKLLM_TEST_DATA_DIR) + "/json_schema/";

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> read_lines(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);)
        if (line.find_first_not_of(" \t") != std::string::npos) out.push_back(line);
    return out;
}

std::vector<std::string> corpus_names() {
    std::vector<std::string> names;
    for (const auto &entry : std::filesystem::directory_iterator(kCorpus)) {
        std::string file = entry.path().filename().string();
        if (file.size() > 5 && file.substr(file.size() - 5) == ".json")
            names.push_back(file.substr(0, file.size() - 5));
    }
    std::sort(names.begin(), names.end());
    return names;
}

// --- A small validator for the keywords the converter supports, written from the JSON Schema
// specification rather than from the converter: "" when `v` satisfies `s`, else why not.

std::string compact(const Value &v) {
    chat::JsonOptions o;
    o.item_separator = ",";
    o.key_separator = ":";
    o.sort_keys = true;
    return chat::to_json(v, o);
}

size_t code_points(const std::string &s) {
    size_t n = 0, pos = 0;
    uint32_t cp;
    while (tokenizer::utf8_next(s, pos, cp))
        ++n;
    return n;
}

bool is_type(const Value &v, const std::string &t) {
    if (t == "null") return v.is_none();
    if (t == "boolean") return v.kind() == Kind::Bool;
    if (t == "string") return v.is_str();
    if (t == "array") return v.is_list();
    if (t == "object") return v.is_dict();
    bool number = v.kind() == Kind::Int || v.kind() == Kind::Float;
    if (t == "number") return number;
    return number && std::floor(v.as_float()) == v.as_float();  // integer
}

bool calendar_date(const std::string &s) {
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
    int y = std::stoi(s.substr(0, 4)), m = std::stoi(s.substr(5, 2)), d = std::stoi(s.substr(8, 2));
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (y < 1 || m < 1 || m > 12 || d < 1) return false;
    return d <= days[m - 1] + (m == 2 && leap ? 1 : 0);
}

std::string check(const Value &v, const Value &s, const Value &root);

const Value *field(const Value &s, const char *key) {
    return s.dict().find(std::string(key));
}

std::string check_object(const Value &v, const Value &s, const Value &root) {
    const Value *props = field(s, "properties");
    if (const Value *req = field(s, "required"))
        for (const Value &name : req->list())
            if (!v.dict().find(name.str())) return "required key '" + name.str() + "' is missing";
    const Value *extra = field(s, "additionalProperties");
    for (const auto &[key, value] : v.dict().items) {
        const Value *sub = props ? props->dict().find(key.str()) : nullptr;
        if (!sub && extra) sub = extra;
        if (!sub) continue;
        if (sub->kind() == Kind::Bool && !sub->as_bool()) return "extra key '" + key.str() + "'";
        std::string e = check(value, *sub, root);
        if (!e.empty()) return key.str() + ": " + e;
    }
    return "";
}

std::string check_array(const Value &v, const Value &s, const Value &root) {
    const auto &items = v.list();
    if (const Value *n = field(s, "minItems"); n && items.size() < size_t(n->as_int()))
        return "too few items";
    if (const Value *n = field(s, "maxItems"); n && items.size() > size_t(n->as_int()))
        return "too many items";
    const Value *prefix = field(s, "prefixItems");
    const Value *rest = field(s, "items");
    for (size_t i = 0; i < items.size(); ++i) {
        const Value *sub = prefix && i < prefix->list().size() ? &prefix->list()[i] : rest;
        if (!sub) continue;
        if (sub->kind() == Kind::Bool && !sub->as_bool()) return "an item past prefixItems";
        std::string e = check(items[i], *sub, root);
        if (!e.empty()) return "[" + std::to_string(i) + "]: " + e;
    }
    return "";
}

std::string check_scalar(const Value &v, const Value &s) {
    if (v.is_str()) {
        size_t n = code_points(v.str());
        if (const Value *m = field(s, "minLength"); m && n < size_t(m->as_int()))
            return "too short";
        if (const Value *m = field(s, "maxLength"); m && n > size_t(m->as_int())) return "too long";
        if (const Value *f = field(s, "format")) {
            const std::string &t = v.str();
            if (f->str() == "date" && !calendar_date(t)) return "not a date: " + t;
            if (f->str() == "date-time" && !calendar_date(t.substr(0, 10))) return "bad date-time";
            if (f->str() == "uuid" && (t.size() != 36 || t[8] != '-' || t[23] != '-'))
                return "not a uuid";
            if (f->str() == "email" && t.find('@') == std::string::npos) return "not an email";
        }
        // The corpus's patterns are ASCII, where std::regex on bytes is ECMAScript's search.
        if (const Value *p = field(s, "pattern");
            p && !std::regex_search(v.str(), std::regex(p->str(), std::regex::ECMAScript)))
            return "does not match " + p->str();
    }
    if (v.kind() == Kind::Int || v.kind() == Kind::Float) {
        double x = v.as_float();
        auto bound = [&](const char *k) {
            const Value *b = field(s, k);
            return b ? std::optional<double>(b->as_float()) : std::nullopt;
        };
        if (auto b = bound("minimum"); b && x < *b) return "below minimum";
        if (auto b = bound("maximum"); b && x > *b) return "above maximum";
        if (auto b = bound("exclusiveMinimum"); b && x <= *b) return "not above exclusiveMinimum";
        if (auto b = bound("exclusiveMaximum"); b && x >= *b) return "not below exclusiveMaximum";
    }
    return "";
}

std::string check(const Value &v, const Value &s, const Value &root) {
    if (s.kind() == Kind::Bool) return s.as_bool() ? "" : "false schema";
    if (const Value *r = field(s, "$ref")) {
        const std::string &ref = r->str();
        size_t slash = ref.rfind('/');
        const Value *defs = field(root, ref.rfind("#/$defs/", 0) == 0 ? "$defs" : "definitions");
        std::string e = ref == "#" ? check(v, root, root)
                                   : check(v, *defs->dict().find(ref.substr(slash + 1)), root);
        if (!e.empty()) return e;  // and the keywords beside $ref apply too
    }
    if (const Value *all = field(s, "allOf"))
        for (const Value &sub : all->list())
            if (std::string e = check(v, sub, root); !e.empty()) return e;
    for (const char *key : {"anyOf", "oneOf"})
        if (const Value *alts = field(s, key)) {
            size_t ok = 0;
            for (const Value &sub : alts->list())
                ok += check(v, sub, root).empty();
            if (ok == 0 || (std::string(key) == "oneOf" && ok > 1))
                return std::string(key) + " matched " + std::to_string(ok);
        }
    if (const Value *c = field(s, "const"); c && compact(*c) != compact(v)) return "not the const";
    if (const Value *e = field(s, "enum")) {
        bool found = false;
        for (const Value &option : e->list())
            found = found || compact(option) == compact(v);
        if (!found) return "not in the enum";
    }
    if (const Value *t = field(s, "type")) {
        std::vector<Value> types = t->is_list() ? t->list() : std::vector<Value>{*t};
        if (std::none_of(types.begin(), types.end(),
                         [&](const Value &name) { return is_type(v, name.str()); }))
            return "wrong type for " + compact(v);
    }
    if (v.is_dict()) return check_object(v, s, root);
    if (v.is_list()) return check_array(v, s, root);
    return check_scalar(v, s);
}

using testing::alphabet_for;
using testing::Derivation;
using testing::derive;

class Corpus : public ::testing::TestWithParam<std::string> {
  protected:
    std::string schema_text() const { return read_file(kCorpus + GetParam() + ".json"); }
    std::shared_ptr<const Grammar> grammar() const {
        return testing::compile(json_schema_to_gbnf(schema_text()));
    }
};

TEST_P(Corpus, EveryValidInstanceIsASentenceOfTheGrammar) {
    auto g = grammar();
    auto valid = read_lines(kCorpus + GetParam() + ".valid.jsonl");
    ASSERT_FALSE(valid.empty());
    for (const std::string &line : valid)
        EXPECT_TRUE(testing::matches(g, line)) << line;
}

TEST_P(Corpus, NoInvalidInstanceIsASentenceOfTheGrammar) {
    auto g = grammar();
    auto invalid = read_lines(kCorpus + GetParam() + ".invalid.jsonl");
    ASSERT_FALSE(invalid.empty());
    for (const std::string &line : invalid)
        EXPECT_FALSE(testing::matches(g, line)) << line;
}

TEST_P(Corpus, RandomDerivationsAreJsonTheSchemaAccepts) {
    std::string text = schema_text();
    Value schema = chat::parse_json(text);
    auto g = grammar();
    auto alphabet = alphabet_for(text);
    std::mt19937 rng(1234);
    constexpr int kWalks = 300;
    int complete = 0;
    std::set<std::string> distinct;
    for (int i = 0; i < kWalks; ++i) {
        Derivation d = derive(g, alphabet, rng);
        EXPECT_FALSE(d.stuck) << "no code point of the alphabet continues \"" << d.text << "\"";
        if (!d.complete) continue;
        ++complete;
        distinct.insert(d.text);
        Value v;
        try {
            v = chat::parse_json(d.text);
        } catch (const Error &e) {
            ADD_FAILURE() << "not JSON: " << d.text << " (" << e.what() << ")";
            continue;
        }
        EXPECT_EQ(check(v, schema, schema), "") << d.text;
    }
    EXPECT_GE(complete, kWalks * 9 / 10);
    // Schemas with a single sentence (up to whitespace) aside, the walks explore.
    EXPECT_GE(distinct.size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(JsonSchema, Corpus, ::testing::ValuesIn(corpus_names()),
                         [](const auto &info) { return info.param; });

TEST(JsonSchemaCorpus, HoldsAtLeastTwentySchemasEachWithInstances) {
    auto names = corpus_names();
    EXPECT_GE(names.size(), 20u);
    for (const std::string &name : names) {
        EXPECT_TRUE(std::filesystem::exists(kCorpus + name + ".valid.jsonl")) << name;
        EXPECT_TRUE(std::filesystem::exists(kCorpus + name + ".invalid.jsonl")) << name;
    }
}

}  // namespace
}  // namespace vkllm::grammar
