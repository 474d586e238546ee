#include "grammar/json_schema_disjoint.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace vkllm::grammar::schema {

namespace {

using chat::Value;
using Kind = chat::Value::Kind;

// JSON types as bits; "number" is integer | fraction, since 1.0 is an integer to JSON Schema.
enum : unsigned {
    kNull = 1,
    kBool = 2,
    kObject = 4,
    kArray = 8,
    kString = 16,
    kInteger = 32,
    kFraction = 64,
    kAll = 127
};

constexpr int kMaxDepth = 16;  // $ref and allOf hops a proof follows before giving up

unsigned type_bits(const std::string &name) {
    if (name == "null") return kNull;
    if (name == "boolean") return kBool;
    if (name == "object") return kObject;
    if (name == "array") return kArray;
    if (name == "string") return kString;
    if (name == "integer") return kInteger;
    if (name == "number") return kInteger | kFraction;
    return kAll;
}

unsigned type_of(const Value &v) {
    switch (v.kind()) {
        case Kind::None:
            return kNull;
        case Kind::Bool:
            return kBool;
        case Kind::Int:
            return kInteger;
        case Kind::Float:
            return std::floor(v.as_float()) == v.as_float() ? kInteger : kFraction;
        case Kind::Str:
            return kString;
        case Kind::Sequence:
            return kArray;
        case Kind::Dict:
            return kObject;
        default:
            return kAll;
    }
}

const Value *get(const Value &s, const char *key) {
    return s.is_dict() ? s.dict().find(std::string(key)) : nullptr;
}

class Prover {
  public:
    explicit Prover(const RefResolver &resolve) : resolve_(resolve) {}

    // The types of the values valid under `s` (an over-approximation).
    unsigned accepted_types(const Value &s, int depth) const {
        if (s.kind() == Kind::Bool) return s.as_bool() ? unsigned(kAll) : 0u;
        if (!s.is_dict() || depth > kMaxDepth) return kAll;
        unsigned bits = kAll;
        if (const Value *t = get(s, "type")) {
            unsigned listed = 0;
            if (t->is_list()) {
                for (const Value &name : t->list())
                    listed |= name.is_str() ? type_bits(name.str()) : kAll;
            } else {
                listed = t->is_str() ? type_bits(t->str()) : kAll;
            }
            bits &= listed;
        }
        if (std::optional<std::vector<Value>> values = finite_values(s, depth)) {
            unsigned of_values = 0;
            for (const Value &v : *values)
                of_values |= type_of(v);
            bits &= of_values;
        }
        if (const Value *r = get(s, "$ref")) {
            const Value *target = resolve_(*r);
            bits &= target ? accepted_types(*target, depth + 1) : kAll;
        }
        if (const Value *all = get(s, "allOf"); all && all->is_list())
            for (const Value &member : all->list())
                bits &= accepted_types(member, depth + 1);
        for (const char *key : {"anyOf", "oneOf"})
            if (const Value *alts = get(s, key); alts && alts->is_list()) {
                unsigned any = 0;
                for (const Value &alt : alts->list())
                    any |= accepted_types(alt, depth + 1);
                bits &= any;
            }
        return bits;
    }

    // The types of the values the converter's grammar of `s` accepts: the accepted types, and
    // for a schema with neither `type` nor a combinator, the types its keywords are about
    // (the converter writes only those; docs/JSON_SCHEMA.md, "no type").
    unsigned written_types(const Value &s) const {
        unsigned bits = accepted_types(s, 0);
        if (!s.is_dict()) return bits;
        for (const char *key : {"type", "$ref", "allOf", "anyOf", "oneOf", "enum", "const"})
            if (get(s, key)) return bits;
        static const std::map<std::string, unsigned> about = {{"properties", kObject},
                                                              {"required", kObject},
                                                              {"additionalProperties", kObject},
                                                              {"items", kArray},
                                                              {"prefixItems", kArray},
                                                              {"minItems", kArray},
                                                              {"maxItems", kArray},
                                                              {"uniqueItems", kArray},
                                                              {"minLength", kString},
                                                              {"maxLength", kString},
                                                              {"format", kString},
                                                              {"pattern", kString},
                                                              {"minimum", kInteger},
                                                              {"maximum", kInteger},
                                                              {"exclusiveMinimum", kInteger},
                                                              {"exclusiveMaximum", kInteger}};
        unsigned implied = 0;
        for (const auto &[key, value] : s.dict().items) {
            auto it = about.find(key.str());
            if (it != about.end()) implied |= it->second;
        }
        return implied ? bits & implied : bits;
    }

