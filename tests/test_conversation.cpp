// Conversations through the C API on the shared tiny Qwen2 model (its vocabulary has ChatML's
// control tokens): a second reply prefills only the tokens after the cached prefix, a
// multi-turn greedy conversation replies as the whole conversation rendered from scratch does,
// tool calls come out parsed and their results go back in, bad input changes nothing, and a
// reply cut before its grammar was done says so.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine_fixture.h"
#include "grammar_test_util.h"

namespace {

// A Hermes-style ChatML template (Qwen 2.5's shape): tools in a system turn, calls as
// <tool_call> blocks, results as <tool_response> in a user turn.
const char *kHermesTemplate =
    "{%- if tools %}{{ '<|im_start|>system\\n<tools>' }}{% for t in tools %}{{ t.function.name }}"
    "{% endfor %}{{ '</tools><|im_end|>\\n' }}{% endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' and m.tool_calls %}{{ '<|im_start|>assistant\\n' }}"
    "{%- for c in m.tool_calls %}{{ '<tool_call>\\n' + ({'name': c.function.name, 'arguments': "
    "c.function.arguments} | tojson) + '\\n</tool_call>' }}{% endfor %}{{ '<|im_end|>\\n' }}"
    "{%- elif m.role == 'tool' %}{{ '<|im_start|>user\\n<tool_response>\\n' + m.content + "
    "'\\n</tool_response><|im_end|>\\n' }}"
    "{%- else %}{{ '<|im_start|>' + m.role + '\\n' + (m.content or '') + '<|im_end|>\\n' }}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

// The model's context is 256 tokens of a byte-sized vocabulary: the tools are named only.
const char *kTools = R"([{"type": "function", "function": {"name": "get_weather"}}])";

class Conversation : public SharedModelTest {
  protected:
    void SetUp() override {
        SharedModelTest::SetUp();
        if (IsSkipped()) return;
        model_ = load(model_path("tiny-qwen2-f32"));
        ASSERT_NE(model_, nullptr);
    }
    void TearDown() override {
        for (vkllm_conversation *c : conversations_)
            vkllm_conversation_destroy(c);
        SharedModelTest::TearDown();
    }

    vkllm_conversation *conversation(vkllm_session *s, const char *name = "chatml",
                                     const char *source = nullptr, const char *tools = nullptr) {
        vkllm_conversation_params p;
        vkllm_conversation_params_init(&p);
        p.template_name = name;
        p.template_source = source;
        p.tools = tools;
        vkllm_conversation *c = nullptr;
        EXPECT_EQ(vkllm_conversation_create(s, &p, &c), VKLLM_OK) << vkllm_last_error();
        if (c) conversations_.push_back(c);
        return c;
    }

    static void add(vkllm_conversation *c, const char *role, const char *content) {
        vkllm_chat_turn t{};
        t.struct_size = sizeof t;
        t.role = role;
        t.content = content;
        ASSERT_EQ(vkllm_conversation_add(c, &t), VKLLM_OK) << vkllm_last_error();
    }

    static vkllm_sampling_params greedy() {
        vkllm_sampling_params p;
        vkllm_sampling_params_init(&p);
        p.temperature = 0;
        return p;
    }

    static vkllm_conversation_result reply(vkllm_conversation *c, uint32_t max_tokens,
                                           const vkllm_sampling_params *sp = nullptr,
                                           vkllm_chat_piece_fn on_piece = nullptr,
                                           void *user = nullptr, vkllm_status want = VKLLM_OK) {
        vkllm_sampling_params g = greedy();
        vkllm_conversation_reply_params rp;
        vkllm_conversation_reply_params_init(&rp);
        rp.max_tokens = max_tokens;
        rp.on_piece = on_piece;
        rp.user_data = user;
        vkllm_conversation_result r{};
        r.struct_size = sizeof r;
        EXPECT_EQ(vkllm_conversation_reply(c, sp ? sp : &g, &rp, &r), want) << vkllm_last_error();
        return r;
    }

    static size_t count(const vkllm_conversation *c) {
        size_t n = 0;
        EXPECT_EQ(vkllm_conversation_get_count(c, &n), VKLLM_OK);
        return n;
    }

