// llama.cpp's tokenization of vkllm's tokenizer corpus (the 107 strings of
// tests/data/tokenizer/reference-corpus.json, then the strings of tests/data/tokenizer_corpus.json),
// through node-llama-cpp's prebuilt CPU binaries: the reference tests/test_tokenizer_llamacpp.cpp
// holds vkllm to. It writes
//   tests/data/llamacpp_tokenize_smollm2.json, tests/data/llamacpp_tokenize_gemma3.json:
//     the ids of every string for the real models, special-token parsing off and on;
//   tests/data/llamacpp_tokenize_bert_minilm.json: the ids (parsing off) for the WordPiece
//     vocabulary of all-MiniLM-L6-v2, on the strings of tokenizer/reference-wordpiece.json;
//   tests/data/llamacpp_pretokenizers.json: for every tokenizer.ggml.pre name, the ids (parsing
//     off) with two real BPE vocabularies, SmolLM2's and Llama 3's, under that name. The
//     vocab-only variants are written by vocab_variant.py into a temporary directory; names
//     whose ids are identical everywhere are stored once, as a group.
// node-llama-cpp's model.tokenize(text, special) calls llama.cpp's common_tokenize(vocab, text,
// add_special = false, parse_special = special): no BOS or EOS is ever added, whatever the vocab
// asks; and it returns [] for "" without calling llama.cpp.
//
// node-llama-cpp is a reference tool, never a dependency of vkllm. Install it once outside the
// tree:  mkdir -p ~/.cache/vkllm/node && cd ~/.cache/vkllm/node && npm install node-llama-cpp@3.22.1
// Python needs gguf-py: pip install gguf==0.19.0
//
// Usage (from the repository root):
//   node tools/llamacpp_reference/tokenize.mjs [models|pretokenizers|wordpiece]   (all when omitted)
// NODE_LLAMA_CPP_DIR names the directory holding node_modules (default ~/.cache/vkllm/node); the
// models are found as scripts/fetch-models caches them ($VKLLM_MODEL_CACHE, else
// ~/.cache/vkllm/models); the Llama 3 vocab and the shared corpus come from tests/data.
import {execFileSync, spawnSync} from "node:child_process";
import {createHash} from "node:crypto";
import {appendFileSync, createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync} from "node:fs";
import {homedir, tmpdir} from "node:os";
import {dirname, join, relative} from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..");
const DATA = join(ROOT, "tests", "data");
const SHARED = join(DATA, "tokenizer");
const NODE_DIR = process.env.NODE_LLAMA_CPP_DIR || join(homedir(), ".cache", "vkllm", "node");
const MODELS = process.env.VKLLM_MODEL_CACHE ||
    join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "vkllm", "models");
const NODE_LLAMA_CPP_VERSION = "3.22.1";

