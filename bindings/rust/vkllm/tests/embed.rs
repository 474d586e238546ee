//! Embeddings on the tiny bert encoder named by $VKLLM_TEST_BERT and, with last-token pooling,
//! the tiny decoder named by $VKLLM_TEST_MODEL (both required: these tests fail, not skip, when
//! either is unset or missing).

use std::path::PathBuf;

use vkllm::{EmbedParams, Model, Pooling, Runtime, Session, Status};

fn model_path(var: &str) -> PathBuf {
    let path = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{var} must name a model file"));
    assert!(path.is_file(), "{var}={} does not exist", path.display());
    path
}

fn norm(v: &[f32]) -> f64 {
    v.iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum();
    dot / (norm(a) * norm(b))
}

fn assert_close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-4, "{x} != {y}");
    }
}

const TEXTS: [&str; 4] = ["hello world", "a b c d e f", "", "the quick brown fox"];

#[test]
fn bert_embeddings_have_the_shape_norm_and_pooling_relations_they_promise() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, model_path("VKLLM_TEST_BERT")).expect("bert");
    assert_eq!(model.pooling().unwrap(), Pooling::Mean);
    let n_embd = model.n_embd().unwrap();
    let mut session = Session::with_sequences(&model, 0, 4).expect("session");

    let raw = session.embed(&TEXTS, &EmbedParams::new()).expect("embed");
    assert_eq!(raw.len(), TEXTS.len());
    let unit = session
        .embed(&TEXTS, &EmbedParams::new().normalize(true))
        .expect("normalized");
    for (r, u) in raw.iter().zip(&unit) {
        assert_eq!(r.len(), n_embd);
        assert!((norm(u) - 1.0).abs() < 1e-5);
        assert!(cosine(r, u) > 0.99999);
    }
    for (text, b) in TEXTS.iter().zip(&raw) {
        assert_close(&session.embed(&[text], &EmbedParams::new()).unwrap()[0], b);
    }

    let ids: Vec<Vec<i32>> = TEXTS.iter().map(|t| model.tokenize(t).unwrap()).collect();
    let refs: Vec<&[i32]> = ids.iter().map(Vec::as_slice).collect();
    let rows = session
        .embed_tokens(&refs, &EmbedParams::new().pooling(Pooling::None))
        .expect("per token");
    assert_eq!(rows.len(), ids.iter().map(Vec::len).sum::<usize>());
    let mean = session
        .embed_tokens(&refs, &EmbedParams::new().pooling(Pooling::Mean))
        .unwrap();
    let cls = session
        .embed_tokens(&refs, &EmbedParams::new().pooling(Pooling::Cls))
        .unwrap();
    let last = session
        .embed_tokens(&refs, &EmbedParams::new().pooling(Pooling::Last))
        .unwrap();
    let mut at = 0;
    for (i, input) in ids.iter().enumerate() {
        let own = &rows[at..at + input.len()];
        at += input.len();
        let avg: Vec<f32> = (0..n_embd)
            .map(|d| own.iter().map(|r| r[d]).sum::<f32>() / own.len() as f32)
            .collect();
        assert_close(&avg, &mean[i]);
        assert_close(&own[0], &cls[i]);
        assert_close(&own[own.len() - 1], &last[i]);
        assert_close(&mean[i], &raw[i]);
    }

    let err = session
        .embed(&["hello"], &EmbedParams::new().pooling(Pooling::None))
        .unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    let long = "hello ".repeat(40);
    let err = session
        .embed(&[long.as_str()], &EmbedParams::new().max_tokens(8))
        .unwrap_err();
    assert_eq!(err.status, Status::ContextFull);
    let cut = session
        .embed(
            &[long.as_str()],
            &EmbedParams::new().max_tokens(8).truncate(true),
        )
        .unwrap();
    let full = model.tokenize(&long).unwrap();
    let kept: Vec<i32> = full[..7]
        .iter()
        .chain(&full[full.len() - 1..])
        .copied()
        .collect();
    assert_close(
        &cut[0],
        &session.embed_tokens(&[&kept], &EmbedParams::new()).unwrap()[0],
    );
}

#[test]
fn decoder_last_token_pooling_is_its_last_row() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, model_path("VKLLM_TEST_MODEL")).expect("decoder");
    let mut session = Session::new(&model, 64).expect("session");
    let ids = model.tokenize("Hello world").unwrap();
    let last = session
        .embed_tokens(
            &[&ids],
            &EmbedParams::new().pooling(Pooling::Last).normalize(true),
        )
        .unwrap();
    let rows = session
        .embed_tokens(&[&ids], &EmbedParams::new().pooling(Pooling::None))
        .unwrap();
    assert_eq!(rows.len(), ids.len());
    assert!((norm(&last[0]) - 1.0).abs() < 1e-5);
    assert!(cosine(&last[0], &rows[ids.len() - 1]) > 0.99999);
}
