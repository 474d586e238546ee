#include "grammar/json_schema.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "chat/json_value.h"
#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/json_schema_converter.h"
#include "grammar/json_schema_disjoint.h"
#include "grammar/json_schema_merge.h"
#include "grammar/json_schema_pattern.h"
#include "grammar/json_schema_rules.h"
#include "tokenizer/unicode.h"

namespace vkllm::grammar {

namespace schema {

namespace {

// Keywords that describe and never constrain: skipped.
const std::set<std::string> kAnnotations = {"title",    "description", "examples", "default",
                                            "$schema",  "$id",         "$comment", "deprecated",
                                            "readOnly", "writeOnly",   "$defs",    "definitions"};

const std::set<std::string> kStringKeywords = {"minLength", "maxLength", "format", "pattern"};
const std::set<std::string> kIntegerKeywords = {"minimum", "maximum", "exclusiveMinimum",
                                                "exclusiveMaximum"};
const std::set<std::string> kObjectKeywords = {"properties", "required", "additionalProperties"};
const std::set<std::string> kArrayKeywords = {"items", "prefixItems", "minItems", "maxItems",
                                              "uniqueItems"};
const std::set<std::string> kCombinators = {"anyOf", "oneOf", "allOf", "$ref", "enum", "const"};
const std::vector<std::string> kTypes = {"string", "number", "integer", "boolean",
                                         "null",   "object", "array"};

// A rule name made of the parts of a path: [a-zA-Z0-9-] kept, every other run one '-'.
std::string sanitize(const std::string &text) {
    std::string out;
    for (char c : text) {
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (keep)
            out += c;
        else if (out.empty() || out.back() != '-')
            out += '-';
    }
    while (!out.empty() && out.back() == '-')
        out.pop_back();
    while (!out.empty() && out.front() == '-')
        out.erase(out.begin());
    if (out.size() > 48) out.resize(48);
    return out.empty() ? "x" : out;
}
}  // namespace

Converter::Converter(const Value &root, const JsonSchemaLimits &limits)
    : root_(root), limits_(limits) {
    for (const std::string &name : schema::primitive_names())
        taken_.insert(name);
    taken_.insert("root");
}

std::string Converter::run() {
    std::string body = visit(root_, "#", "root", 0);
    add_rule("root", body == kNothing ? primitive(kNothing) : body);
    std::string text;
    for (const auto &[name, rule] : rules_)
        text += name + " ::= " + rule + "\n";
    return text;
}

[[noreturn]] void Converter::unsupported(const std::string &keyword, const std::string &ptr,
                                         const std::string &why) {
    fail(VKLLM_ERR_UNSUPPORTED, "JSON Schema keyword '%s' at %s is not supported%s",
         keyword.c_str(), ptr.c_str(), why.c_str());
}

[[noreturn]] void Converter::invalid(const std::string &ptr, const std::string &what) {
    fail(VKLLM_ERR_INVALID_ARGUMENT, "JSON Schema at %s: %s", ptr.c_str(), what.c_str());
}

void Converter::add_rule(const std::string &name, const std::string &body) {
    if (rules_.size() >= limits_.max_rules)
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "JSON Schema needs more than %zu grammar rules (the limit)", limits_.max_rules);
    rules_.emplace_back(name, body);
}

std::string Converter::fresh_name(const std::string &base) {
    std::string stem = sanitize(base), name = stem;
    // The next suffix to try per stem: many properties with one long prefix (names are cut
    // at 48 characters) would otherwise make the search quadratic.
    size_t &next = next_suffix_[stem];
    while (taken_.count(name))
        name = stem + "-" + std::to_string(next++ + 2);
    taken_.insert(name);
    return name;
}

std::string Converter::primitive(const std::string &name) {
    if (primitives_added_.insert(name).second) {
        std::vector<std::string> deps;
        std::optional<std::string> body = schema::primitive_rule(name, deps);
        add_rule(name, *body);
        for (const std::string &dep : deps)
            primitive(dep);
    }
    return name;
}

std::string Converter::named(const std::string &hint, const std::string &body) {
    auto [it, added] = rule_of_body_.emplace(body, std::string());
    if (!added) return it->second;
    it->second = fresh_name(hint);
    add_rule(it->second, body);
    return it->second;
}

const Value *Converter::get(const Value &schema, const char *key) {
    return schema.dict().find(std::string(key));
}

size_t Converter::count(const Value &schema, const char *key, const std::string &ptr) {
    const Value *v = get(schema, key);
    if (!v) return 0;
    bool integral = v->kind() == Kind::Int ||
                    (v->kind() == Kind::Float && std::floor(v->as_float()) == v->as_float());
    if (!integral || v->as_float() < 0)
        invalid(ptr, sformat("'%s' must be a non-negative integer", key));
    if (v->as_float() > double(limits_.max_count))
        unsupported(key, ptr, sformat(" above %zu (the limit)", limits_.max_count));
    return size_t(v->as_float());
}

std::string Converter::visit(const Value &schema, const std::string &ptr, const std::string &hint,
                             int depth) {
    if (depth > limits_.max_depth)
        invalid(ptr, sformat("nested deeper than %d schemas", limits_.max_depth));
    if (++visits_ > limits_.max_visits)
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "JSON Schema needs more than %zu subschemas visited (the limit; allOf and $ref "
             "beside other keywords inline their targets)",
             limits_.max_visits);
    if (schema.kind() == Kind::Bool) {
        return schema.as_bool() ? primitive("value") : kNothing;
    }
    if (!schema.is_dict()) invalid(ptr, "a schema must be an object or a boolean");
    if (ptr != "#" && get(schema, "$id"))
        unsupported("$id", ptr, " below the root (it changes what $ref resolves against)");
    std::set<std::string> present;
    for (const auto &[key, value] : schema.dict().items) {
        const std::string &k = key.str();
        if (kAnnotations.count(k)) continue;
        bool known = k == "type" || kStringKeywords.count(k) || kIntegerKeywords.count(k) ||
                     kObjectKeywords.count(k) || kArrayKeywords.count(k) || kCombinators.count(k);
        if (!known) unsupported(k, ptr);
        present.insert(k);
    }
    // allOf, $ref beside other keywords and anyOf/oneOf beside other keywords are
    // conjunctions: merged into one schema (or refused by keyword where no merge is exact).
    bool beside = present.size() > 1;
    if (present.count("allOf") ||
        (beside && (present.count("$ref") || present.count("anyOf") || present.count("oneOf")))) {
        merged_.push_back(schema::merge_all_of(
            {schema}, ptr, [&](const Value &r) { return lookup(r); }, limits_.max_depth));
        return visit(merged_.back(), ptr, hint, depth + 1);
    }
    for (const char *combinator : {"$ref", "anyOf", "oneOf", "enum", "const"}) {
        if (!present.count(combinator)) continue;
        for (const std::string &other : present)
            if (other != combinator && !(other == "type" && (std::string(combinator) == "enum" ||
                                                             std::string(combinator) == "const")))
                unsupported(other, ptr, sformat(" beside '%s'", combinator));
        std::string c = combinator;
        if (c == "$ref") return ref(*get(schema, "$ref"), ptr, depth);
        if (c == "enum" || c == "const") return constants(schema, c, ptr, hint);
        return alternatives(*get(schema, combinator), c, ptr, hint, depth);
    }
    std::vector<std::string> types = declared_types(schema, present, ptr);
    std::vector<std::string> alts;
    for (const std::string &type : types) {
        std::string alt =
            typed(schema, type, ptr, types.size() > 1 ? hint + "-" + type : hint, depth);
        if (alt != kNothing) alts.push_back(alt);
    }
    if (alts.empty()) return kNothing;
    if (alts.size() == 1) return alts[0];
    std::string body;
    for (size_t i = 0; i < alts.size(); ++i)
        body += (i ? " | " : "") + alts[i];
    return named(hint, body);
}

