// Greedy continuations by llama.cpp (node-llama-cpp's prebuilt CPU binaries) of the tiny model
// of every architecture (tests/reference/tiny_archs.cpp): the reference
// tests/test_tiny_llamacpp.cpp holds vkllm to. The models have random weights, so the prompts
// are ids, not text: for each model, prompts of several lengths (longer ones run past the
// sliding windows), then STEPS greedy tokens, each with llama.cpp's top-5 (id, probability).
//
// node-llama-cpp is a reference tool, never a dependency of vkllm (install: see greedy.mjs).
//
// Usage (from the repository root, after building the tests):
//   mkdir -p /tmp/tiny && build/tests/vkllm_write_tiny_models /tmp/tiny &&
//   node tools/llamacpp_reference/tiny_greedy.mjs /tmp/tiny [OUT]
// OUT defaults to tests/data/llamacpp_greedy_tiny.json. Every .gguf in the directory is run, in
// name order (not DIR/embed's encoders: tiny_embed.mjs runs those); each is recorded with its size and FNV-1a 64 hash, which the test checks against
// the file the tiny model writer writes today.
import {execFileSync} from "node:child_process";
import {readdirSync, readFileSync, writeFileSync} from "node:fs";
import {homedir} from "node:os";
import {join} from "node:path";
import {pathToFileURL} from "node:url";

const STEPS = 24;
const TOP = 5;
const PROMPT_LENGTHS = [1, 7, 30];

const nodeDir = process.env.NODE_LLAMA_CPP_DIR || join(homedir(), ".cache/vkllm/node");
const dir = process.argv[2];
const outPath = process.argv[3] || "tests/data/llamacpp_greedy_tiny.json";
if (!dir) throw new Error("usage: node tiny_greedy.mjs DIR [OUT]");

const {getLlama} = await import(
    pathToFileURL(join(nodeDir, "node_modules/node-llama-cpp/dist/index.js")).href);

function fnv1a64(bytes) {
    let h = 0xcbf29ce484222325n;
    for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
    return h.toString(16).padStart(16, "0");
}

// Prompt ids from a fixed linear congruential sequence: BOS (1), then ids from 3 up (past
// unk, bos and eos).
function promptIds(length, nVocab, seed) {
    const ids = [1];
    let x = seed >>> 0;
    while (ids.length < length) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        ids.push(3 + ((x >>> 8) % (nVocab - 3)));
    }
    return ids;
}

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const models = [];
for (const file of readdirSync(dir).filter((f) => f.endsWith(".gguf")).sort()) {
    const path = join(dir, file);
    const model = await llama.loadModel({modelPath: path});
    const context = await model.createContext({contextSize: 128, threads: 1});
    const sequence = context.getSequence();
    const nVocab = model.tokens.length ?? model.fileInfo.metadata.tokenizer.ggml.tokens.length;
    const prompts = [];
    for (const [i, length] of PROMPT_LENGTHS.entries()) {
        const ids = promptIds(length, nVocab, 7 + i);
        await sequence.clearHistory();
        const generated = [];
        const top5 = [];
        const it = sequence.evaluateWithMetadata(
            ids, {probabilities: true}, {temperature: 0, yieldEogToken: true});
        for await (const step of it) {
            generated.push(step.token);
            top5.push([...step.probabilities.entries()].slice(0, TOP).map(([id, p]) => [id, p]));
            if (generated.length === STEPS) break;
        }
        if (generated.length !== STEPS) throw new Error(`${file}: stopped after ${generated.length}`);
        prompts.push({prompt_ids: ids, generated_ids: generated, top5});
    }
    const bytes = readFileSync(path);
    models.push({name: file.replace(/\.gguf$/, ""), bytes: bytes.length, fnv1a64: fnv1a64(bytes),
                 prompts});
    process.stderr.write(`${file}: ${JSON.stringify(prompts.map((p) => p.generated_ids))}\n`);
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
        `node tools/llamacpp_reference/tiny_greedy.mjs ${process.argv.slice(2).join(" ")}`,
    llama_cpp_release: llamaCppBuild(),
    node_llama_cpp: JSON.parse(readFileSync(
        join(nodeDir, "node_modules/node-llama-cpp/package.json"), "utf8")).version,
    steps: STEPS,
    note: "top5: per step, llama.cpp's five most probable next ids with their probabilities",
};
const line = (v) => JSON.stringify(v);
const modelText = (m) => "  {\n" + [
    `   "name": ${line(m.name)}`, `   "bytes": ${m.bytes}`, `   "fnv1a64": ${line(m.fnv1a64)}`,
    '   "prompts": [\n' + m.prompts.map((p) => "    " + line(p)).join(",\n") + "\n   ]",
].join(",\n") + "\n  }";
writeFileSync(outPath, "{\n" + [...Object.entries(out).map(([k, v]) => ` ${line(k)}: ${line(v)}`),
    ' "models": [\n' + models.map(modelText).join(",\n") + "\n ]"].join(",\n") + "\n}\n");
