#include "grammar/json_schema_merge.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "common/error.h"

namespace vkllm::grammar::schema {

namespace {

using chat::Value;
using Kind = chat::Value::Kind;
using chat::List;

const std::set<std::string> kDropped = {"title",     "description", "examples",   "default",
                                        "$schema",   "$comment",    "deprecated", "readOnly",
                                        "writeOnly", "$defs",       "definitions"};

[[noreturn]] void unsupported(const std::string &keyword, const std::string &ptr,
                              const std::string &why) {
    fail(VKLLM_ERR_UNSUPPORTED, "JSON Schema keyword '%s' at %s is not supported%s",
         keyword.c_str(), ptr.c_str(), why.c_str());
}

const Value *get(const Value &s, const std::string &key) {
    return s.dict().find(key);
}

Value all_of(std::vector<Value> members) {
    if (members.size() == 1) return members[0];
    return chat::make_dict({{Value("allOf"), Value(std::move(members))}});
}

bool is_number(const Value &v) {
    return v.kind() == Kind::Int || v.kind() == Kind::Float;
}

class Merger {
  public:
    Merger(const std::string &ptr, const RefResolver &resolve, int max_depth)
        : ptr_(ptr), resolve_(resolve), max_depth_(max_depth) {}

    // The members as plain schemas: `$ref` and `allOf` followed, `true` dropped.
    // False when a member is `false`.
    bool flatten(const Value &s, int depth, std::vector<Value> &out) {
        if (depth > max_depth_)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "JSON Schema at %s: nested deeper than %d schemas",
                 ptr_.c_str(), max_depth_);
        if (s.kind() == Kind::Bool) return s.as_bool();
        if (!s.is_dict())
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "JSON Schema at %s/allOf: a schema must be an object or a boolean", ptr_.c_str());
        // The root's $id is the document's base URI, which "#..." references are relative to
        // anyway; the converter refuses $id below the root before it merges.
        if (get(s, "$id") && !(depth == 0 && ptr_ == "#"))
            unsupported("$id", ptr_, " inside allOf (it changes what $ref means)");
        std::vector<std::pair<Value, Value>> rest;
        for (const auto &[key, value] : s.dict().items) {
            const std::string &k = key.str();
            if (kDropped.count(k)) continue;
            if (k == "$ref") {
                const Value *target = resolve_(value);
                if (!target)
                    unsupported("$ref", ptr_,
                                " to '" + (value.is_str() ? value.str() : std::string("?")) +
                                    "' (only references inside the document are)");
                if (!flatten(*target, depth + 1, out)) return false;
            } else if (k == "allOf") {
                if (!value.is_list() || value.list().empty())
                    fail(VKLLM_ERR_INVALID_ARGUMENT,
                         "JSON Schema at %s: 'allOf' must be a non-empty array of schemas",
                         ptr_.c_str());
                for (const Value &member : value.list())
                    if (!flatten(member, depth + 1, out)) return false;
            } else {
                rest.emplace_back(key, value);
            }
        }
        out.push_back(chat::make_dict(std::move(rest)));
        return true;
    }