std::vector<std::string> Converter::declared_types(const Value &schema,
                                                   const std::set<std::string> &present,
                                                   const std::string &ptr) {
    std::vector<std::string> types;
    if (const Value *t = get(schema, "type")) {
        std::vector<Value> items = t->is_list() ? t->list() : std::vector<Value>{*t};
        if (items.empty()) invalid(ptr + "/type", "an empty list of types");
        for (const Value &item : items) {
            if (!item.is_str() ||
                std::find(kTypes.begin(), kTypes.end(), item.str()) == kTypes.end())
                invalid(ptr + "/type", "'type' must be a JSON type name or a list of them");
            if (std::find(types.begin(), types.end(), item.str()) != types.end())
                invalid(ptr + "/type", "a type is listed twice");
            types.push_back(item.str());
        }
        return types;
    }
    auto any_of = [&](const std::set<std::string> &keys) {
        for (const std::string &k : keys)
            if (present.count(k)) return true;
        return false;
    };
    if (any_of(kObjectKeywords)) types.push_back("object");
    if (any_of(kArrayKeywords)) types.push_back("array");
    if (any_of(kStringKeywords)) types.push_back("string");
    if (any_of(kIntegerKeywords)) types.push_back("integer");
    if (types.empty()) types.push_back("any");
    return types;
}

