// Chat with a model: go run ./examples/chat MODEL.gguf
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"vkllm.dev/vkllm"
)

func main() {
	rt, err := vkllm.NewRuntime()
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	model, err := vkllm.LoadModel(rt, os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	defer model.Close()
	session, err := vkllm.NewSession(model, 2048)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	// The model's own chat template; each reply prefills only the tokens the cache lacks.
	chat, err := vkllm.NewConversation(session, vkllm.ConversationOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer chat.Close()
	for _, question := range []string{"What is the capital of France?", "And of Italy?"} {
		if err := chat.Add(vkllm.ChatTurn{Role: "user", Content: question}); err != nil {
			log.Fatal(err)
		}
		reply, err := chat.Reply(context.Background(), vkllm.Greedy(), 64, func(p vkllm.ChatPiece) bool {
			switch p.Kind {
			case vkllm.PieceContent:
				fmt.Print(p.Text)
			case vkllm.PieceReasoning:
				fmt.Fprint(os.Stderr, p.Text)
			case vkllm.PieceToolCall:
				fmt.Printf("[call %s %s]\n", p.ToolCall.Name, p.ToolCall.Arguments)
			}
			return true
		})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("  [%d new tokens, %d reused]\n", reply.NPrefilled, reply.NReused)
	}
}
