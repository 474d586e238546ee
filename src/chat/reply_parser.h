// Splits a chat model's reply into its reasoning, its answer and its tool calls as the text
// streams in. Each format's markers (<think>, <tool_call>, [TOOL_CALLS], harmony's channels)
// are consumed; one split across pushes is held back until it is whole or proves not to be a
// marker, so pushing a reply at once or a byte at a time gives the same parts. Each stretch of
// reasoning or answer between markers is trimmed of surrounding whitespace (models put newlines
// around their tags). Tool-call arguments are the model's JSON text as written. A call that is
// not valid JSON stays in the answer with its markers, as the model wrote it: nothing throws.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vkllm::chat {

enum class ReplyFormat {
    Plain,    // all answer, as generated
    Hermes,   // <think>...</think>; <tool_call>{"name": ..., "arguments": {...}}</tool_call>
              // (Qwen 2.5/3, Hermes, SmolLM3, DeepSeek-R1 distills), or Qwen3-Coder's
              // <function=NAME><parameter=KEY>VALUE</parameter></function> body
    Mistral,  // [THINK]...[/THINK]; [TOOL_CALLS][{"name", "arguments", "id"}, ...] (v0.3) or
              // [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...} ([CALL_ID] optional; Small 3.2, Ministral 3)
    Llama3,   // a reply that is one JSON object {"name", "parameters"}, maybe after
              // <|python_tag|>, is a tool call (Llama 3.1-3.3's JSON tool calling)
    Harmony,  // GPT-OSS: <|channel|>analysis|final|commentary [to=functions.NAME] ...
              // <|message|>BODY<|end|> / <|call|> / <|return|>, messages joined by
              // <|start|>assistant
};

struct ToolCall {
    std::string id;  // empty where the format carries none
    std::string name;
    std::string arguments;  // JSON text
};

// What a push made certain: text to append to the reasoning and to the answer, and the calls
// completed.
struct ReplyPart {
    std::string reasoning, content;
    std::vector<ToolCall> tool_calls;
};

class ReplyParser {
  public:
    // in_reasoning: the prompt left a reasoning block open (DeepSeek-R1's template ends its
    // generation prompt with "<think>\n"), so the reply begins inside it.
    explicit ReplyParser(ReplyFormat format, bool in_reasoning = false);

    ReplyPart push(std::string_view text);
    // The end of the reply: what is still held, an unfinished call as answer text.
    ReplyPart finish();

  private:
    enum class State {
        Content,
        Reasoning,
        Start,           // Llama3: nothing but whitespace yet; a tool call may begin
        CallBody,        // Hermes: inside <tool_call>, until </tool_call>
        CallJson,        // a JSON value that is a call (Llama3) or calls (Mistral's array)
        MistralName,     // after [TOOL_CALLS]: a name up to [ARGS], or a JSON array
        MistralArgs,     // after [ARGS]: the arguments object
        HarmonyBetween,  // before <|channel|>: the role part of a message header
        HarmonyHeader,   // up to <|message|>
        HarmonyBody,     // the message, until <|end|>, <|call|>, <|return|>
    };
    struct Marker {
        std::string_view text;
        State next;
    };

    void run(bool final, ReplyPart &out);
    bool step(bool final, ReplyPart &out);  // false: needs more text
    std::vector<Marker> markers() const;
    bool scan_markers(bool final, ReplyPart &out);
    bool scan_json(bool final, ReplyPart &out);
    void enter(State next, std::string_view marker, ReplyPart &out);
    void emit(std::string_view text, bool section_end, ReplyPart &out);
    void end_call(ReplyPart &out);
    void give_back_raw(ReplyPart &out);

    ReplyFormat format_;
    State state_;
    std::string buf_;            // text not yet classified
    std::string raw_;            // the markers and text of the call being read, as written
    std::string body_;           // that call's body (or harmony's header)
    std::string name_, id_;      // Mistral: the call's name and id before [ARGS]
    std::string role_;           // harmony: the header's part before <|channel|>
    std::string recipient_;      // harmony: the message's recipient ("functions.NAME")
    bool to_reasoning_ = false;  // harmony: the body is analysis
    bool to_call_ = false;       // harmony: the body is a call's arguments
    bool lead_ = true;           // a section just began: its leading whitespace is dropped
    std::string held_space_;     // trailing whitespace of the section, emitted only if more
                                 // text follows in the same section
};

// The reply format a chat template's text implies by the markers it writes; Plain when none.
ReplyFormat reply_format_of(std::string_view template_source);

// Whether a rendered prompt ends inside an open reasoning block (<think> or [THINK] after the
// last close).
bool prompt_opens_reasoning(std::string_view prompt);

}  // namespace vkllm::chat
