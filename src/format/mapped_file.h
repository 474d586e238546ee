// A read-only memory map of a whole file: model files are paged in on demand, never read into
// RAM as a whole. (Or a copy of some of its bytes, read like one.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vkllm::format {

class MappedFile {
  public:
    // Throws VKLLM_ERR_IO naming the file and the reason.
    explicit MappedFile(const std::string &path);
    // Bytes already in memory, standing for (part of) the file `path`.
    MappedFile(const std::string &path, std::vector<uint8_t> bytes);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;

    const uint8_t *data() const { return data_; }
    uint64_t size() const { return size_; }
    const std::string &path() const { return path_; }

  private:
    std::string path_;
    const uint8_t *data_ = nullptr;
    uint64_t size_ = 0;
    std::vector<uint8_t> owned_;  // the bytes when they are not a map
};

}  // namespace vkllm::format
