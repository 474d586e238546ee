// vkllm serve's help, shared by vkllm-serve and by `vkllm serve --help`, which prints it
// without the server beside it.
#pragma once

namespace serve {

extern const char kServeUsage[];

}  // namespace serve
