module vkllm.dev/vkllm

go 1.21
