"""Grammars and JSON Schemas constraining sampling through the ctypes bindings (run by ctest as
Python.Bindings, which sets VKLLM_LIBRARY and VKLLM_TEST_MODEL, a tiny model file)."""

import array
import json
import math
import os
import unittest

import vkllm

import tiny_model


def _cached_model(name):
    """A real model of scripts/fetch-models' cache (tests/model_cache.h's rule: $VKLLM_MODEL_CACHE,
    else $XDG_CACHE_HOME/vkllm/models, else ~/.cache/vkllm/models), or None when absent."""
    cache = os.environ.get("VKLLM_MODEL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "vkllm", "models")
    path = os.path.join(cache, name)
    return path if os.path.isfile(path) else None


PERSON_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 20},
                   "age": {"type": "integer", "minimum": 0, "maximum": 150}},
    "required": ["name", "age"],
}

# Nine places for whitespace of at most 21 characters each (the converter's `space`) and every
# value bounded: at most 214 characters, so that even the tiny model's random continuation ends
# within its 256 positions (a prompt and 240 tokens of at least one character).
BOUNDED_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}, "tag": {"enum": ["red", "green"]}},
    "required": ["ok", "tag"],
}


class GrammarTest(unittest.TestCase):
    """Grammars and JSON Schemas constraining sampling (issue 27), on the tiny model
    and, for output a real model writes, SmolLM2-135M-Instruct when cached."""

    setUpClass = classmethod(tiny_model.open_tiny_model)
    tearDownClass = classmethod(tiny_model.close_tiny_model)

    def test_json_schema_to_gbnf_writes_a_root_rule(self):
        gbnf = vkllm.json_schema_to_gbnf(PERSON_SCHEMA)
        self.assertIn("root ::=", gbnf)
        self.assertEqual(vkllm.json_schema_to_gbnf(json.dumps(PERSON_SCHEMA)), gbnf)
        # The text compiles as a grammar of its own, for the model or for its tokenizer.
        with vkllm.Grammar(self.model, gbnf), vkllm.Grammar(self.model.tokenizer(), gbnf, "root"):
            pass

    def test_a_bad_grammar_raises_with_its_line_and_column(self):
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Grammar(self.model, 'root = "yes"')
        self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
        self.assertIn("line 1, column", cm.exception.message)
        with vkllm.Session(self.model, n_ctx=64) as session:
            with self.assertRaises(vkllm.Error) as cm:
                session.generate(self.prompt, grammar='root ::= "a" missing')
            self.assertIn("line 1, column", cm.exception.message)
            self.assertIn("missing", cm.exception.message)

    def test_an_unsupported_schema_keyword_raises_naming_it(self):
        schema = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Grammar.from_json_schema(self.model, schema)
        self.assertEqual(cm.exception.code, vkllm.ERR_UNSUPPORTED)
        self.assertIn("uniqueItems", cm.exception.message)
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.json_schema_to_gbnf(schema)
        self.assertIn("uniqueItems", cm.exception.message)
        with self.assertRaises(vkllm.Error) as cm:
            vkllm.Sampler(self.model, json_schema=schema)
        self.assertIn("uniqueItems", cm.exception.message)

    def test_apply_grammar_leaves_finite_only_tokens_spelling_a_prefix_of_the_text(self):
        tok = self.model.tokenizer()
        n_vocab = self.model.info().n_vocab
        with vkllm.Grammar(self.model, 'root ::= "a"') as g, \
                vkllm.Sampler(self.model, grammar=g) as s:
            row = s.apply_grammar([0.5] * n_vocab)
        self.assertEqual(len(row), n_vocab)
        finite = {i for i, x in enumerate(row) if math.isfinite(x)}
        self.assertTrue(all(row[i] == 0.5 for i in finite))
        n_tok = tok.info().n_vocab
        want = {i for i in range(n_tok) if tok.token_to_piece(i) == b"a"}
        self.assertTrue(want)
        self.assertEqual(finite, want)
        # In place for an array.array('f'); a sampler without a grammar changes nothing.
        row = array.array("f", [1.0] * n_vocab)
        with vkllm.Sampler(self.model) as plain:
            self.assertIs(plain.apply_grammar(row), row)
            self.assertEqual(plain.progress(), vkllm.GRAMMAR_COMPLETE)
        self.assertTrue(all(x == 1.0 for x in row))

    def test_progress_goes_from_incomplete_to_finished_over_the_tokens_of_the_text(self):
        ids = self.model.tokenize("yes", add_special=False)
        with vkllm.Sampler(self.model, grammar='root ::= "yes"', temperature=0) as s:
            self.assertEqual(s.progress(), vkllm.GRAMMAR_INCOMPLETE)
            s.accept_prompt(self.prompt)  # the prompt does not advance the grammar
            self.assertEqual(s.progress(), vkllm.GRAMMAR_INCOMPLETE)
            for i, t in enumerate(ids):
                self.assertEqual(s.progress(), vkllm.GRAMMAR_INCOMPLETE, i)
                s.accept(t)
            self.assertEqual(s.progress(), vkllm.GRAMMAR_FINISHED)
            s.reset()
            self.assertEqual(s.progress(), vkllm.GRAMMAR_INCOMPLETE)
            # A token the grammar does not allow is refused and changes nothing.
            no = self.model.tokenize("no", add_special=False)[0]
            with self.assertRaises(vkllm.Error) as cm:
                s.accept(no)
            self.assertEqual(cm.exception.code, vkllm.ERR_INVALID_ARGUMENT)
            self.assertEqual(s.progress(), vkllm.GRAMMAR_INCOMPLETE)

    def test_a_choice_grammar_generates_one_of_its_labels(self):
        labels = ["positive", "negative", "neutral"]
        gbnf = "root ::= " + " | ".join(f'"{label}"' for label in labels)
        with vkllm.Session(self.model, n_ctx=128) as session:
            for seed in (1, 2, 3):
                session.reset()
                text = "".join(session.generate(self.prompt, max_tokens=16, temperature=1.0,
                                                seed=seed, grammar=gbnf))
                self.assertIn(text, labels)
                self.assertEqual(session.last_result.stop_reason, vkllm.STOP_END_OF_GENERATION)
            # A compiled grammar serves any number of generations and may close meanwhile.
            g = vkllm.Grammar(self.model, gbnf)
            session.reset()
            gen = session.generate(self.prompt, max_tokens=16, temperature=0, grammar=g)
            g.close()
            self.assertIn("".join(gen), labels)
        # Batched: each sequence's sampler ends it when its grammar is finished.
        with vkllm.Session(self.model, n_ctx=128, n_seq=2) as session, \
                vkllm.Sampler(self.model, grammar=gbnf, temperature=1.0, seed=4) as s0, \
                vkllm.Sampler(self.model, grammar=gbnf, temperature=1.0, seed=5) as s1:
            out = session.generate_batch([self.prompt, self.prompt], max_tokens=16,
                                         samplers=[s0, s1])
            self.assertEqual([self.model.detokenize(ids) in labels for ids in out], [True, True])
            self.assertEqual([s0.progress(), s1.progress()], [vkllm.GRAMMAR_FINISHED] * 2)

    def test_a_result_names_why_it_stopped_and_whether_the_grammar_is_finished(self):
        # Enum members by name that still compare equal to the C values.
        self.assertIs(vkllm.STOP_MAX_TOKENS, vkllm.StopReason.MAX_TOKENS)
        self.assertEqual(vkllm.StopReason.MAX_TOKENS, 1)
        self.assertEqual(vkllm.GrammarProgress.FINISHED, 2)
        with vkllm.Session(self.model, n_ctx=256) as session:
            cut = "".join(session.generate(self.prompt, max_tokens=3, temperature=0.8, seed=7,
                                           json_schema=BOUNDED_SCHEMA))
            r = session.last_result
            self.assertIs(r.stop_reason, vkllm.StopReason.MAX_TOKENS)
            self.assertIs(r.grammar_progress, vkllm.GrammarProgress.INCOMPLETE)
            self.assertEqual(r.grammar_progress.name, "INCOMPLETE")
            with self.assertRaises(ValueError):
                json.loads(cut)
            session.reset()
            whole = "".join(session.generate(self.prompt, max_tokens=240, temperature=0.8,
                                             seed=7, json_schema=BOUNDED_SCHEMA))
            r = session.last_result
            self.assertIs(r.stop_reason, vkllm.StopReason.END_OF_GENERATION)
            self.assertIs(r.grammar_progress, vkllm.GrammarProgress.FINISHED)
            self.assertTrue(whole.startswith(cut), (cut, whole))
            json.loads(whole)
            session.reset()
            list(session.generate(self.prompt, max_tokens=3, temperature=0))
            self.assertIs(session.last_result.grammar_progress, vkllm.GrammarProgress.COMPLETE)
        with vkllm.Sampler(self.model, grammar='root ::= "yes"') as s:
            self.assertIs(s.progress(), vkllm.GrammarProgress.INCOMPLETE)

    def test_a_bounded_json_schema_gives_json_with_the_required_keys(self):
        with vkllm.Session(self.model, n_ctx=256) as session:
            text = "".join(session.generate(self.prompt, max_tokens=240, temperature=0.8,
                                            seed=7, json_schema=BOUNDED_SCHEMA))
            self.assertEqual(session.last_result.stop_reason, vkllm.STOP_END_OF_GENERATION)
        value = json.loads(text)
        self.assertEqual(set(value), {"ok", "tag"})
        self.assertIsInstance(value["ok"], bool)
        self.assertIn(value["tag"], ("red", "green"))

    def test_smollm2_under_a_json_schema_writes_json_with_the_required_keys(self):
        path = _cached_model("SmolLM2-135M-Instruct.Q4_1.gguf")
        if path is None:
            self.skipTest("SmolLM2-135M-Instruct is not cached: run scripts/fetch-models")
        with vkllm.Model(self.runtime, path) as model, \
                vkllm.Session(model, n_ctx=512) as session:
            prompt = model.chat_render(
                [{"role": "user", "content": "Describe a person as JSON: name and age."}],
                add_generation_prompt=True)
            ids = model.tokenize(prompt, add_special=False, parse_special=True)
            text = "".join(session.generate(ids, max_tokens=96, temperature=0,
                                            json_schema=PERSON_SCHEMA))
            self.assertEqual(session.last_result.stop_reason, vkllm.STOP_END_OF_GENERATION,
                             text)
            value = json.loads(text)
            self.assertEqual(set(value), {"name", "age"}, text)
            self.assertIsInstance(value["name"], str)
            self.assertIsInstance(value["age"], int)
            # Through a Sampler in a loop of the app's own: the same text.
            with vkllm.Sampler(model, json_schema=json.dumps(PERSON_SCHEMA),
                               temperature=0) as s:
                session.reset()
                s.accept_prompt(ids)
                logits, out = session.eval(ids), []
                while s.progress() != vkllm.GRAMMAR_FINISHED and len(out) < 96:
                    t = s.sample(logits)
                    if model.is_end_of_generation(t):
                        break
                    s.accept(t)
                    out.append(t)
                    logits = session.eval([t])
            self.assertEqual(model.detokenize(out), text)


if __name__ == "__main__":
    unittest.main()
