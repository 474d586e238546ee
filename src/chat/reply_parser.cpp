#include "chat/reply_parser.h"

#include <algorithm>

#include "chat/json_scan.h"

namespace vkllm::chat {

namespace {

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_space(s.back()))
        s.remove_suffix(1);
    return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

// A call's arguments as JSON text: an object as written, or the text of a string that holds
// one (some models quote their arguments).
bool arguments_text(std::string_view raw, std::string *out) {
    std::string decoded;
    std::vector<std::pair<std::string, std::string_view>> members;
    if (json_string(raw, &decoded)) {
        if (!json_members(decoded, &members)) return false;
        *out = std::string(trim(decoded));
        return true;
    }
    if (!json_members(raw, &members)) return false;
    *out = std::string(raw);
    return true;
}

// {"name": ..., "arguments" or "parameters": {...}, "id": ...} as a call.
bool object_call(std::string_view object, ToolCall *call) {
    std::vector<std::pair<std::string, std::string_view>> members;
    if (!json_members(object, &members)) return false;
    bool named = false, has_arguments = false;
    for (const auto &[key, value] : members) {
        if (key == "name") named = json_string(value, &call->name);
        if (key == "id") json_string(value, &call->id);
        if (key == "arguments" || key == "parameters")
            has_arguments = arguments_text(value, &call->arguments);
    }
    return named && !call->name.empty() && has_arguments;
}

// Whether `s` is one JSON value and nothing else (a number at the very end counts as whole).
bool whole_json(std::string_view s) {
    std::string padded = std::string(s) + " ";
    size_t end = 0;
    return json_scan(padded, 0, &end) == JsonScan::Complete && trim(padded.substr(end)).empty();
}

// Qwen3-Coder's <function=NAME><parameter=KEY>VALUE</parameter>...</function>. A value that is
// JSON (a number, an object, true) is kept as such, any other text becomes a JSON string.
bool xml_call(std::string_view body, ToolCall *call) {
    constexpr std::string_view kFunction = "<function=", kParam = "<parameter=",
                               kParamEnd = "</parameter>", kFunctionEnd = "</function>";
    if (!starts_with(body, kFunction)) return false;
    size_t close = body.find('>');
    if (close == std::string_view::npos) return false;
    call->name = std::string(trim(body.substr(kFunction.size(), close - kFunction.size())));
    std::string args = "{";
    std::string_view rest = trim(body.substr(close + 1));
    while (starts_with(rest, kParam)) {
        size_t key_end = rest.find('>');
        size_t value_end = rest.find(kParamEnd);
        if (key_end == std::string_view::npos || value_end == std::string_view::npos ||
            value_end < key_end)
            return false;
        std::string_view key = trim(rest.substr(kParam.size(), key_end - kParam.size()));
        std::string_view value = rest.substr(key_end + 1, value_end - key_end - 1);
        // The template writes a newline after the tag and before the closing one.
        if (starts_with(value, "\n")) value.remove_prefix(1);
        if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
        bool json = whole_json(value);
        args += (args.size() > 1 ? ", " : "") + json_quote(key) + ": " +
                (json ? std::string(trim(value)) : json_quote(value));
        rest = trim(rest.substr(value_end + kParamEnd.size()));
    }
    if (!starts_with(rest, kFunctionEnd) || !trim(rest.substr(kFunctionEnd.size())).empty())
        return false;
    call->arguments = args + "}";
    return !call->name.empty();
}

// How much of the end of `buf` could be the beginning of a marker.
size_t partial_marker(std::string_view buf, const std::vector<std::string_view> &markers) {
    size_t keep = 0;
    for (std::string_view m : markers)
        for (size_t n = std::min(buf.size(), m.size() - 1); n > keep; --n)
            if (buf.substr(buf.size() - n) == m.substr(0, n)) {
                keep = n;
                break;
            }
    return keep;
}

}  // namespace

