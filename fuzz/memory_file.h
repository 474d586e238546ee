// A fuzz input as a file the library can open by path: an anonymous in-memory file
// (memfd), named through /proc/self/fd. Nothing touches the disk.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

class MemoryFile {
  public:
    MemoryFile(const uint8_t *data, size_t size) {
        fd_ = memfd_create("vkllm-fuzz", MFD_CLOEXEC);
        if (fd_ < 0) return;
        for (size_t done = 0; done < size;) {
            ssize_t n = write(fd_, data + done, size - done);
            if (n <= 0) {
                close(fd_);
                fd_ = -1;
                return;
            }
            done += size_t(n);
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~MemoryFile() {
        if (fd_ >= 0) close(fd_);
    }
    MemoryFile(const MemoryFile &) = delete;
    MemoryFile &operator=(const MemoryFile &) = delete;

    bool ok() const { return fd_ >= 0; }
    const char *path() const { return path_.c_str(); }

  private:
    int fd_ = -1;
    std::string path_;
};
