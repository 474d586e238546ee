// Objects and arrays of a JSON Schema as GBNF rules: properties in schema order with the
// required ones enforced, extra keys that differ from the declared ones, prefix items and
// counted repetitions.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "grammar/json_schema_converter.h"
#include "grammar/json_schema_rules.h"

namespace vkllm::grammar::schema {

namespace {

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
}  // namespace

std::string Converter::object_rule(const Value &schema, const std::string &ptr,
                                   const std::string &hint, int depth) {
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
        kvs.push_back(named(
            hint + "-" + key + "-kv",
            schema::gbnf_literal(chat::to_json(Value(key), {})) + " space \":\" space " + value));
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
                 "JSON Schema needs more than %zu grammar rules (the limit)", limits_.max_rules);
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

std::string Converter::array_rule(const Value &schema, const std::string &ptr,
                                  const std::string &hint, int depth) {
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
        item =
            items ? visit(*items, ptr + "/items", hint + "-item", depth + 1) : primitive("value");
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
        std::string rep = hi ? sformat("{%zu,%zu}", rep_lo, *hi - last) : sformat("{%zu,}", rep_lo);
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

}  // namespace vkllm::grammar::schema
