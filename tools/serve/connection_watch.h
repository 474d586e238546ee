// What httplib 0.11 does not tell about the server's connections, found in the process's
// sockets bound to the server's port (/proc/self/fd, read every 200 ms):
// - a deadline for a request's headers. httplib times each read, not the request, so a client
//   that sends its headers a byte at a time (slowloris) would hold a connection thread as long
//   as it likes: a connection that has not finished a request's headers within the limit of its
//   arrival, or of the end of its last response, is shut down. The pre-routing handler marks
//   headers done, the logger a response done;
// - whether the client of a request being answered whole has gone (a handler learns it only
//   by writing), so that its generation is cancelled as a stream's is.
// Where /proc/self/fd is not readable (not Linux) it does neither; the per-read timeouts hold.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace serve {

class ConnectionWatch {
  public:
    ConnectionWatch(int port, std::chrono::milliseconds limit);
    ~ConnectionWatch();
    ConnectionWatch(const ConnectionWatch &) = delete;
    ConnectionWatch &operator=(const ConnectionWatch &) = delete;

    // The connection from this peer (httplib's remote_addr and remote_port) has sent a whole
    // request's headers: no deadline while the request is served.
    void headers_done(const std::string &addr, int port);
    // Its response is written: the next request's headers have the limit again.
    void response_done(const std::string &addr, int port);
    // The client closed or reset the connection (a read would find its end). False while the
    // connection is unknown yet, or when it cannot tell.
    bool peer_closed(const std::string &addr, int port);

  private:
    struct Connection {
        int fd = -1;          // -1 until a scan has seen it
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