ReplyParser::ReplyParser(ReplyFormat format, bool in_reasoning) : format_(format) {
    switch (format) {
        case ReplyFormat::Plain:
            state_ = State::Content;
            lead_ = false;  // plain text is passed through as generated
            break;
        case ReplyFormat::Llama3:
            state_ = State::Start;
            break;
        case ReplyFormat::Harmony:
            state_ = State::HarmonyBetween;
            break;
        case ReplyFormat::Hermes:
        case ReplyFormat::Mistral:
            state_ = in_reasoning ? State::Reasoning : State::Content;
            break;
    }
}

ReplyPart ReplyParser::push(std::string_view text) {
    buf_ += text;
    ReplyPart out;
    while (step(false, out)) {
    }
    return out;
}

ReplyPart ReplyParser::finish() {
    ReplyPart out;
    while (step(true, out)) {
    }
    // What a state still holds at the end of the reply.
    switch (state_) {
        case State::CallBody: {
            ToolCall call;
            std::string_view body = trim(body_);
            if ((starts_with(body, "{") && object_call(body, &call)) || xml_call(body, &call))
                out.tool_calls.push_back(std::move(call));
            else
                give_back_raw(out);
            break;
        }
        case State::MistralName:
            give_back_raw(out);
            break;
        case State::HarmonyBetween:
            // A reply with no channel at all is an answer.
            if (body_.find("<|") == std::string::npos) {
                state_ = State::Content;
                emit(body_, true, out);
            }
            break;
        case State::HarmonyBody:
            if (to_call_) end_call(out);
            break;
        default:
            break;
    }
    body_.clear();
    raw_.clear();
    held_space_.clear();
    return out;
}

std::vector<ReplyParser::Marker> ReplyParser::markers() const {
    const bool hermes = format_ == ReplyFormat::Hermes, mistral = format_ == ReplyFormat::Mistral;
    switch (state_) {
        case State::Content:
            if (hermes) return {{"<think>", State::Reasoning}, {"<tool_call>", State::CallBody}};
            if (mistral)
                return {{"[THINK]", State::Reasoning}, {"[TOOL_CALLS]", State::MistralName}};
            return {};
        case State::Reasoning:
            return {{hermes ? "</think>" : "[/THINK]", State::Content}};
        case State::CallBody:
            return {{"</tool_call>", State::Content}};
        case State::MistralName:
            return {{"[ARGS]", State::MistralArgs}};
        case State::HarmonyBetween:
            return {{"<|channel|>", State::HarmonyHeader}};
        case State::HarmonyHeader:
            return {{"<|message|>", State::HarmonyBody}};
        case State::HarmonyBody:
            return {{"<|end|>", State::HarmonyBetween},
                    {"<|call|>", State::HarmonyBetween},
                    {"<|return|>", State::HarmonyBetween},
                    {"<|start|>", State::HarmonyBetween}};
        default:
            return {};
    }
}

bool ReplyParser::step(bool final, ReplyPart &out) {
    switch (state_) {
        case State::Start: {
            size_t i = 0;
            while (i < buf_.size() && is_space(buf_[i]))
                ++i;
            constexpr std::string_view kTag = "<|python_tag|>";
            std::string_view rest = std::string_view(buf_).substr(i);
            if (rest.empty()) return false;
            if (rest[0] == '{') {
                raw_.clear();
                state_ = State::CallJson;
            } else if (starts_with(rest, kTag)) {
                raw_ = std::string(kTag);
                buf_.erase(0, i + kTag.size());
                state_ = State::CallJson;
            } else if (starts_with(kTag, rest) && !final) {
                return false;
            } else {
                state_ = State::Content;
            }
            return true;
        }
        case State::MistralName: {
            // [TOOL_CALLS] then a JSON array is v0.3's form; a name up to [ARGS] the newer one.
            if (body_.empty()) {
                size_t i = 0;
                while (i < buf_.size() && is_space(buf_[i]))
                    ++i;
                if (i + 1 >= buf_.size() && !final) return false;  // not yet known which
                if (i + 1 < buf_.size() && buf_[i] == '[' &&
                    (buf_[i + 1] == '{' || buf_[i + 1] == ']' || is_space(buf_[i + 1]))) {
                    state_ = State::CallJson;
                    return true;
                }
            }
            return scan_markers(final, out);
        }
        case State::CallJson:
        case State::MistralArgs:
            return scan_json(final, out);
        default:
            return scan_markers(final, out);
    }
}

