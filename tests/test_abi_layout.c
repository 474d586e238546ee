/* Pins the layout (sizeof and offsetof) of every public struct of include/vkllm.h, as compiled
 * by a C99 application. The expected numbers are those of x86-64 (and other LP64 targets such
 * as aarch64) with their standard ABI.
 *
 * A failure here means the ABI changed. That must be deliberate: fields are only ever appended
 * (never inserted, removed, resized or reordered), and an append updates these numbers in the
 * same change, together with the library version (VKLLM_VERSION_* in the header and the
 * project() version in CMakeLists.txt) and the bindings' struct copies (bindings/). Anything
 * else breaks applications and bindings built against an older header. 0.3 broke it on
 * purpose (vkllm_model_info lost a field) and carries a new SONAME for it. */
#include <stddef.h>
#include <stdio.h>

#include "vkllm.h"

static int failures = 0;
static int checks = 0;

static void pin(const char *what, size_t actual, size_t expected) {
    ++checks;
    if (actual != expected) {
        fprintf(stderr, "ABI CHANGE: %s is %zu, pinned at %zu\n", what, actual, expected);
        ++failures;
    }
}

#define PIN_SIZE(type, n) pin("sizeof(" #type ")", sizeof(type), n)
#define PIN_OFFSET(type, field, n) pin("offsetof(" #type ", " #field ")", offsetof(type, field), n)

