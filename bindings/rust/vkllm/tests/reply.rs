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
