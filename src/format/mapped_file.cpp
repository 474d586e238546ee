#include "format/mapped_file.h"

#include "common/platform.h"

namespace vkllm::format {

MappedFile::MappedFile(const std::string &path) : path_(path) {
    data_ = platform::map_file(path, &size_);
}

MappedFile::MappedFile(const std::string &path, std::vector<uint8_t> bytes)
    : path_(path), size_(bytes.size()), owned_(std::move(bytes)) {
    data_ = owned_.data();
}

MappedFile::~MappedFile() {
    if (owned_.empty()) platform::unmap_file(data_, size_);
}

}  // namespace vkllm::format
