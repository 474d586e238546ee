//! Grammars and JSON Schemas constraining sampling (issue 27), on the model named by
//! $VKLLM_TEST_MODEL (required) and, for output a real model writes, SmolLM2-135M-Instruct
//! when scripts/fetch-models has cached it (skipped, saying so, when not).

use std::path::PathBuf;

use vkllm::{
    json_schema_to_gbnf, Grammar, GrammarProgress, Model, Runtime, Sampler, Sampling, Session,
    Status, StopReason,
};
use vkllm_sys::VKLLM_TOKENIZE_PARSE_SPECIAL;

const PERSON_SCHEMA: &str = r#"{"type": "object",
  "properties": {"name": {"type": "string", "maxLength": 20},
                 "age": {"type": "integer", "minimum": 0, "maximum": 150}},
  "required": ["name", "age"]}"#;

/// Nine places for whitespace of at most 21 characters each (the converter's `space`) and
/// every value bounded: at most 214 characters, so that even the tiny model's random
/// continuation ends within its 256 positions (a prompt and 240 tokens of at least a character).
const BOUNDED_SCHEMA: &str = r#"{"type": "object",
  "properties": {"ok": {"type": "boolean"}, "tag": {"enum": ["red", "green"]}},
  "required": ["ok", "tag"]}"#;

const UNSUPPORTED_SCHEMA: &str =
    r#"{"type": "array", "items": {"type": "integer"}, "uniqueItems": true}"#;

fn load() -> (Runtime, Model) {
    let path = std::env::var_os("VKLLM_TEST_MODEL")
        .map(PathBuf::from)
        .expect("VKLLM_TEST_MODEL must name a model file (e.g. tiny-qwen2-f32.gguf)");
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, path).expect("model");
    (runtime, model)
}