// Every tokenizer.ggml.pre name of llama.cpp master's src/llama-vocab.cpp (read 2026-11; the
// build node-llama-cpp 3.22.1 bundles has exactly these), and "gpt2", a name some converters
// wrote, to see what llama.cpp does with a name it does not know.
const PRE_NAMES = [
    "default", "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
    "lfm2", "jina-v5-nano", "minicpm5", "deepseek-llm", "deepseek-coder", "deepseek-v3",
    "hunyuan-dense", "hy_v4", "joyai-llm", "spark2_5", "youtu", "falcon", "mpt", "starcoder",
    "refact", "command-r", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es",
    "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "exaone4", "jina-v1-en", "jina-v2-code",
    "roberta-bpe", "jais-2", "jais", "trillion", "granite-docling", "olmo", "gemma4",
    "granite-embed-multi-311m", "sarvam-moe", "whitespace", "qwen2", "deepseek-r1-qwen", "kormo",
    "f2llmv2", "megrez", "qwen35", "stablelm2", "hunyuan", "solar-open", "dbrx", "smaug-bpe",
    "poro-chat", "bloom", "gpt3-finnish", "glm4", "chatglm-bpe", "viking", "tekken", "smollm",
    "codeshell", "exaone", "exaone-moe", "minerva-7b", "mellum2", "chameleon", "gpt-4o", "llama4",
    "kanana2", "talkie", "minimax-m2", "granite-embed-multi-97m", "tiny_aya", "cohere2moe",
    "superbpe", "bailingmoe", "bailingmoe2", "llada-moe", "seed-coder", "kimi-k2", "ufakzeka",
    "grok-2", "afmoe", "laguna", "gpt2",
];
// vkllm NFC-normalizes the text for these (Qwen's Hugging Face tokenizer does); llama.cpp does
// not, so its ids for the normalized strings are the reference for them.
const NFC_NAMES = ["qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "qwen35"];

const {getLlama} = await import(pathToFileURL(join(NODE_DIR, "node_modules", "node-llama-cpp",
                                                   "dist", "index.js")).href);
const installed = JSON.parse(readFileSync(join(NODE_DIR, "node_modules", "node-llama-cpp",
                                               "package.json"), "utf8")).version;
if (installed !== NODE_LLAMA_CPP_VERSION)
    console.warn(`node-llama-cpp ${installed}, not ${NODE_LLAMA_CPP_VERSION}: the data will differ`);

// llama.cpp says why it refuses a file only in its log.
let lastErrors = [];
const llama = await getLlama({
    gpu: false, build: "never", logLevel: "error",
    logger: (level, message) => { if (level === "error") lastErrors.push(message.trim()); },
});

const sha256 = (path) => new Promise((resolve, reject) => {
    const h = createHash("sha256");
    createReadStream(path).on("data", (d) => h.update(d)).on("end", () => resolve(h.digest("hex")))
        .on("error", reject);
});

function llamaCppBuild() {
    let bundleHead = null;
    try {
        const bundle = join(NODE_DIR, "node_modules", "node-llama-cpp", "llama", "gitRelease.bundle");
        bundleHead = execFileSync("git", ["bundle", "list-heads", bundle], {encoding: "utf8"}).split(" ")[0];
    } catch { /* git absent: the release tag alone identifies the build */ }
    return {...llama.llamaCppRelease, source_bundle_head: bundleHead,
            node_llama_cpp: installed};
}

const sharedStrings = JSON.parse(readFileSync(join(SHARED, "reference-corpus.json"), "utf8"));
const ourStrings = JSON.parse(readFileSync(join(DATA, "tokenizer_corpus.json"), "utf8")).strings;
const corpus = [...sharedStrings, ...ourStrings];
const corpusInfo = {
    files: ["tests/data/tokenizer/reference-corpus.json", "tests/data/tokenizer_corpus.json"],
    counts: [sharedStrings.length, ourStrings.length],
};
const command = (part) => "node tools/llamacpp_reference/tokenize.mjs" + (part ? " " + part : "");

// One string's ids per line, so that diffs of regenerated files stay readable.
const idLists = (lists) => "[\n" + lists.map((l) => JSON.stringify(l)).join(",\n") + "]";
const byVocab = (m) => "{" + Object.entries(m).map(([k, v]) => `"${k}": ${idLists(v)}`).join(",\n") + "}";
const formatGroup = (g) => `{"names": ${JSON.stringify(g.names)},\n"ids": ${byVocab(g.ids)},\n` +
                           `"ids_nfc": ${byVocab(g.ids_nfc)}}`;

// `arrays`: key -> its elements, each already JSON text.
function writeJson(path, head, arrays) {
    const lines = [JSON.stringify(head, null, 1).replace(/\n}$/, "")];
    for (const [key, rows] of Object.entries(arrays))
        lines.push(`,"${key}": [\n` + rows.join(",\n") + "\n]");
    writeFileSync(path, lines.join("\n") + "\n}\n");
    console.log(`${relative(ROOT, path)}: ${readFileSync(path).length} bytes`);
}

async function modelReference(label, file, part) {
    const path = join(MODELS, file);
    const model = await llama.loadModel({modelPath: path, vocabOnly: true});
    const cases = corpus.map((text) => ({
        text, ids: model.tokenize(text, false), ids_special: model.tokenize(text, true),
    }));
    await model.dispose();
    writeJson(join(DATA, `llamacpp_tokenize_${label}.json`), {
        generated_by: command(part),
        llama_cpp: llamaCppBuild(),
        model: {file, sha256: await sha256(path)},
        corpus: corpusInfo,
        call: "model.tokenize(text, false) -> ids, model.tokenize(text, true) -> ids_special: " +
              "llama.cpp common_tokenize(vocab, text, add_special=false, parse_special); no BOS/EOS added",
    }, {cases: cases.map((c) => JSON.stringify(c))});
}