    // The values `s` allows when they are finitely many (const, enum, through $ref and
    // allOf), else nullopt.
    std::optional<std::vector<Value>> finite_values(const Value &s, int depth) const {
        if (!s.is_dict() || depth > kMaxDepth) return std::nullopt;
        std::optional<std::vector<Value>> out;
        auto restrict_to = [&](const std::vector<Value> &values) {
            if (!out) {
                out = values;
                return;
            }
            std::vector<Value> kept;
            for (const Value &v : *out)
                for (const Value &w : values)
                    if (json_equal(v, w)) {
                        kept.push_back(v);
                        break;
                    }
            out = kept;
        };
        if (const Value *c = get(s, "const")) restrict_to({*c});
        if (const Value *e = get(s, "enum"); e && e->is_list()) restrict_to(e->list());
        if (const Value *r = get(s, "$ref"))
            if (const Value *target = resolve_(*r))
                if (auto values = finite_values(*target, depth + 1)) restrict_to(*values);
        if (const Value *all = get(s, "allOf"); all && all->is_list())
            for (const Value &member : all->list())
                if (auto values = finite_values(member, depth + 1)) restrict_to(*values);
        return out;
    }

    // Properties every object valid under `s` has, each with the finite set of values it may
    // take (through $ref and allOf: a `required` in one conjunct and a `const` in another
    // still bind every valid object).
    void discriminators(const Value &s, int depth, std::set<std::string> &required,
                        std::map<std::string, std::vector<Value>> &values) const {
        if (!s.is_dict() || depth > kMaxDepth) return;
        if (const Value *r = get(s, "required"); r && r->is_list())
            for (const Value &name : r->list())
                if (name.is_str()) required.insert(name.str());
        if (const Value *p = get(s, "properties"); p && p->is_dict())
            for (const auto &[key, sub] : p->dict().items)
                if (auto v = finite_values(sub, depth + 1)) {
                    auto [it, added] = values.emplace(key.str(), *v);
                    if (!added) it->second = intersect(it->second, *v);
                }
        if (const Value *r = get(s, "$ref"))
            if (const Value *target = resolve_(*r))
                discriminators(*target, depth + 1, required, values);
        if (const Value *all = get(s, "allOf"); all && all->is_list())
            for (const Value &member : all->list())
                discriminators(member, depth + 1, required, values);
    }

    // No value the grammar of `a` accepts is valid under `b`.
    bool excludes(const Value &a, const Value &b) const {
        unsigned common = written_types(a) & accepted_types(b, 0);
        if (common == 0) return true;
        if (auto values = finite_values(a, 0)) {
            std::optional<std::vector<Value>> allowed = finite_values(b, 0);
            unsigned b_types = accepted_types(b, 0);
            bool all_rejected = true;
            for (const Value &v : *values) {
                bool rejected = !(type_of(v) & b_types) || (allowed && !contains(*allowed, v));
                all_rejected = all_rejected && rejected;
            }
            if (all_rejected) return true;
        }
        if (common == kObject) {
            std::set<std::string> req_a, req_b;
            std::map<std::string, std::vector<Value>> val_a, val_b;
            discriminators(a, 0, req_a, val_a);
            discriminators(b, 0, req_b, val_b);
            for (const auto &[name, va] : val_a) {
                auto vb = val_b.find(name);
                if (req_a.count(name) && req_b.count(name) && vb != val_b.end() &&
                    intersect(va, vb->second).empty())
                    return true;
            }
        }
        return false;
    }

  private:
    const RefResolver &resolve_;

    static bool contains(const std::vector<Value> &values, const Value &v) {
        for (const Value &w : values)
            if (json_equal(v, w)) return true;
        return false;
    }

    static std::vector<Value> intersect(const std::vector<Value> &a, const std::vector<Value> &b) {
        std::vector<Value> out;
        for (const Value &v : a)
            if (contains(b, v)) out.push_back(v);
        return out;
    }
};

}  // namespace

bool json_equal(const Value &a, const Value &b) {
    bool a_num = a.kind() == Kind::Int || a.kind() == Kind::Float;
    bool b_num = b.kind() == Kind::Int || b.kind() == Kind::Float;
    if (a_num || b_num) {
        if (!(a_num && b_num)) return false;
        if (a.kind() == Kind::Int && b.kind() == Kind::Int) return a.as_int() == b.as_int();
        return a.as_float() == b.as_float();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case Kind::None:
            return true;
        case Kind::Bool:
            return a.as_bool() == b.as_bool();
        case Kind::Str:
            return a.str() == b.str();
        case Kind::Sequence: {
            if (a.list().size() != b.list().size()) return false;
            for (size_t i = 0; i < a.list().size(); ++i)
                if (!json_equal(a.list()[i], b.list()[i])) return false;
            return true;
        }
        case Kind::Dict: {
            if (a.dict().items.size() != b.dict().items.size()) return false;
            for (const auto &[key, value] : a.dict().items) {
                const Value *other = b.dict().find(key.str());
                if (!other || !json_equal(value, *other)) return false;
            }
            return true;
        }
        default:
            return false;
    }
}

bool branches_disjoint(const std::vector<const Value *> &branches, const RefResolver &resolve) {
    Prover prover(resolve);
    for (size_t i = 0; i < branches.size(); ++i)
        for (size_t j = 0; j < branches.size(); ++j)
            if (i != j && !prover.excludes(*branches[i], *branches[j])) return false;
    return true;
}

}  // namespace vkllm::grammar::schema
