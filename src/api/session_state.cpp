// Saving, restoring and forking sequences through the C ABI.
#include <string>

#include "api/guard.h"
#include "api/session_access.h"

using vkllm::fail;
using vkllm::api::change;
using vkllm::api::guard;
using vkllm::api::readable;
using vkllm::api::require_arg;

extern "C" {

vkllm_status vkllm_session_get_state_size(const vkllm_session *session, uint32_t seq,
                                          size_t *size) {
    return guard([&] {
        const char *fn = "vkllm_session_get_state_size";
        const vkllm::engine::Session &s = readable(session, fn);
        require_arg(size, fn, "size");
        *size = size_t(s.state_size(seq));
    });
}

vkllm_status vkllm_session_state_save(vkllm_session *session, uint32_t seq, void *buf,
                                      size_t capacity, size_t *length) {
    return guard([&] {
        const char *fn = "vkllm_session_state_save";
        change(session, fn, [&](vkllm::engine::Session &s) {
            require_arg(length, fn, "length");
            if (capacity > 0) require_arg(buf, fn, "buf");
            uint64_t need = s.state_size(seq);
            *length = size_t(need);
            if (capacity < need)
                fail(VKLLM_ERR_BUFFER_TOO_SMALL, "%s: %llu bytes needed, the buffer has %zu", fn,
                     (unsigned long long)need, capacity);
            s.save_state(seq, static_cast<uint8_t *>(buf));
        });
    });
}

vkllm_status vkllm_session_state_load(vkllm_session *session, uint32_t seq, const void *data,
                                      size_t size) {
    return guard([&] {
        const char *fn = "vkllm_session_state_load";
        change(session, fn, [&](vkllm::engine::Session &s) {
            if (size > 0) require_arg(data, fn, "data");
            s.load_state(seq, static_cast<const uint8_t *>(data), size);
        });
    });
}

vkllm_status vkllm_session_state_save_file(vkllm_session *session, uint32_t seq, const char *path) {
    return guard([&] {
        const char *fn = "vkllm_session_state_save_file";
        change(session, fn, [&](vkllm::engine::Session &s) {
            require_arg(path, fn, "path");
            s.save_state_file(seq, path);
        });
    });
}

vkllm_status vkllm_session_state_load_file(vkllm_session *session, uint32_t seq, const char *path) {
    return guard([&] {
        const char *fn = "vkllm_session_state_load_file";
        change(session, fn, [&](vkllm::engine::Session &s) {
            require_arg(path, fn, "path");
            s.load_state_file(seq, path);
        });
    });
}

vkllm_status vkllm_session_fork(vkllm_session *session, uint32_t src_seq, uint32_t dst_seq,
                                uint32_t n_keep) {
    return guard([&] {
        change(session, "vkllm_session_fork",
               [&](vkllm::engine::Session &s) { s.fork(src_seq, dst_seq, n_keep); });
    });
}

vkllm_status vkllm_session_get_tokens(const vkllm_session *session, uint32_t seq, int32_t *tokens,
                                      size_t capacity, size_t *count) {
    return guard([&] {
        const char *fn = "vkllm_session_get_tokens";
        const vkllm::engine::Session &s = readable(session, fn);
        require_arg(count, fn, "count");
        if (capacity > 0) require_arg(tokens, fn, "tokens");
        if (seq >= s.options().n_seq)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: sequence %u does not exist (the session has %u)",
                 fn, seq, s.options().n_seq);
        const std::vector<int32_t> &ids = s.tokens(seq);
        *count = ids.size();
        if (capacity < ids.size())
            fail(VKLLM_ERR_BUFFER_TOO_SMALL, "%s: %zu ids, room for %zu", fn, ids.size(), capacity);
        std::copy(ids.begin(), ids.end(), tokens);
    });
}

}  // extern "C"
