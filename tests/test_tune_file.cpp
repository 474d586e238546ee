// The tune file (engine/tune_file.h): what is written reads back the same, and anything else (a
// stale identity, a cut, a malformed value, a repeated key, an oversized file) is refused whole
// with a reason; reading a refused file warns once and gives nothing, writing never leaves a
// half-written file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "engine/tune_file.h"
#include "gpu_fixture.h"

namespace {

using vkllm::engine::format_tune_file;
using vkllm::engine::parse_tune_file;
using vkllm::engine::read_tune_file;
using vkllm::engine::TuneIdentity;
using vkllm::engine::write_tune_file;
using vkllm::gpu::MatvecFamily;
using vkllm::gpu::MatvecKey;
using vkllm::gpu::MatvecTuning;
using vkllm::gpu::MatvecVariant;
using vkllm::gpu::WeightType;

const TuneIdentity kId{"10de:2330 NVIDIA H100 80GB HBM3 uuid 00112233445566778899aabbccddeeff",
                       "NVIDIA 560.35.03 (0x8c0c8000)", "0.2.0"};

// Winners of both families over several weight types, plain and grouped, and the bounds.
MatvecTuning sample() {
    MatvecTuning t;
    t[{MatvecFamily::Dense, WeightType::Q8_0_G8, 896, 4864}] = {128, 4, true};
    t[{MatvecFamily::Dense, WeightType::F16, 4864, 896}] = {64, 2, false};
    t[{MatvecFamily::Dense, WeightType::Q4_K, 151936, 896}] = {1024, 64, true};
    t[{MatvecFamily::Dense, WeightType::BF16, 1, 32}] = {1, 1, false};
    t[{MatvecFamily::Moe, WeightType::MXFP4_G16, 2880, 2880}] = {64, 2, false};
    t[{MatvecFamily::Moe, WeightType::Q6_K_G8, 2147483647u, 2147483616u}] = {256, 8, true};
    t[{MatvecFamily::Moe, WeightType::F32, 768, 2048}] = {32, 16, true};
    return t;
}

std::optional<MatvecTuning> parse(const std::string &text, std::string *why) {
    return parse_tune_file(text, kId, why);
}

// The sample file with its entry line `n` (0: the first) replaced by `line`.
std::string with_entry(size_t n, const std::string &line) {
    std::string text = format_tune_file(kId, sample());
    size_t start = 0;
    for (size_t i = 0; i < 4 + n; ++i)
        start = text.find('\n', start) + 1;
    size_t end = text.find('\n', start);
    return text.substr(0, start) + line + text.substr(end);
}

class TempDir {
  public:
    TempDir() {
        path_ = (std::filesystem::temp_directory_path() /
                 ("vkllm_tune_file_test." + std::to_string(::getpid())))
                    .string();
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        ::chmod(path_.c_str(), 0755);
        std::filesystem::remove_all(path_);
    }
    const std::string &path() const { return path_; }
    std::vector<std::string> entries() const {
        std::vector<std::string> names;
        for (const auto &e : std::filesystem::directory_iterator(path_))
            names.push_back(e.path().filename().string());
        return names;
    }