    static vkllm_chat_turn message(const vkllm_conversation *c, size_t i) {
        vkllm_chat_turn t{};
        t.struct_size = sizeof t;
        EXPECT_EQ(vkllm_conversation_get_message(c, i, &t), VKLLM_OK) << vkllm_last_error();
        return t;
    }

    static std::string content(const vkllm_conversation *c, size_t i) {
        vkllm_chat_turn t = message(c, i);
        return t.content ? t.content : "";
    }

    vkllm_model *model_ = nullptr;
    std::vector<vkllm_conversation *> conversations_;
};

struct Pieces {
    std::string content, reasoning;
    std::vector<std::string> calls;  // name and arguments
    int stop_after = -1;             // pieces before the callback asks to stop
    int seen = 0;
};

int32_t collect(void *user, vkllm_chat_piece_kind kind, const char *text, size_t length,
                const vkllm_tool_call *call) {
    auto *p = static_cast<Pieces *>(user);
    std::string piece(text, length);
    if (kind == VKLLM_CHAT_PIECE_CONTENT) p->content += piece;
    if (kind == VKLLM_CHAT_PIECE_REASONING) p->reasoning += piece;
    if (kind == VKLLM_CHAT_PIECE_TOOL_CALL)
        p->calls.push_back(std::string(call->name) + " " + call->arguments + " " + call->id);
    return ++p->seen == p->stop_after ? 1 : 0;
}

}  // namespace

TEST_F(Conversation, ASecondReplyPrefillsOnlyTheTokensAfterTheCachedPrefix) {
    vkllm_session *s = session(model_, 256, VKLLM_KV_F32);
    vkllm_conversation *c = conversation(s);
    add(c, "system", "You are terse.");
    add(c, "user", "Hello there");
    Pieces pieces;
    vkllm_conversation_result first = reply(c, 8, nullptr, collect, &pieces);
    EXPECT_EQ(first.n_reused, 0u);
    EXPECT_EQ(first.n_prefilled, first.n_prompt);
    EXPECT_GT(first.n_generated, 0u);
    ASSERT_EQ(count(c), 3u);
    EXPECT_STREQ(message(c, 2).role, "assistant");
    EXPECT_EQ(content(c, 2), pieces.content);

    add(c, "user", "And again");
    vkllm_conversation_result second = reply(c, 8);
    // The whole first prompt and the reply's tokens were in the cache: only the end of the
    // reply's turn and the new user turn are prefilled.
    EXPECT_GE(second.n_reused, first.n_prompt);
    EXPECT_EQ(second.n_reused + second.n_prefilled, second.n_prompt);
    EXPECT_LT(second.n_prefilled, second.n_prompt - first.n_prompt);
    EXPECT_EQ(count(c), 5u);
}

TEST_F(Conversation, TheTemplatesControlTokensArePrefilledAsTokensNotText) {
    vkllm_session *s = session(model_, 128, VKLLM_KV_F32);
    vkllm_conversation *c = conversation(s);
    add(c, "user", "Hi");
    reply(c, 1);
    int32_t im_end = -1;
    size_t n = 0;
    const char *text = "<|im_end|>";
    ASSERT_EQ(vkllm_tokenizer_encode(vkllm_model_get_tokenizer(model_), text, std::strlen(text),
                                     VKLLM_TOKENIZE_PARSE_SPECIAL, &im_end, 1, &n),
              VKLLM_OK);
    ASSERT_EQ(n, 1u);
    std::vector<int32_t> cached(128);
    ASSERT_EQ(vkllm_session_get_tokens(s, 0, cached.data(), cached.size(), &n), VKLLM_OK);
    cached.resize(n);
    EXPECT_NE(std::find(cached.begin(), cached.end(), im_end), cached.end());
}

