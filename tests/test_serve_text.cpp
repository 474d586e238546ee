// vkllm-serve's small text jobs: the Bearer check of the API key (tools/serve/auth.h) and the
// Prometheus text of /metrics (tools/serve/metrics_text.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "auth.h"
#include "metrics_text.h"

TEST(ServeAuth, OnlyTheExactKeyUnderBearerIsAccepted) {
    const std::string key = "sk-local-123";
    EXPECT_TRUE(serve::bearer_matches("Bearer sk-local-123", key));
    EXPECT_TRUE(serve::bearer_matches("bearer sk-local-123", key));  // the scheme has no case
    EXPECT_TRUE(serve::bearer_matches("Bearer sk-local-123 ", key));
    EXPECT_FALSE(serve::bearer_matches("Bearer sk-local-12", key));    // a prefix
    EXPECT_FALSE(serve::bearer_matches("Bearer sk-local-1234", key));  // longer
    EXPECT_FALSE(serve::bearer_matches("Bearer sk-local-124", key));   // last byte differs
    EXPECT_FALSE(serve::bearer_matches("Basic sk-local-123", key));
    EXPECT_FALSE(serve::bearer_matches("sk-local-123", key));
    EXPECT_FALSE(serve::bearer_matches("", key));
    EXPECT_FALSE(serve::bearer_matches("Bearer ", key));
}

TEST(ServeAuth, AKeyFileGivesItsFirstLineTrimmed) {
    const std::string path = testing::TempDir() + "serve_key.txt";
    std::FILE *f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("  secret-key \nsecond line\n", f);
    std::fclose(f);
    std::string key, error;
    ASSERT_TRUE(serve::read_key_file(path, &key, &error)) << error;
    EXPECT_EQ(key, "secret-key");
    f = std::fopen(path.c_str(), "w");
    std::fputs("\n", f);
    std::fclose(f);
    EXPECT_FALSE(serve::read_key_file(path, &key, &error));
    EXPECT_NE(error.find("no key"), std::string::npos) << error;
    EXPECT_FALSE(serve::read_key_file(path + ".absent", &key, &error));
    std::remove(path.c_str());
}

TEST(ServeMetrics, HistogramBucketsAreCumulativeAndCountersByRouteAndStatus) {
    serve::EngineStats s;
    s.generated_tokens = 42;
    s.queue_length = 3;
    s.time_to_first_token.bounds = {0.1, 0.5, 1.0};
    s.time_to_first_token.counts = {2, 0, 5, 1};  // the last: above 1.0
    s.time_to_first_token.count = 8;
    s.time_to_first_token.sum = 6.25;
    serve::HttpCounters http;
    http.count("/v1/chat/completions", 200);
    http.count("/v1/chat/completions", 200);
    http.count("/v1/chat/completions", 400);
    const std::string text = serve::metrics_text(s, http);
    auto has = [&](const std::string &line) {
        return text.find("\n" + line + "\n") != std::string::npos;
    };
    EXPECT_TRUE(has("vkllm_http_requests_total{route=\"/v1/chat/completions\",status=\"200\"} 2"))
        << text;
    EXPECT_TRUE(has("vkllm_http_requests_total{route=\"/v1/chat/completions\",status=\"400\"} 1"));
    EXPECT_TRUE(has("vkllm_generated_tokens_total 42"));
    EXPECT_TRUE(has("vkllm_queue_length 3"));
    EXPECT_TRUE(has("# TYPE vkllm_time_to_first_token_seconds histogram"));
    EXPECT_TRUE(has("vkllm_time_to_first_token_seconds_bucket{le=\"0.1\"} 2"));
    EXPECT_TRUE(has("vkllm_time_to_first_token_seconds_bucket{le=\"0.5\"} 2"));
    EXPECT_TRUE(has("vkllm_time_to_first_token_seconds_bucket{le=\"1\"} 7"));
    EXPECT_TRUE(has("vkllm_time_to_first_token_seconds_bucket{le=\"+Inf\"} 8"));
    EXPECT_TRUE(has("vkllm_time_to_first_token_seconds_sum 6.25"));
    EXPECT_TRUE(has("vkllm_time_to_first_token_seconds_count 8"));
    // An empty histogram (no request yet) is still a well-formed family.
    EXPECT_TRUE(has("vkllm_time_per_output_token_seconds_bucket{le=\"+Inf\"} 0"));
}
