// Setting and clearing an environment variable in a test, on POSIX and on Windows (whose C
// runtime has _putenv_s instead of setenv and unsetenv; an empty value removes the variable).
#pragma once

#include <cstdlib>

inline void set_env(const char *name, const char *value) {
#ifdef _WIN32
    _putenv_s(name, value);
#else
    setenv(name, value, 1);
#endif
}

inline void unset_env(const char *name) {
#ifdef _WIN32
    _putenv_s(name, "");
#else
    unsetenv(name);
#endif
}
