// How calls reach a session: readable() for those that only read it, change() for those that
// change it, one at a time.
#pragma once

#include "api/guard.h"
#include "api/objects.h"

namespace vkllm::api {

// Every call but destroy and cancel: once the session (or another user of its device) has seen
// the device lost, nothing it holds can be trusted, and each call says so.
inline const engine::Session &readable(const vkllm_session *s, const char *fn) {
    require_arg(s, fn, "session");
    if (s->lost.load() || s->context->device().lost())
        fail(VKLLM_ERR_DEVICE_LOST,
             "%s: the device was lost during an earlier call; destroy the session and create the "
             "runtime, model and session again",
             fn);
    return *s->session;
}

// Runs `body`, which changes the session, as the session's only user. A second thread in a
// call that changes it, or a callback re-entering it, is refused instead of corrupting it: one
// atomic exchange per call. A cancel made before the call owned the session is dropped. A
// device loss seen on the way is remembered.
template <typename F>
void change(vkllm_session *s, const char *fn, F &&body) {
    readable(s, fn);
    if (s->busy.exchange(true))
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "%s: the session is in use by another call (a session is used by one thread at a "
             "time, and not from inside its own callbacks)",
             fn);
    struct Release {
        std::atomic<bool> &busy;
        ~Release() { busy.store(false); }
    } release{s->busy};
    s->session->clear_cancel();
    try {
        body(*s->session);
    } catch (const Error &e) {
        if (e.status() == VKLLM_ERR_DEVICE_LOST) s->lost.store(true);
        throw;
    }
}

}  // namespace vkllm::api
