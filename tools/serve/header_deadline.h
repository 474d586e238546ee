// A deadline for a request's headers. httplib 0.11 times out each read, not the request, so a
// client that sends its headers a byte at a time (slowloris) would hold a connection thread for
// as long as it likes. This watchdog finds the server's connections (the process's sockets bound
// to the server's port, read from /proc/self/fd every 200 ms) and shuts down any that has not
// finished a request's headers within the limit of its arrival, or of the end of its last
// response; the pre-routing handler marks headers done, the logger a response done. Where
// /proc/self/fd is not readable it does nothing (the per-read timeouts still hold).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace serve {

class HeaderDeadline {
  public:
    HeaderDeadline(int port, std::chrono::milliseconds limit);
    ~HeaderDeadline();
    HeaderDeadline(const HeaderDeadline &) = delete;
    HeaderDeadline &operator=(const HeaderDeadline &) = delete;

    // The connection from this peer (httplib's remote_addr and remote_port) has sent a whole
    // request's headers: no deadline while the request is served.
    void headers_done(const std::string &addr, int port);
    // Its response is written: the next request's headers have the limit again.
    void response_done(const std::string &addr, int port);

  private:
    struct Connection {
        bool waiting = true;  // for headers
        std::chrono::steady_clock::time_point deadline;
        std::chrono::steady_clock::time_point since;  // first known
    };
    void run();
    void scan();
    Connection &at(const std::string &peer);  // under mutex_

    const int port_;
    const std::chrono::milliseconds limit_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::map<std::string, Connection> connections_;  // by "addr port" of the peer
    std::thread thread_;
};

}  // namespace serve
