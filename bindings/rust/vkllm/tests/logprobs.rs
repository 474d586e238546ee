//! Logits of every position and generation log-probabilities with the model named by
//! $VKLLM_TEST_MODEL (required: these tests fail, not skip, when it is unset or missing).

use std::path::PathBuf;

use vkllm::{
    GenerateOptions, LogitsKind, Model, Runtime, Sampling, Session, Status, MAX_TOP_LOGPROBS,
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

#[test]
fn log_softmax_of_every_position_sums_to_one_and_equals_a_last_position_eval() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let tokens = model
        .tokenize("Once upon a time there was")
        .expect("tokenize");
    let mut session = Session::new(&model, 64).expect("session");
    let rows = session
        .eval_logits(&tokens, None, LogitsKind::LogSoftmax)
        .expect("every position");
    assert_eq!(rows.len(), tokens.len());
    assert_eq!(session.position().unwrap() as usize, tokens.len());
    for row in &rows {
        let mass: f64 = row.iter().map(|&v| f64::from(v).exp()).sum();
        assert!((mass - 1.0).abs() < 1e-4, "probabilities sum to {mass}");
    }
    // The last position alone, on a fresh sequence; and the raw logits of vkllm_session_eval
    // normalised on the host.
    session.reset().unwrap();
    let last = tokens.len() as u32 - 1;
    let only = session
        .eval_logits(&tokens, Some(&[last]), LogitsKind::LogSoftmax)
        .expect("the last position");
    session.reset().unwrap();
    let logits = session.eval(&tokens).expect("eval");
    let lse = logits.iter().map(|&v| f64::from(v).exp()).sum::<f64>().ln();
    for ((a, b), raw) in only[0].iter().zip(&rows[rows.len() - 1]).zip(&logits) {
        assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        assert!((f64::from(*a) - (f64::from(*raw) - lse)).abs() < 1e-4);
    }
    session.reset().unwrap();
    let err = session
        .eval_logits(&tokens, Some(&[tokens.len() as u32]), LogitsKind::Raw)
        .expect_err("a position past the tokens");
    assert_eq!(err.status, Status::InvalidArgument);
    assert_eq!(session.position().unwrap(), 0);
}

#[test]
fn greedy_generation_reports_each_tokens_logprob_and_its_alternatives() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let prompt = model.tokenize("Once upon a time").expect("tokenize");
    let mut session = Session::new(&model, 64).expect("session");
    let options = GenerateOptions {
        max_tokens: 6,
        ignore_eog: true,
    };
    let (generation, reports) = session
        .generate_with_logprobs(&prompt, &Sampling::greedy(), &options, 3, |_| true)
        .expect("generate");
    assert_eq!(generation.n_generated, 6);
    assert_eq!(reports.len(), 6);
    // Teacher forcing the same tokens gives the same log-probabilities.
    let mut all = prompt.clone();
    all.extend(reports.iter().map(|r| r.token));
    session.reset().unwrap();
    let rows = session
        .eval_logits(&all, None, LogitsKind::LogSoftmax)
        .expect("every position");
    for (k, r) in reports.iter().enumerate() {
        let row = &rows[prompt.len() - 1 + k];
        assert_eq!(r.top.len(), 3);
        assert_eq!(r.top[0].0, r.token, "greedy chooses the most likely");
        assert!((r.logprob - row[r.token as usize]).abs() < 1e-4);
        for pair in r.top.windows(2) {
            assert!(pair[0].1 >= pair[1].1, "sorted: {:?}", r.top);
        }
    }
    session.reset().unwrap();
    let err = session
        .generate_with_logprobs(
            &prompt,
            &Sampling::greedy(),
            &options,
            MAX_TOP_LOGPROBS + 1,
            |_| true,
        )
        .expect_err("too many alternatives");
    assert_eq!(err.status, Status::InvalidArgument);
}
