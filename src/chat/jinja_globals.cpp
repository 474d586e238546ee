// The globals of transformers' chat-template environment: raise_exception, strftime_now,
// dict, namespace, plus jinja2's range (capped as the sandbox caps it) and joiner.
#include <ctime>

#include "chat/jinja_builtins.h"
#include "chat/jinja_ops.h"
#include "chat/jinja_text.h"
#include "common/checked_int.h"
#include "common/error.h"
#include "common/platform.h"

namespace vkllm::chat {

namespace {

// jinja2's sandbox refuses ranges longer than this (MAX_RANGE).
constexpr int64_t kMaxRange = 100000;

Value range(Interpreter &in, CallArgs &call) {
    if (!call.keywords.empty()) type_error("range() takes no keyword arguments");
    std::vector<int64_t> n;
    for (const Value &v : call.positional) {
        if (!(v.is_int() || v.kind() == Value::Kind::Bool))
            type_error("'" + type_name(v) + "' object cannot be interpreted as an integer");
        n.push_back(v.as_int());
    }
    if (n.empty() || n.size() > 3) type_error("range expected 1 to 3 arguments");
    int64_t start = n.size() == 1 ? 0 : n[0], stop = n.size() == 1 ? n[0] : n[1];
    int64_t stride = n.size() == 3 ? n[2] : 1;
    if (stride == 0) fail(VKLLM_ERR_INVALID_ARGUMENT, "ValueError: range() arg 3 must not be zero");
    // Count in floating point: the bounds may be anywhere in int64.
    double count = stride > 0 ? (double(stop) - double(start)) / double(stride)
                              : (double(start) - double(stop)) / double(-stride);
    if (count > double(kMaxRange))
        fail(
            VKLLM_ERR_INVALID_ARGUMENT,
            "OverflowError: Range too big. The sandbox blocks ranges larger than MAX_RANGE (%lld).",
            static_cast<long long>(kMaxRange));
    List out;
    for (int64_t i = start; stride > 0 ? i < stop : i > stop; i += stride) {
        out.emplace_back(i);
        if (!checked_add(i, stride, &i)) break;
        i -= stride;
    }
    in.step(out.size());
    return Value(std::move(out));
}

// dict(mapping or pairs, **kwargs), and namespace(...) built the same way.
std::shared_ptr<Dict> dict_from(CallArgs &call, bool check_names) {
    auto d = std::make_shared<Dict>();
    if (call.positional.size() > 1) type_error("dict expected at most 1 argument");
    auto put = [&](const Value &k, const Value &v) {
        if (!hashable(k)) type_error("unhashable type: '" + type_name(k) + "'");
        if (check_names && k.is_str() && !k.str().empty() && k.str()[0] == '_')
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "SecurityError: Chat templates cannot store underscore-prefixed attributes on a "
                 "namespace, but got '%s'.",
                 k.str().c_str());
        d->set(k, v);
    };
    if (!call.positional.empty()) {
        const Value &src = call.positional[0];
        if (src.is_dict() || src.kind() == Value::Kind::Namespace) {
            for (const auto &kv : src.dict().items)
                put(kv.first, kv.second);
        } else {
            for (const Value &pair : iterate(src)) {
                List kv = iterate(pair);
                if (kv.size() != 2)
                    fail(VKLLM_ERR_INVALID_ARGUMENT,
                         "ValueError: dictionary update sequence element has length %zu; 2 is "
                         "required",
                         kv.size());
                put(kv[0], kv[1]);
            }
        }
    }
    for (const auto &kv : call.keywords)
        put(Value(kv.first), kv.second);
    return d;
}

void put_int(std::string &out, int value, int width, char flag) {
    std::string digits = std::to_string(value);
    if (flag != '-')
        while (int(digits.size()) < width)
            digits.insert(digits.begin(), flag == '_' ? ' ' : '0');
    out += digits;
}

}  // namespace

