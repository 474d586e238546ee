// A program in its own module that imports the vkllm package: it prints the version of the
// libvkllm it loaded.
package main

import (
	"fmt"

	"vkllm.dev/vkllm"
)

func main() {
	v := vkllm.Version()
	fmt.Printf("vkllm %d.%d.%d\n", v/10000, v/100%100, v%100)
}
