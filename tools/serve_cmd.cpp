// `vkllm serve`: runs vkllm-serve, the HTTP server beside this binary (git's way with its
// subcommands), so the command-line tool itself links no HTTP or TLS library.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#ifndef _WIN32
#include <unistd.h>
#endif

#include "cli.h"
#include "serve/serve_usage.h"

#ifndef _WIN32
namespace {

// The directory of the running vkllm: /proc/self/exe where there is one, else argv[0]'s.
std::string own_directory(const char *argv0) {
    std::string path;
#ifdef __linux__
    std::vector<char> buf(4096);
    ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
    if (n > 0) path.assign(buf.data(), size_t(n));
#endif
    if (path.empty()) path = argv0;
    size_t slash = path.find_last_of("/\\");
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace
#endif

int cmd_serve(int argc, char **argv, const char *program) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
            std::fputs(serve::kServeUsage, stdout);
            return 0;
        }
#ifdef _WIN32
    (void)program;
    std::fprintf(stderr, "vkllm serve: the server is not built on Windows (docs/SERVER.md)\n");
    return 1;
#else
    const std::string server = own_directory(program) + "/vkllm-serve";
    std::vector<char *> args(argv, argv + argc);
    args[0] = const_cast<char *>(server.c_str());
    args.push_back(nullptr);
    execv(server.c_str(), args.data());
    std::fprintf(stderr,
                 "vkllm serve: cannot run %s: %s (it is built where cpp-httplib and "
                 "nlohmann-json are found: docs/SERVER.md)\n",
                 server.c_str(), std::strerror(errno));
    return 1;
#endif
}
