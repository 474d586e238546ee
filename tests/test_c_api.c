/* The header compiled as strict C99 (-std=c99 -pedantic -Wall -Wextra -Werror) and the API
 * called from C, as a C application or a binding generator sees it. */
#include <stdio.h>
#include <string.h>

#include "validation.h"
#include "vkllm.h"

static int failures = 0;
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s (%s)\n", __FILE__, __LINE__, #cond, \
                    vkllm_last_error());                                                 \
            ++failures;                                                                  \
        }                                                                                \
    } while (0)

int main(void) {
    vkllm_runtime_params params;
    vkllm_runtime *rt = NULL;
    vkllm_device_info info;
    vkllm_self_check_result result;
    vkllm_runtime_stats stats;
    size_t n = 0;

    CHECK(vkllm_version() == VKLLM_VERSION_NUMBER);
    CHECK(strcmp(vkllm_status_string(VKLLM_ERR_NO_DEVICE), "no usable Vulkan device") == 0);
    CHECK(vkllm_runtime_create(NULL, NULL) == VKLLM_ERR_INVALID_ARGUMENT);
    CHECK(strlen(vkllm_last_error()) > 0);
    vkllm_runtime_destroy(NULL);

    CHECK(vkllm_devices_enumerate(NULL, 0, &n) == VKLLM_OK);
    CHECK(n >= 1);

    vkllm_runtime_params_init(&params);
    CHECK(params.struct_size == sizeof params);
    CHECK(params.device_index == -1);
    if (vkllm_test_validation_in_process()) params.flags = VKLLM_RUNTIME_VALIDATION;
    CHECK(vkllm_runtime_create(&params, &rt) == VKLLM_OK);
    if (rt) {
        info.struct_size = sizeof info;
        CHECK(vkllm_runtime_get_device_info(rt, &info) == VKLLM_OK);
        CHECK(info.usable == 1);
        result.struct_size = sizeof result;
        CHECK(vkllm_runtime_self_check(rt, &result) == VKLLM_OK);
        CHECK(result.kernels_failed == 0);
        stats.struct_size = sizeof stats;
        CHECK(vkllm_runtime_get_stats(rt, &stats) == VKLLM_OK);
        CHECK(stats.validation_errors == 0);
        vkllm_runtime_destroy(rt);
    }
    printf("C API test: %d failure(s)\n", failures);
    /* A streamed Qwen-style reply: reasoning, then a tool call split across pushes. */
    {
        const char *pieces[] = {
            "<think>\nWeather wanted.\n</th", "ink>\n\n<tool_call>\n{\"name\": ",
            "\"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_", "call>"};
        vkllm_reply_parser *p = NULL;
        vkllm_reply_part part;
        char reasoning[64] = "";
        size_t i, calls = 0;
        memset(&part, 0, sizeof part);
        part.struct_size = sizeof part;
        CHECK(vkllm_reply_format_of_template("{{ '<tool_call>' }}") == VKLLM_REPLY_HERMES);
        CHECK(vkllm_prompt_opens_reasoning("<|im_start|>assistant\n<think>\n") == 1);
        CHECK(vkllm_reply_parser_create((vkllm_reply_format)9, 0, &p) ==
              VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(vkllm_reply_parser_create(VKLLM_REPLY_HERMES, 0, &p) == VKLLM_OK);
        for (i = 0; i < 4; ++i) {
            CHECK(vkllm_reply_parser_push(p, pieces[i], strlen(pieces[i]), &part) == VKLLM_OK);
            strncat(reasoning, part.reasoning, sizeof reasoning - strlen(reasoning) - 1);
            CHECK(part.content[0] == '\0');
            if (part.n_tool_calls == 1) {
                ++calls;
                CHECK(strcmp(part.tool_calls[0].name, "get_weather") == 0);
                CHECK(strcmp(part.tool_calls[0].arguments, "{\"city\": \"Paris\"}") == 0);
                CHECK(strcmp(part.tool_calls[0].id, "") == 0);
            }
        }
        CHECK(vkllm_reply_parser_finish(p, &part) == VKLLM_OK);
        CHECK(calls == 1);
        CHECK(strcmp(reasoning, "Weather wanted.") == 0);
        CHECK(vkllm_reply_parser_push(NULL, "x", 1, &part) == VKLLM_ERR_INVALID_ARGUMENT);
        vkllm_reply_parser_destroy(p);
    }
    /* A tool-call round in a template's own terms: the call's arguments become an object. */
    {
        static const char tmpl[] =
            "{% for m in messages %}[{{ m.role }}]{% if m.tool_calls %}{% for c in m.tool_calls %}"
            "{{ c.id }}:{{ c.function.name }}{{ c.function.arguments | tojson }}{% endfor %}"
            "{% else %}{{ m.content }}{% endif %}{% endfor %}"
            "{% if add_generation_prompt %}[assistant]{{ strftime_now('%Y-%m-%d') }}{% endif %}";
        vkllm_tool_call call = {"abc123XYZ", "get_weather", "{\"city\": \"Paris\"}"};
        vkllm_chat_turn turns[3];
        vkllm_chat_params cp;
        char out[256];
        size_t len = 0;
        memset(turns, 0, sizeof turns);
        turns[0].struct_size = sizeof turns[0];
        turns[0].role = "user";
        turns[0].content = "Weather?";
        turns[1].role = "assistant";
        turns[1].tool_calls = &call;
        turns[1].n_tool_calls = 1;
        turns[2].role = "tool";
        turns[2].content = "{\"temp\": 21}";
        turns[2].tool_call_id = "abc123XYZ";
        vkllm_chat_params_init(&cp);
        CHECK(cp.add_generation_prompt == 1 && cp.now == VKLLM_CHAT_NOW_CLOCK);
        cp.template_source = tmpl;
        cp.now = 1768478400; /* 2026-01-15T12:00:00Z */
        CHECK(vkllm_chat_render(&cp, turns, 3, out, sizeof out, &len) == VKLLM_OK);
        CHECK(strcmp(out,
                     "[user]Weather?[assistant]abc123XYZ:get_weather{\"city\": \"Paris\"}"
                     "[tool]{\"temp\": 21}[assistant]2026-01-15") == 0);
        CHECK(len == strlen(out));
        cp.template_source = "{{ raise_exception('no tools here') }}";
        CHECK(vkllm_chat_render(&cp, turns, 3, out, sizeof out, &len) ==
              VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(strstr(vkllm_last_error(), "no tools here") != NULL);
        cp.template_source = NULL;
        cp.template_name = "chatml";
        CHECK(vkllm_chat_render_json(&cp, "[{\"role\": \"user\", \"content\": \"Hi\"}]", out,
                                     sizeof out, &len) == VKLLM_OK);
        CHECK(strcmp(out, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n") == 0);
        cp.template_name = NULL;
        CHECK(vkllm_chat_render(&cp, turns, 3, out, sizeof out, &len) == VKLLM_ERR_NOT_FOUND);
        cp.template_name = "chatml";
        CHECK(vkllm_chat_render_json(&cp, "{\"role\": 1", out, sizeof out, &len) ==
              VKLLM_ERR_INVALID_ARGUMENT);
    }
    /* Session state and fork from C: each function is exported and refuses a NULL session. */
    {
        size_t size = 0;
        int32_t ids[1];
        unsigned char bytes[1];
        CHECK(vkllm_session_get_state_size(NULL, 0, &size) == VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(vkllm_session_state_save(NULL, 0, bytes, sizeof bytes, &size) ==
              VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(vkllm_session_state_load(NULL, 0, bytes, sizeof bytes) == VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(vkllm_session_state_save_file(NULL, 0, "state") == VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(vkllm_session_state_load_file(NULL, 0, "state") == VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(vkllm_session_fork(NULL, 0, 1, 0) == VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(vkllm_session_get_tokens(NULL, 0, ids, 1, &size) == VKLLM_ERR_INVALID_ARGUMENT);
    }
    return failures == 0 ? 0 : 1;
}
