//! The GGUF reader, standalone tokenizers, streaming detokenization, the simple chat template,
//! devices and runtime counters, and the low-level session steps, on the model named by
//! $VKLLM_TEST_MODEL (required: these tests fail, not skip, when it is unset or missing).

use std::path::PathBuf;

use vkllm::{
    chat_apply_template, chat_render_json, ggml_type_name, ChatOptions, Gguf, GgufKey, Model,
    Runtime, Session, SessionOptions, Status, Tokenizer,
};
use vkllm_sys::{VKLLM_GGUF_STRING, VKLLM_MAX_CHAINED_STEPS};

const TEXT: &str = "Hello world, Zürich 東京 🙂!";

fn test_model() -> PathBuf {
    let path = std::env::var_os("VKLLM_TEST_MODEL")
        .map(PathBuf::from)
        .expect("VKLLM_TEST_MODEL must name a model file (e.g. tiny-qwen2-f32.gguf)");
    assert!(path.is_file(), "{} does not exist", path.display());
    path
}

fn load() -> (Runtime, Model) {
    let runtime = Runtime::new().expect("runtime");
    let model = Model::load(&runtime, test_model()).expect("model");
    (runtime, model)
}

/// Index of the largest of the tokenizer's logits, the lowest of equals (the library's choice).
fn argmax(row: &[f32], n_vocab: usize) -> i32 {
    let mut best = 0;
    for (i, &v) in row[..n_vocab].iter().enumerate() {
        if v > row[best] {
            best = i;
        }
    }
    best as i32
}

