#include "connection_watch.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>

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

// What descriptor `fd` is: a connection accepted on `port` (its peer in *peer), one of those
// whose peer is gone (a reset leaves no peer to name until the server closes it), or
// something else (the listening socket, files, other sockets).
enum class Link { Other, Connected, Reset };

Link inspect(int fd, int port, std::string *peer) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return Link::Other;
    sockaddr_storage local{}, remote{};
    socklen_t n = sizeof local;
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&local), &n) != 0) return Link::Other;
    std::string ignored;
    int local_port = 0;
    if (!address_key(local, &ignored, &local_port) || local_port != port) return Link::Other;
    n = sizeof remote;
    if (getpeername(fd, reinterpret_cast<sockaddr *>(&remote), &n) != 0)
        return errno == ENOTCONN ? Link::Reset : Link::Other;
    int peer_port = 0;
    return address_key(remote, peer, &peer_port) ? Link::Connected : Link::Other;
}

}  // namespace

ConnectionWatch::ConnectionWatch(int port, std::chrono::milliseconds limit)
    : port_(port), limit_(limit), thread_([this] { run(); }) {}

ConnectionWatch::~ConnectionWatch() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

ConnectionWatch::Connection &ConnectionWatch::at(const std::string &peer) {
    auto [it, added] = connections_.try_emplace(peer);
    if (added) it->second.since = it->second.deadline = Clock::now();
    return it->second;
}

// Both may come before a scan has seen the connection (a quick request): they make its entry.
void ConnectionWatch::headers_done(const std::string &addr, int port) {
    std::lock_guard<std::mutex> lock(mutex_);
    at(addr + " " + std::to_string(port)).waiting = false;
}

void ConnectionWatch::response_done(const std::string &addr, int port) {
    std::lock_guard<std::mutex> lock(mutex_);
    Connection &c = at(addr + " " + std::to_string(port));
    c.waiting = true;
    c.deadline = Clock::now() + limit_;
}

bool ConnectionWatch::peer_closed(const std::string &addr, int port) {
    const std::string peer = addr + " " + std::to_string(port);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = connections_.find(peer);
    if (it == connections_.end() || it->second.fd < 0) return false;
    // Under the lock, so the scan cannot shut it down meanwhile. The descriptor is the
    // request's still (the server closes it only after the handler returns): reset, it has no
    // peer; closed by the client, a read finds the end.
    std::string now;
    const int fd = it->second.fd;
    const Link link = inspect(fd, port_, &now);
    if (link == Link::Reset) return true;
    if (link != Link::Connected || now != peer) return false;
    char byte;
    const ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void ConnectionWatch::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        lock.unlock();
        scan();
        lock.lock();
        wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; });
    }
}

void ConnectionWatch::scan() {
    const auto started = Clock::now();
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return;
    std::map<std::string, int> open;  // peer -> fd, the connections there now
    std::set<int> reset;              // connections whose peer has gone, not yet closed
    while (dirent *e = readdir(dir)) {
        char *end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        std::string peer;
        if (end != e->d_name && *end == '\0' && fd != dirfd(dir)) {
            const Link link = inspect(int(fd), port_, &peer);
            if (link == Link::Connected) open[peer] = int(fd);
            if (link == Link::Reset) reset.insert(int(fd));
        }
    }
    closedir(dir);

    const auto now = Clock::now();
    std::lock_guard<std::mutex> lock(mutex_);
    // Gone from the listing: closed (an entry made after the listing began may simply be newer;
    // one reset is kept until the server closes it, so peer_closed can tell).
    for (auto it = connections_.begin(); it != connections_.end();) {
        const bool keep = open.count(it->first) || it->second.since >= started ||
                          (it->second.fd >= 0 && reset.count(it->second.fd));
        it = keep ? std::next(it) : connections_.erase(it);
    }
    for (const auto &[peer, fd] : open) {
        auto [it, added] = connections_.try_emplace(peer);
        Connection &c = it->second;
        if (added) {
            c.since = now;
            c.deadline = now + limit_;
        }
        c.fd = fd;
        if (!c.waiting || now < c.deadline) continue;
        // Checked again just before: the descriptor still holds that connection (a closed one's
        // number may already serve another). The shutdown ends httplib's blocked read; httplib
        // closes the socket itself.
        std::string still;
        if (inspect(fd, port_, &still) == Link::Connected && still == peer) shutdown(fd, SHUT_RDWR);
        c.waiting = false;
    }
}

}  // namespace serve
