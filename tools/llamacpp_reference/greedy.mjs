// Greedy continuations of SmolLM2-135M-Instruct (and Gemma 3 270M) by llama.cpp (through node-llama-cpp's prebuilt
// CPU binaries), the reference tests/test_real_model_generation.cpp holds vkllm to.
//
// For each prompt: llama.cpp's prompt ids (a BOS only if the model asks for one; the chat
// prompts rendered from the GGUF's own tokenizer.chat_template and tokenized with special
// tokens parsed), then STEPS greedy tokens, each with llama.cpp's top-5 (id, probability).
// End-of-generation tokens do not stop it: every continuation has STEPS tokens, as vkllm's
// test steps past them too.
//
// node-llama-cpp is a reference tool, never a dependency of vkllm. Install it once outside the
// tree:  mkdir -p ~/.cache/vkllm/node && cd ~/.cache/vkllm/node && npm install node-llama-cpp@3.22.1
// (its @huggingface/jinja dependency renders the chat template).
//
// Usage (from the repository root):
//   node tools/llamacpp_reference/greedy.mjs [--long] [MODEL] [OUT]
//   MODEL defaults to ~/.cache/vkllm/models/SmolLM2-135M-Instruct.Q4_1.gguf (scripts/fetch-models),
//   OUT to tests/data/llamacpp_greedy_smollm2.json; NODE_LLAMA_CPP_DIR names the directory
//   holding node_modules (default ~/.cache/vkllm/node).
//   --long: one plain prompt of about 1,500 tokens (longLedger() below), 32 tokens
//   continued, in a 2,048-token context: past Gemma 3's 512-token sliding window, so its
//   local layers drop keys that its global layers still see.
// Then annotate the file with the float64 referee:
//   python3 tools/llamacpp_reference/forward_f64.py --annotate OUT MODEL
import {execFileSync} from "node:child_process";
import {createHash} from "node:crypto";
import {createReadStream, readFileSync, writeFileSync} from "node:fs";
import {homedir} from "node:os";
import {basename, join} from "node:path";
import {pathToFileURL} from "node:url";

const argv = process.argv.slice(2);
const LONG = argv.includes("--long");
const args = argv.filter((a) => a !== "--long");
const STEPS = LONG ? 32 : 64;
const TOP = 5;

const CHAT = [
    "What is the capital of France?",
    "Write a short poem about the sea.",
    "Explain what a hash table is in two sentences.",
    "Give me three tips for learning to cook.",
    "Why is the sky blue?",
];
const PLAIN = [
    "Once upon a time, in a small village by the mountains,",
    "The three primary colors are",
    "def fibonacci(n):\n    ",
    "In 1969, Neil Armstrong",
    "Water boils at 100 degrees Celsius because",
];

// A lighthouse keeper's ledger, written for this test (no one else's text): a line per night
// whose weather, ship and oil follow from the night's number, then a closing that asks for the
// first night's line again, about 1,500 tokens back.
function longLedger() {
    const winds = ["west", "north", "south-east", "east", "north-west", "south"];
    const skies = ["a clear sky", "low cloud", "rain squalls", "fog on the water", "a bright moon",
                   "sleet"];
    const ships = ["the schooner Marigold", "a coal barge", "the mail steamer Aldous",
                   "two fishing smacks", "the ketch Wren", "no ship", "a naval cutter"];
    const lines = [
        "The Ledger of the Northern Light",
        "",
        "Each night the keeper of the northern light wrote one line in the ledger: the wind, " +
            "the sky, the ships that passed the point, and the oil the lamp burned before dawn. " +
            "He kept it for forty-two years, and no line was ever left blank.",
        "",
    ];
    for (let n = 1; n <= 46; ++n) {
        lines.push(`Night ${n}: wind from the ${winds[n % winds.length]}, ` +
                   `${skies[(3 * n + (n >> 2)) % skies.length]}; ${ships[(5 * n) % ships.length]} passed ` +
                   `the point; ${2 + (n % 4)} gallons of oil burned.`);
    }
    lines.push("", "When his daughter took over the light, she asked what the first night " +
               "had been like. The keeper opened the ledger at its first page and read the " +
               "line aloud: \"Night 1:");
    return lines.join("\n");
}

const nodeDir = process.env.NODE_LLAMA_CPP_DIR || join(homedir(), ".cache/vkllm/node");
const modelPath =
    args[0] || join(homedir(), ".cache/vkllm/models/SmolLM2-135M-Instruct.Q4_1.gguf");
const outPath = args[1] || "tests/data/llamacpp_greedy_smollm2.json";