/// tests/model_cache.h's rule: $VKLLM_MODEL_CACHE, else $XDG_CACHE_HOME/vkllm/models, else
/// ~/.cache/vkllm/models.
fn cached_model(name: &str) -> Option<PathBuf> {
    let non_empty = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty());
    let dir = non_empty("VKLLM_MODEL_CACHE")
        .map(PathBuf::from)
        .or_else(|| non_empty("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("vkllm/models")))
        .unwrap_or_else(|| {
            PathBuf::from(non_empty("HOME").unwrap_or_default()).join(".cache/vkllm/models")
        });
    Some(dir.join(name)).filter(|p| p.is_file())
}

fn with_grammar(grammar: &Grammar, sampling: Sampling) -> Sampling {
    Sampling {
        grammar: Some(grammar.clone()),
        ..sampling
    }
}

#[test]
fn json_schema_to_gbnf_writes_a_root_rule_that_compiles() {
    let (_rt, model) = load();
    let gbnf = json_schema_to_gbnf(PERSON_SCHEMA).unwrap();
    assert!(gbnf.contains("root ::="), "{gbnf}");
    Grammar::new(&model, &gbnf, None).unwrap();
    Grammar::new(&model.tokenizer(), &gbnf, Some("root")).unwrap();
}

#[test]
fn bad_grammars_and_unsupported_schema_keywords_are_errors_that_say_where_and_what() {
    let (_rt, model) = load();
    let err = Grammar::new(&model, r#"root = "yes""#, None).unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(err.message.contains("line 1, column"), "{}", err.message);
    let err = Grammar::new(&model, r#"root ::= "yes""#, Some("start")).unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);

    let err = Grammar::from_json_schema(&model, UNSUPPORTED_SCHEMA).unwrap_err();
    assert_eq!(err.status, Status::Unsupported);
    assert!(err.message.contains("uniqueItems"), "{}", err.message);
    let err = json_schema_to_gbnf(UNSUPPORTED_SCHEMA).unwrap_err();
    assert!(err.message.contains("uniqueItems"), "{}", err.message);
}

#[test]
fn apply_grammar_leaves_finite_only_the_tokens_spelling_a_prefix_of_the_text() {
    let (_rt, model) = load();
    let n_vocab = model.n_vocab().unwrap();
    let grammar = Grammar::new(&model, r#"root ::= "a""#, None).unwrap();
    let mut sampler =
        Sampler::new(Some(&model), &with_grammar(&grammar, Sampling::greedy())).unwrap();
    // The sampler holds its own reference: the handle may go.
    drop(grammar);
    let mut row = vec![0.5f32; n_vocab];
    sampler.apply_grammar(&mut row).unwrap();
    let finite: Vec<i32> = (0..n_vocab as i32)
        .filter(|&i| row[i as usize].is_finite())
        .collect();
    assert!(finite.iter().all(|&i| row[i as usize] == 0.5));
    let tok = model.tokenizer();
    let n_tok = tok.info().unwrap().n_vocab as i32;
    let want: Vec<i32> = (0..n_tok)
        .filter(|&i| tok.token_to_piece(i, 0).unwrap() == b"a")
        .collect();
    assert!(!want.is_empty());
    assert_eq!(finite, want);

    // Without a grammar: nothing changes, and the progress is Complete.
    let mut plain = Sampler::new(Some(&model), &Sampling::greedy()).unwrap();
    let mut row = vec![1.0f32; n_vocab];
    plain.apply_grammar(&mut row).unwrap();
    assert!(row.iter().all(|&x| x == 1.0));
    assert_eq!(plain.grammar_progress().unwrap(), GrammarProgress::Complete);
}

#[test]
fn progress_goes_from_incomplete_to_finished_over_the_tokens_of_the_text() {
    let (_rt, model) = load();
    let ids = model.tokenize_with("yes", 0).unwrap();
    let grammar = Grammar::new(&model, r#"root ::= "yes""#, None).unwrap();
    let mut s = Sampler::new(Some(&model), &with_grammar(&grammar, Sampling::greedy())).unwrap();
    assert_eq!(s.grammar_progress().unwrap(), GrammarProgress::Incomplete);
    s.accept_prompt(&model.tokenize("Hello world").unwrap())
        .unwrap();
    assert_eq!(s.grammar_progress().unwrap(), GrammarProgress::Incomplete);
    for &t in &ids {
        assert_eq!(s.grammar_progress().unwrap(), GrammarProgress::Incomplete);
        s.accept(t).unwrap();
    }
    assert_eq!(s.grammar_progress().unwrap(), GrammarProgress::Finished);
    s.reset().unwrap();
    assert_eq!(s.grammar_progress().unwrap(), GrammarProgress::Incomplete);
    // A token the grammar does not allow is refused and changes nothing.
    let no = model.tokenize_with("no", 0).unwrap()[0];
    assert_eq!(s.accept(no).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(s.grammar_progress().unwrap(), GrammarProgress::Incomplete);
}

#[test]
fn a_choice_grammar_generates_one_of_its_labels() {
    let (_rt, model) = load();
    let labels = ["positive", "negative", "neutral"];
    let gbnf = format!(
        "root ::= {}",
        labels
            .iter()
            .map(|l| format!("\"{l}\""))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let grammar = Grammar::new(&model, &gbnf, None).unwrap();
    let prompt = model.tokenize("Hello world").unwrap();
    let mut session = Session::new(&model, 128).unwrap();
    for seed in 1..=3 {
        session.reset().unwrap();
        let sampling = with_grammar(
            &grammar,
            Sampling {
                temperature: 1.0,
                seed,
                ..Sampling::default()
            },
        );
        let mut text = String::new();
        let g = session
            .generate(&prompt, &sampling, 16, |piece| {
                text.push_str(piece);
                true
            })
            .unwrap();
        assert!(labels.contains(&text.as_str()), "{text:?}");
        assert_eq!(g.stop_reason, StopReason::EndOfGeneration);
    }
}

#[test]
fn a_bounded_json_schema_gives_an_object_with_the_required_keys() {
    let (_rt, model) = load();
    let grammar = Grammar::from_json_schema(&model, BOUNDED_SCHEMA).unwrap();
    let prompt = model.tokenize("Hello world").unwrap();
    let mut session = Session::new(&model, 256).unwrap();
    let sampling = with_grammar(
        &grammar,
        Sampling {
            seed: 7,
            ..Sampling::default()
        },
    );
    let mut text = String::new();
    let g = session
        .generate(&prompt, &sampling, 240, |piece| {
            text.push_str(piece);
            true
        })
        .unwrap();
    assert_eq!(g.stop_reason, StopReason::EndOfGeneration, "{text:?}");
    let body = text.trim();
    assert!(body.starts_with('{') && body.ends_with('}'), "{text:?}");
    for key in ["\"ok\"", "\"tag\""] {
        assert!(body.contains(key), "{key} in {text:?}");
    }
    assert!(
        body.contains("\"red\"") || body.contains("\"green\""),
        "{text:?}"
    );
}

#[test]
fn a_generation_says_whether_its_text_finished_the_grammar() {
    let (rt, model) = load();
    let grammar = Grammar::from_json_schema(&model, BOUNDED_SCHEMA).unwrap();
    let prompt = model.tokenize("Hello world").unwrap();
    let mut session = Session::new(&model, 256).unwrap();
    let sampling = with_grammar(
        &grammar,
        Sampling {
            seed: 7,
            ..Sampling::default()
        },
    );
    let mut cut = String::new();
    let g = session
        .generate(&prompt, &sampling, 3, |piece| {
            cut.push_str(piece);
            true
        })
        .unwrap();
    assert_eq!(g.stop_reason, StopReason::MaxTokens, "{cut:?}");
    assert_eq!(g.grammar_progress, GrammarProgress::Incomplete, "{cut:?}");
    session.reset().unwrap();
    let mut whole = String::new();
    let g = session
        .generate(&prompt, &sampling, 240, |piece| {
            whole.push_str(piece);
            true
        })
        .unwrap();
    assert_eq!(g.stop_reason, StopReason::EndOfGeneration, "{whole:?}");
    assert_eq!(g.grammar_progress, GrammarProgress::Finished, "{whole:?}");
    assert!(whole.starts_with(&cut), "{cut:?} {whole:?}");
    session.reset().unwrap();
    let g = session
        .generate(&prompt, &Sampling::greedy(), 3, |_| true)
        .unwrap();
    assert_eq!(g.grammar_progress, GrammarProgress::Complete);
    // The pipelines these generations needed were compiled, and the runtime timed it.
    assert!(rt.stats().unwrap().pipeline_compile_ms > 0.0);
}

#[test]
fn smollm2_under_a_json_schema_writes_the_object_its_own_sampling_loop_does() {
    let Some(path) = cached_model("SmolLM2-135M-Instruct.Q4_1.gguf") else {
        eprintln!("skipped: SmolLM2-135M-Instruct is not cached (run scripts/fetch-models)");
        return;
    };
    let runtime = Runtime::new().unwrap();
    let model = Model::load(&runtime, path).unwrap();
    let prompt = model
        .tokenize_with(
            "<|im_start|>user\nDescribe a person as JSON: name and age.<|im_end|>\n\
             <|im_start|>assistant\n",
            VKLLM_TOKENIZE_PARSE_SPECIAL,
        )
        .unwrap();
    let grammar = Grammar::from_json_schema(&model, PERSON_SCHEMA).unwrap();
    let sampling = with_grammar(&grammar, Sampling::greedy());
    let mut session = Session::new(&model, 512).unwrap();
    let mut text = String::new();
    let g = session
        .generate(&prompt, &sampling, 96, |piece| {
            text.push_str(piece);
            true
        })
        .unwrap();
    assert_eq!(g.stop_reason, StopReason::EndOfGeneration, "{text:?}");
    let body = text.trim();
    assert!(body.starts_with('{') && body.ends_with('}'), "{text:?}");
    assert!(
        body.contains("\"name\"") && body.contains("\"age\""),
        "{text:?}"
    );

    // The app's own loop with a Sampler: the same tokens.
    session.reset().unwrap();
    let mut s = Sampler::new(Some(&model), &sampling).unwrap();
    s.accept_prompt(&prompt).unwrap();
    let mut logits = session.eval(&prompt).unwrap();
    let mut out = Vec::new();
    while s.grammar_progress().unwrap() != GrammarProgress::Finished && out.len() < 96 {
        let t = s.sample(&logits).unwrap();
        if model.is_end_of_generation(t).unwrap() {
            break;
        }
        s.accept(t).unwrap();
        out.push(t);
        logits = session.eval(&[t]).unwrap();
    }
    assert_eq!(model.detokenize(&out).unwrap(), text);
}