  private:
    std::string path_;
};

std::string slurp(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void put(const std::string &path, const std::string &bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
}

struct Collected {
    std::vector<std::pair<vkllm_log_level, std::string>> messages;
    vkllm::Logger logger() {
        return vkllm::Logger{[](void *user, vkllm_log_level level, const char *msg) {
                                 static_cast<Collected *>(user)->messages.emplace_back(level, msg);
                             },
                             this};
    }
};

}  // namespace

TEST(TuneFile, EveryFamilyAndWeightTypeRoundTrips) {
    std::string why;
    std::string text = format_tune_file(kId, sample());
    auto back = parse(text, &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(*back, sample());
    EXPECT_EQ(format_tune_file(kId, *back), text);
}

TEST(TuneFile, NoWinnersRoundTrip) {
    std::string why;
    auto back = parse(format_tune_file(kId, {}), &why);
    ASSERT_TRUE(back) << why;
    EXPECT_TRUE(back->empty());
}

TEST(TuneFile, TextIsVersionedSortedAndNamesTypesByName) {
    MatvecTuning t;
    t[{MatvecFamily::Moe, WeightType::MXFP4_G16, 2880, 2880}] = {64, 2, false};
    t[{MatvecFamily::Dense, WeightType::Q8_0_G8, 896, 4864}] = {128, 4, true};
    EXPECT_EQ(format_tune_file(kId, t),
              "vkllm-tune 1\n"
              "device " +
                  kId.device +
                  "\n"
                  "driver " +
                  kId.driver +
                  "\n"
                  "vkllm " +
                  kId.vkllm +
                  "\n"
                  "matvec dense Q8_0_G8 896 4864 wg=128 rows=4 subgroup=1\n"
                  "matvec moe MXFP4_G16 2880 2880 wg=64 rows=2 subgroup=0\n"
                  "end 2\n");
}

TEST(TuneFile, EntriesInAnyOrderAreRead) {
    std::string text = format_tune_file(kId, sample());
    // Swap the first two entries.
    size_t a = 0;
    for (int i = 0; i < 4; ++i)
        a = text.find('\n', a) + 1;
    size_t b = text.find('\n', a) + 1, c = text.find('\n', b) + 1;
    std::string swapped =
        text.substr(0, a) + text.substr(b, c - b) + text.substr(a, b - a) + text.substr(c);
    ASSERT_NE(swapped, text);
    std::string why;
    auto back = parse(swapped, &why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(*back, sample());
}

TEST(TuneFile, StaleIdentityIsRefusedNamingTheFieldThatDiffers) {
    std::string text = format_tune_file(kId, sample());
    struct Case {
        TuneIdentity expected;
        const char *differs;
    } cases[] = {
        {{"1002:73bf AMD Radeon uuid 00", kId.driver, kId.vkllm}, "another device"},
        {{kId.device, "NVIDIA 570.1 (0x8e404000)", kId.vkllm}, "another driver"},
        {{kId.device, kId.driver, "0.3.0"}, "another vkllm"},
    };
    for (const Case &c : cases) {
        std::string why;
        EXPECT_FALSE(parse_tune_file(text, c.expected, &why));
        EXPECT_NE(why.find("stale"), std::string::npos) << why;
        EXPECT_NE(why.find(c.differs), std::string::npos) << why;
        EXPECT_NE(why.find("made for device " + kId.device + " / driver " + kId.driver +
                           " / vkllm " + kId.vkllm),
                  std::string::npos)
            << why;
    }
}

TEST(TuneFile, EveryTruncationIsRefused) {
    std::string text = format_tune_file(kId, sample());
    for (size_t cut = 0; cut < text.size(); ++cut) {
        std::string why;
        EXPECT_FALSE(parse(text.substr(0, cut), &why)) << "cut at byte " << cut;
        EXPECT_FALSE(why.empty()) << "cut at byte " << cut;
    }
}

TEST(TuneFile, MalformedValuesAreRefusedNamingTheLine) {
    // The sample's first entry (sorted) is on line 5.
    const char *bad[] = {
        "matvec sparse F16 896 4864 wg=128 rows=4 subgroup=1",        // unknown family
        "matvec dense Q9_9 896 4864 wg=128 rows=4 subgroup=1",        // unknown weight type
        "matvec dense q8_0_g8 896 4864 wg=128 rows=4 subgroup=1",     // names are case-sensitive
        "matvec dense 12 896 4864 wg=128 rows=4 subgroup=1",          // a type by number
        "matvec dense F16 0 4864 wg=128 rows=4 subgroup=1",           // no rows
        "matvec dense F16 2147483648 4864 wg=128 rows=4 subgroup=1",  // rows 2^31
        "matvec dense F16 896 0 wg=128 rows=4 subgroup=1",            // no columns
        "matvec dense F16 896 4865 wg=128 rows=4 subgroup=1",         // not a multiple of 32
        "matvec dense F16 896 2147483648 wg=128 rows=4 subgroup=1",   // columns 2^31
        "matvec dense F16 896 99999999999 wg=128 rows=4 subgroup=1",  // past 32 bits
        "matvec dense F16 896 4864 wg=96 rows=4 subgroup=1",          // not a power of two
        "matvec dense F16 896 4864 wg=0 rows=4 subgroup=1",
        "matvec dense F16 896 4864 wg=2048 rows=4 subgroup=1",  // over kMaxVariantWg
        "matvec dense F16 896 4864 wg=128 rows=0 subgroup=1",
        "matvec dense F16 896 4864 wg=128 rows=65 subgroup=1",  // over kMaxVariantRows
        "matvec dense F16 896 4864 wg=128 rows=4 subgroup=2",
        "matvec dense F16 896 4864 wg=128 rows=4",                   // a field missing
        "matvec dense F16 896 4864 wg=128 rows=4 subgroup=1 extra",  // one too many
        "matvec dense F16 896  4864 wg=128 rows=4 subgroup=1",       // two spaces
        "matvec dense F16 896 4864 wg=128 rows=4 subgroup=1 ",       // a trailing space
        "matvec dense F16 +896 4864 wg=128 rows=4 subgroup=1",       // a sign
        "matvec dense F16 0896 4864 wg=128 rows=4 subgroup=1",       // a leading zero
        "matvec dense F16 896 4864 wg=-128 rows=4 subgroup=1",
        "matvec dense F16 896 4864 rows=4 wg=128 subgroup=1",  // fields out of order
        "matvec dense F16 896 4864 wg 128 rows=4 subgroup=1",
        "matvec dense F16 896 4864 wg=128 rows=4 subgroup=1\r",  // a CRLF line
        "matvec dense F16 896 4864 wg=1\x80 rows=4 subgroup=1",  // not ASCII
        "matrix dense F16 896 4864 wg=128 rows=4 subgroup=1",    // unknown line
        "",                                                      // an empty line
    };
    for (const char *line : bad) {
        std::string why;
        EXPECT_FALSE(parse(with_entry(0, line), &why)) << line;
        EXPECT_EQ(why.rfind("line 5: ", 0), 0u) << line << " -> " << why;
        EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    }
    // The same entry with good values is read (so the cases above fail for their one change).
    std::string why;
    EXPECT_TRUE(parse(with_entry(0, "matvec dense F16 896 4864 wg=128 rows=4 subgroup=1"), &why))
        << why;
}

TEST(TuneFile, WrongMagicVersionOrEndIsRefused) {
    std::string text = format_tune_file(kId, sample());
    std::string why;
    EXPECT_FALSE(parse("GGUF" + text, &why));
    EXPECT_NE(why.find("not a vkllm tune file"), std::string::npos) << why;
    EXPECT_FALSE(parse("vkllm-tune 2" + text.substr(text.find('\n')), &why));
    EXPECT_NE(why.find("version \"2\""), std::string::npos) << why;
    std::string counted = text;
    counted.replace(counted.rfind("end 7"), 5, "end 6");
    EXPECT_FALSE(parse(counted, &why));
    EXPECT_NE(why.find("counts 6 entries"), std::string::npos) << why;
    EXPECT_FALSE(parse(text + "matvec dense F16 32 32 wg=1 rows=1 subgroup=0\n", &why));
    EXPECT_NE(why.find("after \"end\""), std::string::npos) << why;
    EXPECT_FALSE(parse(text + "\n", &why));
    std::string no_driver = text;
    no_driver.erase(no_driver.find("driver "), kId.driver.size() + 8);
    EXPECT_FALSE(parse(no_driver, &why));
    EXPECT_EQ(why.rfind("line 3: expected \"driver ...\"", 0), 0u) << why;
}

TEST(TuneFile, KeyListedTwiceIsRefused) {
    // The sorted sample's first entry is dense F16 4864 x 896; line 6 repeats its key with
    // another variant.
    std::string text = format_tune_file(kId, sample());
    ASSERT_NE(text.find("\nmatvec dense F16 4864 896 "), std::string::npos) << text;
    std::string again = with_entry(1, "matvec dense F16 4864 896 wg=2 rows=1 subgroup=1");
    std::string why;
    EXPECT_FALSE(parse(again, &why));
    EXPECT_EQ(why.rfind("line 6: ", 0), 0u) << why;
    EXPECT_NE(why.find("\"matvec dense F16 4864 896\" is listed twice"), std::string::npos) << why;
}

TEST(TuneFile, OversizedFileIsRefused) {
    // Valid entries, 25,000 of some 48 bytes: over 1 MiB.
    MatvecTuning many;
    for (uint32_t rows = 1; rows <= 25000; ++rows)
        many[{MatvecFamily::Dense, WeightType::F16, rows, 4096}] = {64, 2, true};
    EXPECT_THROW(format_tune_file(kId, many), vkllm::Error);
    // The same entries by hand, as a file another program might write.
    std::string text = format_tune_file(kId, {});
    text.erase(text.rfind("end "));
    for (const auto &[k, v] : many)
        text += "matvec dense F16 " + std::to_string(k.rows) + " 4096 wg=64 rows=2 subgroup=1\n";
    text += "end " + std::to_string(many.size()) + "\n";
    ASSERT_GT(text.size(), vkllm::engine::kMaxTuneFileBytes);
    std::string why;
    EXPECT_FALSE(parse(text, &why));
    EXPECT_NE(why.find("larger than 1048576 bytes"), std::string::npos) << why;
}

TEST(TuneFile, FormatRefusesWinnersTheReaderWouldRefuse) {
    MatvecTuning bad;
    bad[{MatvecFamily::Dense, WeightType::F16, 896, 4864}] = {96, 4, true};
    EXPECT_THROW(format_tune_file(kId, bad), vkllm::Error);
    bad.clear();
    bad[{MatvecFamily(7), WeightType::F16, 896, 4864}] = {64, 4, true};
    EXPECT_THROW(format_tune_file(kId, bad), vkllm::Error);
    bad.clear();
    bad[{MatvecFamily::Dense, WeightType(999), 896, 4864}] = {64, 4, true};
    EXPECT_THROW(format_tune_file(kId, bad), vkllm::Error);
}

TEST(TuneFile, ReadingAMissingFileGivesNothingAndLogsNothing) {
    TempDir dir;
    Collected log;
    EXPECT_TRUE(read_tune_file(dir.path() + "/absent.tune", kId, log.logger()).empty());
    EXPECT_TRUE(log.messages.empty());
}

TEST(TuneFile, ReadingABadFileGivesNothingAndWarnsOnceNamingIt) {
    TempDir dir;
    std::string path = dir.path() + "/cache.bin.tune";
    const TuneIdentity other{kId.device, kId.driver, "9.9.9"};
    std::string text = format_tune_file(kId, sample());
    for (const std::string &bytes : {text.substr(0, text.size() / 2), std::string(),
                                     with_entry(2, "matvec dense F16 1 1 wg=1 rows=1 subgroup=0"),
                                     format_tune_file(other, sample())}) {
        put(path, bytes);
        Collected log;
        EXPECT_TRUE(read_tune_file(path, kId, log.logger()).empty());
        ASSERT_EQ(log.messages.size(), 1u);
        EXPECT_EQ(log.messages[0].first, VKLLM_LOG_WARNING);
        EXPECT_NE(log.messages[0].second.find(path), std::string::npos) << log.messages[0].second;
    }
    // A directory where the file should be cannot be read.
    std::filesystem::remove(path);
    std::filesystem::create_directory(path);
    Collected log;
    EXPECT_TRUE(read_tune_file(path, kId, log.logger()).empty());
    ASSERT_EQ(log.messages.size(), 1u);
    EXPECT_EQ(log.messages[0].first, VKLLM_LOG_WARNING);
}

TEST(TuneFile, WriteThenReadGivesTheSameWinners) {
    TempDir dir;
    std::string path = dir.path() + "/cache.bin.tune";
    write_tune_file(path, kId, sample());
    Collected log;
    EXPECT_EQ(read_tune_file(path, kId, log.logger()), sample());
    EXPECT_TRUE(log.messages.empty());
    // Writing again replaces the file and leaves no temporary file behind.
    MatvecTuning fewer = sample();
    fewer.erase(fewer.begin());
    write_tune_file(path, kId, fewer);
    EXPECT_EQ(read_tune_file(path, kId, log.logger()), fewer);
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"cache.bin.tune"});
}

TEST(TuneFile, FailedWriteThrowsIoAndKeepsTheOldFile) {
    TempDir dir;
    // A name so long that the temporary file's (the name plus a suffix) exceeds NAME_MAX: the
    // write fails where it begins, as in a read-only directory, even for root.
    std::string path = dir.path() + "/" + std::string(250, 't');
    std::string old = format_tune_file(kId, {});
    put(path, old);
    try {
        write_tune_file(path, kId, sample());
        FAIL() << "the write succeeded";
    } catch (const vkllm::Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_IO);
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(path), old);
    EXPECT_EQ(dir.entries().size(), 1u);
}

