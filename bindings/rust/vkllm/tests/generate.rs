//! Generates real text with the model named by $VKLLM_TEST_MODEL (required: these tests fail,
//! not skip, when it is unset or missing).

use std::path::PathBuf;

use vkllm::{GenerateOptions, Model, Runtime, Sampling, Session, Status, StopReason};

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

#[test]
fn closure_and_iterator_generate_the_same_text() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let prompt = model.tokenize("Once upon a time").expect("tokenize");
    assert!(!prompt.is_empty());

    let mut session = Session::new(&model, 128).expect("session");
    let mut streamed = String::new();
    let mut pieces = 0;
    let generation = session
        .generate(&prompt, &Sampling::greedy(), 8, |piece| {
            streamed.push_str(piece);
            pieces += 1;
            true
        })
        .expect("generate");
    assert_eq!(generation.n_prompt, prompt.len());
    assert!(generation.n_generated > 0);
    assert!(pieces > 0);

    session.reset().expect("reset");
    let tokens: Vec<i32> = session
        .tokens(&prompt, 8)
        .collect::<vkllm::Result<_>>()
        .expect("iterate");
    assert!(!tokens.is_empty());
    assert_eq!(tokens.len(), generation.n_generated);
    let iterated = model.detokenize(&tokens).expect("detokenize");
    assert!(!iterated.is_empty(), "no text from {tokens:?}");
    eprintln!("generated {} tokens: {streamed:?}", tokens.len());
    assert_eq!(streamed, iterated);
    // Every token but the last is in the cache, as with generate.
    assert_eq!(
        session.position().unwrap() as usize,
        prompt.len() + tokens.len() - 1
    );
}

#[test]
fn zero_max_tokens_only_prefills() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let prompt = model.tokenize("Hello world").expect("tokenize");
    let mut session = Session::new(&model, 64).expect("session");
    let collect = |session: &mut Session, prompt: &[i32], max_tokens: u32| {
        let mut pieces = Vec::new();
        let generation = session
            .generate(prompt, &Sampling::greedy(), max_tokens, |piece| {
                pieces.push(piece.to_owned());
                true
            })
            .expect("generate");
        (generation, pieces)
    };
    let (_, want) = collect(&mut session, &prompt.repeat(3), 4);

    session.reset().expect("reset");
    // The prompt twice, prefilled only: nothing generated, the position moved on by it.
    for times in 1..=2 {
        let (generation, pieces) = collect(&mut session, &prompt, 0);
        assert!(pieces.is_empty(), "{pieces:?}");
        assert_eq!(generation.n_prompt, prompt.len());
        assert_eq!(generation.n_generated, 0);
        assert_eq!(generation.stop_reason, StopReason::MaxTokens);
        assert_eq!(session.position().unwrap() as usize, times * prompt.len());
    }
    // The third time answered: as if the three had come in one generate.
    let (_, got) = collect(&mut session, &prompt, 4);
    assert_eq!(got, want);
}

#[test]
fn returning_false_stops_the_generation() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let prompt = model.tokenize("Hello").expect("tokenize");
    let mut session = Session::new(&model, 128).expect("session");
    let mut calls = 0;
    let generation = session
        .generate(&prompt, &Sampling::greedy(), 8, |_| {
            calls += 1;
            false
        })
        .expect("a stop asked by the callback is not an error");
    assert_eq!(calls, 1);
    assert_eq!(generation.stop_reason, StopReason::Cancelled);
}

#[test]
fn ignore_eog_generates_through_the_end_token() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    // The tiny model's greedy continuation of token 89 reaches its end token <|im_end|>
    // (318) after a few tokens.
    let prompt = [89];
    let mut session = Session::new(&model, 64).expect("session");
    let mut ended = String::new();
    let stopped = session
        .generate(&prompt, &Sampling::greedy(), 32, |piece| {
            ended.push_str(piece);
            true
        })
        .expect("generate");
    assert_eq!(stopped.stop_reason, StopReason::EndOfGeneration);
    let n = stopped.n_generated;
    assert!(n < 28, "{n} tokens");

    session.reset().expect("reset");
    let options = GenerateOptions {
        max_tokens: n as u32 + 4,
        ignore_eog: true,
    };
    let mut through = String::new();
    let past = session
        .generate_with(&prompt, &Sampling::greedy(), &options, |piece| {
            through.push_str(piece);
            true
        })
        .expect("generate past the end token");
    assert_eq!(past.stop_reason, StopReason::MaxTokens);
    assert_eq!(past.n_generated, n + 4);
    assert!(through.starts_with(&ended), "{through:?} after {ended:?}");
    // The end token was decoded like the others: all but the last are in the cache.
    assert_eq!(session.position().unwrap() as usize, prompt.len() + n + 3);
    assert!(!GenerateOptions::default().ignore_eog);
}

#[test]
fn a_panic_in_the_callback_is_resumed_after_the_library_returns() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let prompt = model.tokenize("Hello").expect("tokenize");
    let mut session = Session::new(&model, 128).expect("session");
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = session.generate(&prompt, &Sampling::greedy(), 8, |_| panic!("boom"));
    }));
    assert!(caught.is_err());
    // The session is still usable.
    session.reset().unwrap();
    assert!(session.tokens(&prompt, 2).all(|t| t.is_ok()));
}

#[test]
fn loading_a_missing_file_is_an_io_error() {
    let _ = test_model();
    let runtime = Runtime::new().expect("runtime");
    let err = match Model::load(&runtime, "/nonexistent/vkllm-missing.gguf") {
        Ok(_) => panic!("loading a missing file succeeded"),
        Err(e) => e,
    };
    assert_eq!(err.status, Status::Io);
    assert!(!err.message.is_empty());
    assert!(err.to_string().contains(&err.message));
    let _: &dyn std::error::Error = &err;
}