bool ReplyParser::scan_markers(bool final, ReplyPart &out) {
    std::vector<Marker> ms = markers();
    size_t best = std::string::npos;
    const Marker *hit = nullptr;
    for (const Marker &m : ms) {
        size_t at = buf_.find(m.text);
        if (at < best ||
            (at == best && at != std::string::npos && m.text.size() > hit->text.size())) {
            best = at;
            hit = &m;
        }
    }
    if (hit) {
        std::string before = buf_.substr(0, best);
        Marker m = *hit;
        buf_.erase(0, best + m.text.size());
        emit(before, true, out);
        enter(m.next, m.text, out);
        return true;
    }
    std::vector<std::string_view> texts;
    for (const Marker &m : ms)
        texts.push_back(m.text);
    size_t keep = final ? 0 : partial_marker(buf_, texts);
    std::string text = buf_.substr(0, buf_.size() - keep);
    buf_.erase(0, buf_.size() - keep);
    emit(text, final, out);
    return false;
}

bool ReplyParser::scan_json(bool final, ReplyPart &out) {
    size_t end = 0;
    JsonScan r = json_scan(buf_, 0, &end);
    if (r == JsonScan::Incomplete && !final) return false;
    if (r != JsonScan::Complete) {
        // Not a call after all: the marker goes back into the answer, and the text after it is
        // read as answer text.
        state_ = State::Content;
        lead_ = true;
        give_back_raw(out);
        return true;
    }
    std::string value = buf_.substr(0, end);
    buf_.erase(0, end);
    std::vector<ToolCall> calls;
    bool ok = false;
    if (state_ == State::MistralArgs) {
        ToolCall call;
        call.name = name_;
        call.id = id_;
        ok = !call.name.empty() && arguments_text(trim(value), &call.arguments);
        calls.push_back(std::move(call));
    } else if (format_ == ReplyFormat::Mistral) {
        std::vector<std::string_view> elements;
        ok = json_elements(value, &elements) && !elements.empty();
        for (std::string_view e : elements) {
            ToolCall call;
            ok = ok && object_call(e, &call);
            calls.push_back(std::move(call));
        }
    } else {
        ToolCall call;
        ok = object_call(trim(value), &call);
        calls.push_back(std::move(call));
    }
    raw_ += value;
    state_ = State::Content;
    lead_ = true;
    held_space_.clear();
    if (ok) {
        for (ToolCall &c : calls)
            out.tool_calls.push_back(std::move(c));
        raw_.clear();
    } else {
        give_back_raw(out);
    }
    return true;
}

void ReplyParser::enter(State next, std::string_view marker, ReplyPart &out) {
    switch (state_) {
        case State::CallBody: {  // </tool_call>
            raw_ += marker;
            ToolCall call;
            std::string_view body = trim(body_);
            if ((starts_with(body, "{") && object_call(body, &call)) || xml_call(body, &call)) {
                out.tool_calls.push_back(std::move(call));
                raw_.clear();
            } else {
                state_ = State::Content;
                give_back_raw(out);
            }
            break;
        }
        case State::MistralName: {  // [ARGS]
            raw_ += marker;
            std::string_view head = body_;
            constexpr std::string_view kId = "[CALL_ID]";
            size_t at = head.find(kId);
            name_ = std::string(trim(head.substr(0, at)));
            id_ =
                at == std::string_view::npos ? "" : std::string(trim(head.substr(at + kId.size())));
            break;
        }
        case State::HarmonyBetween:  // <|channel|>: the role part may name the recipient
            role_ = std::move(body_);
            body_.clear();
            break;
        case State::HarmonyHeader: {  // <|message|>: "analysis", "final", "commentary to=..."
            std::string_view header = trim(body_);
            std::string_view channel =
                header.substr(0, std::min(header.find(' '), header.find('<')));
            std::string both = role_ + " " + std::string(header);
            size_t to = both.find("to=");
            recipient_.clear();
            if (to != std::string::npos) {
                size_t end = to + 3;
                while (end < both.size() && !is_space(both[end]) && both[end] != '<')
                    ++end;
                recipient_ = both.substr(to + 3, end - to - 3);
            }
            to_call_ = starts_with(recipient_, "functions.");
            to_reasoning_ = !to_call_ && channel == "analysis";
            name_ = to_call_ ? recipient_.substr(10) : "";
            break;
        }
        case State::HarmonyBody:
            if (to_call_) end_call(out);
            break;
        default:
            break;
    }
    if (next == State::CallBody || next == State::MistralName) {
        raw_ = std::string(marker);
        body_.clear();
    }
    if (next == State::HarmonyBetween) {
        body_.clear();
        to_call_ = to_reasoning_ = false;
    }
    if (next == State::HarmonyBody) body_.clear();
    state_ = next;
    lead_ = true;
    held_space_.clear();
}

