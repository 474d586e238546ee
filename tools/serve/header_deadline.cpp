#include "header_deadline.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <set>

namespace serve {

namespace {

using Clock = std::chrono::steady_clock;

// "addr port" of a socket's peer or own address, as httplib writes remote_addr (inet_ntop).
bool address_key(const sockaddr_storage &a, std::string *key, int *port) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
        const auto *in = reinterpret_cast<const sockaddr_in *>(&a);
        inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
        *port = ntohs(in->sin_port);
    } else if (a.ss_family == AF_INET6) {
        const auto *in = reinterpret_cast<const sockaddr_in6 *>(&a);
        inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text);
        *port = ntohs(in->sin6_port);
    } else {
        return false;
    }
    *key = std::string(text) + " " + std::to_string(*port);
    return true;
}

// The peer of a connection accepted on `port`; false for anything else (the listening socket,
// files, other sockets).
bool connection_peer(int fd, int port, std::string *peer) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
    sockaddr_storage local{}, remote{};
    socklen_t n = sizeof local;
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&local), &n) != 0) return false;
    std::string ignored;
    int local_port = 0;
    if (!address_key(local, &ignored, &local_port) || local_port != port) return false;
    n = sizeof remote;
    if (getpeername(fd, reinterpret_cast<sockaddr *>(&remote), &n) != 0) return false;
    int peer_port = 0;
    return address_key(remote, peer, &peer_port);
}

}  // namespace

HeaderDeadline::HeaderDeadline(int port, std::chrono::milliseconds limit)
    : port_(port), limit_(limit), thread_([this] { run(); }) {}

HeaderDeadline::~HeaderDeadline() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

HeaderDeadline::Connection &HeaderDeadline::at(const std::string &peer) {
    auto [it, added] = connections_.try_emplace(peer);
    if (added) it->second.since = it->second.deadline = Clock::now();
    return it->second;
}

// Both may come before a scan has seen the connection (a quick request): they make its entry.
void HeaderDeadline::headers_done(const std::string &addr, int port) {
    std::lock_guard<std::mutex> lock(mutex_);
    at(addr + " " + std::to_string(port)).waiting = false;
}

void HeaderDeadline::response_done(const std::string &addr, int port) {
    std::lock_guard<std::mutex> lock(mutex_);
    Connection &c = at(addr + " " + std::to_string(port));
    c.waiting = true;
    c.deadline = Clock::now() + limit_;
}

void HeaderDeadline::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        lock.unlock();
        scan();
        lock.lock();
        wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; });
    }
}

void HeaderDeadline::scan() {
    const auto started = Clock::now();
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return;
    std::map<std::string, int> open;  // peer -> fd, the connections there now
    while (dirent *e = readdir(dir)) {
        char *end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        std::string peer;
        if (end != e->d_name && *end == '\0' && fd != dirfd(dir) &&
            connection_peer(int(fd), port_, &peer))
            open[peer] = int(fd);
    }
    closedir(dir);

    const auto now = Clock::now();
    std::lock_guard<std::mutex> lock(mutex_);
    // Gone from the listing: closed (an entry made after the listing began may simply be newer).
    for (auto it = connections_.begin(); it != connections_.end();)
        it = open.count(it->first) || it->second.since >= started ? std::next(it)
                                                                  : connections_.erase(it);
    for (const auto &[peer, fd] : open) {
        auto [it, added] = connections_.try_emplace(peer);
        Connection &c = it->second;
        if (added) {
            c.since = now;
            c.deadline = now + limit_;
        }
        if (!c.waiting || now < c.deadline) continue;
        // Checked again just before: the descriptor still holds that connection (a closed one's
        // number may already serve another). The shutdown ends httplib's blocked read; httplib
        // closes the socket itself.
        std::string still;
        if (connection_peer(fd, port_, &still) && still == peer) shutdown(fd, SHUT_RDWR);
        c.waiting = false;
    }
}

}  // namespace serve
