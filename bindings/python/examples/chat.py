"""Chat with a model: python3 chat.py MODEL.gguf"""
import sys

import vkllm

with vkllm.Runtime() as rt, vkllm.Model(rt, sys.argv[1]) as model, \
        vkllm.Session(model, n_ctx=2048) as session:
    # One call in OpenAI's shape (stream=True yields "chat.completion.chunk" dicts).
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    answer = session.create_chat_completion(messages, max_tokens=64, temperature=0)
    print(answer["choices"][0]["message"]["content"])

    # A conversation: each reply prefills only the tokens the cache does not hold yet.
    with vkllm.Conversation(session) as chat:
        for question in ["What is the capital of Italy?", "And of Spain?"]:
            chat.add("user", question)
            for piece in chat.reply(max_tokens=64, temperature=0, stream=True):
                print(piece.text, end="", flush=True)
            result = chat.last_result
            print(f"  [{result.n_prefilled} new tokens, {result.n_reused} reused]")
