// The JSON Schema to GBNF converter's state: one Converter walks one schema document, writing
// a rule per subschema it names. Its methods live in json_schema.cpp (the walk, names, references,
// scalars and combinators) and json_schema_containers.cpp (objects and arrays).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "chat/json_value.h"
#include "grammar/json_schema.h"

namespace vkllm::grammar::schema {

using chat::Value;
using Kind = chat::Value::Kind;

// What visit() returns for a schema no value satisfies (`false`, `{"enum": []}`). It is never
// written inside another rule's body: a choice drops it, an optional property or item is left
// out, and a required one makes its object or array `nothing` too, so that no sentence leads a
// model into a dead end. Only a rule that is nothing as a whole is written as the fixed rule
// `nothing`, which matches no text.
inline const std::string kNothing = "nothing";

class Converter {
  public:
    Converter(const Value &root, const JsonSchemaLimits &limits);

    std::string run();

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
                                         const std::string &why = "");
    [[noreturn]] static void invalid(const std::string &ptr, const std::string &what);

    void add_rule(const std::string &name, const std::string &body);

    // A fresh rule name: `base`, else base-2, base-3...
    std::string fresh_name(const std::string &base);

    // A fixed rule (and those it uses), written once.
    std::string primitive(const std::string &name);

    // Writes `body` as a new rule named after `hint` and returns its name; a body written
    // before is the same language, so its rule is reused (twenty `maxLength: 40` strings
    // expand one repetition, not twenty).
    std::string named(const std::string &hint, const std::string &body);

    static const Value *get(const Value &schema, const char *key);

    size_t count(const Value &schema, const char *key, const std::string &ptr);

    // The schema at `ptr` as a GBNF expression (a rule name or a short sequence).
    std::string visit(const Value &schema, const std::string &ptr, const std::string &hint,
                      int depth);

    // The types the schema allows: its `type`, or else the types its keywords are about (a
    // schema with only minLength is about strings), or else any value.
    std::vector<std::string> declared_types(const Value &schema,
                                            const std::set<std::string> &present,
                                            const std::string &ptr);

    std::string typed(const Value &schema, const std::string &type, const std::string &ptr,
                      const std::string &hint, int depth);

    std::string string_rule(const Value &schema, const std::string &ptr, const std::string &hint);

    std::optional<int64_t> bound(const Value &schema, const char *key, const std::string &ptr,
                                 bool lower, bool exclusive);

    std::string integer_rule(const Value &schema, const std::string &ptr, const std::string &hint);

    std::string object_rule(const Value &schema, const std::string &ptr, const std::string &hint,
                            int depth);

    std::string array_rule(const Value &schema, const std::string &ptr, const std::string &hint,
                           int depth);

    std::string alternatives(const Value &list, const std::string &keyword, const std::string &ptr,
                             const std::string &hint, int depth);

    static bool has_type(const Value &v, const std::string &type);

    std::string constants(const Value &schema, const std::string &keyword, const std::string &ptr,
                          const std::string &hint);

    static chat::JsonOptions compact();

    // The schema a `$ref` names inside this document: "#", or "#" and a JSON pointer (RFC 6901
    // escapes after percent-decoding), through objects and arrays; nullptr for anything else
    // (another document, an anchor) or a pointer that names nothing.
    const Value *lookup(const Value &target, bool *under_id = nullptr) const;

    std::string ref(const Value &target, const std::string &ptr, int depth);
};

}  // namespace vkllm::grammar::schema
