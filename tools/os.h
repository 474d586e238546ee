// The few calls of the tool that differ between POSIX and Windows.
#pragma once

#include <csignal>
#include <ctime>

#ifndef _WIN32
#include <signal.h>
#endif

namespace vkllm_tool {

// Calls `handler` on ^C. POSIX: without SA_RESTART, so that ^C also ends a read in progress.
// Windows: the C runtime's signal (its handler runs on a thread of its own).
inline void on_interrupt(void (*handler)(int)) {
#ifdef _WIN32
    std::signal(SIGINT, handler);
#else
    struct sigaction sa = {};
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
#endif
}

// The seconds since 1970 of a calendar time read as UTC, normalising *tm as mktime does.
inline std::time_t utc_seconds(std::tm *tm) {
#ifdef _WIN32
    return _mkgmtime(tm);
#else
    return timegm(tm);
#endif
}

}  // namespace vkllm_tool
