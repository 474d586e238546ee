//! Runtime::tune on the model named by $VKLLM_TEST_MODEL (required: these tests fail, not
//! skip, when it is unset or missing): what it reports, the winners in use afterwards, and
//! greedy tokens unchanged by them.

use std::path::PathBuf;

use vkllm::{Model, Runtime, Session, Status};

fn test_model() -> PathBuf {
    let path = std::env::var_os("VKLLM_TEST_MODEL")
        .map(PathBuf::from)
        .expect("VKLLM_TEST_MODEL must name a model file (e.g. tiny-qwen2-f32.gguf)");
    assert!(path.is_file(), "{} does not exist", path.display());
    path
}

fn greedy(model: &Model) -> Vec<i32> {
    let prompt = model.tokenize("Hello world").expect("tokenize");
    let mut session = Session::new(model, 64).expect("session");
    session
        .tokens(&prompt, 16)
        .collect::<vkllm::Result<_>>()
        .expect("generate")
}

#[test]
fn tune_times_every_shape_and_sessions_after_it_generate_the_same_tokens() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    assert_eq!(runtime.stats().unwrap().tuned_shapes, 0);
    let before = greedy(&model);
    let r = runtime.tune(&model).expect("tune");
    assert!(r.shapes > 0, "{r:?}");
    assert!(r.candidates_timed >= r.shapes, "{r:?}");
    assert_eq!(r.candidates_rejected, 0, "{r:?}");
    assert!(r.shapes_changed <= r.shapes, "{r:?}");
    // Times are noisy: only that both were measured.
    assert!(r.default_us > 0.0 && r.tuned_us > 0.0, "{r:?}");
    // No pipeline cache, no tune file; the winners are in use all the same.
    assert!(!r.file_written, "{r:?}");
    // Every shape runs its winner, the default variant or not.
    assert_eq!(runtime.stats().unwrap().tuned_shapes, u64::from(r.shapes));
    assert_eq!(greedy(&model), before);
}

#[test]
fn tune_refuses_a_model_of_another_runtime() {
    let runtime = Runtime::new().expect("runtime");
    let other = Runtime::new().expect("runtime");
    let foreign = Model::load(&other, test_model()).expect("model");
    let err = runtime.tune(&foreign).expect_err("another runtime's model");
    assert_eq!(err.status, Status::InvalidArgument);
    assert_eq!(runtime.stats().unwrap().tuned_shapes, 0);
}
