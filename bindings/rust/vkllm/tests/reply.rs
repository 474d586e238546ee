//! The reply parser splits a streamed reply into reasoning, answer and tool calls.

use vkllm::{prompt_opens_reasoning, ReplyFormat, ReplyParser, ReplyPart, ToolCall};

fn parse(parser: &mut ReplyParser, reply: &[u8], piece: usize) -> ReplyPart {
    let mut all = ReplyPart::default();
    let mut add = |p: ReplyPart| {
        all.reasoning += &p.reasoning;
        all.content += &p.content;
        all.tool_calls.extend(p.tool_calls);
    };
    for chunk in reply.chunks(piece) {
        add(parser.push(chunk).expect("push"));
    }
    add(parser.finish().expect("finish"));
    all
}

#[test]
fn reasoning_answer_and_tool_calls_come_apart_whole_and_byte_by_byte() {
    let reply = "<think>\nWeather for Zürich.\n</think>\n\nOne moment. <tool_call>\n\
                 {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}\n</tool_call>";
    assert_eq!(
        ReplyFormat::of_template("{{ '<tool_call>' }}"),
        ReplyFormat::Hermes
    );
    assert!(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n"));
    let mut parser = ReplyParser::new(ReplyFormat::Hermes, false).expect("parser");
    for piece in [reply.len(), 1, 3] {
        let part = parse(&mut parser, reply.as_bytes(), piece);
        assert_eq!(part.reasoning, "Weather for Zürich.");
        assert_eq!(part.content, "One moment.");
        assert_eq!(
            part.tool_calls,
            vec![ToolCall {
                id: String::new(),
                name: "get_weather".into(),
                arguments: "{\"city\": \"Zürich\"}".into(),
            }]
        );
    }
}

#[test]
fn harmony_replies_split_by_channel() {
    let reply = "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant\
                 <|channel|>final<|message|>Bonjour !<|return|>";
    let mut parser = ReplyParser::new(ReplyFormat::Harmony, false).expect("parser");
    let part = parse(&mut parser, reply.as_bytes(), 2);
    assert_eq!(part.reasoning, "Easy.");
    assert_eq!(part.content, "Bonjour !");
    assert!(part.tool_calls.is_empty());
}

const CALL_TEMPLATE: &str =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.tool_calls %}\
{% for c in m.tool_calls %}<tool_call>\n{{ {'name': c.function.name, \
'arguments': c.function.arguments} | tojson }}\n</tool_call>{% endfor %}\
{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}\
{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

#[test]
fn a_templates_refusal_carries_its_message() {
    let options = vkllm::ChatOptions {
        template: Some("{{ raise_exception('roles must alternate') }}".into()),
        ..Default::default()
    };
    let err = vkllm::chat_render(&options, &[vkllm::ChatTurn::new("user", "x")]).unwrap_err();
    assert_eq!(err.status, vkllm::Status::InvalidArgument);
    assert!(
        err.message.contains("roles must alternate"),
        "{}",
        err.message
    );
    let chatml = vkllm::ChatOptions {
        template_name: Some("chatml".into()),
        ..Default::default()
    };
    assert_eq!(
        vkllm::chat_render(&chatml, &[vkllm::ChatTurn::new("user", "Hi")]).unwrap(),
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
}

#[test]
fn a_tool_call_round_trips_through_template_model_and_parser() {
    let path = std::env::var_os("VKLLM_TEST_MODEL").expect("VKLLM_TEST_MODEL");
    let runtime = vkllm::Runtime::new().expect("runtime");
    let model = vkllm::Model::load(&runtime, path).expect("model");
    let turns = [
        vkllm::ChatTurn::new("user", "Weather in Zürich?"),
        vkllm::ChatTurn {
            role: "assistant".into(),
            tool_calls: vec![ToolCall {
                id: "abc123XYZ".into(),
                name: "get_weather".into(),
                arguments: "{\"city\": \"Zürich\"}".into(),
            }],
            ..Default::default()
        },
    ];
    let options = vkllm::ChatOptions {
        model: Some(&model),
        template: Some(CALL_TEMPLATE.into()),
        add_generation_prompt: false,
        ..Default::default()
    };
    let prompt = vkllm::chat_render(&options, &turns).expect("render");
    assert!(!model.tokenize(&prompt).expect("tokenize").is_empty());
    let reply = prompt.split("<|im_start|>assistant\n").nth(1).unwrap();
    let reply = reply.split("<|im_end|>").next().unwrap();
    let mut parser = ReplyParser::new(ReplyFormat::of_template(CALL_TEMPLATE), false).unwrap();
    let part = parse(&mut parser, reply.as_bytes(), 4);
    assert_eq!(part.tool_calls.len(), 1);
    assert_eq!(part.tool_calls[0].name, "get_weather");
    assert_eq!(part.tool_calls[0].arguments, "{\"city\": \"Zürich\"}");
}