// The WordPiece vocabulary of all-MiniLM-L6-v2 in llama.cpp's form, on the strings of
// tests/data/tokenizer/reference-wordpiece.json (the corpus and WordPiece's edge cases, in its
// order), both from tools/gen_wordpiece_reference.py. llama.cpp refuses to load a model without
// tensors but keeps its vocabulary, which is all tokenize needs.
async function wordpieceReference(part) {
    const file = join(SHARED, "generated-vocab", "ggml-vocab-bert-minilm.gguf");
    const strings = JSON.parse(readFileSync(join(SHARED, "reference-wordpiece.json"), "utf8"))
        .cases.map((c) => c.text);
    const model = await llama.loadModel({modelPath: file, vocabOnly: true});
    const cases = strings.map((text) => ({text, ids: model.tokenize(text, false)}));
    await model.dispose();
    writeJson(join(DATA, "llamacpp_tokenize_bert_minilm.json"), {
        generated_by: command(part),
        llama_cpp: llamaCppBuild(),
        model: {file: relative(ROOT, file), sha256: await sha256(file)},
        corpus: {files: ["tests/data/tokenizer/reference-wordpiece.json"], counts: [strings.length]},
        call: "model.tokenize(text, false) -> ids: llama.cpp common_tokenize(vocab, text, " +
              "add_special=false, parse_special=false)",
    }, {cases: cases.map((c) => JSON.stringify(c))});
}

// Worker: JOBS_JSON is a list of {path, from}: for each, the ids of the strings of
// STRINGS_JSON from index `from` on, with that GGUF, or why llama.cpp refused the file. One JSON
// line per string (or refusal) is appended to OUT_JSONL as soon as it is known.
async function worker(jobsFile, stringsFile, outFile) {
    const jobs = JSON.parse(readFileSync(jobsFile, "utf8"));
    const strings = JSON.parse(readFileSync(stringsFile, "utf8"));
    for (const {path, from} of jobs) {
        lastErrors = [];
        let model;
        try {
            model = await llama.loadModel({modelPath: path, vocabOnly: true});
        } catch (e) {
            const why = lastErrors.find((m) => /pre-tokenizer/.test(m)) || lastErrors.join(" | ") || String(e);
            appendFileSync(outFile, JSON.stringify({path, refused: why}) + "\n");
            continue;
        }
        for (let i = from; i < strings.length; ++i)
            appendFileSync(outFile, JSON.stringify({path, i, ids: model.tokenize(strings[i], false)}) + "\n");
        await model.dispose();
    }
}

