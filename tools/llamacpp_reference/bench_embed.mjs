// llama.cpp's embeddings per second on a bert GGUF, beside tools/bench/embed.py: the texts of a
// JSON file (a list of strings) embedded in groups of 1, 16 and 128 through node-llama-cpp's
// embedding context (one text per call: its API embeds one input at a time), best of R
// repetitions after a warm-up, on its prebuilt CPU backend or its Vulkan backend.
//
//   node tools/llamacpp_reference/bench_embed.mjs MODEL.gguf TEXTS.json cpu|vulkan [REPS] [THREADS]
//
// node-llama-cpp is a reference tool, never a dependency of vkllm (install: see embed.mjs).
import {readFileSync} from "node:fs";
import {homedir} from "node:os";
import {join} from "node:path";
import {pathToFileURL} from "node:url";

const [modelPath, textsPath, backend = "cpu", repsArg = "5", threadsArg = "2"] =
    process.argv.slice(2);
const texts = JSON.parse(readFileSync(textsPath, "utf8"));
const nodeDir = process.env.NODE_LLAMA_CPP_DIR || join(homedir(), ".cache/vkllm/node");
const {getLlama} = await import(
    pathToFileURL(join(nodeDir, "node_modules", "node-llama-cpp", "dist", "index.js")).href);
const llama = await getLlama({gpu: backend === "vulkan" ? "vulkan" : false, build: "never",
                              logLevel: "error"});
const model = await llama.loadModel({modelPath, gpuLayers: backend === "vulkan" ? "max" : 0});
// Threads no more than the cores: llama.cpp's workers spin while they wait, and one more than
// the cores turns every step into seconds.
const context = await model.createEmbeddingContext({contextSize: 512, batchSize: 512,
                                                    threads: Number(threadsArg)});
for (const n of (process.env.SIZES || "1,16,128").split(",").map(Number)) {
    const batch = Array.from({length: n}, (_, i) => texts[i % texts.length]);
    for (const t of batch) await context.getEmbeddingFor(t);  // warm-up
    let best = Infinity;
    for (let r = 0; r < Number(repsArg); ++r) {
        const t0 = performance.now();
        for (const t of batch) await context.getEmbeddingFor(t);
        best = Math.min(best, performance.now() - t0);
    }
    console.log(`llama.cpp ${backend} batch ${String(n).padStart(4)}: ` +
                `${(n / best * 1000).toFixed(1).padStart(8)} embeddings/s (${best.toFixed(1)} ms)`);
}
await context.dispose();