int main(void) {
    if (sizeof(void *) != 8 || sizeof(size_t) != 8 || sizeof(long) != 8) {
        fprintf(stderr, "FAIL: the pinned numbers are for LP64 targets\n");
        return 1;
    }
    PIN_SIZE(vkllm_coopmat_shape, 32);
    PIN_OFFSET(vkllm_coopmat_shape, m, 0);
    PIN_OFFSET(vkllm_coopmat_shape, n, 4);
    PIN_OFFSET(vkllm_coopmat_shape, k, 8);
    PIN_OFFSET(vkllm_coopmat_shape, a_type, 12);
    PIN_OFFSET(vkllm_coopmat_shape, b_type, 16);
    PIN_OFFSET(vkllm_coopmat_shape, c_type, 20);
    PIN_OFFSET(vkllm_coopmat_shape, result_type, 24);
    PIN_OFFSET(vkllm_coopmat_shape, subgroup_scope, 28);
    PIN_SIZE(vkllm_device_info, 2120); /* 1056 before the cooperative matrices were appended */
    PIN_OFFSET(vkllm_device_info, struct_size, 0);
    PIN_OFFSET(vkllm_device_info, index, 8);
    PIN_OFFSET(vkllm_device_info, type, 12);
    PIN_OFFSET(vkllm_device_info, name, 16);
    PIN_OFFSET(vkllm_device_info, driver_name, 272);
    PIN_OFFSET(vkllm_device_info, driver_info, 528);
    PIN_OFFSET(vkllm_device_info, vendor_id, 784);
    PIN_OFFSET(vkllm_device_info, device_id, 788);
    PIN_OFFSET(vkllm_device_info, api_version, 792);
    PIN_OFFSET(vkllm_device_info, usable, 796);
    PIN_OFFSET(vkllm_device_info, unified_memory, 800);
    PIN_OFFSET(vkllm_device_info, heap_count, 804);
    PIN_OFFSET(vkllm_device_info, heap_size, 808);
    PIN_OFFSET(vkllm_device_info, heap_device_local, 936);
    PIN_OFFSET(vkllm_device_info, max_storage_buffer_range, 1000);
    PIN_OFFSET(vkllm_device_info, max_texel_buffer_elements, 1008);
    PIN_OFFSET(vkllm_device_info, max_allocation_size, 1016);
    PIN_OFFSET(vkllm_device_info, max_compute_shared_memory, 1024);
    PIN_OFFSET(vkllm_device_info, max_workgroup_invocations, 1028);
    PIN_OFFSET(vkllm_device_info, subgroup_size, 1032);
    PIN_OFFSET(vkllm_device_info, shader_float16, 1036);
    PIN_OFFSET(vkllm_device_info, shader_int8, 1040);
    PIN_OFFSET(vkllm_device_info, storage_16bit, 1044);
    PIN_OFFSET(vkllm_device_info, timestamps, 1048);
    PIN_OFFSET(vkllm_device_info, cooperative_matrix, 1052); /* in 1056's tail padding */
    PIN_OFFSET(vkllm_device_info, coopmat_shape, 1056);
    PIN_OFFSET(vkllm_device_info, coopmat_shape_count, 1088);
    PIN_OFFSET(vkllm_device_info, coopmat_shapes, 1092);
    PIN_SIZE(vkllm_runtime_params, 64);
    PIN_OFFSET(vkllm_runtime_params, struct_size, 0);
    PIN_OFFSET(vkllm_runtime_params, device_index, 8);
    PIN_OFFSET(vkllm_runtime_params, device_name, 16);
    PIN_OFFSET(vkllm_runtime_params, flags, 24);
    PIN_OFFSET(vkllm_runtime_params, pipeline_cache_path, 32);
    PIN_OFFSET(vkllm_runtime_params, log_fn, 40);
    PIN_OFFSET(vkllm_runtime_params, log_user_data, 48);
    PIN_OFFSET(vkllm_runtime_params, device_memory_budget, 56);
    PIN_SIZE(vkllm_runtime_stats, 72); /* 56 before pipeline_compile_ms, 64 before tuned_shapes */
    PIN_OFFSET(vkllm_runtime_stats, struct_size, 0);
    PIN_OFFSET(vkllm_runtime_stats, validation_errors, 8);
    PIN_OFFSET(vkllm_runtime_stats, validation_warnings, 16);
    PIN_OFFSET(vkllm_runtime_stats, pipelines_created, 24);
    PIN_OFFSET(vkllm_runtime_stats, pipeline_cache_bytes_loaded, 32);
    PIN_OFFSET(vkllm_runtime_stats, device_memory_allocated, 40);
    PIN_OFFSET(vkllm_runtime_stats, submits, 48);
    PIN_OFFSET(vkllm_runtime_stats, pipeline_compile_ms, 56);
    PIN_OFFSET(vkllm_runtime_stats, tuned_shapes, 64);
    PIN_SIZE(vkllm_tune_result, 56);
    PIN_OFFSET(vkllm_tune_result, shapes, 8);
    PIN_OFFSET(vkllm_tune_result, candidates_rejected, 16);
    PIN_OFFSET(vkllm_tune_result, default_us, 24);
    PIN_OFFSET(vkllm_tune_result, tuned_us, 32);
    PIN_OFFSET(vkllm_tune_result, elapsed_ms, 40);
    PIN_OFFSET(vkllm_tune_result, file_written, 48);
    PIN_SIZE(vkllm_self_check_result, 160);
    PIN_OFFSET(vkllm_self_check_result, struct_size, 0);
    PIN_OFFSET(vkllm_self_check_result, kernels_checked, 8);
    PIN_OFFSET(vkllm_self_check_result, kernels_failed, 12);
    PIN_OFFSET(vkllm_self_check_result, max_error, 16);
    PIN_OFFSET(vkllm_self_check_result, first_failure, 24);
    PIN_OFFSET(vkllm_self_check_result, elapsed_ms, 152);
    PIN_SIZE(vkllm_model_summary, 856);
    PIN_OFFSET(vkllm_model_summary, struct_size, 0);
    PIN_OFFSET(vkllm_model_summary, gguf_version, 8);
    PIN_OFFSET(vkllm_model_summary, architecture, 12);
    PIN_OFFSET(vkllm_model_summary, name, 76);
    PIN_OFFSET(vkllm_model_summary, file_bytes, 336);
    PIN_OFFSET(vkllm_model_summary, tensor_bytes, 344);
    PIN_OFFSET(vkllm_model_summary, n_params, 352);
    PIN_OFFSET(vkllm_model_summary, n_tensors, 360);
    PIN_OFFSET(vkllm_model_summary, n_keys, 368);
    PIN_OFFSET(vkllm_model_summary, context_length, 376);
    PIN_OFFSET(vkllm_model_summary, n_layers, 380);
    PIN_OFFSET(vkllm_model_summary, n_embd, 384);
    PIN_OFFSET(vkllm_model_summary, n_heads, 388);
    PIN_OFFSET(vkllm_model_summary, n_kv_heads, 392);
    PIN_OFFSET(vkllm_model_summary, n_experts, 396);
    PIN_OFFSET(vkllm_model_summary, n_experts_used, 400);
    PIN_OFFSET(vkllm_model_summary, n_vocab, 404);
    PIN_OFFSET(vkllm_model_summary, tokenizer_model, 408);
    PIN_OFFSET(vkllm_model_summary, tokenizer_pre, 440);
    PIN_OFFSET(vkllm_model_summary, tensors_of_type, 472);
    PIN_SIZE(vkllm_gguf_key, 32);
    PIN_OFFSET(vkllm_gguf_key, struct_size, 0);
    PIN_OFFSET(vkllm_gguf_key, name, 8);
    PIN_OFFSET(vkllm_gguf_key, type, 16);
    PIN_OFFSET(vkllm_gguf_key, element_type, 20);
    PIN_OFFSET(vkllm_gguf_key, count, 24);
    PIN_SIZE(vkllm_tensor_info, 96);
    PIN_OFFSET(vkllm_tensor_info, struct_size, 0);
    PIN_OFFSET(vkllm_tensor_info, name, 8);
    PIN_OFFSET(vkllm_tensor_info, type, 16);
    PIN_OFFSET(vkllm_tensor_info, type_name, 24);
    PIN_OFFSET(vkllm_tensor_info, n_dims, 32);
    PIN_OFFSET(vkllm_tensor_info, dims, 40);
    PIN_OFFSET(vkllm_tensor_info, n_elements, 72);
    PIN_OFFSET(vkllm_tensor_info, n_bytes, 80);
    PIN_OFFSET(vkllm_tensor_info, file_offset, 88);
    PIN_SIZE(vkllm_tokenizer_info, 104);
    PIN_OFFSET(vkllm_tokenizer_info, struct_size, 0);
    PIN_OFFSET(vkllm_tokenizer_info, n_vocab, 8);
    PIN_OFFSET(vkllm_tokenizer_info, bos, 12);
    PIN_OFFSET(vkllm_tokenizer_info, eos, 16);
    PIN_OFFSET(vkllm_tokenizer_info, eot, 20);
    PIN_OFFSET(vkllm_tokenizer_info, unk, 24);
    PIN_OFFSET(vkllm_tokenizer_info, pad, 28);
    PIN_OFFSET(vkllm_tokenizer_info, add_bos, 32);
    PIN_OFFSET(vkllm_tokenizer_info, add_eos, 36);
    PIN_OFFSET(vkllm_tokenizer_info, model, 40);
    PIN_OFFSET(vkllm_tokenizer_info, pre, 72);
    PIN_SIZE(vkllm_chat_message, 16);
    PIN_OFFSET(vkllm_chat_message, role, 0);
    PIN_OFFSET(vkllm_chat_message, content, 8);
    PIN_SIZE(vkllm_model_params, 24);
    PIN_OFFSET(vkllm_model_params, struct_size, 0);
    PIN_OFFSET(vkllm_model_params, progress, 8);
    PIN_OFFSET(vkllm_model_params, progress_user_data, 16);
    /* 0.3 took the test counter rope_table_builds out (vkllm_model_get_rope_table_builds, an
     * experimental call, has it): tensor_bytes moved from 128 to 120. */
    PIN_SIZE(vkllm_model_info, 136); /* 128 before pooling was appended */
    PIN_OFFSET(vkllm_model_info, struct_size, 0);
    PIN_OFFSET(vkllm_model_info, architecture, 8);
    PIN_OFFSET(vkllm_model_info, n_vocab, 72);
    PIN_OFFSET(vkllm_model_info, n_embd, 76);
    PIN_OFFSET(vkllm_model_info, n_layers, 80);
    PIN_OFFSET(vkllm_model_info, n_heads, 84);
    PIN_OFFSET(vkllm_model_info, n_kv_heads, 88);
    PIN_OFFSET(vkllm_model_info, head_dim, 92);
    PIN_OFFSET(vkllm_model_info, n_ctx_train, 96);
    PIN_OFFSET(vkllm_model_info, device_bytes, 104);
    PIN_OFFSET(vkllm_model_info, file_bytes, 112);
    PIN_OFFSET(vkllm_model_info, tensor_bytes, 120);
    PIN_OFFSET(vkllm_model_info, pooling, 128);
    PIN_SIZE(vkllm_session_params, 32);
    PIN_OFFSET(vkllm_session_params, struct_size, 0);
    PIN_OFFSET(vkllm_session_params, n_ctx, 8);
    PIN_OFFSET(vkllm_session_params, n_seq, 12);
    PIN_OFFSET(vkllm_session_params, n_batch, 16);
    PIN_OFFSET(vkllm_session_params, flags, 20);
    PIN_OFFSET(vkllm_session_params, n_sink, 24);
    /* 0.3 appended the KV cache type in what was tail padding (the flags it replaces are gone). */
    PIN_OFFSET(vkllm_session_params, kv_type, 28);
    PIN_SIZE(vkllm_session_stats, 64);
    PIN_OFFSET(vkllm_session_stats, struct_size, 0);
    PIN_OFFSET(vkllm_session_stats, command_buffers_recorded, 8);
    PIN_OFFSET(vkllm_session_stats, submits, 16);
    PIN_OFFSET(vkllm_session_stats, tokens_prefilled, 24);
    PIN_OFFSET(vkllm_session_stats, tokens_decoded, 32);
    PIN_OFFSET(vkllm_session_stats, prefill_ms, 40);
    PIN_OFFSET(vkllm_session_stats, decode_ms, 48);
    PIN_OFFSET(vkllm_session_stats, kv_cache_bytes, 56);
    PIN_SIZE(vkllm_kernel_time, 24);
    PIN_OFFSET(vkllm_kernel_time, kernel, 0);
    PIN_OFFSET(vkllm_kernel_time, dispatches, 8);
    PIN_OFFSET(vkllm_kernel_time, ms, 16);
    PIN_SIZE(vkllm_sampling_params, 80);
    PIN_OFFSET(vkllm_sampling_params, struct_size, 0);
    PIN_OFFSET(vkllm_sampling_params, temperature, 8);
    PIN_OFFSET(vkllm_sampling_params, top_k, 12);
    PIN_OFFSET(vkllm_sampling_params, top_p, 16);
    PIN_OFFSET(vkllm_sampling_params, min_p, 20);
    PIN_OFFSET(vkllm_sampling_params, repeat_penalty, 24);
    PIN_OFFSET(vkllm_sampling_params, repeat_last_n, 28);
    PIN_OFFSET(vkllm_sampling_params, seed, 32);
    PIN_OFFSET(vkllm_sampling_params, presence_penalty, 40);
    PIN_OFFSET(vkllm_sampling_params, frequency_penalty, 44);
    PIN_OFFSET(vkllm_sampling_params, typical_p, 48);
    PIN_OFFSET(vkllm_sampling_params, logit_bias, 56);
    PIN_OFFSET(vkllm_sampling_params, n_logit_bias, 64);
    PIN_OFFSET(vkllm_sampling_params, grammar, 72);
    PIN_SIZE(vkllm_logit_bias, 8);
    PIN_OFFSET(vkllm_logit_bias, token, 0);
    PIN_OFFSET(vkllm_logit_bias, bias, 4);
    PIN_SIZE(vkllm_generate_params, 88);
    PIN_OFFSET(vkllm_generate_params, struct_size, 0);
    PIN_OFFSET(vkllm_generate_params, seq, 8);
    PIN_OFFSET(vkllm_generate_params, max_tokens, 12);
    PIN_OFFSET(vkllm_generate_params, stop, 16);
    PIN_OFFSET(vkllm_generate_params, n_stop, 24);
    PIN_OFFSET(vkllm_generate_params, render_special, 32);
    PIN_OFFSET(vkllm_generate_params, on_token, 40);
    PIN_OFFSET(vkllm_generate_params, on_prefill, 48);
    PIN_OFFSET(vkllm_generate_params, user_data, 56);
    PIN_OFFSET(vkllm_generate_params, steps_per_submit, 64);
    PIN_OFFSET(vkllm_generate_params, ignore_eog, 68); /* the former tail padding: size 72 */
    PIN_OFFSET(vkllm_generate_params, on_logprobs, 72);
    PIN_OFFSET(vkllm_generate_params, top_logprobs, 80);
    PIN_SIZE(vkllm_eval_params, 32);
    PIN_OFFSET(vkllm_eval_params, struct_size, 0);
    PIN_OFFSET(vkllm_eval_params, kind, 8);
    PIN_OFFSET(vkllm_eval_params, positions, 16);
    PIN_OFFSET(vkllm_eval_params, n_positions, 24);
    PIN_SIZE(vkllm_embed_params, 24);
    PIN_OFFSET(vkllm_embed_params, struct_size, 0);
    PIN_OFFSET(vkllm_embed_params, pooling, 8);
    PIN_OFFSET(vkllm_embed_params, flags, 12);
    PIN_OFFSET(vkllm_embed_params, max_tokens, 16);
    PIN_SIZE(vkllm_token_logprob, 8);
    PIN_OFFSET(vkllm_token_logprob, token, 0);
    PIN_OFFSET(vkllm_token_logprob, logprob, 4);
    PIN_SIZE(vkllm_generate_result, 64); /* 56 before grammar_progress was appended */
    PIN_OFFSET(vkllm_generate_result, struct_size, 0);
    PIN_OFFSET(vkllm_generate_result, n_prompt, 8);
    PIN_OFFSET(vkllm_generate_result, n_generated, 16);
    PIN_OFFSET(vkllm_generate_result, stop_reason, 24);
    PIN_OFFSET(vkllm_generate_result, prefill_ms, 32);
    PIN_OFFSET(vkllm_generate_result, decode_ms, 40);
    PIN_OFFSET(vkllm_generate_result, seed, 48);
    PIN_OFFSET(vkllm_generate_result, grammar_progress, 56);
    PIN_SIZE(vkllm_session_info, 48);
    PIN_OFFSET(vkllm_session_info, struct_size, 0);
    PIN_OFFSET(vkllm_session_info, n_ctx, 8);
    PIN_OFFSET(vkllm_session_info, n_seq, 12);
    PIN_OFFSET(vkllm_session_info, n_batch, 16);
    PIN_OFFSET(vkllm_session_info, n_sink, 20);
    PIN_OFFSET(vkllm_session_info, flags, 24);
    PIN_OFFSET(vkllm_session_info, kv_type, 28);
    PIN_OFFSET(vkllm_session_info, kv_cache_bytes, 32);
    PIN_OFFSET(vkllm_session_info, device_bytes, 40);
    PIN_SIZE(vkllm_batch_sequence, 64);
    PIN_OFFSET(vkllm_batch_sequence, struct_size, 0);
    PIN_OFFSET(vkllm_batch_sequence, seq, 8);
    PIN_OFFSET(vkllm_batch_sequence, prompt, 16);
    PIN_OFFSET(vkllm_batch_sequence, n_prompt, 24);
    PIN_OFFSET(vkllm_batch_sequence, sampler, 32);
    PIN_OFFSET(vkllm_batch_sequence, tokens, 40);
    PIN_OFFSET(vkllm_batch_sequence, n_generated, 48);
    PIN_OFFSET(vkllm_batch_sequence, stop_reason, 56);
    PIN_SIZE(vkllm_tool_call, 24);
    PIN_OFFSET(vkllm_tool_call, id, 0);
    PIN_OFFSET(vkllm_tool_call, name, 8);
    PIN_OFFSET(vkllm_tool_call, arguments, 16);
    PIN_SIZE(vkllm_chat_turn, 64);
    PIN_OFFSET(vkllm_chat_turn, struct_size, 0);
    PIN_OFFSET(vkllm_chat_turn, role, 8);
    PIN_OFFSET(vkllm_chat_turn, content, 16);
    PIN_OFFSET(vkllm_chat_turn, reasoning_content, 24);
    PIN_OFFSET(vkllm_chat_turn, tool_calls, 32);
    PIN_OFFSET(vkllm_chat_turn, n_tool_calls, 40);
    PIN_OFFSET(vkllm_chat_turn, tool_call_id, 48);
    PIN_OFFSET(vkllm_chat_turn, name, 56);
    PIN_SIZE(vkllm_chat_params, 80);
    PIN_OFFSET(vkllm_chat_params, struct_size, 0);
    PIN_OFFSET(vkllm_chat_params, model, 8);
    PIN_OFFSET(vkllm_chat_params, template_source, 16);
    PIN_OFFSET(vkllm_chat_params, template_name, 24);
    PIN_OFFSET(vkllm_chat_params, tools, 32);
    PIN_OFFSET(vkllm_chat_params, extra, 40);
    PIN_OFFSET(vkllm_chat_params, add_generation_prompt, 48);
    PIN_OFFSET(vkllm_chat_params, bos_token, 56);
    PIN_OFFSET(vkllm_chat_params, eos_token, 64);
    PIN_OFFSET(vkllm_chat_params, now, 72);
    PIN_SIZE(vkllm_reply_part, 40);
    PIN_OFFSET(vkllm_reply_part, struct_size, 0);
    PIN_OFFSET(vkllm_reply_part, reasoning, 8);
    PIN_OFFSET(vkllm_reply_part, content, 16);
    PIN_OFFSET(vkllm_reply_part, tool_calls, 24);
    PIN_OFFSET(vkllm_reply_part, n_tool_calls, 32);

    /* Conversations (issue 37). */
    PIN_SIZE(vkllm_conversation_params, 56);
    PIN_OFFSET(vkllm_conversation_params, seq, 8);
    PIN_OFFSET(vkllm_conversation_params, template_source, 16);
    PIN_OFFSET(vkllm_conversation_params, now, 48);
    PIN_SIZE(vkllm_conversation_reply_params, 48);
    PIN_OFFSET(vkllm_conversation_reply_params, n_stop, 40);
    PIN_OFFSET(vkllm_conversation_reply_params, max_tokens, 8);
    PIN_OFFSET(vkllm_conversation_reply_params, on_piece, 16);
    PIN_OFFSET(vkllm_conversation_reply_params, user_data, 24);
    PIN_SIZE(vkllm_conversation_result, 88); /* 80 before grammar_progress was appended */
    PIN_OFFSET(vkllm_conversation_result, n_reused, 16);
    PIN_OFFSET(vkllm_conversation_result, stop_reason, 40);
    PIN_OFFSET(vkllm_conversation_result, n_tool_calls, 48);
    PIN_OFFSET(vkllm_conversation_result, seed, 72);
    PIN_OFFSET(vkllm_conversation_result, grammar_progress, 80);

    /* Enums are 32-bit (the _FORCE32 members). */
    PIN_SIZE(vkllm_status, 4);
    PIN_SIZE(vkllm_log_level, 4);
    PIN_SIZE(vkllm_device_type, 4);
    PIN_SIZE(vkllm_gguf_type, 4);
    PIN_SIZE(vkllm_stop_reason, 4);
    PIN_SIZE(vkllm_kv_type, 4);
    PIN_SIZE(vkllm_reply_format, 4);
    PIN_SIZE(vkllm_chat_piece_kind, 4);
    PIN_SIZE(vkllm_pooling, 4);

    printf("ABI layout: %d checks, %d failure(s)\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
