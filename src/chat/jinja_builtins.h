// What a template can name besides its variables: jinja2's filters and tests, the methods of
// Python's str, dict and list that the immutable sandbox allows, attribute and item lookup,
// and the globals transformers installs.
#pragma once

#include <optional>
#include <string>

#include "chat/jinja_eval.h"
#include "chat/jinja_value.h"

namespace vkllm::chat {

// Reads a builtin's arguments the way Python binds them: by position, else by keyword.
class Args {
  public:
    Args(const char *function, CallArgs &args) : function_(function), args_(args) {}
    // The i-th parameter, called name; nullopt when not given.
    std::optional<Value> get(size_t i, const char *name);
    Value get_or(size_t i, const char *name, Value fallback);
    // Fails on arguments beyond n positional ones or with other names than those read.
    void done(size_t n);

  private:
    const char *function_;
    CallArgs &args_;
    size_t keywords_used_ = 0;
};

Value call_filter(Interpreter &in, const std::string &name, const Value &v, CallArgs &args);
bool call_test(Interpreter &in, const std::string &name, const Value &v, CallArgs &args);
// obj.name: a method of str, dict or list, else a dict's or namespace's key, else undefined;
// on undefined an UndefinedError.
Value get_attr(Interpreter &in, const Value &obj, const std::string &name);
// obj[key]: a list's or string's index, a dict's key, else (for a string key) get_attr.
Value get_item(Interpreter &in, const Value &obj, const Value &key);
// raise_exception, strftime_now, dict, namespace, range, lipsum's absence aside.
void add_globals(Frame &root, const RenderOptions &options);
// Python's time.strftime with the C locale on a UTC time (seconds since the epoch).
std::string format_time(const std::string &format, int64_t seconds);

}  // namespace vkllm::chat