std::string Converter::typed(const Value &schema, const std::string &type, const std::string &ptr,
                             const std::string &hint, int depth) {
    if (type == "any") return primitive("value");
    if (type == "boolean" || type == "null") return primitive(type);
    if (type == "string") return string_rule(schema, ptr, hint);
    if (type == "number") {
        for (const std::string &k : kIntegerKeywords)
            if (get(schema, k.c_str()))
                unsupported(k, ptr, " for type 'number' (only for 'integer')");
        return primitive("number");
    }
    if (type == "integer") return integer_rule(schema, ptr, hint);
    if (type == "object") return object_rule(schema, ptr, hint, depth);
    return array_rule(schema, ptr, hint, depth);
}

std::string Converter::string_rule(const Value &schema, const std::string &ptr,
                                   const std::string &hint) {
    const Value *f = get(schema, "format");
    const Value *pattern = get(schema, "pattern");
    if (f || pattern) {
        // Each is one exact language; its intersection with a length or with the other is
        // not written.
        for (const char *length : {"minLength", "maxLength"})
            if (get(schema, length))
                unsupported(length, ptr, f ? " beside 'format'" : " beside 'pattern'");
        if (f && pattern) unsupported("pattern", ptr, " beside 'format'");
    }
    if (f) {
        if (!f->is_str()) invalid(ptr + "/format", "'format' must be a string");
        const std::string &name = f->str();
        if (name == "date" || name == "time" || name == "date-time" || name == "uuid" ||
            name == "email")
            return primitive(name + "-string");
        unsupported("format", ptr,
                    " for the format '" + name + "' (date, time, date-time, uuid and email are)");
    }
    if (pattern) {
        if (!pattern->is_str()) invalid(ptr + "/pattern", "'pattern' must be a string");
        primitive("space");
        std::string body = schema::pattern_to_gbnf(pattern->str(), ptr, primitive("char"));
        return named(hint, "\"\\\"\" " + body + " \"\\\"\" space");
    }
    size_t lo = count(schema, "minLength", ptr);
    std::optional<size_t> hi;
    if (get(schema, "maxLength")) hi = count(schema, "maxLength", ptr);
    if (hi && *hi < lo) invalid(ptr, "'minLength' is above 'maxLength'");
    if (lo == 0 && !hi) return primitive("string");
    primitive("char");
    primitive("space");
    std::string rep = hi ? sformat("{%zu,%zu}", lo, *hi) : sformat("{%zu,}", lo);
    return named(hint, "\"\\\"\" char" + rep + " \"\\\"\" space");
}

std::optional<int64_t> Converter::bound(const Value &schema, const char *key,
                                        const std::string &ptr, bool lower, bool exclusive) {
    const Value *v = get(schema, key);
    if (!v) return std::nullopt;
    if (v->kind() != Kind::Int && v->kind() != Kind::Float)
        invalid(ptr + "/" + key, sformat("'%s' must be a number", key));
    double x = v->as_float();
    if (!(std::fabs(x) <= double(schema::kMaxIntegerBound)))
        unsupported(key, ptr, " beyond 10^18 (the limit)");
    if (v->kind() == Kind::Int) {
        int64_t i = v->as_int();
        if (exclusive) i += lower ? 1 : -1;
        return i;
    }
    double r = lower ? (exclusive ? std::floor(x) + 1 : std::ceil(x))
                     : (exclusive ? std::ceil(x) - 1 : std::floor(x));
    return int64_t(r);
}

