package vkllm_test

import (
	"context"
	"fmt"
	"log"

	"vkllm.dev/vkllm"
)

// The README example; compiled by go test (not run: it has no Output comment).
func Example() {
	rt, err := vkllm.NewRuntime()
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	model, err := vkllm.LoadModel(rt, "model.gguf")
	if err != nil {
		log.Fatal(err) // errors.Is(err, vkllm.ErrIO) for a missing file
	}
	defer model.Close()
	prompt, _ := model.Tokenize("Once upon a time")
	session, _ := vkllm.NewSession(model, 512)
	defer session.Close()
	onToken := func(t vkllm.Token) bool { fmt.Print(t.Text); return true }
	if _, err := session.Generate(context.Background(), prompt, vkllm.Greedy(), 32, onToken); err != nil {
		log.Fatal(err) // errors.Is(err, context.Canceled) when the context was cancelled
	}
}
