// llama.cpp's prefill and decode speed on a GGUF file through node-llama-cpp's prebuilt
// binaries (CPU, or Vulkan), measured as llama-bench measures them: pp = N prompt tokens
// evaluated as one batch, tg = M tokens decoded one at a time after a 1-token prompt, each the
// mean of R runs after one warm-up; tokens per second with the standard deviation over runs.
// It prints a line in `vkllm bench`'s form, so the two sit side by side in BENCHMARKS.md.
//
// node-llama-cpp is a reference tool, never a dependency of vkllm (install: see greedy.mjs).
// On a machine without a GPU, llama.cpp's Vulkan backend skips lavapipe (a CPU-type device)
// unless GGML_VK_VISIBLE_DEVICES names it:
//   node tools/llamacpp_reference/bench.mjs MODEL [cpu|vulkan] [-p 64] [-n 32] [-r 2] [-t 2]
//   GGML_VK_VISIBLE_DEVICES=0 node tools/llamacpp_reference/bench.mjs MODEL vulkan
import {homedir} from "node:os";
import {basename, join} from "node:path";
import {pathToFileURL} from "node:url";

const args = process.argv.slice(2);
const modelPath = args[0];
const backend = args[1] && !args[1].startsWith("-") ? args[1] : "cpu";
const opt = (flag, def) => {
    const i = args.indexOf(flag);
    return i >= 0 ? Number(args[i + 1]) : def;
};
const nPrompt = opt("-p", 64), nGen = opt("-n", 32), reps = opt("-r", 2), threads = opt("-t", 2);
if (!modelPath || !["cpu", "vulkan"].includes(backend))
    throw new Error("usage: bench.mjs MODEL [cpu|vulkan] [-p N] [-n N] [-r N] [-t N]");

const nodeDir = process.env.NODE_LLAMA_CPP_DIR || join(homedir(), ".cache/vkllm/node");
const {getLlama} = await import(
    pathToFileURL(join(nodeDir, "node_modules/node-llama-cpp/dist/index.js")).href);
const llama = await getLlama({gpu: backend === "cpu" ? false : "vulkan", build: "never",
                              logLevel: "error"});
const model = await llama.loadModel({modelPath, gpuLayers: backend === "cpu" ? 0 : "max"});
const context = await model.createContext({contextSize: nPrompt + nGen + 8, threads,
                                           batchSize: Math.max(nPrompt, 1)});
const sequence = context.getSequence();
const nVocab = model.tokens.length ?? 1000;

// Ordinary ids, away from the special ones at either end of most vocabularies.
function ids(n, seed) {
    const out = [];
    let x = seed >>> 0;
    for (let i = 0; i < n; ++i) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        out.push(1000 + ((x >>> 8) % Math.max(1, Math.min(nVocab, 30000) - 1000)));
    }
    return out;
}

async function prefill(seed) {
    await sequence.clearHistory();
    const t0 = performance.now();
    await sequence.evaluateWithoutGeneratingNewTokens(ids(nPrompt, seed));
    return nPrompt / ((performance.now() - t0) / 1000);
}

async function decode(seed) {
    await sequence.clearHistory();
    await sequence.evaluateWithoutGeneratingNewTokens(ids(1, seed));
    // Each step evaluates one given token (no sampling cost in the timing), as llama-bench.
    const t0 = performance.now();
    for (const id of ids(nGen, seed + 1)) await sequence.evaluateWithoutGeneratingNewTokens([id]);
    return nGen / ((performance.now() - t0) / 1000);
}

function stats(xs) {
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length - 1));
    return `${mean.toFixed(2)} ± ${sd.toFixed(2)}`;
}

const pp = [], tg = [];
await prefill(1);  // warm-up
for (let r = 0; r < reps; ++r) pp.push(await prefill(2 + r));
await decode(1);
for (let r = 0; r < reps; ++r) tg.push(await decode(10 + r));
const device = backend === "cpu" ? `CPU, ${threads} threads` :
    (await llama.getGpuDeviceNames()).join(", ");
console.log(`llama.cpp ${backend} (${device}) ${basename(modelPath)}: ` +
            `pp${nPrompt} ${stats(pp)} tok/s, tg${nGen} ${stats(tg)} tok/s`);
await context.dispose();
await model.dispose();
