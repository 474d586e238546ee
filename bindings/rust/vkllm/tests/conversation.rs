//! Conversations on the model named by $VKLLM_TEST_MODEL (the tiny Qwen2: ChatML's control
//! tokens, no template of its own, so the built-in "chatml" is named), and the README's chat
//! example on SmolLM2-135M-Instruct when it is cached.

use std::path::PathBuf;
use std::process::Command;

use vkllm::{
    ChatPiece, ChatTurn, Conversation, ConversationOptions, Grammar, GrammarProgress, Model,
    Runtime, Sampling, Session, Status, StopReason, ToolCall,
};

fn test_model() -> PathBuf {
    let path = std::env::var_os("VKLLM_TEST_MODEL")
        .map(PathBuf::from)
        .expect("VKLLM_TEST_MODEL must name a model file (e.g. tiny-qwen2-f32.gguf)");
    assert!(
        path.is_file(),
        "VKLLM_TEST_MODEL={} does not exist",
        path.display()
    );
    path
}

fn chatml() -> ConversationOptions {
    ConversationOptions {
        template_name: Some("chatml".into()),
        ..ConversationOptions::default()
    }
}

// A Hermes-style ChatML template (Qwen 2.5's shape), short enough for the tiny model's 256
// positions.
const HERMES: &str = concat!(
    "{%- for m in messages %}",
    "{%- if m.role == 'assistant' and m.tool_calls %}{{ '<|im_start|>assistant\\n' }}",
    "{%- for c in m.tool_calls %}{{ '<tool_call>\\n' + ({'name': c.function.name, 'arguments': ",
    "c.function.arguments} | tojson) + '\\n</tool_call>' }}{% endfor %}{{ '<|im_end|>\\n' }}",
    "{%- elif m.role == 'tool' %}{{ '<|im_start|>user\\n<tool_response>\\n' + m.content + ",
    "'\\n</tool_response><|im_end|>\\n' }}",
    "{%- else %}{{ '<|im_start|>' + m.role + '\\n' + (m.content or '') + '<|im_end|>\\n' }}",
    "{%- endif %}{%- endfor %}",
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
);

#[test]
fn a_second_reply_prefills_only_the_new_tokens() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let mut session = Session::new(&model, 256).expect("session");
    let mut chat = Conversation::new(&mut session, &chatml()).expect("conversation");
    chat.add(&ChatTurn::new("user", "Hello there"))
        .expect("add");
    let mut streamed = String::new();
    let first = chat
        .reply(&Sampling::greedy(), 8, |piece| {
            if let ChatPiece::Content(text) = piece {
                streamed.push_str(text);
            }
            true
        })
        .expect("reply");
    assert_eq!((first.n_reused, first.n_prefilled), (0, first.n_prompt));
    let answer = chat.message(1).expect("the reply");
    assert_eq!(answer.role, "assistant");
    assert_eq!(answer.content.as_deref(), Some(streamed.as_str()));
    chat.add(&ChatTurn::new("user", "And again")).expect("add");
    let second = chat.reply(&Sampling::greedy(), 8, |_| true).expect("reply");
    assert!(second.n_reused >= first.n_prompt, "{second:?}");
    assert_eq!(second.n_reused + second.n_prefilled, second.n_prompt);
    assert!(second.n_prefilled < second.n_prompt - first.n_prompt);
    assert_eq!(chat.len(), 4);
}

#[test]
fn a_multi_turn_greedy_reply_is_the_reply_to_the_whole_conversation() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let mut session = Session::new(&model, 256).expect("session");
    // Replies are kept to letters: a String cannot carry back the invalid UTF-8 the tiny model
    // writes otherwise, and the conversation from scratch starts from Strings.
    let letters = Sampling {
        grammar: Some(Grammar::new(&model, "root ::= [a-z ]+", None).expect("grammar")),
        ..Sampling::greedy()
    };
    let mut turns = Conversation::new(&mut session, &chatml()).expect("conversation");
    for question in ["Tell me a story", "Go on", "And then?"] {
        turns.add(&ChatTurn::new("user", question)).expect("add");
        turns.reply(&letters, 12, |_| true).expect("reply");
    }
    let mut history = turns.messages();
    let last = history.pop().expect("the last reply");
    assert!(!last.content.clone().unwrap_or_default().is_empty());
    let mut fresh = Session::new(&model, 256).expect("session");
    let mut whole = Conversation::new(&mut fresh, &chatml()).expect("conversation");
    for turn in &history {
        whole.add(turn).expect("add");
    }
    let scratch = whole.reply(&letters, 12, |_| true).expect("reply");
    assert_eq!(scratch.n_reused, 0);
    assert_eq!(whole.message(history.len()), Some(last));
}

