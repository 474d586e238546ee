// The few calls of the tool that differ between POSIX and Windows.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>

#include <string>
#include <vector>

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// After windows.h, which it needs.
#include <shellapi.h>
#else
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

#ifdef _WIN32
// UTF-8 to UTF-16 for the wide file calls; empty for a path that is not UTF-8.
inline std::wstring wide_path(const char *utf8) {
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, nullptr, 0);
    if (n <= 0) return std::wstring();
    std::wstring w(size_t(n), L'\0');
    MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, &w[0], n);
    w.resize(size_t(n - 1));
    return w;
}
#endif

// Opens a file named in UTF-8 for reading in binary mode, as the library opens models: the
// narrow fopen of Windows reads its path in the ANSI code page, where "Zoë" may not exist.
inline FILE *open_for_reading(const char *utf8_path) {
#ifdef _WIN32
    std::wstring w = wide_path(utf8_path);
    if (w.empty()) {
        errno = ENOENT;
        return nullptr;
    }
    return _wfopen(w.c_str(), L"rb");
#else
    return std::fopen(utf8_path, "rb");
#endif
}

// 1 when a file named in UTF-8 is a regular file, 0 when it is something else, -1 (errno set)
// when it cannot be examined.
inline int is_regular_file(const char *utf8_path) {
#ifdef _WIN32
    std::wstring w = wide_path(utf8_path);
    if (w.empty()) {
        errno = ENOENT;
        return -1;
    }
    struct _stat64 st;
    if (_wstat64(w.c_str(), &st) != 0) return -1;
    return (st.st_mode & _S_IFMT) == _S_IFREG ? 1 : 0;
#else
    struct stat st;
    if (::stat(utf8_path, &st) != 0) return -1;
    return S_ISREG(st.st_mode) ? 1 : 0;
#endif
}

// The command line in UTF-8, as the library takes every path and text. Windows gives main() its
// arguments in the ANSI code page, where "Zoë" may not survive: they are read again as UTF-16
// and converted. Elsewhere argv is left as it is.
inline void utf8_arguments(int &argc, char **&argv) {
#ifdef _WIN32
    static std::vector<std::string> args;
    static std::vector<char *> pointers;
    int n = 0;
    wchar_t **wide = CommandLineToArgvW(GetCommandLineW(), &n);
    if (!wide) return;
    for (int i = 0; i < n; ++i) {
        int bytes = WideCharToMultiByte(CP_UTF8, 0, wide[i], -1, nullptr, 0, nullptr, nullptr);
        std::string a(size_t(bytes > 0 ? bytes : 1), '\0');
        if (bytes > 0) WideCharToMultiByte(CP_UTF8, 0, wide[i], -1, &a[0], bytes, nullptr, nullptr);
        a.resize(a.size() - 1);
        args.push_back(a);
    }
    LocalFree(wide);
    for (std::string &a : args)
        pointers.push_back(&a[0]);
    pointers.push_back(nullptr);
    argc = n;
    argv = pointers.data();
#else
    (void)argc;
    (void)argv;
#endif
}

}  // namespace vkllm_tool
