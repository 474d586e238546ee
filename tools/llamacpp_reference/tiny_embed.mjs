// Embeddings by llama.cpp (node-llama-cpp's embedding context on its prebuilt CPU binaries) of the
// tiny bert models, one file per pooling type (tests/reference/tiny_archs.cpp's
// tiny_embed_archs(); llama.cpp's context takes its pooling type from bert.pooling_type): the
// reference tests/test_reference_bert.cpp holds the float64 reference to, and the engine's
// embedding tests can hold vkllm to.
//
// For each model: id sequences ([CLS] ... [SEP]) of several lengths, and a few texts that
// llama.cpp's WordPiece tokenizer splits into the tiny vocabulary's letters, each with the vector
// llama.cpp returns, unnormalized. With pooling none, node-llama-cpp returns the hidden state of
// the last token (llama_get_embeddings_ith(ctx, -1)). llama.cpp computes BERT's GELU in the tanh
// form, on the CPU from a table of F16 inputs and outputs.
//
// node-llama-cpp is a reference tool, never a dependency of vkllm (install: see greedy.mjs).
//
// Usage (from the repository root, after building the tests):
//   mkdir -p /tmp/tiny && build/tests/vkllm_write_tiny_models /tmp/tiny &&
//   node tools/llamacpp_reference/tiny_embed.mjs /tmp/tiny/embed [OUT]
// OUT defaults to tests/data/llamacpp_embed_tiny.json. Every .gguf in the directory is run, in
// name order; each is recorded with its size and FNV-1a 64 hash, which the test checks against
// the file the tiny model writer writes today.
import {execFileSync} from "node:child_process";
import {readdirSync, readFileSync, writeFileSync} from "node:fs";
import {homedir} from "node:os";
import {join} from "node:path";
import {pathToFileURL} from "node:url";

const LENGTHS = [2, 3, 9, 24, 47];  // [CLS] and [SEP] included
const TEXTS = ["hello world", "The quick brown fox jumps over the lazy dog", "a"];
const CLS = 2, SEP = 3, FIRST_PIECE = 5;  // tests/reference/tiny_model.h's TinyBertToken

const nodeDir = process.env.NODE_LLAMA_CPP_DIR || join(homedir(), ".cache/vkllm/node");
const dir = process.argv[2];
const outPath = process.argv[3] || "tests/data/llamacpp_embed_tiny.json";
if (!dir) throw new Error("usage: node tiny_embed.mjs DIR [OUT]");

const {getLlama} = await import(
    pathToFileURL(join(nodeDir, "node_modules/node-llama-cpp/dist/index.js")).href);

function fnv1a64(bytes) {
    let h = 0xcbf29ce484222325n;
    for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
    return h.toString(16).padStart(16, "0");
}

// [CLS], ids from a fixed linear congruential sequence past the special tokens, [SEP].
function sequenceIds(length, nVocab, seed) {
    const ids = [CLS];
    let x = seed >>> 0;
    while (ids.length < length - 1) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        ids.push(FIRST_PIECE + ((x >>> 8) % (nVocab - FIRST_PIECE)));
    }
    ids.push(SEP);
    return ids;
}

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const models = [];
for (const file of readdirSync(dir).filter((f) => f.endsWith(".gguf")).sort()) {
    const path = join(dir, file);
    // Flash attention off: llama.cpp's CPU flash attention casts K and V to F16 and sums in F16,
    // which moves these vectors by up to ~3e-3; without it everything but the GELU table is F32.
    const model = await llama.loadModel({modelPath: path, defaultContextFlashAttention: false});
    const context = await model.createEmbeddingContext({contextSize: 64, threads: 1});
    const nVocab = model.tokens.length ?? model.fileInfo.metadata.tokenizer.ggml.tokens.length;
    const sequences = [];
    for (const [i, length] of LENGTHS.entries()) {
        const ids = sequenceIds(length, nVocab, 31 + i);
        const {vector} = await context.getEmbeddingFor(ids);
        sequences.push({ids, embedding: [...vector]});
    }
    for (const text of TEXTS) {
        const ids = [...model.tokenize(text)];
        const {vector} = await context.getEmbeddingFor(text);
        // The embedding context adds [CLS] and [SEP] around the tokenizer's ids.
        sequences.push({text, ids: [CLS, ...ids, SEP], embedding: [...vector]});
    }
    const bytes = readFileSync(path);
    models.push({name: file.replace(/\.gguf$/, ""), bytes: bytes.length, fnv1a64: fnv1a64(bytes),
                 pooling_type: model.fileInfo.metadata.bert.pooling_type, sequences});
    process.stderr.write(`${file}: ${sequences.length} embeddings\n`);
    await context.dispose();
    await model.dispose();
}

function llamaCppBuild() {
    const bundle = join(nodeDir, "node_modules/node-llama-cpp/llama/gitRelease.bundle");
    const head = execFileSync("git", ["bundle", "list-heads", bundle], {encoding: "utf8"});
    return {...llama.llamaCppRelease, source_bundle_head: head.split(" ")[0]};
}
const out = {
    generated_by: "mkdir -p /tmp/tiny && build/tests/vkllm_write_tiny_models /tmp/tiny && " +
        `node tools/llamacpp_reference/tiny_embed.mjs ${process.argv.slice(2).join(" ")}`,
    llama_cpp_release: llamaCppBuild(),
    node_llama_cpp: JSON.parse(readFileSync(
        join(nodeDir, "node_modules/node-llama-cpp/package.json"), "utf8")).version,
    flash_attention: false,
    note: "embedding: llama.cpp's vector for ids ([CLS] ... [SEP]), unnormalized; pooling none " +
        "gives the last token's hidden state",
};
const line = (v) => JSON.stringify(v);
const modelText = (m) => "  {\n" + [
    `   "name": ${line(m.name)}`, `   "bytes": ${m.bytes}`, `   "fnv1a64": ${line(m.fnv1a64)}`,
    `   "pooling_type": ${m.pooling_type}`,
    '   "sequences": [\n' + m.sequences.map((s) => "    " + line(s)).join(",\n") + "\n   ]",
].join(",\n") + "\n  }";
writeFileSync(outPath, "{\n" + [...Object.entries(out).map(([k, v]) => ` ${line(k)}: ${line(v)}`),
    ' "models": [\n' + models.map(modelText).join(",\n") + "\n ]"].join(",\n") + "\n}\n");