#[test]
fn a_reply_cut_before_its_json_is_done_is_reported_incomplete() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let mut session = Session::new(&model, 256).expect("session");
    let schema = r#"{"type": "object", "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"], "additionalProperties": false}"#;
    let json = Sampling {
        grammar: Some(Grammar::from_json_schema(&model, schema).expect("grammar")),
        ..Sampling::greedy()
    };
    let mut chat = Conversation::new(&mut session, &chatml()).expect("conversation");
    chat.add(&ChatTurn::new("user", "Is it ok?")).expect("add");
    let cut = chat.reply(&json, 3, |_| true).expect("reply");
    assert_eq!(cut.stop_reason, StopReason::MaxTokens);
    assert_eq!(cut.grammar_progress, GrammarProgress::Incomplete, "{cut:?}");
    chat.truncate(1).expect("truncate");
    let whole = chat.reply(&json, 0, |_| true).expect("reply");
    let text = chat.message(1).and_then(|m| m.content).unwrap_or_default();
    assert!(
        matches!(
            whole.grammar_progress,
            GrammarProgress::Complete | GrammarProgress::Finished
        ),
        "{whole:?} {text:?}"
    );
    assert!(
        text.contains("\"ok\"") && text.trim_end().ends_with('}'),
        "{text:?}"
    );
    chat.truncate(1).expect("truncate");
    let free = chat.reply(&Sampling::greedy(), 3, |_| true).expect("reply");
    assert_eq!(free.grammar_progress, GrammarProgress::Complete);
}

#[test]
fn tool_calls_come_out_parsed_and_stopping_keeps_the_reply_so_far() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let mut session = Session::new(&model, 256).expect("session");
    let options = ConversationOptions {
        template: Some(HERMES.into()),
        ..ConversationOptions::default()
    };
    let mut chat = Conversation::new(&mut session, &options).expect("conversation");
    chat.add_json(r#"[{"role": "user", "content": "Paris?"}]"#)
        .expect("add_json");
    let call_text = r#"root ::= "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>""#;
    let sampling = Sampling {
        grammar: Some(Grammar::new(&model, call_text, None).expect("grammar")),
        ..Sampling::greedy()
    };
    let mut calls = Vec::new();
    let reply = chat
        .reply(&sampling, 0, |piece| {
            if let ChatPiece::ToolCall(call) = piece {
                calls.push(call.clone());
            }
            true
        })
        .expect("reply");
    assert_eq!(reply.n_tool_calls, 1);
    let want = ToolCall {
        id: "call00001".into(),
        name: "get_weather".into(),
        arguments: r#"{"city": "Paris"}"#.into(),
    };
    assert_eq!(calls, vec![want.clone()]);
    let turn = chat.message(1).expect("the reply");
    assert_eq!((turn.content, turn.tool_calls), (None, vec![want]));
    chat.add(&ChatTurn {
        role: "tool".into(),
        content: Some("18 C".into()),
        tool_call_id: Some("call00001".into()),
        name: Some("get_weather".into()),
        ..ChatTurn::default()
    })
    .expect("add");
    // The closure stops the reply after its first piece: it is kept as it was.
    let mut pieces = 0;
    let stopped = chat
        .reply(&Sampling::greedy(), 16, |_| {
            pieces += 1;
            false
        })
        .expect("reply");
    assert_eq!(stopped.stop_reason, StopReason::Cancelled);
    assert_eq!(pieces, 1);
    assert!(stopped.n_reused >= reply.n_prompt);
    assert_eq!(chat.len(), 4);
    chat.truncate(3).expect("truncate");
    assert_eq!(chat.len(), 3);
    assert_eq!(chat.message(3), None);
}

#[test]
fn bad_input_is_an_error_that_changes_nothing() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let mut session = Session::new(&model, 64).expect("session");
    let err = Conversation::new(&mut session, &ConversationOptions::default())
        .err()
        .expect("the tiny model has no template");
    assert_eq!(err.status, Status::NotFound);
    let mut chat = Conversation::new(&mut session, &chatml()).expect("conversation");
    let err = chat
        .add_json(r#"[{"role": "user"}, {"content": "x"}]"#)
        .unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(chat.is_empty());
    chat.add(&ChatTurn::new("user", &"a".repeat(200)))
        .expect("add");
    let err = chat.reply(&Sampling::greedy(), 4, |_| true).unwrap_err();
    assert_eq!(err.status, Status::ContextFull);
    assert_eq!(chat.len(), 1);
}

#[test]
fn the_readme_example_runs() {
    let cache = std::env::var_os("VKLLM_MODEL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
                })
                .join("vkllm/models")
        });
    let smollm2 = cache.join("SmolLM2-135M-Instruct.Q4_1.gguf");
    if !smollm2.is_file() {
        eprintln!("skipped: SmolLM2-135M-Instruct is not cached (scripts/fetch-models)");
        return;
    }
    // `cargo test` builds the examples beside the test binaries' directory.
    let exe = std::env::current_exe().expect("test binary");
    let example = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target dir")
        .join("examples/chat");
    let out = Command::new(&example)
        .arg(&smollm2)
        .output()
        .expect("run examples/chat");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Paris"), "{stdout}");
    assert!(
        stdout.contains("reused]") && !stdout.contains(" 0 reused]\n  ["),
        "{stdout}"
    );
}