TEST_F(Conversation, AMultiTurnGreedyReplyIsTheReplyToTheWholeConversationFromScratch) {
    vkllm_session *s = session(model_, 256, VKLLM_KV_F32);
    vkllm_conversation *turns = conversation(s);
    add(turns, "user", "Tell me a story");
    reply(turns, 12);
    add(turns, "user", "Go on");
    reply(turns, 12);
    add(turns, "user", "And then?");
    vkllm_conversation_result last = reply(turns, 12);
    EXPECT_GT(last.n_reused, 0u);

    // Every message but the last reply, on a session of its own: nothing to reuse.
    vkllm_session *fresh = session(model_, 256, VKLLM_KV_F32);
    vkllm_conversation *whole = conversation(fresh);
    for (size_t i = 0; i + 1 < count(turns); ++i) {
        vkllm_chat_turn t = message(turns, i);
        ASSERT_EQ(vkllm_conversation_add(whole, &t), VKLLM_OK) << vkllm_last_error();
    }
    vkllm_conversation_result scratch = reply(whole, 12);
    EXPECT_EQ(scratch.n_reused, 0u);
    EXPECT_EQ(scratch.n_prompt, last.n_prompt);
    EXPECT_EQ(scratch.n_generated, last.n_generated);
    EXPECT_EQ(content(whole, count(whole) - 1), content(turns, count(turns) - 1));
}

TEST_F(Conversation, ToolCallsComeOutParsedAndTheirResultsGoBackIn) {
    vkllm_session *s = session(model_, 256, VKLLM_KV_F32);
    vkllm_conversation *c = conversation(s, nullptr, kHermesTemplate, kTools);
    add(c, "user", "Paris?");
    // The tiny model writes what a grammar lets it: here, one call in Hermes' markers.
    vkllm_grammar *g = nullptr;
    ASSERT_EQ(
        vkllm_grammar_create(vkllm_model_get_tokenizer(model_),
                             "root ::= \"<tool_call>\\n{\\\"name\\\": \\\"get_weather\\\", "
                             "\\\"arguments\\\": {\\\"city\\\": \\\"Paris\\\"}}\\n</tool_call>\"",
                             nullptr, &g),
        VKLLM_OK)
        << vkllm_last_error();
    vkllm_sampling_params sp = greedy();
    sp.grammar = g;
    Pieces pieces;
    vkllm_conversation_result r = reply(c, 0, &sp, collect, &pieces);
    vkllm_grammar_destroy(g);
    EXPECT_EQ(r.n_tool_calls, 1u);
    ASSERT_EQ(pieces.calls.size(), 1u);
    EXPECT_EQ(pieces.calls[0], "get_weather {\"city\": \"Paris\"} call00001");
    EXPECT_EQ(pieces.content, "");
    vkllm_chat_turn answer = message(c, 1);
    EXPECT_STREQ(answer.role, "assistant");
    EXPECT_EQ(answer.content, nullptr);
    ASSERT_EQ(answer.n_tool_calls, 1u);
    EXPECT_STREQ(answer.tool_calls[0].name, "get_weather");
    EXPECT_STREQ(answer.tool_calls[0].arguments, "{\"city\": \"Paris\"}");
    EXPECT_STREQ(answer.tool_calls[0].id, "call00001");

    vkllm_chat_turn result{};
    result.struct_size = sizeof result;
    result.role = "tool";
    result.content = "18 C and sunny";
    result.tool_call_id = "call00001";
    result.name = "get_weather";
    ASSERT_EQ(vkllm_conversation_add(c, &result), VKLLM_OK) << vkllm_last_error();
    vkllm_conversation_result next = reply(c, 4);
    // The call as the template writes it follows the cached prompt.
    EXPECT_GE(next.n_reused, r.n_prompt);
    EXPECT_EQ(count(c), 4u);
    vkllm_chat_turn tool = message(c, 2);
    EXPECT_STREQ(tool.tool_call_id, "call00001");
    EXPECT_STREQ(tool.name, "get_weather");
}