std::string Converter::integer_rule(const Value &schema, const std::string &ptr,
                                    const std::string &hint) {
    std::optional<int64_t> lo = bound(schema, "minimum", ptr, true, false);
    std::optional<int64_t> hi = bound(schema, "maximum", ptr, false, false);
    if (auto x = bound(schema, "exclusiveMinimum", ptr, true, true))
        lo = lo ? std::max(*lo, *x) : *x;
    if (auto x = bound(schema, "exclusiveMaximum", ptr, false, true))
        hi = hi ? std::min(*hi, *x) : *x;
    if (!lo && !hi) return primitive("integer");
    if (lo && hi && *lo > *hi) invalid(ptr, "no integer lies within its bounds");
    primitive("space");
    return named(hint, schema::integer_range(lo, hi) + " space");
}

std::string Converter::alternatives(const Value &list, const std::string &keyword,
                                    const std::string &ptr, const std::string &hint, int depth) {
    if (!list.is_list() || list.list().empty())
        invalid(ptr + "/" + keyword, "'" + keyword + "' must be a non-empty array of schemas");
    // oneOf is "exactly one branch": written as a choice only when no sentence of one
    // branch can be valid under another, else a sentence valid under two would be invalid.
    if (keyword == "oneOf") {
        std::vector<const Value *> branches;
        for (const Value &branch : list.list())
            branches.push_back(&branch);
        if (!schema::branches_disjoint(branches, [&](const Value &r) { return lookup(r); }))
            unsupported("oneOf", ptr,
                        " with branches not provably disjoint (give them different types, "
                        "const values or a required property with different const values)");
    }
    std::string body;
    for (size_t i = 0; i < list.list().size(); ++i) {
        std::string alt = visit(list.list()[i], ptr + "/" + keyword + "/" + std::to_string(i),
                                hint + "-" + std::to_string(i), depth + 1);
        if (alt != kNothing) body += (body.empty() ? "" : " | ") + alt;
    }
    return body.empty() ? kNothing : named(hint, body);
}

bool Converter::has_type(const Value &v, const std::string &type) {
    switch (v.kind()) {
        case Kind::None:
            return type == "null";
        case Kind::Bool:
            return type == "boolean";
        case Kind::Int:
            return type == "integer" || type == "number";
        case Kind::Float:
            return type == "number" ||
                   (type == "integer" && std::floor(v.as_float()) == v.as_float());
        case Kind::Str:
            return type == "string";
        case Kind::Sequence:
            return type == "array";
        case Kind::Dict:
            return type == "object";
        default:
            return false;
    }
}

std::string Converter::constants(const Value &schema, const std::string &keyword,
                                 const std::string &ptr, const std::string &hint) {
    const Value &v = *get(schema, keyword.c_str());
    std::vector<Value> values;
    if (keyword == "const") {
        values.push_back(v);
    } else {
        if (!v.is_list()) invalid(ptr + "/enum", "'enum' must be an array");
        if (v.list().empty()) return kNothing;
        if (v.list().size() > limits_.max_enum)
            unsupported("enum", ptr, sformat(" with more than %zu values", limits_.max_enum));
        values = v.list();
    }
    std::vector<std::string> types = declared_types(schema, {}, ptr);
    std::string body;
    for (const Value &value : values) {
        bool fits = types[0] == "any" ||
                    std::any_of(types.begin(), types.end(),
                                [&](const std::string &t) { return has_type(value, t); });
        if (!fits) continue;
        body += (body.empty() ? "" : " | ") + schema::gbnf_literal(chat::to_json(value, compact()));
    }
    if (body.empty()) invalid(ptr, "no value of '" + keyword + "' has the schema's type");
    primitive("space");
    return named(hint, "(" + body + ") space");
}

chat::JsonOptions Converter::compact() {
    chat::JsonOptions o;
    o.item_separator = ",";
    o.key_separator = ":";
    return o;
}

