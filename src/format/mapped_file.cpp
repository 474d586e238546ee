#include "format/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace vkllm::format {

MappedFile::MappedFile(const std::string &path) : path_(path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(VKLLM_ERR_IO, "cannot open %s: %s", path.c_str(), std::strerror(errno));
    struct stat st;
    // errno only when fstat failed: a directory leaves whatever an earlier call set.
    int stat_err = ::fstat(fd, &st) == 0 ? 0 : errno;
    if (stat_err || !S_ISREG(st.st_mode)) {
        ::close(fd);
        fail(VKLLM_ERR_IO, "%s is not a regular file%s%s", path.c_str(), stat_err ? ": " : "",
             stat_err ? std::strerror(stat_err) : "");
    }
    size_ = uint64_t(st.st_size);
    if (size_ > 0) {
        void *p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int err = errno;
            ::close(fd);
            fail(VKLLM_ERR_IO, "cannot map %s: %s", path.c_str(), std::strerror(err));
        }
        data_ = static_cast<const uint8_t *>(p);
    }
    ::close(fd);  // the mapping keeps the file alive
}

MappedFile::MappedFile(const std::string &path, std::vector<uint8_t> bytes)
    : path_(path), size_(bytes.size()), owned_(std::move(bytes)) {
    data_ = owned_.data();
}

MappedFile::~MappedFile() {
    if (data_ && owned_.empty()) ::munmap(const_cast<uint8_t *>(data_), size_);
}

}  // namespace vkllm::format