const fromNodeDir = (pkg, entry) =>
    import(pathToFileURL(join(nodeDir, "node_modules", pkg, entry)).href);
const {getLlama} = await fromNodeDir("node-llama-cpp", "dist/index.js");
const {Template} = await fromNodeDir("@huggingface/jinja", "dist/index.js");

function sha256(path) {
    return new Promise((resolve, reject) => {
        const h = createHash("sha256");
        createReadStream(path)
            .on("data", (d) => h.update(d))
            .on("end", () => resolve(h.digest("hex")))
            .on("error", reject);
    });
}

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
// One thread: on a busy machine llama.cpp's spinning worker threads slow a step to seconds.
const context = await model.createContext({contextSize: LONG ? 2048 : 512, threads: 1});
const sequence = context.getSequence();
// A file without a chat template (Gemma 3 270M's) gets the chat prompts' texts as plain prompts.
const chatTemplate = model.fileInfo.metadata.tokenizer.chat_template;
const template = chatTemplate ? new Template(chatTemplate) : null;

function promptIds(text, chat) {
    const rendered = chat
        ? template.render({messages: [{role: "user", content: text}], add_generation_prompt: true})
        : text;
    const ids = model.tokenize(rendered, /*specialTokens*/ chat);
    // The flag is the tokens object's (LlamaModel has none: reading it there gave no BOS ever,
    // which SmolLM2, whose file asks for none, never showed).
    const bos = model.tokens.shouldPrependBosToken ? [model.tokens.bos] : [];
    return {rendered, ids: [...bos, ...ids]};
}

async function greedy(ids) {
    await sequence.clearHistory();
    const generated = [];
    const top5 = [];
    const it = sequence.evaluateWithMetadata(
        ids, {probabilities: true}, {temperature: 0, yieldEogToken: true});
    for await (const step of it) {
        generated.push(step.token);
        // The map is ordered by probability, highest first.
        top5.push([...step.probabilities.entries()].slice(0, TOP).map(([id, p]) => [id, p]));
        if (generated.length === STEPS) break;
    }
    return {generated, top5};
}

const prompts = [];
const sets = LONG ? [[[longLedger()], false]] : [[CHAT, template !== null], [PLAIN, false]];
for (const [texts, chat] of sets) {
    for (const text of texts) {
        const {rendered, ids} = promptIds(text, chat);
        const {generated, top5} = await greedy(ids);
        if (generated.length !== STEPS) throw new Error(`stopped after ${generated.length} steps`);
        prompts.push({text, chat, rendered, prompt_ids: ids, generated_ids: generated, top5});
        process.stderr.write(`${JSON.stringify(text.slice(-60))} (${ids.length} tokens): ` +
                             `${JSON.stringify(model.detokenize(generated))}\n`);
    }
}

// node-llama-cpp names its llama.cpp build by its own tag; the source bundle's commit pins it.
function llamaCppBuild() {
    const bundle = join(nodeDir, "node_modules/node-llama-cpp/llama/gitRelease.bundle");
    const head = execFileSync("git", ["bundle", "list-heads", bundle], {encoding: "utf8"});
    return {...llama.llamaCppRelease, source_bundle_head: head.split(" ")[0]};
}
const out = {
    generated_by: `node tools/llamacpp_reference/greedy.mjs ${argv.join(" ")}`.trim() +
        " && python3 tools/llamacpp_reference/forward_f64.py --annotate " + outPath +
        " ~/.cache/vkllm/models/" + basename(modelPath),
    llama_cpp_release: llamaCppBuild(),
    node_llama_cpp: JSON.parse(readFileSync(
        join(nodeDir, "node_modules/node-llama-cpp/package.json"), "utf8")).version,
    model: basename(modelPath),
    model_sha256: await sha256(modelPath),
    steps: STEPS,
    note: "top5: per step, llama.cpp's five most probable next ids with their probabilities " +
        "(softmax of its logits); generation steps past end-of-generation tokens",
    prompts,
};
// One line per top-level field and per prompt field (forward_f64.py keeps the layout).
const line = (v) => JSON.stringify(v);
const fields = (o, skip, indent) =>
    Object.entries(o).filter(([k]) => k !== skip).map(([k, v]) => `${indent}${line(k)}: ${line(v)}`);
const promptsText = prompts.map((p) => "  {\n" + fields(p, null, "   ").join(",\n") + "\n  }");
writeFileSync(outPath, "{\n" + [...fields(out, "prompts", " "),
    ' "prompts": [\n' + promptsText.join(",\n") + "\n ]"].join(",\n") + "\n}\n");
await context.dispose();
await model.dispose();
