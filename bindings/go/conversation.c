// C side of a conversation's reply: the Go function vkllmgoOnChatPiece (exported in
// conversation.go) receives the runtime/cgo.Handle of the Go state through user_data, as the
// generation callbacks of callback.c do.
#include "_cgo_export.h"
#include "vkllm.h"

static int32_t vkllmgo_on_chat_piece(void *user_data, vkllm_chat_piece_kind kind,
                                     const char *text, size_t length,
                                     const vkllm_tool_call *call) {
    return vkllmgoOnChatPiece((uintptr_t)user_data, (int32_t)kind, (char *)text, length,
                              (vkllm_tool_call *)call);
}

vkllm_status vkllmgo_conversation_reply(vkllm_conversation *conversation,
                                        const vkllm_sampling_params *sampling,
                                        uint32_t max_tokens, uintptr_t handle,
                                        vkllm_conversation_result *result) {
    vkllm_conversation_reply_params params;
    vkllm_conversation_reply_params_init(&params);
    params.max_tokens = max_tokens;
    params.on_piece = vkllmgo_on_chat_piece;
    params.user_data = (void *)handle;
    return vkllm_conversation_reply(conversation, sampling, &params, result);
}
