#include "grammar/json_schema.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "chat/json_value.h"
#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/json_schema_disjoint.h"
#include "grammar/json_schema_merge.h"
#include "grammar/json_schema_pattern.h"
#include "grammar/json_schema_rules.h"
#include "tokenizer/unicode.h"

namespace vkllm::grammar {

namespace {

using chat::Value;
using Kind = chat::Value::Kind;

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

// A JSON pointer's reference token: ~ and / escaped (RFC 6901).
std::string pointer_token(const std::string &key) {
    std::string out;
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

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

// What visit() returns for a schema no value satisfies (`false`, `{"enum": []}`). It is never
// written inside another rule's body: a choice drops it, an optional property or item is left
// out, and a required one makes its object or array `nothing` too, so that no sentence leads a
// model into a dead end. Only a rule that is nothing as a whole is written as the fixed rule
// `nothing`, which matches no text.
const std::string kNothing = "nothing";

class Converter {
  public:
    Converter(const Value &root, const JsonSchemaLimits &limits) : root_(root), limits_(limits) {
        for (const std::string &name : schema::primitive_names())
            taken_.insert(name);
        taken_.insert("root");
    }

    std::string run() {
        std::string body = visit(root_, "#", "root", 0);
        add_rule("root", body == kNothing ? primitive(kNothing) : body);
        std::string text;
        for (const auto &[name, rule] : rules_)
            text += name + " ::= " + rule + "\n";
        return text;
    }

  private:
    const Value &root_;
    const JsonSchemaLimits &limits_;
    std::vector<std::pair<std::string, std::string>> rules_;
    std::set<std::string> taken_;
    std::set<std::string> primitives_added_;
    std::map<std::string, std::string> ref_rules_;  // "#/$defs/X" -> its rule's name
    std::map<std::string, size_t> next_suffix_;
    std::map<std::string, std::string> rule_of_body_;
    std::deque<Value> merged_;  // schemas merge_all_of made, visited like the document's
    size_t visits_ = 0;

    [[noreturn]] static void unsupported(const std::string &keyword, const std::string &ptr,
                                         const std::string &why = "") {
        fail(VKLLM_ERR_UNSUPPORTED, "JSON Schema keyword '%s' at %s is not supported%s",
             keyword.c_str(), ptr.c_str(), why.c_str());
    }
    [[noreturn]] static void invalid(const std::string &ptr, const std::string &what) {
        fail(VKLLM_ERR_INVALID_ARGUMENT, "JSON Schema at %s: %s", ptr.c_str(), what.c_str());
    }

    void add_rule(const std::string &name, const std::string &body) {
        if (rules_.size() >= limits_.max_rules)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "JSON Schema needs more than %zu grammar rules (the limit)", limits_.max_rules);
        rules_.emplace_back(name, body);
    }

    // A fresh rule name: `base`, else base-2, base-3...
    std::string fresh_name(const std::string &base) {
        std::string stem = sanitize(base), name = stem;
        // The next suffix to try per stem: many properties with one long prefix (names are cut
        // at 48 characters) would otherwise make the search quadratic.
        size_t &next = next_suffix_[stem];
        while (taken_.count(name))
            name = stem + "-" + std::to_string(next++ + 2);
        taken_.insert(name);
        return name;
    }

    // A fixed rule (and those it uses), written once.
    std::string primitive(const std::string &name) {
        if (primitives_added_.insert(name).second) {
            std::vector<std::string> deps;
            std::optional<std::string> body = schema::primitive_rule(name, deps);
            add_rule(name, *body);
            for (const std::string &dep : deps)
                primitive(dep);
        }
        return name;
    }

    // Writes `body` as a new rule named after `hint` and returns its name; a body written
    // before is the same language, so its rule is reused (twenty `maxLength: 40` strings
    // expand one repetition, not twenty).
    std::string named(const std::string &hint, const std::string &body) {
        auto [it, added] = rule_of_body_.emplace(body, std::string());
        if (!added) return it->second;
        it->second = fresh_name(hint);
        add_rule(it->second, body);
        return it->second;
    }

    static const Value *get(const Value &schema, const char *key) {
        return schema.dict().find(std::string(key));
    }

    size_t count(const Value &schema, const char *key, const std::string &ptr) {
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

    // The schema at `ptr` as a GBNF expression (a rule name or a short sequence).
    std::string visit(const Value &schema, const std::string &ptr, const std::string &hint,
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
                         kObjectKeywords.count(k) || kArrayKeywords.count(k) ||
                         kCombinators.count(k);
            if (!known) unsupported(k, ptr);
            present.insert(k);
        }
        // allOf, $ref beside other keywords and anyOf/oneOf beside other keywords are
        // conjunctions: merged into one schema (or refused by keyword where no merge is exact).
        bool beside = present.size() > 1;
        if (present.count("allOf") || (beside && (present.count("$ref") || present.count("anyOf") ||
                                                  present.count("oneOf")))) {
            merged_.push_back(schema::merge_all_of(
                {schema}, ptr, [&](const Value &r) { return lookup(r); }, limits_.max_depth));
            return visit(merged_.back(), ptr, hint, depth + 1);
        }
        for (const char *combinator : {"$ref", "anyOf", "oneOf", "enum", "const"}) {
            if (!present.count(combinator)) continue;
            for (const std::string &other : present)
                if (other != combinator &&
                    !(other == "type" &&
                      (std::string(combinator) == "enum" || std::string(combinator) == "const")))
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

    // The types the schema allows: its `type`, or else the types its keywords are about (a
    // schema with only minLength is about strings), or else any value.
    std::vector<std::string> declared_types(const Value &schema,
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

    std::string typed(const Value &schema, const std::string &type, const std::string &ptr,
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

    std::string string_rule(const Value &schema, const std::string &ptr, const std::string &hint) {
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
            unsupported(
                "format", ptr,
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

    std::optional<int64_t> bound(const Value &schema, const char *key, const std::string &ptr,
                                 bool lower, bool exclusive) {
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

    std::string integer_rule(const Value &schema, const std::string &ptr, const std::string &hint) {
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

    std::string object_rule(const Value &schema, const std::string &ptr, const std::string &hint,
                            int depth) {
        primitive("space");
        std::set<std::string> required;
        std::vector<std::string> required_order;  // undeclared ones are added in this order
        if (const Value *r = get(schema, "required")) {
            if (!r->is_list()) invalid(ptr + "/required", "'required' must be an array of strings");
            for (const Value &name : r->list()) {
                if (!name.is_str())
                    invalid(ptr + "/required", "'required' must be an array of strings");
                if (required.insert(name.str()).second) required_order.push_back(name.str());
            }
        }
        std::vector<std::pair<std::string, const Value *>> props;
        std::vector<std::string> prop_ptrs;
        std::vector<std::string> names;  // every declared name: extra keys must differ from them
        if (const Value *p = get(schema, "properties")) {
            if (!p->is_dict()) invalid(ptr + "/properties", "'properties' must be an object");
            for (const auto &[key, value] : p->dict().items) {
                std::string at = ptr + "/properties/" + pointer_token(key.str());
                names.push_back(key.str());
                props.emplace_back(key.str(), &value);
                prop_ptrs.push_back(at);
            }
        }
        // Extra keys: none unless additionalProperties says so (llama.cpp's default, so that a
        // model does not invent keys the application never reads).
        const Value *extra = get(schema, "additionalProperties");
        std::string extra_value;
        if (extra) {
            if (extra->kind() == Kind::Bool) {
                if (extra->as_bool()) extra_value = primitive("value");
            } else {
                extra_value =
                    visit(*extra, ptr + "/additionalProperties", hint + "-additional", depth + 1);
                if (extra_value == kNothing) extra_value.clear();
            }
        }
        for (const std::string &name : required_order) {
            if (std::find(names.begin(), names.end(), name) != names.end()) continue;
            if (extra && extra->kind() == Kind::Bool && !extra->as_bool())
                invalid(ptr + "/required",
                        "required property '" + name +
                            "' is not in 'properties' and additionalProperties is false");
            static const Value any = Value(true);
            props.emplace_back(name, extra && !extra->is_dict() ? &any : extra ? extra : &any);
            prop_ptrs.push_back(ptr + "/required");
            names.push_back(name);
        }
        // A property no value satisfies never appears, and an object that requires one is
        // nothing.
        std::vector<std::string> kvs;
        std::vector<bool> kv_required;
        for (size_t i = 0; i < props.size(); ++i) {
            const std::string &key = props[i].first;
            std::string value = visit(*props[i].second, prop_ptrs[i], hint + "-" + key, depth + 1);
            bool req = required.count(key) > 0;
            if (value == kNothing) {
                if (req) return kNothing;
                continue;
            }
            kvs.push_back(named(hint + "-" + key + "-kv",
                                schema::gbnf_literal(chat::to_json(Value(key), {})) +
                                    " space \":\" space " + value));
            kv_required.push_back(req);
        }
        std::string extra_kv;
        if (!extra_value.empty()) {
            size_t trie_bytes = 0;  // an upper bound on the trie's nodes, each a rule
            for (const std::string &name : names) {
                if (name.size() > 256)
                    unsupported("additionalProperties", ptr,
                                " beside a property name longer than 256 bytes");
                trie_bytes += name.size();
            }
            if (rules_.size() + trie_bytes > limits_.max_rules)
                fail(VKLLM_ERR_INVALID_ARGUMENT,
                     "JSON Schema needs more than %zu grammar rules (the limit)",
                     limits_.max_rules);
            primitive("key-rest");
            std::vector<std::pair<std::string, std::string>> key_rules;
            std::string key_rule_name = fresh_name(hint + "-extra-key");
            std::string key_body = schema::key_other_than(
                names, [&] { return fresh_name(key_rule_name); }, key_rules);
            for (auto &[name, body] : key_rules)
                add_rule(name, body);
            add_rule(key_rule_name, key_body);
            extra_kv = named(hint + "-extra-kv", key_rule_name + " \":\" space " + extra_value);
        }
        // Properties in schema order, any subset that holds the required ones, then extra pairs.
        // tail(i): properties i.. after something was written, each with its comma;
        // seq(i): the same before anything was written (its first item has no comma).
        // Two rules a property, not 2^n alternatives.
        std::string tail = extra_kv.empty() ? "" : "(\",\" space " + extra_kv + ")*";
        std::string seq = extra_kv.empty() ? "" : "(" + extra_kv + " " + tail + ")?";
        for (size_t i = kvs.size(); i-- > 0;) {
            bool req = kv_required[i];
            std::string item = kvs[i] + (tail.empty() ? "" : " " + tail);
            std::string seq_body = req || seq.empty() ? item : item + " | " + seq;
            std::string comma_item = "\",\" space " + kvs[i];
            std::string tail_body =
                (req ? comma_item : "(" + comma_item + ")?") + (tail.empty() ? "" : " " + tail);
            seq = named(hint + "-seq", seq_body);
            if (!req && seq_body == item) seq = "(" + seq + ")?";
            tail = named(hint + "-tail", tail_body);
        }
        std::string body = "\"{\" space " + (seq.empty() ? "" : seq + " ");
        return named(hint, body + "\"}\" space");
    }

    std::string array_rule(const Value &schema, const std::string &ptr, const std::string &hint,
                           int depth) {
        primitive("space");
        std::vector<std::string> prefix;
        bool cut_prefix = false;
        if (const Value *p = get(schema, "prefixItems")) {
            if (!p->is_list()) invalid(ptr + "/prefixItems", "'prefixItems' must be an array");
            if (p->list().size() > limits_.max_count)
                unsupported("prefixItems", ptr, " with more items than the limit");
            for (size_t i = 0; i < p->list().size(); ++i) {
                std::string rule = visit(p->list()[i], ptr + "/prefixItems/" + std::to_string(i),
                                         hint + "-" + std::to_string(i), depth + 1);
                // No value fits item i: the array ends before it.
                if (rule == kNothing) {
                    cut_prefix = true;
                    break;
                }
                prefix.push_back(rule);
            }
        }
        std::string item;  // empty: no items past the prefix
        const Value *items = get(schema, "items");
        if (!cut_prefix)
            item = items ? visit(*items, ptr + "/items", hint + "-item", depth + 1)
                         : primitive("value");
        if (item == kNothing) item.clear();
        size_t lo = count(schema, "minItems", ptr);
        std::optional<size_t> hi;
        if (get(schema, "maxItems")) hi = count(schema, "maxItems", ptr);
        if (hi && *hi < lo) invalid(ptr, "'minItems' is above 'maxItems'");
        // Distinct items are not a context-free property; an array of at most one item has them.
        if (const Value *u = get(schema, "uniqueItems")) {
            if (u->kind() != Kind::Bool)
                invalid(ptr + "/uniqueItems", "'uniqueItems' must be a boolean");
            if (u->as_bool() && !(hi && *hi <= 1))
                unsupported("uniqueItems", ptr, " (true, unless maxItems is 0 or 1)");
        }
        size_t k = prefix.size();
        if (item.empty()) {
            if (lo > k) {
                if (cut_prefix || (items && items->kind() != Kind::Bool)) return kNothing;
                invalid(ptr, "'minItems' asks for more items than 'prefixItems' allows");
            }
            hi = std::min(hi.value_or(k), k);
        }
        // tail(j): the items from index j on, each after a comma, j items already written.
        auto item_at = [&](size_t j) { return j < k ? prefix[j] : item; };
        std::string tail;
        size_t last = hi ? std::min(*hi, k) : k;  // first index the repetition covers
        if (!hi || *hi > k) {
            size_t rep_lo = lo > last ? lo - last : 0;
            std::string rep =
                hi ? sformat("{%zu,%zu}", rep_lo, *hi - last) : sformat("{%zu,}", rep_lo);
            tail = "(\",\" space " + item + ")" + rep;
        }
        for (size_t j = last; j-- > 1;) {
            std::string seq = "\",\" space " + item_at(j) + (tail.empty() ? "" : " " + tail);
            tail = named(hint + "-tail", j >= lo ? "(" + seq + ")?" : seq);
        }
        std::string body = "\"[\" space ";
        if (!hi || *hi > 0) {
            if (last == 0) {
                // No prefix: the first item is an ordinary item, and the rest repeat.
                size_t rep_lo = lo > 1 ? lo - 1 : 0;
                std::string rep =
                    hi ? sformat("{%zu,%zu}", rep_lo, *hi - 1) : sformat("{%zu,}", rep_lo);
                std::string seq = item + " (\",\" space " + item + ")" + rep;
                body += lo == 0 ? "(" + seq + ")? " : seq + " ";
            } else {
                std::string seq = item_at(0) + (tail.empty() ? "" : " " + tail);
                body += lo == 0 ? "(" + seq + ")? " : seq + " ";
            }
        }
        return named(hint, body + "\"]\" space");
    }

    std::string alternatives(const Value &list, const std::string &keyword, const std::string &ptr,
                             const std::string &hint, int depth) {
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

    static bool has_type(const Value &v, const std::string &type) {
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

    std::string constants(const Value &schema, const std::string &keyword, const std::string &ptr,
                          const std::string &hint) {
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
            body +=
                (body.empty() ? "" : " | ") + schema::gbnf_literal(chat::to_json(value, compact()));
        }
        if (body.empty()) invalid(ptr, "no value of '" + keyword + "' has the schema's type");
        primitive("space");
        return named(hint, "(" + body + ") space");
    }

    static chat::JsonOptions compact() {
        chat::JsonOptions o;
        o.item_separator = ",";
        o.key_separator = ":";
        return o;
    }

    // The schema a `$ref` names inside this document: "#", or "#" and a JSON pointer (RFC 6901
    // escapes after percent-decoding), through objects and arrays; nullptr for anything else
    // (another document, an anchor) or a pointer that names nothing.
    const Value *lookup(const Value &target, bool *under_id = nullptr) const {
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

    std::string ref(const Value &target, const std::string &ptr, int depth) {
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
};

}  // namespace

std::string json_schema_to_gbnf(std::string_view schema_json, const JsonSchemaLimits &limits) {
    for (size_t pos = 0; pos < schema_json.size();) {
        tokenizer::Utf8Char c = tokenizer::utf8_decode(schema_json, pos);
        if (!c.valid)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "JSON Schema text is not valid UTF-8 at byte %zu",
                 pos);
        pos += c.len;
    }
    bool blank = schema_json.find_first_not_of(" \t\r\n") == std::string_view::npos;
    Value schema = blank ? Value(true) : chat::parse_json(schema_json, limits.max_depth * 2 + 8);
    std::string text = Converter(schema, limits).run();
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