fn bits(row: &[f32]) -> Vec<u32> {
    row.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn version_string_spells_the_version_number() {
    let v = vkllm::version();
    assert_eq!(
        vkllm::version_string(),
        format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
    );
}

#[test]
fn devices_say_whether_prefill_runs_on_cooperative_matrices() {
    use vkllm::{ComponentType as T, CoopmatShape, CoopmatUse};
    for d in vkllm::devices().expect("devices") {
        assert!(d.coopmat_shapes.len() <= vkllm_sys::VKLLM_MAX_COOPMAT_SHAPES as usize);
        match d.cooperative_matrix {
            CoopmatUse::Absent => assert!(d.coopmat_shapes.is_empty(), "{d:?}"),
            CoopmatUse::Used => {
                // The kernels' shape is one the device lists: f16 operands, f32 accumulator.
                let shape = d.coopmat_shape.expect("the shape in use");
                assert!(d.coopmat_shapes.contains(&shape), "{d:?}");
                assert_eq!(
                    (shape.a_type, shape.b_type, shape.c_type, shape.result_type),
                    (T::F16, T::F16, T::F32, T::F32)
                );
                assert!(shape.subgroup_scope);
            }
            CoopmatUse::Other(v) => panic!("a value the header does not have: {v}"),
            _ => {}
        }
    }
    let shape = CoopmatShape {
        m: 16,
        n: 8,
        k: 16,
        a_type: T::F16,
        b_type: T::F16,
        c_type: T::F32,
        result_type: T::F32,
        subgroup_scope: true,
    };
    assert_eq!(shape.to_string(), "16x8x16 f16*f16+f32->f32");
    let bf16 = CoopmatShape {
        a_type: T::Other(1000141000),
        c_type: T::S32,
        subgroup_scope: false,
        ..shape
    };
    assert_eq!(
        bf16.to_string(),
        "16x8x16 type 1000141000*f16+s32->f32 workgroup scope"
    );
}

#[test]
fn devices_and_runtime_stats_describe_the_device_in_use() {
    let devices = vkllm::devices().expect("devices");
    assert!(!devices.is_empty());
    let runtime = Runtime::new().expect("runtime");
    let info = runtime.device_info().expect("device info");
    assert_eq!(info, devices[info.index as usize]);
    assert_eq!(info.name, runtime.device_name().unwrap());
    assert!(info.usable && !info.heaps.is_empty());
    let before = runtime.stats().expect("stats").device_memory_allocated;
    let model = Model::load_with_progress(&runtime, test_model(), |_| true).expect("model");
    let held = runtime.stats().unwrap().device_memory_allocated - before;
    let mut info = std::mem::MaybeUninit::<vkllm_sys::vkllm_model_info>::zeroed();
    // SAFETY: a plain struct, zeroed, with struct_size set before the call.
    let device_bytes = unsafe {
        (*info.as_mut_ptr()).struct_size = std::mem::size_of::<vkllm_sys::vkllm_model_info>();
        assert_eq!(
            vkllm_sys::vkllm_model_get_info(model.as_raw(), info.as_mut_ptr()),
            0
        );
        info.assume_init().device_bytes
    };
    assert!(held >= device_bytes, "{held} < {device_bytes}");
    let check = runtime.self_check().expect("self check");
    assert!(check.kernels_checked >= 12);
    assert_eq!(check.kernels_failed, 0, "{}", check.first_failure);
}

#[test]
fn a_load_reports_progress_and_stops_when_asked() {
    let runtime = Runtime::new().expect("runtime");
    let mut seen = Vec::new();
    let model = Model::load_with_progress(&runtime, test_model(), |f| {
        seen.push(f);
        true
    })
    .expect("model");
    assert!(!seen.is_empty());
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert_eq!(*seen.last().unwrap(), 1.0);
    assert_eq!(
        model.chat_template(),
        Gguf::open(test_model())
            .unwrap()
            .get_string("tokenizer.chat_template")
            .unwrap_or_default()
    );
    let err = Model::load_with_progress(&runtime, test_model(), |_| false)
        .err()
        .unwrap();
    assert_eq!(err.status, Status::Cancelled);
}

#[test]
fn gguf_reader_reads_the_file_the_model_was_loaded_from() {
    let (_runtime, model) = load();
    let g = Gguf::open(test_model()).expect("open");
    let s = g.summary().expect("summary");
    assert_eq!(s.architecture, "qwen2");
    assert_eq!(g.get_string("general.architecture").unwrap(), "qwen2");
    assert_eq!(g.get_text("general.architecture").unwrap(), "\"qwen2\"");
    let n_layers = g.get_int("qwen2.block_count").expect("block_count");
    assert_eq!(n_layers, i64::from(s.n_layers));
    assert_eq!(g.get_float("qwen2.block_count").unwrap(), n_layers as f64);
    assert_eq!(model.n_vocab().unwrap(), s.n_vocab as usize);
    let keys = g.keys().expect("keys");
    assert_eq!(keys.len() as u64, s.n_keys);
    assert_eq!(
        keys[0],
        GgufKey {
            name: "general.architecture".into(),
            value_type: VKLLM_GGUF_STRING,
            element_type: VKLLM_GGUF_STRING,
            count: 1
        }
    );
    let tensors = g.tensors().expect("tensors");
    assert_eq!(tensors.len() as u64, s.n_tensors);
    assert_eq!(
        tensors.iter().map(|t| t.n_elements).sum::<u64>(),
        s.n_params
    );
    for t in &tensors {
        assert_eq!(t.type_name, ggml_type_name(t.ggml_type));
        assert_eq!(t.dims.iter().product::<u64>(), t.n_elements, "{}", t.name);
    }
    assert_eq!(s.tensors_of_type.iter().sum::<u64>(), s.n_tensors);
    assert_eq!(ggml_type_name(0).as_deref(), Some("F32"));
    assert_eq!(ggml_type_name(100_000), None);
    assert_eq!(
        g.get_int("no.such.key").unwrap_err().status,
        Status::NotFound
    );
    assert_eq!(
        g.get_int("general.architecture").unwrap_err().status,
        Status::Format
    );
    let missing = Gguf::open(test_model().with_extension("missing"))
        .err()
        .unwrap();
    assert_eq!(missing.status, Status::Io);
}

#[test]
fn a_tokenizer_from_the_file_encodes_as_the_models_own() {
    let (_runtime, model) = load();
    let tok: Tokenizer<'static> = {
        let g = Gguf::open(test_model()).expect("open");
        g.tokenizer().expect("tokenizer")
    }; // the file is closed: the tokenizer does not need it
    assert_eq!(tok.tokenize(TEXT).unwrap(), model.tokenize(TEXT).unwrap());
    let info = tok.info().expect("info");
    assert_eq!(info, model.tokenizer().info().unwrap());
    assert_eq!(info.model, "gpt2");
    let eos = info.eos.expect("an end token");
    assert!(tok.is_end_of_generation(eos).unwrap());
    let ids = tok.tokenize_with(TEXT, 0).unwrap();
    let bytes: Vec<u8> = ids
        .iter()
        .flat_map(|&i| tok.token_to_piece(i, 0).unwrap())
        .collect();
    assert_eq!(bytes, TEXT.as_bytes());
    assert_eq!(tok.detokenize(&ids).unwrap(), TEXT);
    let err = tok.token_to_piece(info.n_vocab as i32, 0).unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
}

