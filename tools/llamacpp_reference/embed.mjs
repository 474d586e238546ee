// llama.cpp's sentence embeddings for a bert GGUF (tools/convert/st_to_gguf.py's output),
// through node-llama-cpp's embedding context on its prebuilt CPU binaries: the check that
// llama.cpp reads the converted file, and a second referee beside tests/reference/bert_f64.py.
//
// Reads a JSON file {"texts": [...], "ids": [[...], ...], "max_tokens": N} (ids: the reference's
// tokens for each text, [CLS] ... [SEP], optional; max_tokens: where sentence-transformers cuts,
// counting [CLS] and [SEP], as all-MiniLM-L6-v2's 256: llama.cpp itself never cuts) and writes
// JSON to stdout:
//   {"model_sha256", "pooling_type", "texts": [{"text", "llama_ids", "vector", "vector_from_ids"}]}
// llama_ids is llama.cpp's own WordPiece tokenization with the [CLS] and [SEP] node-llama-cpp adds
// for a WPM vocabulary, cut to max_tokens; vector is the embedding of those tokens,
// vector_from_ids the embedding of the given ids (so a model difference shows apart from a
// tokenizer difference). Vectors are llama.cpp's pooled output, not normalized
// (llama_get_embeddings_seq).
//
// node-llama-cpp is a reference tool, never a dependency of vkllm. Install it once outside the
// tree:  mkdir -p ~/.cache/vkllm/node && cd ~/.cache/vkllm/node && npm install node-llama-cpp@3.22.1
//
// Usage (from the repository root):
//   node tools/llamacpp_reference/embed.mjs MODEL.gguf INPUT.json > OUT.json
// tools/embeddings_reference.py --llamacpp runs it on the converted all-MiniLM-L6-v2 and reports
// the cosines against the float64 reference. NODE_LLAMA_CPP_DIR names the directory holding
// node_modules (default ~/.cache/vkllm/node).
import {createHash} from "node:crypto";
import {readFileSync} from "node:fs";
import {homedir} from "node:os";
import {join} from "node:path";
import {pathToFileURL} from "node:url";

const [modelPath, inputPath] = process.argv.slice(2);
if (!modelPath || !inputPath) {
    console.error("usage: node tools/llamacpp_reference/embed.mjs MODEL.gguf INPUT.json");
    process.exit(2);
}
const input = JSON.parse(readFileSync(inputPath, "utf8"));
const nodeDir = process.env.NODE_LLAMA_CPP_DIR || join(homedir(), ".cache/vkllm/node");
const {getLlama} = await import(
    pathToFileURL(join(nodeDir, "node_modules", "node-llama-cpp", "dist", "index.js")).href);

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
// One thread: on a busy machine llama.cpp's spinning worker threads slow a step to seconds.
const context = await model.createEmbeddingContext({contextSize: 512, threads: 1});

const texts = [];
for (const [i, text] of input.texts.entries()) {
    const cut = (input.max_tokens ?? Infinity) - 2;
    const ids = [model.tokens.bos, ...model.tokenize(text).slice(0, cut), model.tokens.sep];
    const vector = Array.from((await context.getEmbeddingFor(ids)).vector);
    const given = input.ids?.[i];
    const fromIds = given ? Array.from((await context.getEmbeddingFor(given)).vector) : null;
    texts.push({text, llama_ids: ids, vector, vector_from_ids: fromIds});
}
const sha = createHash("sha256").update(readFileSync(modelPath)).digest("hex");
process.stdout.write(JSON.stringify({
    model_sha256: sha,
    pooling_type: model.fileInfo.metadata.bert?.pooling_type ?? null,
    texts,
}) + "\n");
await context.dispose();
await model.dispose();