    Value merge(const std::vector<Value> &members) {
        // One anyOf/oneOf is distributed over the others: (A or B) and R = (A and R) or (B and
        // R), exactly; for oneOf, R holds for all branches or none, so "exactly one" carries.
        std::optional<size_t> carrier;
        std::string combinator;
        for (size_t i = 0; i < members.size(); ++i)
            for (const char *key : {"anyOf", "oneOf"})
                if (get(members[i], key)) {
                    if (carrier) unsupported(key, ptr_, " beside another anyOf or oneOf in allOf");
                    carrier = i;
                    combinator = key;
                }
        if (carrier) {
            const Value &branches = *get(members[*carrier], combinator);
            if (!branches.is_list() || branches.list().empty())
                fail(VKLLM_ERR_INVALID_ARGUMENT,
                     "JSON Schema at %s: '%s' must be a non-empty array of schemas", ptr_.c_str(),
                     combinator.c_str());
            std::vector<Value> others;
            for (size_t i = 0; i < members.size(); ++i) {
                if (i != *carrier) {
                    others.push_back(members[i]);
                    continue;
                }
                std::vector<std::pair<Value, Value>> rest;
                for (const auto &[key, value] : members[i].dict().items)
                    if (key.str() != combinator) rest.emplace_back(key, value);
                others.push_back(chat::make_dict(std::move(rest)));
            }
            Value base = merge(others);
            List alts;
            for (const Value &branch : branches.list())
                alts.push_back(all_of({base, branch}));
            return chat::make_dict({{Value(combinator), Value(std::move(alts))}});
        }
        std::vector<std::pair<Value, Value>> out;
        auto set = [&](const std::string &key, Value v) {
            for (auto &[k, value] : out)
                if (k.str() == key) {
                    value = std::move(v);
                    return;
                }
            out.emplace_back(Value(key), std::move(v));
        };
        if (!merge_types(members, set) || !merge_values(members, set)) return Value(false);
        merge_objects(members, set);
        merge_arrays(members, set);
        for (const Value &m : members)
            for (const auto &[key, value] : m.dict().items) {
                const std::string &k = key.str();
                if (handled(k)) continue;
                const Value *seen = nullptr;
                for (const auto &[ok, ov] : out)
                    if (ok.str() == k) seen = &ov;
                if (!seen) {
                    out.emplace_back(key, value);
                } else if ((k.rfind("min", 0) == 0 || k.rfind("max", 0) == 0 ||
                            k.rfind("exclusiveM", 0) == 0) &&
                           !(is_number(value) && is_number(*seen))) {
                    set(k, is_number(value) ? *seen : value);  // the converter reports it
                } else if (k == "minimum" || k == "exclusiveMinimum" || k == "minLength" ||
                           k == "minItems") {
                    if (value.as_float() > seen->as_float()) set(k, value);
                } else if (k == "maximum" || k == "exclusiveMaximum" || k == "maxLength" ||
                           k == "maxItems") {
                    if (value.as_float() < seen->as_float()) set(k, value);
                } else if (k == "uniqueItems") {
                    if (value.kind() == Kind::Bool && value.as_bool()) set(k, value);
                } else if (!json_equal(*seen, value)) {
                    unsupported(k, ptr_, " with different values in the schemas of allOf");
                }
            }
        return chat::make_dict(std::move(out));
    }

  private:
    const std::string &ptr_;
    const RefResolver &resolve_;
    int max_depth_;

    static bool handled(const std::string &k) {
        static const std::set<std::string> keys = {
            "type",  "const",      "enum", "properties", "required", "additionalProperties",
            "items", "prefixItems"};
        return keys.count(k) > 0;
    }

    // `type`: the types every member allows (integer within number). False when none.
    template <typename Set>
    bool merge_types(const std::vector<Value> &members, Set &set) {
        std::optional<std::vector<std::string>> types;
        for (const Value &m : members) {
            const Value *t = get(m, "type");
            if (!t) continue;
            std::vector<std::string> names;
            for (const Value &name : t->is_list() ? t->list() : List{*t}) {
                if (!name.is_str())
                    fail(VKLLM_ERR_INVALID_ARGUMENT,
                         "JSON Schema at %s/type: 'type' must be a JSON type name or a list of "
                         "them",
                         ptr_.c_str());
                names.push_back(name.str());
            }
            if (!types) {
                types = names;
                continue;
            }
            std::vector<std::string> kept;
            auto has = [](const std::vector<std::string> &v, const std::string &n) {
                return std::find(v.begin(), v.end(), n) != v.end();
            };
            for (const std::string &n : *types)
                if (has(names, n) || (n == "integer" && has(names, "number")))
                    kept.push_back(n);
                else if (n == "number" && has(names, "integer") && !has(kept, "integer"))
                    kept.push_back("integer");
            types = kept;
        }
        if (!types) return true;
        if (types->empty()) return false;
        List names;
        for (const std::string &n : *types)
            names.push_back(Value(n));
        set("type", names.size() == 1 ? names[0] : Value(std::move(names)));
        return true;
    }

    // `const` and `enum`: the values every member allows, as one enum. False when none.
    template <typename Set>
    bool merge_values(const std::vector<Value> &members, Set &set) {
        std::optional<List> values;
        auto restrict_to = [&](const List &allowed) {
            if (!values) {
                values = allowed;
                return;
            }
            List kept;
            for (const Value &v : *values)
                if (std::any_of(allowed.begin(), allowed.end(),
                                [&](const Value &w) { return json_equal(v, w); }))
                    kept.push_back(v);
            values = kept;
        };
        for (const Value &m : members) {
            if (const Value *c = get(m, "const")) restrict_to({*c});
            if (const Value *e = get(m, "enum")) {
                if (!e->is_list())
                    fail(VKLLM_ERR_INVALID_ARGUMENT,
                         "JSON Schema at %s/enum: 'enum' must be an array", ptr_.c_str());
                restrict_to(e->list());
            }
        }
        if (!values) return true;
        if (values->empty()) return false;
        set("enum", Value(std::move(*values)));
        return true;
    }