#[test]
fn detokenizer_streamed_token_by_token_equals_detokenize_of_all_ids() {
    let (_runtime, model) = load();
    let tok = model.tokenizer();
    let ids = tok.tokenize_with(TEXT, 0).unwrap();
    // Some token is only part of a character, so the stream must hold bytes back.
    assert!(ids
        .iter()
        .any(|&i| std::str::from_utf8(&tok.token_to_piece(i, 0).unwrap()).is_err()));
    let mut d = tok.detokenizer(0).expect("detokenizer");
    for _ in 0..2 {
        // flush readies it for a second stream
        let mut streamed = String::new();
        for &i in &ids {
            streamed.push_str(&d.push(i).unwrap());
        }
        streamed.push_str(&d.flush().unwrap());
        assert_eq!(streamed, tok.detokenize(&ids).unwrap());
        assert!(!streamed.contains('\u{fffd}'));
    }
    assert_eq!(d.push(-1).unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn chat_apply_template_renders_plain_turns_as_chat_render_json_does() {
    let turns = [("system", "Be brief."), ("user", "Hi")];
    let want = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n";
    assert_eq!(
        chat_apply_template(Some("chatml"), None, &turns, false).unwrap(),
        want
    );
    assert_eq!(
        chat_apply_template(Some("chatml"), None, &turns, true).unwrap(),
        format!("{want}<|im_start|>assistant\n")
    );
    let options = ChatOptions {
        template_name: Some("chatml".into()),
        ..ChatOptions::default()
    };
    let json = r#"[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]"#;
    assert_eq!(
        chat_render_json(&options, json).unwrap(),
        format!("{want}<|im_start|>assistant\n")
    );
    let err = chat_render_json(&options, "[{").unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    let err = chat_apply_template(Some("no-such-template"), None, &turns, true).unwrap_err();
    assert_eq!(err.status, Status::NotFound);
}

fn two_sequences(model: &Model, flags: u32) -> Session {
    let options = SessionOptions {
        n_ctx: 64,
        n_seq: 2,
        flags,
        ..SessionOptions::default()
    };
    Session::with_options(model, &options).expect("session")
}

#[test]
fn eval_logits_equal_the_logits_of_the_same_tokens_through_decode() {
    let (_runtime, model) = load();
    let prompt = model.tokenize("Once upon a time there was").unwrap();
    let (head, last) = prompt.split_at(prompt.len() - 1);
    let mut s = two_sequences(&model, 0);
    s.eval_into(0, head, None).unwrap();
    s.eval_into(1, head, None).unwrap();
    let by_eval = s.eval_seq(0, last).unwrap();
    let by_decode = s.decode(&[1], last).unwrap();
    assert_eq!(by_eval.len(), s.n_vocab().unwrap());
    assert_eq!(bits(&by_eval), bits(&by_decode));
    assert_eq!(s.position_of(0).unwrap(), s.position_of(1).unwrap());
    let n = s.n_vocab().unwrap();
    let next = argmax(&by_eval, model.tokenizer().info().unwrap().n_vocab as usize);
    let rows = s.decode(&[0, 1], &[next, next]).unwrap();
    assert_eq!(bits(&rows[..n]), bits(&rows[n..]));
    let err = s.decode(&[0, 0], &[next, next]).unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    let mut short = vec![0f32; 3];
    let err = s.decode_into(&[0], &[next], Some(&mut short)).unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
}

#[test]
fn truncate_then_eval_again_gives_the_same_logits_bit_for_bit() {
    let (_runtime, model) = load();
    let prompt = model.tokenize("Once upon a time there was").unwrap();
    let (head, last) = prompt.split_at(prompt.len() - 1);
    let mut s = Session::new(&model, 64).unwrap();
    s.eval_into(0, head, None).unwrap();
    let first = s.eval_seq(0, last).unwrap();
    s.eval_into(0, &[11, 12, 13, 14, 15], None).unwrap();
    assert_eq!(s.position().unwrap() as usize, prompt.len() + 5);
    s.truncate(0, head.len() as u32).unwrap();
    assert_eq!(s.position().unwrap() as usize, head.len());
    let again = s.eval_seq(0, last).unwrap();
    assert_eq!(bits(&first), bits(&again));
    let n_vocab = s.n_vocab().unwrap() as i32;
    assert_eq!(
        s.eval_seq(0, &[n_vocab]).unwrap_err().status,
        Status::InvalidArgument
    );
    assert_eq!(s.position().unwrap() as usize, prompt.len());
}

#[test]
fn decode_greedy_chains_the_argmax_of_each_decode_step() {
    let (_runtime, model) = load();
    let n_tok = model.tokenizer().info().unwrap().n_vocab as usize;
    let prompts = [
        model.tokenize("Once upon a time").unwrap(),
        model.tokenize("The sky is").unwrap(),
    ];
    let mut chained = two_sequences(&model, 0);
    let mut stepped = two_sequences(&model, 0);
    let mut first = Vec::new();
    for (seq, p) in prompts.iter().enumerate() {
        chained.eval_into(seq as u32, p, None).unwrap();
        first.push(argmax(&stepped.eval_seq(seq as u32, p).unwrap(), n_tok));
    }
    let steps = 5;
    let got = chained.decode_greedy(&[0, 1], &first, steps).unwrap();
    let n = stepped.n_vocab().unwrap();
    let mut want = Vec::new();
    let mut tokens = first.clone();
    for _ in 0..steps {
        let rows = stepped.decode(&[0, 1], &tokens).unwrap();
        tokens = rows.chunks(n).map(|r| argmax(r, n_tok)).collect();
        want.extend_from_slice(&tokens);
    }
    assert_eq!(got, want);
    assert_eq!(
        chained.position_of(1).unwrap() as usize,
        prompts[1].len() + steps as usize
    );
    let err = chained
        .decode_greedy(&[0, 1], &first, VKLLM_MAX_CHAINED_STEPS + 1)
        .unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
}

#[test]
#[cfg(feature = "experimental")]
fn stats_and_kv_bytes_count_the_cache_a_session_holds() {
    let (_runtime, model) = load();
    let prompt = model.tokenize("Once upon a time").unwrap();
    let mut f16 = Session::new(&model, 64).unwrap();
    let f32_session = Session::with_options(
        &model,
        &SessionOptions {
            n_ctx: 64,
            kv_type: vkllm::KvType::F32,
            ..SessionOptions::default()
        },
    )
    .unwrap();
    f16.eval_into(0, &prompt, None).unwrap();
    assert_eq!(f16.stats().unwrap().tokens_prefilled, prompt.len() as u64);
    let n_layers = Gguf::open(test_model())
        .unwrap()
        .summary()
        .unwrap()
        .n_layers;
    for layer in 0..n_layers {
        let bytes = f16.layer_kv_bytes(layer).unwrap();
        assert!(bytes > 0);
        assert_eq!(f32_session.layer_kv_bytes(layer).unwrap(), 2 * bytes);
    }
    assert_eq!(
        f16.layer_kv_bytes(n_layers).unwrap_err().status,
        Status::InvalidArgument
    );
}

#[test]
#[cfg(feature = "experimental")]
fn a_profiled_session_times_every_kernel_it_ran() {
    let (runtime, model) = load();
    if !runtime.device_info().unwrap().timestamps {
        eprintln!("skipped: the device has no compute timestamps");
        return;
    }
    let mut s = two_sequences(&model, vkllm_sys::VKLLM_SESSION_PROFILE);
    assert!(s.profile().unwrap().is_empty());
    s.eval_into(0, &model.tokenize("Once upon a time").unwrap(), None)
        .unwrap();
    let kernels = s.profile().unwrap();
    assert!(!kernels.is_empty());
    assert!(kernels
        .iter()
        .all(|k| k.dispatches > 0 && k.ms >= 0.0 && !k.kernel.is_empty()));
    assert!(kernels.windows(2).all(|w| w[0].ms >= w[1].ms));
    let plain = Session::new(&model, 64).unwrap();
    assert_eq!(plain.profile().unwrap_err().status, Status::InvalidArgument);
}