// The jobs run in a child process: a pre-tokenizer whose rules trip an assertion inside
// llama.cpp aborts the process. The string it was tokenizing is recorded as such (ids null) and
// a new child goes on with the next one. Returns, per path, {refused} or {ids, aborts}.
function runJobs(tmp, paths, strings) {
    const stringsFile = join(tmp, "strings.json"), jobsFile = join(tmp, "jobs.json");
    const outFile = join(tmp, "out.jsonl");
    writeFileSync(stringsFile, JSON.stringify(strings));
    const results = new Map(paths.map((p) => [p, {ids: new Array(strings.length).fill(null), aborts: []}]));
    let next = {job: 0, from: 0};
    while (next.job < paths.length) {
        const jobs = paths.slice(next.job).map((path, k) => ({path, from: k ? 0 : next.from}));
        writeFileSync(jobsFile, JSON.stringify(jobs));
        writeFileSync(outFile, "");
        const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--worker", jobsFile, stringsFile, outFile],
                            {encoding: "utf8", maxBuffer: 1 << 26, env: {...process.env, NODE_LLAMA_CPP_DIR: NODE_DIR}});
        // Where the child got to: the job and string after the last line it wrote.
        for (const line of readFileSync(outFile, "utf8").split("\n").filter((l) => l)) {
            const o = JSON.parse(line);
            next = {job: paths.indexOf(o.path), from: 0};
            if (o.refused) { results.set(o.path, {refused: o.refused}); ++next.job; continue; }
            results.get(o.path).ids[o.i] = o.ids;
            next.from = o.i + 1;
            if (next.from === strings.length) next = {job: next.job + 1, from: 0};
        }
        if (r.status !== 0) {
            const line = r.stderr.split("\n").find((l) => /GGML_ASSERT|error|abort/i.test(l)) || `exit ${r.status}`;
            results.get(paths[next.job]).aborts.push({i: next.from, reason: line.replace(/^.*\/llama\.cpp\//, "llama.cpp/")});
            console.log(`llama.cpp aborts on ${relative(tmp, paths[next.job])}, string ${next.from}`);
            next = next.from + 1 === strings.length ? {job: next.job + 1, from: 0} : {job: next.job, from: next.from + 1};
        } else if (next.job < paths.length) {
            throw new Error(`worker stopped early at ${paths[next.job]}`);
        }
    }
    return paths.map((p) => results.get(p));
}

async function pretokenizerReference(part) {
    const vocabs = {
        smollm2: join(MODELS, "SmolLM2-135M-Instruct.Q4_1.gguf"),
        llama3: join(SHARED, "generated-vocab", "ggml-vocab-llama3.gguf"),
    };
    const shownPath = {
        smollm2: "SmolLM2-135M-Instruct.Q4_1.gguf (scripts/fetch-models)",
        llama3: "tests/data/tokenizer/generated-vocab/ggml-vocab-llama3.gguf",
    };
    const nfc = JSON.parse(execFileSync("python3", [join(HERE, "nfc.py")],
                                        {input: JSON.stringify(corpus), encoding: "utf8"}));
    const nfcStrings = nfc.changed.map(([, text]) => text);
    const tmp = mkdtempSync(join(tmpdir(), "vkllm-pre-"));
    try {
        writeFileSync(join(tmp, "names.txt"), PRE_NAMES.join("\n") + "\n");
        execFileSync("python3", [join(HERE, "vocab_variant.py"), tmp, join(tmp, "names.txt"),
                                 ...Object.entries(vocabs).map(([k, v]) => `${k}=${v}`)],
                     {stdio: ["ignore", "inherit", "inherit"]});
        const labels = Object.keys(vocabs);
        const results = runJobs(tmp, PRE_NAMES.flatMap((name) => labels.map((l) => join(tmp, l, name + ".gguf"))),
                                [...corpus, ...nfcStrings]);
        const groups = new Map();
        const refused = [], crashed = [];
        for (const [n, name] of PRE_NAMES.entries()) {
            const rs = labels.map((_, v) => results[n * labels.length + v]);
            if (rs.some((r) => r.refused)) {
                if (!rs.every((r) => r.refused)) throw new Error(`${name} refused with one vocabulary only`);
                refused.push({name, reason: rs[0].refused});
                console.log(`${name}: refused (${rs[0].refused})`);
                continue;
            }
            const ids = {}, idsNfc = {}, aborted = {};
            for (const [v, label] of labels.entries()) {
                ids[label] = rs[v].ids.slice(0, corpus.length);
                idsNfc[label] = rs[v].ids.slice(corpus.length);
                if (rs[v].aborts.length) aborted[label] = rs[v].aborts.map((a) => a.i);
            }
            if (Object.keys(aborted).length) {
                const reason = rs.flatMap((r) => r.aborts)[0].reason;
                crashed.push({name, reason, string_indices: aborted});
                console.log(`${name}: llama.cpp aborts on ${Object.values(aborted).flat().length} strings (${reason})`);
                if (rs.every((r) => r.ids.every((x) => x === null))) continue;
            }
            const key = JSON.stringify([ids, idsNfc]);
            if (!groups.has(key)) groups.set(key, {names: [], ids, ids_nfc: idsNfc});
            groups.get(key).names.push(name);
            console.log(`${name}: accepted`);
        }
        const vocabInfo = {};
        for (const [label, path] of Object.entries(vocabs))
            vocabInfo[label] = {file: shownPath[label], sha256: await sha256(path)};
        writeJson(join(DATA, "llamacpp_pretokenizers.json"), {
            generated_by: command(part),
            llama_cpp: llamaCppBuild(),
            vocabularies: vocabInfo,
            how: "each vocabulary's metadata copied with tokenizer.ggml.pre set to the name and no " +
                 "tensors (vocab_variant.py), loaded with vocabOnly; ids = model.tokenize(text, false) " +
                 "(no BOS, special-token parsing off). Names with identical ids for every string " +
                 "on both vocabularies form one group.",
            corpus: corpusInfo,
            names_tried: PRE_NAMES,
            refused_by_this_llamacpp: refused,
            aborts_in_this_llamacpp: crashed,
            aborts_note: "a string on which llama.cpp aborts (an assertion) under a name has null ids " +
                         "there; string_indices count the corpus, then the nfc_strings after it",
            nfc: {unicode_version: nfc.unicode_version, names: NFC_NAMES,
                  note: "nfc_strings: [index, NFC form] of the strings NFC changes; each group's " +
                        "ids_nfc holds llama.cpp's ids of those NFC forms, in that order"},
            nfc_strings: nfc.changed,
        }, {strings: corpus.map((t) => JSON.stringify(t)), groups: [...groups.values()].map(formatGroup)});
        console.log(`${groups.size} groups, ${refused.length} names refused, ${crashed.length} abort`);
    } finally {
        rmSync(tmp, {recursive: true, force: true});
    }
}

const part = process.argv[2];
if (part === "--worker") {
    await worker(...process.argv.slice(3, 6));
} else {
    if (part && part !== "models" && part !== "pretokenizers" && part !== "wordpiece")
        throw new Error("usage: tokenize.mjs [models|pretokenizers|wordpiece]");
    if (!part || part === "models") {
        await modelReference("smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", part);
        await modelReference("gemma3", "gemma-3-270m-q4_k_m.gguf", part);
    }
    if (!part || part === "pretokenizers") await pretokenizerReference(part);
    if (!part || part === "wordpiece") await wordpieceReference(part);
}
await llama.dispose();