TEST_F(Conversation, OpenAIMessagesWithArgumentsAsTextAreTakenAsJson) {
    vkllm_session *s = session(model_, 256, VKLLM_KV_F32);
    vkllm_conversation *c = conversation(s, nullptr, kHermesTemplate, kTools);
    const char *messages =
        R"([{"role": "user", "content": "Weather?"},)"
        R"( {"role": "assistant", "content": null, "tool_calls": [{"id": "abc", "type": )"
        R"("function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]},)"
        R"( {"role": "tool", "tool_call_id": "abc", "name": "get_weather", "content": "-3 C"}])";
    ASSERT_EQ(vkllm_conversation_add_json(c, messages), VKLLM_OK) << vkllm_last_error();
    ASSERT_EQ(count(c), 3u);
    vkllm_chat_turn call = message(c, 1);
    EXPECT_EQ(call.content, nullptr);
    ASSERT_EQ(call.n_tool_calls, 1u);
    EXPECT_STREQ(call.tool_calls[0].id, "abc");
    EXPECT_STREQ(call.tool_calls[0].arguments, "{\"city\": \"Oslo\"}");
    reply(c, 2);
    EXPECT_EQ(count(c), 4u);
}

TEST_F(Conversation, ACallbackThatStopsEndsTheReplyWithWhatCameSoFar) {
    vkllm_session *s = session(model_, 256, VKLLM_KV_F32);
    vkllm_conversation *c = conversation(s);
    add(c, "user", "Count to ten");
    Pieces pieces;
    pieces.stop_after = 2;
    vkllm_conversation_result r = reply(c, 32, nullptr, collect, &pieces, VKLLM_ERR_CANCELLED);
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_CANCELLED);
    EXPECT_EQ(pieces.seen, 2);
    ASSERT_EQ(count(c), 2u);
    EXPECT_EQ(content(c, 1), pieces.content);
}

