// The official JSON-Schema-Test-Suite (draft 2020-12) against the JSON Schema converter: for every
// schema of the suite's required files (and of optional/format's date, time, date-time, uuid and
// email) that the converter accepts, no instance the suite marks invalid may be a sentence of the
// grammar. That is the converter's promise (docs/JSON_SCHEMA.md): everything the grammar lets a
// model write is valid under the schema. The converter may refuse a schema, and its grammar may
// leave out valid instances (keys in schema order, bounded digits): both are counted and printed,
// not failed, so that docs/JSON_SCHEMA.md can report them.
//
// The suite comes from the jsonschema sdist that scripts/deps.sh's vkllm_install_pydeps fetches
// (pinned by its sha256) into build/pydeps/json-schema-test-suite; without it (no network at
// setup) the test is skipped with a message saying how to get it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "chat/json_value.h"
#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_state.h"
#include "grammar/json_schema.h"

namespace vkllm::grammar {
namespace {

using chat::Value;

const std::filesystem::path kSuite = VKLLM_JSON_SCHEMA_SUITE_DIR;

std::string read_file(const std::filesystem::path &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The suite's files this test runs: every required file (the optional directory aside) and the
// formats the converter writes.
std::vector<std::filesystem::path> suite_files() {
    std::vector<std::filesystem::path> files;
    for (const auto &entry : std::filesystem::directory_iterator(kSuite))
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const char *format : {"date", "time", "date-time", "uuid", "email"})
        files.push_back(kSuite / "optional" / "format" / (std::string(format) + ".json"));
    return files;
}

// Compact JSON, as the grammar's whitespace rules allow (`space` may be empty), with the
// instance's own key order and Python's number text (the suite's numbers all round-trip).
std::string compact(const Value &v) {
    chat::JsonOptions o;
    o.item_separator = ",";
    o.key_separator = ":";
    return chat::to_json(v, o);
}

// What a refusal is counted under: the keyword an UNSUPPORTED message names, else the status.
std::string refusal_key(const Error &e) {
    std::string message = e.what();
    const std::string marker = "keyword '";
    size_t at = message.find(marker);
    if (e.status() == VKLLM_ERR_UNSUPPORTED && at != std::string::npos) {
        size_t end = message.find('\'', at + marker.size());
        return message.substr(at + marker.size(), end - at - marker.size());
    }
    return e.status() == VKLLM_ERR_INVALID_ARGUMENT ? "(invalid argument)" : "(other status)";
}

bool sentence(const std::shared_ptr<const Grammar> &g, const std::string &text) {
    GrammarState state(g);
    return state.accept_bytes(text) && state.is_complete();
}

TEST(JsonSchemaSuite, NoInvalidInstanceIsASentenceOfAnAcceptedSchemasGrammar) {
    if (!std::filesystem::is_directory(kSuite))
        GTEST_SKIP() << "the JSON-Schema-Test-Suite is not at " << kSuite.string()
                     << "; run `. scripts/deps.sh; vkllm_install_pydeps` from the checkout "
                        "(it downloads the pinned jsonschema sdist that ships the suite)";
    size_t groups = 0, accepted = 0, valid = 0, valid_rejected = 0, invalid = 0;
    std::map<std::string, size_t> refused;
    std::vector<std::string> rejected_lines, refused_lines;
    for (const std::filesystem::path &file : suite_files()) {
        ASSERT_TRUE(std::filesystem::exists(file)) << file;
        Value cases = chat::parse_json(read_file(file));
        std::string name = std::filesystem::relative(file, kSuite).string();
        for (const Value &group : cases.list()) {
            ++groups;
            std::string schema = compact(*group.dict().find(std::string("schema")));
            std::string description = group.dict().find(std::string("description"))->str();
            std::shared_ptr<const Grammar> g;
            try {
                g = std::make_shared<const Grammar>(parse_gbnf(json_schema_to_gbnf(schema)));
            } catch (const Error &e) {
                EXPECT_NE(e.status(), VKLLM_ERR_INTERNAL) << name << ": " << e.what();
                ++refused[refusal_key(e)];
                refused_lines.push_back(name + " | " + description + " | " + e.what());
                continue;
            }
            ++accepted;
            for (const Value &test : group.dict().find(std::string("tests"))->list()) {
                std::string text = compact(*test.dict().find(std::string("data")));
                bool is_valid = test.dict().find(std::string("valid"))->as_bool();
                bool taken = sentence(g, text);
                if (is_valid) {
                    ++valid;
                    if (!taken) {
                        ++valid_rejected;
                        rejected_lines.push_back(name + " | " + description + " | " + schema +
                                                 " | " + text);
                    }
                } else {
                    ++invalid;
                    EXPECT_FALSE(taken) << "the grammar of " << schema << " (" << name << ": "
                                        << description << ") accepts the invalid instance " << text;
                }
            }
        }
    }
    std::vector<std::pair<size_t, std::string>> by_count;
    size_t refused_total = 0;
    for (const auto &[keyword, n] : refused) {
        by_count.emplace_back(n, keyword);
        refused_total += n;
    }
    std::sort(by_count.begin(), by_count.end(), [](const auto &a, const auto &b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::printf("JSON-Schema-Test-Suite draft 2020-12: %zu groups, %zu accepted, %zu refused\n",
                groups, accepted, refused_total);
    std::printf("refused by keyword:");
    for (const auto &[n, keyword] : by_count)
        std::printf(" %s %zu,", keyword.c_str(), n);
    std::printf(
        "\ninstances of accepted schemas: %zu invalid (all must be rejected), %zu valid, "
        "%zu of them rejected by the grammar\n",
        invalid, valid, valid_rejected);
    for (const std::string &line : refused_lines)
        std::printf("refused: %s\n", line.c_str());
    for (const std::string &line : rejected_lines)
        std::printf("valid but rejected: %s\n", line.c_str());
}

}  // namespace
}  // namespace vkllm::grammar