void ReplyParser::end_call(ReplyPart &out) {
    ToolCall call;
    call.name = name_;
    std::string_view args = trim(body_);
    size_t end = 0;
    if (!call.name.empty() && json_scan(args, 0, &end) == JsonScan::Complete &&
        end == args.size()) {
        call.arguments = std::string(args);
        out.tool_calls.push_back(std::move(call));
    } else {
        out.content += body_;
    }
    body_.clear();
    to_call_ = false;
}

void ReplyParser::give_back_raw(ReplyPart &out) {
    std::string raw = std::move(raw_);
    raw_.clear();
    body_.clear();
    state_ = State::Content;
    emit(raw, false, out);
}

void ReplyParser::emit(std::string_view text, bool section_end, ReplyPart &out) {
    std::string *sink = nullptr;
    switch (state_) {
        case State::Content:
        case State::Start:
            sink = &out.content;
            break;
        case State::Reasoning:
            sink = &out.reasoning;
            break;
        case State::HarmonyBody:
            if (!to_call_) {
                sink = to_reasoning_ ? &out.reasoning : &out.content;
                break;
            }
            [[fallthrough]];
        default:  // a call's body, a harmony header: collected, not shown
            raw_ += text;
            body_ += text;
            return;
    }
    if (format_ == ReplyFormat::Plain) {
        *sink += text;
        return;
    }
    // Sections are trimmed: whitespace at a section's start is dropped, and at its end it is
    // held until text follows in the same section.
    if (lead_) {
        while (!text.empty() && is_space(text.front()))
            text.remove_prefix(1);
        if (text.empty()) return;
        lead_ = false;
    }
    std::string s = held_space_ + std::string(text);
    held_space_.clear();
    size_t last = s.size();
    while (last > 0 && is_space(s[last - 1]))
        --last;
    if (!section_end) held_space_ = s.substr(last);
    *sink += s.substr(0, last);
}

ReplyFormat reply_format_of(std::string_view t) {
    auto has = [&](std::string_view s) { return t.find(s) != std::string_view::npos; };
    if (has("<|channel|>")) return ReplyFormat::Harmony;
    if (has("[TOOL_CALLS]") || has("[THINK]")) return ReplyFormat::Mistral;
    if (has("<tool_call>") || has("<think>")) return ReplyFormat::Hermes;
    if (has("<|python_tag|>") || (has("<|start_header_id|>") && has("\"parameters\"")))
        return ReplyFormat::Llama3;
    return ReplyFormat::Plain;
}

bool prompt_opens_reasoning(std::string_view prompt) {
    for (auto [open, close] : {std::pair<std::string_view, std::string_view>{"<think>", "</think>"},
                               {"[THINK]", "[/THINK]"}}) {
        size_t o = prompt.rfind(open);
        size_t c = prompt.rfind(close);
        if (o != std::string_view::npos && (c == std::string_view::npos || c < o)) return true;
    }
    return false;
}

}  // namespace vkllm::chat