TEST_F(Conversation, BadInputIsRefusedAndChangesNothing) {
    vkllm_session *s = session(model_, 64, VKLLM_KV_F32);
    vkllm_conversation_params p;
    vkllm_conversation_params_init(&p);
    vkllm_conversation *c = nullptr;
    // The tiny model has no template of its own; an unknown name is refused by name.
    EXPECT_EQ(vkllm_conversation_create(s, &p, &c), VKLLM_ERR_NOT_FOUND);
    p.template_name = "no-such-template";
    EXPECT_EQ(vkllm_conversation_create(s, &p, &c), VKLLM_ERR_NOT_FOUND);
    EXPECT_NE(std::string(vkllm_last_error()).find("no-such-template"), std::string::npos);
    p.template_name = "chatml";
    p.tools = "[not json";
    EXPECT_EQ(vkllm_conversation_create(s, &p, &c), VKLLM_ERR_INVALID_ARGUMENT);
    p.tools = nullptr;
    p.seq = 1;
    EXPECT_EQ(vkllm_conversation_create(s, &p, &c), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(c, nullptr);

    c = conversation(s);
    add(c, "user", "Hi");
    EXPECT_EQ(vkllm_conversation_add_json(c, "[{\"role\": \"user\"}, {\"content\": \"x\"}]"),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_conversation_add_json(c, "{\"role\": "), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(count(c), 1u);
    vkllm_chat_turn t{};
    t.struct_size = sizeof t;
    EXPECT_EQ(vkllm_conversation_get_message(c, 1, &t), VKLLM_ERR_NOT_FOUND);

    // A conversation longer than the context is refused before the cache changes.
    reply(c, 2);
    uint32_t before = 0;
    ASSERT_EQ(vkllm_session_get_position(s, 0, &before), VKLLM_OK);
    add(c, "user", std::string(200, 'a').c_str());
    reply(c, 2, nullptr, nullptr, nullptr, VKLLM_ERR_CONTEXT_FULL);
    uint32_t after = 0;
    ASSERT_EQ(vkllm_session_get_position(s, 0, &after), VKLLM_OK);
    EXPECT_EQ(after, before);
    EXPECT_EQ(count(c), 3u);
    // Dropping the message that does not fit lets the conversation go on.
    ASSERT_EQ(vkllm_conversation_truncate(c, 2), VKLLM_OK);
    add(c, "user", "Ok");
    reply(c, 2);
    vkllm_conversation_destroy(nullptr);
}

TEST_F(Conversation, AReplyEndsBeforeAStopString) {
    vkllm_session *s = session(model_, 256, VKLLM_KV_F32);
    vkllm_conversation *c = conversation(s);
    add(c, "user", "Say something");
    reply(c, 12);
    const std::string whole = content(c, 1);
    ASSERT_GE(whole.size(), 4u);
    const std::string stop = whole.substr(2, 2);
    ASSERT_EQ(vkllm_conversation_truncate(c, 1), VKLLM_OK);
    vkllm_sampling_params g = greedy();
    const char *stops[] = {stop.c_str()};
    vkllm_conversation_reply_params rp;
    vkllm_conversation_reply_params_init(&rp);
    rp.max_tokens = 12;
    rp.stop = stops;
    rp.n_stop = 1;
    vkllm_conversation_result r{};
    r.struct_size = sizeof r;
    ASSERT_EQ(vkllm_conversation_reply(c, &g, &rp, &r), VKLLM_OK) << vkllm_last_error();
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_STRING);
    EXPECT_EQ(content(c, 1), whole.substr(0, whole.find(stop)));
}

TEST_F(Conversation, AChatOnAStreamingSessionGoesOnPastTheContextPrefillingOnlyTheNewTurn) {
    vkllm_session *s = session(model_, 64, VKLLM_KV_F32, VKLLM_SESSION_STREAMING);
    vkllm_conversation *c = conversation(s);
    vkllm_conversation_result r{};
    for (const char *question : {"Hi", "More", "Again", "Still"}) {
        add(c, "user", question);
        r = reply(c, 24);
    }
    uint32_t position = 0;
    ASSERT_EQ(vkllm_session_get_position(s, 0, &position), VKLLM_OK);
    EXPECT_GT(position, 64u) << "the ring has wrapped";
    EXPECT_GE(r.n_reused, 64u);
    EXPECT_LT(r.n_prefilled, r.n_prompt / 2);
    EXPECT_EQ(r.n_reused + r.n_prefilled, r.n_prompt);
    EXPECT_EQ(count(c), 8u);
}

// vkllm_conversation_result.grammar_progress: a reply cut before its grammar was done is told
// apart from a whole one, which the grammar accepts as the reply's text.
TEST_F(Conversation, AReplyCutBeforeItsGrammarIsDoneIsReportedIncomplete) {
    const char *record =
        "root ::= \"{\\\"id\\\": \" [1-9] [0-9]{0,2} \", \\\"ok\\\": \" (\"true\" | \"false\") "
        "\"}\"";
    vkllm_grammar *raw = nullptr;
    ASSERT_EQ(vkllm_grammar_create(vkllm_model_get_tokenizer(model_), record, nullptr, &raw),
              VKLLM_OK)
        << vkllm_last_error();
    std::unique_ptr<vkllm_grammar, decltype(&vkllm_grammar_destroy)> grammar(raw,
                                                                             vkllm_grammar_destroy);
    vkllm_session *s = session(model_, 256, VKLLM_KV_F32);
    vkllm_conversation *c = conversation(s);
    add(c, "user", "Give me a record");
    vkllm_sampling_params g = greedy();
    g.grammar = grammar.get();
    vkllm_conversation_result cut = reply(c, 4, &g);
    EXPECT_EQ(cut.stop_reason, VKLLM_STOP_MAX_TOKENS);
    EXPECT_EQ(cut.grammar_progress, VKLLM_GRAMMAR_INCOMPLETE) << content(c, 1);
    EXPECT_FALSE(vkllm::grammar::testing::matches(record, content(c, 1))) << content(c, 1);

    ASSERT_EQ(vkllm_conversation_truncate(c, 1), VKLLM_OK);
    vkllm_conversation_result whole = reply(c, 64, &g);
    EXPECT_EQ(whole.stop_reason, VKLLM_STOP_END_OF_GENERATION);
    EXPECT_EQ(whole.grammar_progress, VKLLM_GRAMMAR_FINISHED) << content(c, 1);
    EXPECT_TRUE(vkllm::grammar::testing::matches(record, content(c, 1))) << content(c, 1);
}

TEST_F(Conversation, AReplyWithoutAGrammarIsComplete) {
    vkllm_session *s = session(model_, 256, VKLLM_KV_F32);
    vkllm_conversation *c = conversation(s);
    add(c, "user", "Hello");
    vkllm_conversation_result r = reply(c, 3);
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_MAX_TOKENS);
    EXPECT_EQ(r.grammar_progress, VKLLM_GRAMMAR_COMPLETE);
}
