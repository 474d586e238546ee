//! The sampler object, batched generation, cancel, session info and the model's metadata, on
//! the model named by $VKLLM_TEST_MODEL (required).

use std::path::PathBuf;

use vkllm::{
    GenerateOptions, KvType, Model, Runtime, Sampler, Sampling, Session, Status, StopReason,
    SEED_RANDOM,
};

fn test_model() -> PathBuf {
    std::env::var_os("VKLLM_TEST_MODEL")
        .map(PathBuf::from)
        .expect("VKLLM_TEST_MODEL must name a model file (e.g. tiny-qwen2-f32.gguf)")
}

#[test]
fn sampler_applies_bias_penalties_seed_and_reset() {
    let logits = [0.0f32, 1.0, 2.0, 3.0];
    let mut greedy = Sampler::new(None, &Sampling::greedy()).unwrap();
    assert_eq!(greedy.sample(&logits).unwrap(), 3);
    let banned = Sampling {
        logit_bias: vec![(3, f32::NEG_INFINITY)],
        ..Sampling::greedy()
    };
    assert_eq!(
        Sampler::new(None, &banned)
            .unwrap()
            .sample(&logits)
            .unwrap(),
        2
    );
    let penalised = Sampling {
        frequency_penalty: 2.0,
        ..Sampling::greedy()
    };
    let mut p = Sampler::new(None, &penalised).unwrap();
    p.accept(3).unwrap();
    assert_eq!(p.sample(&logits).unwrap(), 2, "3 - 2 < 2");
    p.reset().unwrap();
    assert_eq!(p.sample(&logits).unwrap(), 3);

    let seeded = Sampling {
        top_k: 2,
        seed: 5,
        ..Sampling::default()
    };
    let mut a = Sampler::new(None, &seeded).unwrap();
    let mut b = Sampler::new(None, &seeded).unwrap();
    let da: Vec<i32> = (0..50).map(|_| a.sample(&logits).unwrap()).collect();
    let db: Vec<i32> = (0..50).map(|_| b.sample(&logits).unwrap()).collect();
    assert_eq!(da, db);
    assert!(da.iter().all(|&t| t == 2 || t == 3), "top-k 2: {da:?}");
    assert_eq!(a.seed().unwrap(), 5);
    let random = Sampling {
        seed: SEED_RANDOM,
        ..Sampling::default()
    };
    let r1 = Sampler::new(None, &random).unwrap().seed().unwrap();
    let r2 = Sampler::new(None, &random).unwrap().seed().unwrap();
    assert_ne!(r1, r2);

    let bad = Sampling {
        top_k: -2,
        ..Sampling::default()
    };
    let err = Sampler::new(None, &bad).err().expect("top_k -2 is refused");
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(err.message.contains("top_k"), "{}", err.message);
}

#[test]
fn batch_reproduces_per_seed_and_info_and_metadata_describe_the_session_and_model() {
    let runtime = Runtime::new().unwrap();
    let model = Model::load(&runtime, test_model()).unwrap();
    let p0 = model.tokenize("Hello world").unwrap();
    let p1 = model.tokenize("Once upon a time").unwrap();
    let mut session = Session::with_sequences(&model, 64, 2).unwrap();
    let info = session.info().unwrap();
    assert_eq!(info.n_ctx, 64);
    assert_eq!(info.n_seq, 2);
    assert_eq!(info.kv_type, KvType::F16);
    assert!(info.device_bytes > info.kv_cache_bytes);

    let options = GenerateOptions {
        max_tokens: 6,
        ignore_eog: true,
    };
    let sampling = Sampling {
        temperature: 1.0,
        seed: 9,
        ..Sampling::default()
    };
    let run = |session: &mut Session| {
        session.reset().unwrap();
        let mut s = Sampler::new(Some(&model), &sampling).unwrap();
        session
            .generate_batch(&[&p0, &p1], &mut [Some(&mut s), None], &options)
            .unwrap()
    };
    let first = run(&mut session);
    assert_eq!(first, run(&mut session));
    assert_eq!(first[0].len(), 6);
    // The greedy sequence is what greedy generation gives alone.
    let mut alone = Session::new(&model, 64).unwrap();
    let mut text = String::new();
    alone
        .generate_with(&p1, &Sampling::greedy(), &options, |piece| {
            text.push_str(piece);
            true
        })
        .unwrap();
    assert_eq!(text, model.detokenize(&first[1]).unwrap());

    let arch = model.meta_string("general.architecture").unwrap();
    assert!(model
        .meta_keys()
        .unwrap()
        .contains(&"general.architecture".to_string()));
    assert!(model.meta_int(&format!("{arch}.context_length")).unwrap() > 0);
    assert!(model.meta_float(&format!("{arch}.context_length")).unwrap() > 0.0);
    assert_eq!(
        model.meta_int("no.such.key").unwrap_err().status,
        Status::NotFound
    );
}

#[test]
fn cancel_from_another_thread_stops_the_generation_and_a_random_seed_is_reported() {
    let runtime = Runtime::new().unwrap();
    let model = Model::load(&runtime, test_model()).unwrap();
    let prompt = model.tokenize("Hello world").unwrap();
    let mut session = Session::new(&model, 128).unwrap();
    let handle = session.cancel_handle();
    let options = GenerateOptions {
        max_tokens: 60,
        ignore_eog: true,
    };
    let mut pieces = 0;
    let g = std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        scope.spawn(move || {
            rx.recv().unwrap();
            handle.cancel();
            done_tx.send(()).unwrap();
        });
        session
            .generate_with(&prompt, &Sampling::greedy(), &options, |_| {
                pieces += 1;
                if pieces == 2 {
                    // The other thread cancels while this one waits for it.
                    tx.send(()).unwrap();
                    done_rx.recv().unwrap();
                }
                true
            })
            .unwrap()
    });
    assert_eq!(g.stop_reason, StopReason::Cancelled);
    assert_eq!(
        g.n_generated, 2,
        "stopped before the step after the second token"
    );

    session.reset().unwrap();
    let random = Sampling {
        seed: SEED_RANDOM,
        presence_penalty: 0.5,
        typical_p: 0.9,
        ..Sampling::default()
    };
    let g = session.generate(&prompt, &random, 4, |_| true).unwrap();
    assert_ne!(g.seed, SEED_RANDOM);
    // A handle that outlives its session does nothing.
    let late = session.cancel_handle();
    drop(session);
    late.cancel();
}