TEST(TuneFile, WriteOverADirectoryThrowsIoAndLeavesNoTemporaryFile) {
    TempDir dir;
    std::string path = dir.path() + "/cache.bin.tune";
    std::filesystem::create_directory(path);
    put(path + "/inside", "x");  // a directory that is not empty cannot be replaced
    try {
        write_tune_file(path, kId, sample());
        FAIL() << "the write succeeded";
    } catch (const vkllm::Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_IO);
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"cache.bin.tune"});
    EXPECT_EQ(slurp(path + "/inside"), "x");
}

TEST(TuneFile, WriteIntoAReadOnlyDirectoryThrowsIoAndKeepsTheOldFile) {
    if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
    TempDir dir;
    std::string path = dir.path() + "/cache.bin.tune";
    write_tune_file(path, kId, {});
    std::string old = slurp(path);
    ASSERT_EQ(::chmod(dir.path().c_str(), 0555), 0);
    try {
        write_tune_file(path, kId, sample());
        FAIL() << "the write succeeded";
    } catch (const vkllm::Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_IO);
    }
    EXPECT_EQ(slurp(path), old);
}

class TuneIdentityTest : public GpuTest {};

TEST_F(TuneIdentityTest, NamesTheDeviceDriverAndVersionOnPrintableLines) {
    TuneIdentity id = vkllm::engine::tune_identity(ctx_->device());
    const vkllm::gpu::DeviceCaps &caps = ctx_->device().caps();
    char ids[16];
    std::snprintf(ids, sizeof ids, "%04x:%04x ", caps.info.vendor_id, caps.info.device_id);
    EXPECT_EQ(id.device.rfind(ids, 0), 0u) << id.device;
    EXPECT_NE(id.device.find(caps.info.name), std::string::npos) << id.device;
    std::string uuid;
    for (uint8_t b : caps.cache_uuid) {
        char h[3];
        std::snprintf(h, sizeof h, "%02x", b);
        uuid += h;
    }
    EXPECT_NE(id.device.find("uuid " + uuid), std::string::npos) << id.device;
    EXPECT_NE(id.driver.find(caps.info.driver_name), std::string::npos) << id.driver;
    char version[16];
    std::snprintf(version, sizeof version, "(0x%08x)", caps.driver_version);
    EXPECT_NE(id.driver.find(version), std::string::npos) << id.driver;
    EXPECT_EQ(id.vkllm, vkllm_version_string());
    for (const std::string *s : {&id.device, &id.driver, &id.vkllm})
        for (char c : *s)
            EXPECT_TRUE(c >= 0x20 && c <= 0x7e) << *s;
    // This device's own file is read back; a file of the identity is not stale to itself.
    std::string why;
    EXPECT_TRUE(parse_tune_file(format_tune_file(id, sample()), id, &why)) << why;
}