    // properties, required, additionalProperties. A key one member declares and another does
    // not falls under the other's additionalProperties, so its schema is the conjunction of
    // both; the merged additionalProperties is the conjunction of those present.
    template <typename Set>
    void merge_objects(const std::vector<Value> &members, Set &set) {
        std::vector<std::string> names;
        for (const Value &m : members)
            if (const Value *p = get(m, "properties")) {
                if (!p->is_dict())
                    fail(VKLLM_ERR_INVALID_ARGUMENT,
                         "JSON Schema at %s/properties: 'properties' must be an object",
                         ptr_.c_str());
                for (const auto &[key, value] : p->dict().items)
                    if (std::find(names.begin(), names.end(), key.str()) == names.end())
                        names.push_back(key.str());
            }
        std::vector<std::pair<Value, Value>> props;
        for (const std::string &name : names) {
            std::vector<Value> conjuncts;
            for (const Value &m : members) {
                const Value *p = get(m, "properties");
                const Value *own = p ? p->dict().find(name) : nullptr;
                const Value *extra = get(m, "additionalProperties");
                if (own)
                    conjuncts.push_back(*own);
                else if (extra)
                    conjuncts.push_back(*extra);
            }
            props.emplace_back(Value(name), all_of(std::move(conjuncts)));
        }
        if (!props.empty()) set("properties", chat::make_dict(std::move(props)));
        List required;
        for (const Value &m : members)
            if (const Value *r = get(m, "required")) {
                if (!r->is_list())
                    fail(VKLLM_ERR_INVALID_ARGUMENT,
                         "JSON Schema at %s/required: 'required' must be an array of strings",
                         ptr_.c_str());
                for (const Value &name : r->list())
                    if (std::none_of(required.begin(), required.end(),
                                     [&](const Value &n) { return json_equal(n, name); }))
                        required.push_back(name);
            }
        if (!required.empty()) set("required", Value(std::move(required)));
        std::vector<Value> extras;
        for (const Value &m : members)
            if (const Value *extra = get(m, "additionalProperties")) extras.push_back(*extra);
        if (!extras.empty()) set("additionalProperties", all_of(std::move(extras)));
    }

    // prefixItems and items: item j's schema is the conjunction of what each member says of
    // position j (its prefix item, else its items).
    template <typename Set>
    void merge_arrays(const std::vector<Value> &members, Set &set) {
        size_t longest = 0;
        for (const Value &m : members)
            if (const Value *p = get(m, "prefixItems")) {
                if (!p->is_list())
                    fail(VKLLM_ERR_INVALID_ARGUMENT,
                         "JSON Schema at %s/prefixItems: 'prefixItems' must be an array",
                         ptr_.c_str());
                longest = std::max(longest, p->list().size());
            }
        List prefix;
        for (size_t j = 0; j < longest; ++j) {
            std::vector<Value> conjuncts;
            for (const Value &m : members) {
                const Value *p = get(m, "prefixItems");
                if (p && j < p->list().size())
                    conjuncts.push_back(p->list()[j]);
                else if (const Value *items = get(m, "items"))
                    conjuncts.push_back(*items);
            }
            prefix.push_back(conjuncts.empty() ? Value(true) : all_of(std::move(conjuncts)));
        }
        if (!prefix.empty()) set("prefixItems", Value(std::move(prefix)));
        std::vector<Value> items;
        for (const Value &m : members)
            if (const Value *i = get(m, "items")) items.push_back(*i);
        if (!items.empty()) set("items", all_of(std::move(items)));
    }
};

}  // namespace

Value merge_all_of(const std::vector<Value> &members, const std::string &ptr,
                   const RefResolver &resolve, int max_depth) {
    Merger merger(ptr, resolve, max_depth);
    std::vector<Value> flat;
    for (const Value &m : members)
        if (!merger.flatten(m, 0, flat)) return Value(false);
    if (flat.empty()) return Value(true);
    return merger.merge(flat);
}

}  // namespace vkllm::grammar::schema