std::string format_time(const std::string &format, int64_t seconds) {
    static const char *days[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                 "Thursday", "Friday", "Saturday"};
    static const char *months[] = {"January",   "February", "March",    "April",
                                   "May",       "June",     "July",     "August",
                                   "September", "October",  "November", "December"};
    std::tm tm = platform::utc_time(seconds);
    std::string out;
    for (size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%' || i + 1 == format.size()) {
            out += format[i];
            continue;
        }
        char flag = 0;
        char c = format[++i];
        if ((c == '-' || c == '_' || c == '0') && i + 1 < format.size()) {
            flag = c;
            c = format[++i];
        }
        switch (c) {
            case 'Y':
                put_int(out, tm.tm_year + 1900, 4, flag);
                break;
            case 'y':
                put_int(out, tm.tm_year % 100, 2, flag);
                break;
            case 'm':
                put_int(out, tm.tm_mon + 1, 2, flag);
                break;
            case 'd':
                put_int(out, tm.tm_mday, 2, flag);
                break;
            case 'e':
                put_int(out, tm.tm_mday, 2, flag ? flag : '_');
                break;
            case 'H':
                put_int(out, tm.tm_hour, 2, flag);
                break;
            case 'I':
                put_int(out, tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12, 2, flag);
                break;
            case 'M':
                put_int(out, tm.tm_min, 2, flag);
                break;
            case 'S':
                put_int(out, tm.tm_sec, 2, flag);
                break;
            case 'j':
                put_int(out, tm.tm_yday + 1, 3, flag);
                break;
            case 'w':
                put_int(out, tm.tm_wday, 1, flag);
                break;
            case 'p':
                out += tm.tm_hour < 12 ? "AM" : "PM";
                break;
            case 'A':
                out += days[tm.tm_wday];
                break;
            case 'a':
                out += std::string(days[tm.tm_wday], 3);
                break;
            case 'B':
                out += months[tm.tm_mon];
                break;
            case 'b':
            case 'h':
                out += std::string(months[tm.tm_mon], 3);
                break;
            case 'F':
                out += format_time("%Y-%m-%d", seconds);
                break;
            case 'T':
                out += format_time("%H:%M:%S", seconds);
                break;
            case 'D':
                out += format_time("%m/%d/%y", seconds);
                break;
            case 'c':
                out += format_time("%a %b %e %H:%M:%S %Y", seconds);
                break;
            case 'x':
                out += format_time("%m/%d/%y", seconds);
                break;
            case 'X':
                out += format_time("%H:%M:%S", seconds);
                break;
            case 'Z':
                out += "UTC";
                break;
            case 'z':
                out += "+0000";
                break;
            case 'n':
                out += '\n';
                break;
            case 't':
                out += '\t';
                break;
            case '%':
                out += '%';
                break;
            default:
                out += '%';
                if (flag) out += flag;
                out += c;
        }
    }
    return out;
}

void add_globals(Frame &root, const RenderOptions &options) {
    root.vars["range"] = make_native("range", range);
    root.vars["dict"] = make_native(
        "dict", [](Interpreter &, CallArgs &call) { return Value(dict_from(call, false)); });
    root.vars["namespace"] = make_native("namespace", [](Interpreter &in, CallArgs &call) {
        std::shared_ptr<Dict> ns = dict_from(call, true);
        in.track(ns);
        return Value(ns, Value::Kind::Namespace);
    });
    root.vars["raise_exception"] =
        make_native("raise_exception", [](Interpreter &in, CallArgs &call) -> Value {
            std::string message = call.positional.empty()
                                      ? std::string()
                                      : to_str(call.positional[0], in.max_bytes());
            in.mark_raised();
            throw Error(VKLLM_ERR_INVALID_ARGUMENT, message);
        });
    std::optional<int64_t> now = options.now;
    root.vars["strftime_now"] = make_native("strftime_now", [now](Interpreter &, CallArgs &call) {
        Args a("strftime_now", call);
        Value format = a.get_or(0, "format", Value::none());
        a.done(1);
        if (!format.is_str()) type_error("strftime() argument 1 must be str");
        int64_t seconds = now ? *now : int64_t(std::time(nullptr));
        // Local time, as datetime.now() gives: shifted by the zone's offset from UTC.
        if (!now) seconds += platform::utc_offset(seconds);
        return Value(format_time(format.str(), seconds));
    });
    root.vars["joiner"] = make_native("joiner", [](Interpreter &, CallArgs &call) {
        Args a("joiner", call);
        Value sep = a.get_or(0, "sep", Value(", "));
        a.done(1);
        auto used = std::make_shared<bool>(false);
        return make_native("joiner", [sep, used](Interpreter &, CallArgs &) {
            if (!*used) {
                *used = true;
                return Value(std::string());
            }
            return sep;
        });
    });
}

}  // namespace vkllm::chat