const Value *Converter::lookup(const Value &target, bool *under_id) const {
    if (!target.is_str()) return nullptr;
    const std::string &r = target.str();
    if (r == "#") return &root_;
    if (r.size() < 2 || r[0] != '#' || r[1] != '/') return nullptr;
    std::string path;
    for (size_t i = 1; i < r.size(); ++i) {
        auto hex = [](char c) {
            return c >= '0' && c <= '9'   ? c - '0'
                   : c >= 'a' && c <= 'f' ? c - 'a' + 10
                   : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                          : -1;
        };
        if (r[i] == '%' && i + 2 < r.size() && hex(r[i + 1]) >= 0 && hex(r[i + 2]) >= 0) {
            path += char(hex(r[i + 1]) * 16 + hex(r[i + 2]));
            i += 2;
        } else {
            path += r[i];
        }
    }
    const Value *node = &root_;
    for (size_t pos = 1; pos <= path.size();) {
        size_t slash = std::min(path.find('/', pos), path.size());
        std::string token;
        for (size_t i = pos; i < slash; ++i) {
            if (path[i] == '~' && i + 1 < slash && (path[i + 1] == '0' || path[i + 1] == '1'))
                token += path[++i] == '0' ? '~' : '/';
            else
                token += path[i];
        }
        pos = slash + 1;
        if (node->is_dict()) {
            node = node->dict().find(token);
        } else if (node->is_list()) {
            bool index = !token.empty() && token.size() < 10 &&
                         token.find_first_not_of("0123456789") == std::string::npos &&
                         (token == "0" || token[0] != '0');
            if (!index || std::stoul(token) >= node->list().size()) return nullptr;
            node = &node->list()[std::stoul(token)];
        } else {
            return nullptr;
        }
        if (!node) return nullptr;
        // A schema with its own $id starts a new base URI: "#..." inside it means it, not
        // this document's root.
        if (node->is_dict() && get(*node, "$id")) {
            if (under_id) *under_id = true;
            return nullptr;
        }
    }
    return node;
}

std::string Converter::ref(const Value &target, const std::string &ptr, int depth) {
    if (!target.is_str()) invalid(ptr + "/$ref", "'$ref' must be a string");
    const std::string &r = target.str();
    auto known = ref_rules_.find(r);
    if (known != ref_rules_.end()) return known->second;
    if (r == "#") return "root";
    bool under_id = false;
    const Value *def = lookup(target, &under_id);
    if (!def) {
        if (r.rfind("#/", 0) == 0 && !under_id)
            invalid(ptr + "/$ref", "'" + r + "' names no definition");
        unsupported("$ref", ptr,
                    " to '" + r +
                        "' (only references inside the document are: #, #/$defs/NAME, "
                        "#/definitions/NAME or another JSON pointer not under a nested $id)");
    }
    // The name is known before the definition is visited, so a recursive definition refers
    // to its own rule.
    std::string rule = fresh_name(r.substr(r.rfind('/') + 1));
    ref_rules_[r] = rule;
    std::string body = visit(*def, r, rule, depth + 1);
    if (body == kNothing) {
        ref_rules_[r] = kNothing;
        body = primitive(kNothing);
    }
    add_rule(rule, body);
    return body == kNothing ? kNothing : rule;
}

}  // namespace schema

std::string json_schema_to_gbnf(std::string_view schema_json, const JsonSchemaLimits &limits) {
    for (size_t pos = 0; pos < schema_json.size();) {
        tokenizer::Utf8Char c = tokenizer::utf8_decode(schema_json, pos);
        if (!c.valid)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "JSON Schema text is not valid UTF-8 at byte %zu",
                 pos);
        pos += c.len;
    }
    bool blank = schema_json.find_first_not_of(" \t\r\n") == std::string_view::npos;
    chat::Value schema =
        blank ? chat::Value(true) : chat::parse_json(schema_json, limits.max_depth * 2 + 8);
    std::string text = schema::Converter(schema, limits).run();
    if (text.size() > limits.max_bytes)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "JSON Schema converts to more than %zu bytes of grammar",
             limits.max_bytes);
    try {
        parse_gbnf(text);
    } catch (const Error &e) {
        std::string message = e.what();
        // A definition that is itself first (A: anyOf [A, ...]) is a schema without a base
        // case before any '{' or '[': the schema's fault, not the converter's.
        if (message.find("left-recursive") != std::string::npos)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "JSON Schema refers to itself through $ref before any object or array: %s",
                 message.c_str());
        // Many long strings or arrays expand past the parser's size limits.
        if (message.find("limit") != std::string::npos ||
            message.find("grows past") != std::string::npos ||
            message.find("nested deeper") != std::string::npos ||
            message.find("rules (repetitions") != std::string::npos)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "JSON Schema converts to a grammar too large: %s",
                 message.c_str());
        fail(VKLLM_ERR_INTERNAL,
             "the JSON Schema converter wrote a grammar that does not parse: %s", message.c_str());
    }
    return text;
}

}  // namespace vkllm::grammar