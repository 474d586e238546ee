//! Saved states and forks on the model named by $VKLLM_TEST_MODEL: a restored or forked
//! sequence continues with the logits, bit for bit, of one that computed its positions itself.

use std::path::PathBuf;

use vkllm::{Model, Runtime, Session, Status};

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

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn a_restored_state_continues_with_the_same_logits() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let prompt = model
        .tokenize("Once upon a time there was")
        .expect("tokenize");
    let more = model.tokenize(" a cat").expect("tokenize");

    let mut never = Session::new(&model, 64).expect("session");
    never.eval(&prompt).expect("eval");
    let want = never.eval(&more).expect("eval");

    let mut saver = Session::new(&model, 64).expect("session");
    saver.eval(&prompt).expect("eval");
    let state = saver.save_state(0).expect("save");
    assert_eq!(saver.cached_tokens(0).unwrap(), prompt);
    saver.reset().expect("reset");
    saver.eval(&more).expect("eval");
    saver.load_state(0, &state).expect("load");
    assert_eq!(saver.position().unwrap() as usize, prompt.len());
    assert_eq!(bits(&saver.eval(&more).unwrap()), bits(&want));

    let path = std::env::temp_dir().join(format!("vkllm-rs-{}.state", std::process::id()));
    let mut other = Session::with_sequences(&model, 64, 2).expect("session");
    let mut source = Session::new(&model, 64).expect("session");
    source.eval(&prompt).expect("eval");
    source.save_state_file(0, &path).expect("save file");
    let loaded = other.load_state_file(1, &path);
    std::fs::remove_file(&path).ok();
    loaded.expect("load file");
    assert_eq!(bits(&other.eval_seq(1, &more).unwrap()), bits(&want));

    let err = other.load_state(0, &state[..state.len() - 1]).unwrap_err();
    assert_eq!(err.status, Status::Format);
    assert_eq!(other.position_of(0).unwrap(), 0);
}

#[test]
fn forked_sequences_continue_as_independent_prefills() {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    let prompt = model.tokenize("Once upon a time").expect("tokenize");
    let more = model.tokenize(" there").expect("tokenize");
    let mut forked = Session::with_sequences(&model, 64, 3).expect("session");
    let mut prefilled = Session::with_sequences(&model, 64, 3).expect("session");
    forked.eval(&prompt).expect("eval");
    forked.fork(0, 1, prompt.len() as u32).expect("fork");
    forked.fork(0, 2, 2).expect("fork a prefix");
    prefilled.eval_seq(1, &prompt).expect("eval");
    assert_eq!(forked.cached_tokens(1).unwrap(), prompt);
    assert_eq!(
        bits(&forked.eval_seq(1, &more).unwrap()),
        bits(&prefilled.eval_seq(1, &more).unwrap())
    );
    assert_eq!(forked.position_of(2).unwrap(), 2);
    let err = forked.fork(0, 0, 1).unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
}
