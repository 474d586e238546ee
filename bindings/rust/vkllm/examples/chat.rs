//! Chat with a model: cargo run --example chat -- MODEL.gguf
use std::io::Write;

use vkllm::{
    ChatPiece, ChatTurn, Conversation, ConversationOptions, Model, Runtime, Sampling, Session,
};

fn main() -> Result<(), vkllm::Error> {
    let path = std::env::args().nth(1).expect("usage: chat MODEL.gguf");
    let runtime = Runtime::new()?;
    let model = Model::load(&runtime, path)?;
    let mut session = Session::new(&model, 2048)?;
    // The model's own chat template; each reply prefills only the tokens the cache lacks.
    let mut chat = Conversation::new(&mut session, &ConversationOptions::default())?;
    for question in ["What is the capital of France?", "And of Italy?"] {
        chat.add(&ChatTurn::new("user", question))?;
        let reply = chat.reply(&Sampling::greedy(), 64, |piece| {
            match piece {
                ChatPiece::Content(text) => print!("{text}"),
                ChatPiece::Reasoning(text) => eprint!("{text}"),
                ChatPiece::ToolCall(call) => println!("[call {} {}]", call.name, call.arguments),
            }
            std::io::stdout().flush().is_ok()
        })?;
        println!(
            "  [{} new tokens, {} reused]",
            reply.n_prefilled, reply.n_reused
        );
    }
    Ok(())
}
