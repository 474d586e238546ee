// Stop strings over a stream of text: the text that cannot be part of a stop string is handed
// out at once, the tail that could begin one is held until the stream shows which it is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace serve {

class StopStrings {
  public:
    explicit StopStrings(std::vector<std::string> stops);

    struct Result {
        std::string text;      // safe to hand out
        bool stopped = false;  // a stop string was found: text ends where it began
    };
    // Appends text to the stream. After a stop, further pushes are ignored.
    Result push(std::string_view text);
    // The stream ended without a stop: the held tail is plain text after all.
    std::string flush();

  private:
    std::vector<std::string> stops_;
    std::string held_;
    bool stopped_ = false;
};

}  // namespace serve
