#include "common/platform.h"

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <io.h>
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace vkllm::platform {

#ifdef _WIN32

namespace {

// The system's message for a GetLastError() code, without its trailing line break.
std::string win_error(DWORD code) {
    char buf[512];
    DWORD n =
        FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code,
                       MAKELANGID(LANG_ENGLISH, SUBLANG_DEFAULT), buf, sizeof buf, nullptr);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == '.'))
        --n;
    if (n == 0) return sformat("Windows error %lu", (unsigned long)code);
    return std::string(buf, n);
}

// UTF-8 to UTF-16; false (ERROR_NO_UNICODE_TRANSLATION) for bytes that are not UTF-8.
bool widen(const std::string &s, std::wstring *out) {
    out->clear();
    if (s.empty()) return true;
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), int(s.size()), nullptr, 0);
    if (n <= 0) return false;
    out->resize(size_t(n));
    return MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), int(s.size()), &(*out)[0],
                               n) == n;
}

std::wstring widen_or_fail(const std::string &path) {
    std::wstring w;
    if (!widen(path, &w))
        fail(VKLLM_ERR_IO, "cannot open %s: the path is not valid UTF-8", path.c_str());
    return w;
}

}  // namespace

const uint8_t *map_file(const std::string &path, uint64_t *size) {
    std::wstring w = widen_or_fail(path);
    *size = 0;
    DWORD attributes = GetFileAttributesW(w.c_str());
    if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY))
        fail(VKLLM_ERR_IO, "%s is not a regular file", path.c_str());
    // FILE_SHARE_DELETE: the file may be renamed or deleted while mapped, as on POSIX.
    HANDLE file =
        CreateFileW(w.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (file == INVALID_HANDLE_VALUE)
        fail(VKLLM_ERR_IO, "cannot open %s: %s", path.c_str(), win_error(GetLastError()).c_str());
    LARGE_INTEGER bytes;
    if (GetFileType(file) != FILE_TYPE_DISK || !GetFileSizeEx(file, &bytes)) {
        CloseHandle(file);
        fail(VKLLM_ERR_IO, "%s is not a regular file", path.c_str());
    }
    if (bytes.QuadPart == 0) {  // a mapping of zero bytes is refused by Windows
        CloseHandle(file);
        return nullptr;
    }
    HANDLE mapping = CreateFileMappingW(file, nullptr, PAGE_READONLY, 0, 0, nullptr);
    DWORD err = GetLastError();
    CloseHandle(file);  // the mapping keeps the file open
    if (!mapping) fail(VKLLM_ERR_IO, "cannot map %s: %s", path.c_str(), win_error(err).c_str());
    void *p = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
    err = GetLastError();
    CloseHandle(mapping);  // and the view keeps the mapping
    if (!p) fail(VKLLM_ERR_IO, "cannot map %s: %s", path.c_str(), win_error(err).c_str());
    *size = uint64_t(bytes.QuadPart);
    return static_cast<const uint8_t *>(p);
}

void unmap_file(const uint8_t *data, uint64_t) {
    if (data) UnmapViewOfFile(data);
}

std::FILE *open_file(const std::string &path, const char *mode) {
    std::wstring w, m;
    if (!widen(path, &w) || !widen(mode, &m)) {
        errno = EINVAL;
        return nullptr;
    }
    return _wfopen(w.c_str(), m.c_str());
}

bool sync_file(std::FILE *f) {
    return std::fflush(f) == 0 && _commit(_fileno(f)) == 0;
}

bool seek_file(std::FILE *f, int64_t offset, int whence) {
    return _fseeki64(f, offset, whence) == 0;
}

int64_t tell_file(std::FILE *f) {
    return _ftelli64(f);
}

bool replace_file(const std::string &from, const std::string &to, std::string *why) {
    std::wstring wf, wt;
    if (!widen(from, &wf) || !widen(to, &wt)) {
        *why = "the path is not valid UTF-8";
        return false;
    }
    if (MoveFileExW(wf.c_str(), wt.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        return true;
    *why = win_error(GetLastError());
    return false;
}

bool remove_file(const std::string &path) {
    std::wstring w;
    return widen(path, &w) && DeleteFileW(w.c_str());
}

static unsigned long process_id() {
    return (unsigned long)GetCurrentProcessId();
}

std::tm utc_time(int64_t seconds) {
    std::tm tm{};
    std::time_t t = std::time_t(seconds);
    if (gmtime_s(&tm, &t) != 0) tm = std::tm{};
    return tm;
}

int64_t utc_offset(int64_t seconds) {
    std::tm local{};
    std::time_t t = std::time_t(seconds);
    if (localtime_s(&local, &t) != 0) return 0;
    std::time_t as_if_utc = _mkgmtime(&local);  // the local fields read as UTC
    return as_if_utc == std::time_t(-1) ? 0 : int64_t(as_if_utc) - seconds;
}

#else

const uint8_t *map_file(const std::string &path, uint64_t *size) {
    *size = 0;
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
    if (st.st_size == 0) {
        ::close(fd);
        return nullptr;
    }
    void *p = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    int err = errno;
    ::close(fd);  // the mapping keeps the file alive
    if (p == MAP_FAILED) fail(VKLLM_ERR_IO, "cannot map %s: %s", path.c_str(), std::strerror(err));
    *size = uint64_t(st.st_size);
    return static_cast<const uint8_t *>(p);
}

void unmap_file(const uint8_t *data, uint64_t size) {
    if (data) ::munmap(const_cast<uint8_t *>(data), size);
}

std::FILE *open_file(const std::string &path, const char *mode) {
    return std::fopen(path.c_str(), mode);
}

bool sync_file(std::FILE *f) {
    return std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
}

bool seek_file(std::FILE *f, int64_t offset, int whence) {
    return ::fseeko(f, off_t(offset), whence) == 0;
}

int64_t tell_file(std::FILE *f) {
    return int64_t(::ftello(f));
}

bool replace_file(const std::string &from, const std::string &to, std::string *why) {
    if (std::rename(from.c_str(), to.c_str()) == 0) return true;
    *why = std::strerror(errno);
    return false;
}

bool remove_file(const std::string &path) {
    return std::remove(path.c_str()) == 0;
}

static unsigned long process_id() {
    return (unsigned long)::getpid();
}

std::tm utc_time(int64_t seconds) {
    std::tm tm{};
    std::time_t t = std::time_t(seconds);
    if (!::gmtime_r(&t, &tm)) tm = std::tm{};
    return tm;
}

int64_t utc_offset(int64_t seconds) {
    std::tm local{};
    std::time_t t = std::time_t(seconds);
    return ::localtime_r(&t, &local) ? int64_t(local.tm_gmtoff) : 0;
}

#endif

bool write_file_atomically(const std::string &path, std::string_view data, std::string *why) {
    static std::atomic<unsigned long> calls{0};
    std::string tmp = path + sformat(".tmp.%lu.%lu", process_id(), calls++);
    std::FILE *f = open_file(tmp, "wb");
    if (!f) {
        *why = sformat("cannot create %s: %s", tmp.c_str(), std::strerror(errno));
        return false;
    }
    bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size() && sync_file(f);
    int err = errno;
    if (std::fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        *why = sformat("cannot write %s: %s", tmp.c_str(), std::strerror(err));
    } else {
        std::string rename_why;
        ok = replace_file(tmp, path, &rename_why);
        if (!ok)
            *why = sformat("cannot rename %s to %s: %s", tmp.c_str(), path.c_str(),
                           rename_why.c_str());
    }
    if (!ok) remove_file(tmp);
    return ok;
}

}  // namespace vkllm::platform
