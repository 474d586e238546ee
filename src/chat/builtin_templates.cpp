#include "chat/builtin_templates.h"

#include <string>
#include <vector>

namespace vkllm::chat {

namespace {

// Each template renders as the real one it stands for (docs/CHAT.md says on which
// conversations), written for this interpreter; a missing bos_token or eos_token
// (vkllm_chat_apply_template passes none: the tokenizer adds BOS) prints as nothing where the
// real template would fail on it.

constexpr std::string_view kChatml = R"jinja(
{%- for m in messages %}
    {{- '<|im_start|>' + m.role + '\n' + (m.content or '') + '<|im_end|>\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %})jinja";

constexpr std::string_view kLlama3 = R"jinja(
{{- bos_token or '' }}
{%- for m in messages %}
    {{- '<|start_header_id|>' + m.role + '<|end_header_id|>\n\n' + (m.content or '') | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %})jinja";

// GPT-OSS's system header with today's date; a first system or developer turn becomes the
// developer's instructions; assistant turns are final-channel answers.
constexpr std::string_view kHarmony = R"jinja(
{{- '<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: ' + strftime_now('%Y-%m-%d') + '\n\nReasoning: ' + (reasoning_effort or 'medium') + '\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>' }}
{%- set first = 0 %}
{%- if messages and messages[0].role in ['system', 'developer'] %}
    {{- '<|start|>developer<|message|># Instructions\n\n' + messages[0].content + '\n\n<|end|>' }}
    {%- set first = 1 %}
{%- endif %}
{%- for m in messages[first:] %}
    {%- if m.role == 'assistant' %}
        {{- '<|start|>assistant<|channel|>final<|message|>' + (m.content or '') }}
        {{- '<|return|>' if loop.last and not add_generation_prompt else '<|end|>' }}
    {%- else %}
        {{- '<|start|>' + m.role + '<|message|>' + (m.content or '') + '<|end|>' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start|>assistant' }}
{%- endif %})jinja";

// Gemma 3's: a system turn opens the first user turn; Gemma 2's refuses one, and is the same
// without.
constexpr std::string_view kGemma = R"jinja(
{{- bos_token or '' }}
{%- if messages and messages[0].role == 'system' %}
    {%- set prefix = messages[0].content + '\n\n' %}
    {%- set turns = messages[1:] %}
{%- else %}
    {%- set prefix = '' %}
    {%- set turns = messages %}
{%- endif %}
{%- for m in turns %}
    {%- if (m.role == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {{- '<start_of_turn>' + ('model' if m.role == 'assistant' else m.role) + '\n' + (prefix if loop.first else '') + m.content | trim + '<end_of_turn>\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<start_of_turn>model\n' }}
{%- endif %})jinja";

constexpr std::string_view kLlama2 = R"jinja(
{%- if messages and messages[0].role == 'system' %}
    {%- set system = messages[0].content %}
    {%- set turns = messages[1:] %}
{%- else %}
    {%- set system = none %}
    {%- set turns = messages %}
{%- endif %}
{%- for m in turns %}
    {%- if (m.role == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {%- set content = m.content %}
    {%- if loop.first and system is not none %}
        {%- set content = '<<SYS>>\n' + system + '\n<</SYS>>\n\n' + content %}
    {%- endif %}
    {%- if m.role == 'user' %}
        {{- (bos_token or '') + '[INST] ' + content | trim + ' [/INST]' }}
    {%- elif m.role == 'assistant' %}
        {{- ' ' + content | trim + ' ' + (eos_token or '') }}
    {%- endif %}
{%- endfor %})jinja";

constexpr std::string_view kMistralV1 = R"jinja(
{%- if messages and messages[0].role == 'system' %}
    {%- set system = messages[0].content %}
    {%- set turns = messages[1:] %}
{%- else %}
    {%- set system = none %}
    {%- set turns = messages %}
{%- endif %}
{{- bos_token or '' }}
{%- for m in turns %}
    {%- if (m.role == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {%- if m.role == 'user' %}
        {{- ' [INST] ' + (system + '\n\n' if loop.first and system is not none else '') + m.content + ' [/INST]' }}
    {%- elif m.role == 'assistant' %}
        {{- ' ' + m.content + (eos_token or '') }}
    {%- else %}
        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}
    {%- endif %}
{%- endfor %})jinja";

// Mistral v0.3 (sp is a space) and Nemo's Tekken (sp is empty) differ only in spaces: the
// system message joins the last user turn, tools come before it, calls need 9-character ids.
constexpr std::string_view kMistralV3Body = R"jinja(
{%- set tools = tools if tools is defined else none %}
{%- if messages and messages[0].role == 'system' %}
    {%- set system = messages[0].content %}
    {%- set turns = messages[1:] %}
{%- else %}
    {%- set system = none %}
    {%- set turns = messages %}
{%- endif %}
{%- set users = turns | selectattr('role', 'equalto', 'user') | list %}
{%- set ns = namespace(index=0) %}
{%- for m in turns %}
    {%- if not (m.role == 'tool' or m.role == 'tool_results' or (m.tool_calls is defined and m.tool_calls is not none)) %}
        {%- if (m.role == 'user') != (ns.index % 2 == 0) %}
            {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}
        {%- endif %}
        {%- set ns.index = ns.index + 1 %}
    {%- endif %}
{%- endfor %}
{{- bos_token or '' }}
{%- for m in turns %}
    {%- if m.role == 'user' %}
        {%- if tools is not none and m == users[-1] %}
            {{- '[AVAILABLE_TOOLS]' + sp + '[' }}
            {%- for tool in tools %}
                {{- '{"type": "function", "function": {' }}
                {%- for key, val in tool.function.items() if key != 'return' %}
                    {{- '"' + key + '": ' + ('"' + val + '"' if val is string else val | tojson) }}
                    {{- '' if loop.last else ', ' }}
                {%- endfor %}
                {{- '}}' + (']' if loop.last else ', ') }}
            {%- endfor %}
            {{- '[/AVAILABLE_TOOLS]' }}
        {%- endif %}
        {{- '[INST]' + sp + (system + '\n\n' if loop.last and system is not none else '') + m.content + '[/INST]' }}
    {%- elif m.tool_calls is defined and m.tool_calls is not none %}
        {{- '[TOOL_CALLS]' + sp + '[' }}
        {%- for call in m.tool_calls %}
            {%- if call.id is not defined or call.id | length != 9 %}
                {{- raise_exception('Tool call IDs should be alphanumeric strings with length 9!') }}
            {%- endif %}
            {{- (call.function | tojson)[:-1] + ', "id": "' + call.id + '"}' + (']' + (eos_token or '') if loop.last else ', ') }}
        {%- endfor %}
    {%- elif m.role == 'assistant' %}
        {{- (sp + m.content | trim if sp else m.content) + (eos_token or '') }}
    {%- elif m.role == 'tool' or m.role == 'tool_results' %}
        {%- if m.tool_call_id is not defined or m.tool_call_id | length != 9 %}
            {{- raise_exception('Tool call IDs should be alphanumeric strings with length 9!') }}
        {%- endif %}
        {{- '[TOOL_RESULTS]' + sp + '{"content": ' + m.content | string + ', "call_id": "' + m.tool_call_id + '"}[/TOOL_RESULTS]' }}
    {%- else %}
        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}
    {%- endif %}
{%- endfor %})jinja";

// Mistral Small 3.1/3.2's and Ministral 3's (llama.cpp's v7-tekken: no space after the
// markers), without their own default system prompt: a system message comes first in
// [SYSTEM_PROMPT]; tools before the last user turn; calls as NAME[CALL_ID]ID[ARGS]{...}.
constexpr std::string_view kMistralV7Tekken = R"jinja(
{%- set tools = tools if tools is defined else none %}
{%- if messages and messages[0].role == 'system' %}
    {%- set system = messages[0].content %}
    {%- set turns = messages[1:] %}
{%- else %}
    {%- set system = none %}
    {%- set turns = messages %}
{%- endif %}
{%- set users = turns | selectattr('role', 'equalto', 'user') | list %}
{%- set ns = namespace(index=0) %}
{%- for m in turns %}
    {%- if not (m.role == 'tool' or m.tool_calls) %}
        {%- if (m.role == 'user') != (ns.index % 2 == 0) %}
            {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}
        {%- endif %}
        {%- set ns.index = ns.index + 1 %}
    {%- endif %}
{%- endfor %}
{{- bos_token or '' }}
{%- if system is not none %}
    {{- '[SYSTEM_PROMPT]' + system + '[/SYSTEM_PROMPT]' }}
{%- endif %}
{%- for m in turns %}
    {%- if m.role == 'system' %}
        {{- '[SYSTEM_PROMPT]' + m.content + '[/SYSTEM_PROMPT]' }}
    {%- elif m.role == 'user' %}
        {%- if tools is not none and m == users[-1] %}
            {{- '[AVAILABLE_TOOLS]' + tools | tojson + '[/AVAILABLE_TOOLS]' }}
        {%- endif %}
        {{- '[INST]' + m.content + '[/INST]' }}
    {%- elif m.role == 'assistant' %}
        {%- if m.tool_calls %}
            {%- for call in m.tool_calls %}
                {%- if call.id is not string or call.id | length != 9 %}
                    {{- raise_exception('Tool call IDs should be alphanumeric strings with length 9!') }}
                {%- endif %}
                {{- '[TOOL_CALLS]' + call.function.name + '[CALL_ID]' + call.id + '[ARGS]' + call.function.arguments | tojson }}
            {%- endfor %}
            {{- eos_token or '' }}
        {%- else %}
            {{- m.content + (eos_token or '') }}
        {%- endif %}
    {%- elif m.role == 'tool' or m.role == 'tool_results' %}
        {%- if m.tool_call_id is not string or m.tool_call_id | length != 9 %}
            {{- raise_exception('Tool call IDs should be alphanumeric strings with length 9!') }}
        {%- endif %}
        {{- '[TOOL_RESULTS]' + m.tool_call_id + '[TOOL_CONTENT]' + m.content | string + '[/TOOL_RESULTS]' }}
    {%- else %}
        {{- raise_exception('Only system, user, assistant, and tool roles are supported!') }}
    {%- endif %}
{%- endfor %})jinja";

constexpr std::string_view kPhi3 = R"jinja(
{%- for m in messages %}
    {%- if m.role in ['system', 'user', 'assistant'] %}
        {{- '<|' + m.role + '|>\n' + m.content + '<|end|>\n' }}
    {%- endif %}
{%- endfor %}
{{- '<|assistant|>\n' if add_generation_prompt else (eos_token or '') }})jinja";

constexpr std::string_view kPhi4 = R"jinja(
{%- for m in messages %}
    {%- if m.role in ['system', 'user', 'assistant'] %}
        {{- '<|im_start|>' + m.role + '<|im_sep|>' + m.content + '<|im_end|>' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant<|im_sep|>' }}
{%- endif %})jinja";

// Phi-4-mini's: tools come as JSON text in a system message's "tools" key.
constexpr std::string_view kPhi4Mini = R"jinja(
{%- for m in messages %}
    {{- '<|' + m.role + '|>' + m.content }}
    {%- if m.role == 'system' and m.tools is defined and m.tools is not none %}
        {{- '<|tool|>' + m.tools + '<|/tool|>' }}
    {%- endif %}
    {{- '<|end|>' }}
{%- endfor %}
{{- '<|assistant|>' if add_generation_prompt else (eos_token or '') }})jinja";

// DeepSeek V3 (think false) and R1 (think true: earlier answers lose their reasoning, and the
// answer opens with <think>): all system messages first, joined by a blank line.
constexpr std::string_view kDeepseekBody = R"jinja(
{%- set ns = namespace(system=none) %}
{%- for m in messages if m.role == 'system' %}
    {%- set ns.system = m.content if ns.system is none else ns.system + '\n\n' + m.content %}
{%- endfor %}
{{- (bos_token or '') + (ns.system or '') }}
{%- for m in messages %}
    {%- if m.role == 'user' %}
        {{- '<｜User｜>' + m.content }}
    {%- elif m.role == 'assistant' %}
        {%- set content = m.content %}
        {%- if think and '</think>' in content %}
            {%- set content = content.split('</think>')[-1] %}
        {%- endif %}
        {{- '<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<｜Assistant｜>' + ('<think>\n' if think else '') }}
{%- endif %})jinja";

constexpr std::string_view kCommandR = R"jinja(
{{- bos_token or '' }}
{%- if messages and messages[0].role == 'system' %}
    {{- '<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>' + messages[0].content + '<|END_OF_TURN_TOKEN|>' }}
    {%- set turns = messages[1:] %}
{%- else %}
    {%- set turns = messages %}
{%- endif %}
{%- for m in turns %}
    {%- if (m.role == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {%- if m.role == 'user' %}
        {{- '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + m.content | trim + '<|END_OF_TURN_TOKEN|>' }}
    {%- elif m.role == 'assistant' %}
        {{- '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' + m.content | trim + '<|END_OF_TURN_TOKEN|>' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}
{%- endif %})jinja";

// Granite 3.3's, with its default system message and date; without its `thinking`, documents
// and controls.
constexpr std::string_view kGranite = R"jinja(
{%- set tools = tools if tools is defined else none %}
{%- if messages and messages[0].role == 'system' %}
    {%- set system = messages[0].content %}
    {%- set turns = messages[1:] %}
{%- else %}
    {%- set system = "Knowledge Cutoff Date: April 2024. Today's Date: " + strftime_now('%B %d, %Y') + '. You are Granite, developed by IBM.' %}
    {%- if tools %}
        {%- set system = system + " You are a helpful assistant with access to the following tools. When a tool is required to answer the user's query, respond only with <|tool_call|> followed by a JSON list of tools used. If a tool does not exist in the provided list of tools, notify the user that you do not have the ability to fulfill the request." %}
    {%- else %}
        {%- set system = system + ' You are a helpful AI assistant.' %}
    {%- endif %}
    {%- set turns = messages %}
{%- endif %}
{{- '<|start_of_role|>system<|end_of_role|>' + system + '<|end_of_text|>\n' }}
{%- if tools %}
    {{- '<|start_of_role|>available_tools<|end_of_role|>' + tools | tojson(indent=4) + '<|end_of_text|>\n' }}
{%- endif %}
{%- for m in turns %}
    {{- '<|start_of_role|>' + m.role + '<|end_of_role|>' + m.content + '<|end_of_text|>\n' }}
    {%- if loop.last and add_generation_prompt %}
        {{- '<|start_of_role|>assistant<|end_of_role|>' }}
    {%- endif %}
{%- endfor %})jinja";

constexpr std::string_view kChatglm3 = R"jinja(
{%- for m in messages %}
    {{- ('[gMASK]sop' if loop.first else '') + '<|' + m.role + '|>\n ' + m.content | string }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|assistant|>' }}
{%- endif %})jinja";

// Llama 4's: tools (with the instructions) open the first user turn; calls after
// <|python_start|><|python_end|> as {"name", "parameters"}; results as ipython turns.
constexpr std::string_view kLlama4 = R"jinja(
{{- bos_token or '' }}
{%- set tools = tools if tools is defined else none %}
{%- if messages and messages[0].role == 'system' %}
    {{- '<|header_start|>system<|header_end|>\n\n' + ('Environment: ipython\n' if tools is not none else '') + messages[0].content | trim + '<|eot|>' }}
    {%- set turns = messages[1:] %}
{%- else %}
    {%- set turns = messages %}
{%- endif %}
{%- if tools is not none %}
    {%- if not turns %}
        {{- raise_exception("Cannot put tools in the first user message when there's no first user message!") }}
    {%- endif %}
    {{- '<|header_start|>user<|header_end|>\n\nGiven the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n' }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) + '\n\n' }}
    {%- endfor %}
    {{- turns[0].content | trim + '<|eot|>' }}
    {%- set turns = turns[1:] %}
{%- endif %}
{%- for m in turns %}
    {%- if m.role == 'tool' or m.role == 'ipython' %}
        {{- '<|header_start|>ipython<|header_end|>\n\n' + (m.content | tojson if m.content is iterable else m.content) + '<|eot|>' }}
    {%- elif 'tool_calls' in m %}
        {%- if m.tool_calls | length > 0 %}
            {{- '<|header_start|>assistant<|header_end|>\n\n<|python_start|>' + m.content + '<|python_end|>' }}
            {%- for call in m.tool_calls %}
                {{- '{"name": "' + call.function.name + '", "parameters": ' + call.function.arguments | tojson + '}' }}
            {%- endfor %}
            {{- '<|eot|>' }}
        {%- endif %}
    {%- else %}
        {{- '<|header_start|>' + m.role + '<|header_end|>\n\n' + m.content + '<|eot|>' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|header_start|>assistant<|header_end|>\n\n' }}
{%- endif %})jinja";

// GLM-4's: turns without content are left out.
constexpr std::string_view kChatglm4 = R"jinja(
{{- '[gMASK]<sop>' }}
{%- for m in messages if m.content %}
    {{- '<|' + m.role + '|>\n' + m.content }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|assistant|>' }}
{%- endif %})jinja";

// LFM2's: ChatML with the tools listed in the system turn and tool results marked.
constexpr std::string_view kLfm2 = R"jinja(
{{- bos_token or '' }}
{%- set ns = namespace(system='') %}
{%- if messages and messages[0].role == 'system' %}
    {%- set ns.system = messages[0].content %}
    {%- set messages = messages[1:] %}
{%- endif %}
{%- if tools %}
    {%- set ns.system = ns.system + ('\n' if ns.system else '') + 'List of tools: <|tool_list_start|>[' %}
    {%- for tool in tools %}
        {%- set ns.system = ns.system + (tool if tool is string else tool | tojson) + ('' if loop.last else ', ') %}
    {%- endfor %}
    {%- set ns.system = ns.system + ']<|tool_list_end|>' %}
{%- endif %}
{%- if ns.system %}
    {{- '<|im_start|>system\n' + ns.system + '<|im_end|>\n' }}
{%- endif %}
{%- for m in messages %}
    {%- set content = m.content if m.content is string else m.content | tojson %}
    {%- if m.role == 'tool' %}
        {%- set content = '<|tool_response_start|>' + content + '<|tool_response_end|>' %}
    {%- endif %}
    {{- '<|im_start|>' + m.role + '\n' + content + '<|im_end|>\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %})jinja";

// Kimi K2's: a default system turn, tools declared first, calls as functions.NAME:INDEX.
constexpr std::string_view kKimiK2 = R"jinja(
{%- if tools %}
    {{- '<|im_system|>tool_declare<|im_middle|>' + tools | tojson + '<|im_end|>' }}
{%- endif %}
{%- for m in messages %}
    {%- if loop.first and m.role != 'system' %}
        {{- '<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|>' }}
    {%- endif %}
    {%- if m.role == 'system' %}
        {{- '<|im_system|>system<|im_middle|>' }}
    {%- elif m.role == 'user' %}
        {{- '<|im_user|>user<|im_middle|>' }}
    {%- elif m.role == 'assistant' %}
        {{- '<|im_assistant|>assistant<|im_middle|>' }}
    {%- elif m.role == 'tool' %}
        {{- '<|im_system|>tool<|im_middle|>' }}
    {%- endif %}
    {%- if m.role == 'assistant' and m.tool_calls %}
        {{- (m.content or '') + '<|tool_calls_section_begin|>' }}
        {%- for call in m.tool_calls %}
            {{- '<|tool_call_begin|>functions.' + call.function.name + ':' + loop.index0 | string + '<|tool_call_argument_begin|>' + call.function.arguments | tojson + '<|tool_call_end|>' }}
        {%- endfor %}
        {{- '<|tool_calls_section_end|>' }}
    {%- elif m.role == 'tool' %}
        {{- '## Return of ' + m.tool_call_id + '\\n' + m.content }}
    {%- elif m.content is string %}
        {{- m.content }}
    {%- endif %}
    {{- '<|im_end|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_assistant|>assistant<|im_middle|>' }}
{%- endif %})jinja";

// Qwen 2.5's: ChatML with its default system message, tools listed in the system turn, calls
// in <tool_call> and results in <tool_response> (the Hermes form).
constexpr std::string_view kQwen25 = R"jinja(
{%- set system = messages[0].content if messages and messages[0].role == 'system' else 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' %}
{{- '<|im_start|>system\n' + system }}
{%- if tools %}
    {{- '\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>' }}
    {%- for tool in tools %}
        {{- '\n' + tool | tojson }}
    {%- endfor %}
    {{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>' }}
{%- endif %}
{{- '<|im_end|>\n' }}
{%- for m in messages %}
    {%- if m.role == 'user' or (m.role == 'system' and not loop.first) or (m.role == 'assistant' and not m.tool_calls) %}
        {{- '<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n' }}
    {%- elif m.role == 'assistant' %}
        {{- '<|im_start|>assistant' + ('\n' + m.content if m.content else '') }}
        {%- for call in m.tool_calls %}
            {%- set f = call.function if call.function is defined else call %}
            {{- '\n<tool_call>\n{"name": "' + f.name + '", "arguments": ' + f.arguments | tojson + '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif m.role == 'tool' %}
        {%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' + m.content + '\n</tool_response>' }}
        {%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %})jinja";

struct Entry {
    std::string name, stands_for, source;
};

const std::vector<BuiltinTemplate> &table() {
    static const std::vector<Entry> entries = {
        {"chatml", "Qwen2/2.5 and SmolLM2 with a system message", std::string(kChatml)},
        {"qwen2.5", "Qwen2.5-7B-Instruct", std::string(kQwen25)},
        {"llama3", "Meta-Llama-3-8B-Instruct", std::string(kLlama3)},
        {"harmony", "gpt-oss", std::string(kHarmony)},
        {"gemma", "gemma-3-1b-it; gemma-2-2b-it without a system message", std::string(kGemma)},
        {"llama2", "Llama-2-7b-chat-hf", std::string(kLlama2)},
        {"mistral-v1", "Mistral-7B-Instruct-v0.1 and Mixtral-8x7B-Instruct",
         std::string(kMistralV1)},
        {"mistral-v3", "Mistral-7B-Instruct-v0.3",
         "{%- set sp = ' ' %}" + std::string(kMistralV3Body)},
        {"mistral-v3-tekken", "Mistral-Nemo-Instruct-2407",
         "{%- set sp = '' %}" + std::string(kMistralV3Body)},
        {"mistral-v7-tekken",
         "Mistral-Small-3.2-24B-Instruct-2506, Ministral-3-14B-Reasoning-2512 with a system "
         "message",
         std::string(kMistralV7Tekken)},
        {"phi3", "Phi-3-mini-4k-instruct; Phi-3.5-mini-instruct", std::string(kPhi3)},
        {"phi4", "phi-4", std::string(kPhi4)},
        {"phi4-mini", "Phi-4-mini-instruct", std::string(kPhi4Mini)},
        {"deepseek3", "DeepSeek-V3 (DeepSeek-V3-Base's template)",
         "{%- set think = false %}" + std::string(kDeepseekBody)},
        {"deepseek-r1", "DeepSeek-R1 and its distills",
         "{%- set think = true %}" + std::string(kDeepseekBody)},
        {"command-r", "c4ai-command-r-v01", std::string(kCommandR)},
        {"granite", "granite-3.3-2b-instruct (not its thinking, documents or controls)",
         std::string(kGranite)},
        {"chatglm3", "chatglm3-6b", std::string(kChatglm3)},
        {"chatglm4", "glm-4-9b-chat (not its tools in a message's \"tools\" key)",
         std::string(kChatglm4)},
        {"llama4", "Llama-4-Scout-17B-16E-Instruct", std::string(kLlama4)},
        {"lfm2", "LFM2-8B-A1B", std::string(kLfm2)},
        {"kimi-k2", "Kimi-K2-Instruct", std::string(kKimiK2)},
    };
    static const std::vector<BuiltinTemplate> views = [] {
        std::vector<BuiltinTemplate> v;
        for (const Entry &e : entries)
            v.push_back({e.name, e.stands_for, e.source});
        return v;
    }();
    return views;
}

}  // namespace

const BuiltinTemplate *builtin_templates(size_t &count) {
    count = table().size();
    return table().data();
}

std::string_view builtin_template(std::string_view name) {
    if (name == "qwen" || name == "qwen2") name = "chatml";
    if (name == "gpt-oss") name = "harmony";
    for (const BuiltinTemplate &t : table())
        if (t.name == name) return t.source;
    return {};
}

std::string builtin_template_names() {
    std::string names;
    for (const BuiltinTemplate &t : table())
        names += (names.empty() ? "" : ", ") + std::string(t.name);
    return names;
}

}  // namespace vkllm::chat
