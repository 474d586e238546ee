// Every call into the operating system that the library makes, so that Windows, Apple, Android
// and Linux differ in platform.cpp alone (tests/check_layering.py keeps OS headers out of the
// rest of src/). Paths are UTF-8 everywhere: on Windows they are converted to UTF-16 and opened
// with the wide-character calls, so that a model under C:\Users\Zoë\ loads.
#pragma once

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>

namespace vkllm::platform {

// A read-only map of the whole regular file `path`, pages read on demand. An empty file maps
// to nullptr with size 0. Throws VKLLM_ERR_IO naming the file and the reason (a directory or
// a device is refused as "not a regular file").
const uint8_t *map_file(const std::string &path, uint64_t *size);
// Releases what map_file returned (nullptr is a no-op).
void unmap_file(const uint8_t *data, uint64_t size);

// std::fopen of a UTF-8 path; nullptr with errno set when it fails.
std::FILE *open_file(const std::string &path, const char *mode);
// Flushes `f` and asks the OS to put its bytes on the disk; false with errno set on failure.
bool sync_file(std::FILE *f);
// 64-bit positions (a long is 32 bits on Windows, and state files pass 2 GiB).
bool seek_file(std::FILE *f, int64_t offset, int whence);
int64_t tell_file(std::FILE *f);  // -1 on failure
// Renames `from` to `to`, replacing `to` if it exists (std::rename does not on Windows).
// On failure returns false and sets *why.
bool replace_file(const std::string &from, const std::string &to, std::string *why);
bool remove_file(const std::string &path);
// Writes `data` to `path` so that a reader finds the old file or the whole new one, never a
// part: into a temporary file of its own name in the same directory (one file system, so the
// rename is atomic; the name is unique to this process and call, so concurrent writers do not
// mix their bytes), synced, then renamed over `path`. On failure the temporary file is removed,
// `path` is as it was, and false comes back with *why naming the step and the reason.
bool write_file_atomically(const std::string &path, std::string_view data, std::string *why);

// The calendar time in UTC of `seconds` since 1970; all fields zero when out of range.
std::tm utc_time(int64_t seconds);
// How far the local time zone is ahead of UTC at `seconds` since 1970, in seconds (0 when
// unknown).
int64_t utc_offset(int64_t seconds);

}  // namespace vkllm::platform
