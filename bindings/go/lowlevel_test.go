package vkllm

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

const streamText = "Hello world, Zürich 東京 🙂!"

// argmax returns the index of the largest of the tokenizer's nTok logits, the lowest of equals
// (the library's choice).
func argmax(row []float32, nTok int) int32 {
	best := 0
	for i, v := range row[:nTok] {
		if v > row[best] {
			best = i
		}
	}
	return int32(best)
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func mustStatus(t *testing.T, err error, want *Error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want status %v", err, want.Status)
	}
}

func TestVersionStringSpellsTheVersionNumber(t *testing.T) {
	v := Version()
	if got, want := VersionString(), fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100); got != want {
		t.Fatalf("VersionString %q, want %q", got, want)
	}
}

func TestDevicesSayWhetherPrefillRunsOnCooperativeMatrices(t *testing.T) {
	devices, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devices {
		switch d.CooperativeMatrix {
		case CoopmatAbsent:
			if len(d.CoopmatShapes) != 0 {
				t.Errorf("%s: absent, with shapes %v", d.Name, d.CoopmatShapes)
			}
		case CoopmatUsed:
			// The kernels' shape is one the device lists: f16 operands, f32 accumulator.
			s := d.CoopmatShape
			if !slices.Contains(d.CoopmatShapes, s) || !s.SubgroupScope ||
				s.AType != ComponentF16 || s.BType != ComponentF16 ||
				s.CType != ComponentF32 || s.ResultType != ComponentF32 {
				t.Errorf("%s: uses %v of %v", d.Name, s, d.CoopmatShapes)
			}
		case CoopmatUnsuitable, CoopmatNotBuilt, CoopmatNotChosen:
		default:
			t.Errorf("%s: a value the header does not have: %d", d.Name, d.CooperativeMatrix)
		}
	}
	s := CoopmatShape{M: 16, N: 8, K: 16, AType: ComponentF16, BType: ComponentF16,
		CType: ComponentF32, ResultType: ComponentF32, SubgroupScope: true}
	if got := s.String(); got != "16x8x16 f16*f16+f32->f32" {
		t.Errorf("String() %q", got)
	}
	s.AType, s.CType, s.SubgroupScope = 1000141000, ComponentS32, false
	if got := s.String(); got != "16x8x16 type 1000141000*f16+s32->f32 workgroup scope" {
		t.Errorf("String() %q", got)
	}
}

func TestDevicesStatsAndSelfCheckDescribeTheDeviceInUse(t *testing.T) {
	devices, err := Devices()
	if err != nil || len(devices) == 0 {
		t.Fatalf("Devices: %v %v", devices, err)
	}
	opts := DefaultRuntimeOptions()
	if opts.DeviceIndex != -1 || opts.Validation || opts.MemoryBudget != 0 {
		t.Fatalf("defaults %+v", opts)
	}
	opts.DeviceIndex = int32(len(devices))
	if _, err := NewRuntimeWith(opts); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("a device past the last: %v", err)
	}
	rt, m := load(t)
	info, err := rt.DeviceInfo()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(info, devices[info.Index]) || !info.Usable || len(info.Heaps) == 0 {
		t.Fatalf("runtime device %+v, enumerated %+v", info, devices[info.Index])
	}
	before, err := rt.Stats()
	if err != nil {
		t.Fatal(err)
	}
	nVocab, _ := m.NVocab()
	if before.DeviceMemoryAllocated < uint64(nVocab) {
		t.Fatalf("stats with a model loaded: %+v", before)
	}
	s, err := NewSession(m, 32)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Eval(0, []int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	after, _ := rt.Stats()
	if after.Submits <= before.Submits || after.PipelinesCreated == 0 ||
		after.DeviceMemoryAllocated <= before.DeviceMemoryAllocated {
		t.Fatalf("a session's step did not count: before %+v, after %+v", before, after)
	}
	check, err := rt.SelfCheck()
	if err != nil || check.KernelsChecked < 12 || check.KernelsFailed != 0 {
		t.Fatalf("self check %+v %v", check, err)
	}
}

func TestALoadReportsProgressAndStopsWhenAsked(t *testing.T) {
	rt, _ := load(t)
	var seen []float32
	m, err := LoadModelWith(rt, testModel(t), ModelOptions{Progress: func(f float32) bool {
		seen = append(seen, f)
		return true
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(seen) == 0 || !slices.IsSorted(seen) || seen[len(seen)-1] != 1 {
		t.Fatalf("progress %v", seen)
	}
	_, err = LoadModelWith(rt, testModel(t), ModelOptions{Progress: func(float32) bool { return false }})
	mustStatus(t, err, ErrCancelled)
	g, err := OpenGGUF(testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	want, err := g.GetString("tokenizer.chat_template")
	if err != nil && !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if got, err := m.ChatTemplate(); err != nil || got != want {
		t.Fatalf("ChatTemplate %q %v, want %q", got, err, want)
	}
}

func TestGGUFReaderReadsTheFileTheModelWasLoadedFrom(t *testing.T) {
	_, m := load(t)
	g, err := OpenGGUF(testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	s, err := g.Summary()
	if err != nil || s.Architecture != "qwen2" {
		t.Fatalf("summary %+v %v", s, err)
	}
	if a, _ := g.GetString("general.architecture"); a != "qwen2" {
		t.Fatalf("general.architecture %q", a)
	}
	if a, _ := g.GetText("general.architecture"); a != `"qwen2"` {
		t.Fatalf("general.architecture as text %q", a)
	}
	layers, err := g.GetInt("qwen2.block_count")
	if err != nil || layers != int64(s.NLayers) {
		t.Fatalf("block_count %d %v, summary %d", layers, err, s.NLayers)
	}
	if f, _ := g.GetFloat("qwen2.block_count"); f != float64(layers) {
		t.Fatalf("block_count as float %v", f)
	}
	if n, _ := m.NVocab(); n != int(s.NVocab) {
		t.Fatalf("model n_vocab %d, file %d", n, s.NVocab)
	}
	keys, err := g.Keys()
	if err != nil || uint64(len(keys)) != s.NKeys {
		t.Fatalf("%d keys %v, summary %d", len(keys), err, s.NKeys)
	}
	if keys[0] != (GGUFKey{"general.architecture", GGUFString, GGUFString, 1}) {
		t.Fatalf("first key %+v", keys[0])
	}
	tensors, err := g.Tensors()
	if err != nil || uint64(len(tensors)) != s.NTensors {
		t.Fatalf("%d tensors %v, summary %d", len(tensors), err, s.NTensors)
	}
	var params, byType uint64
	for _, tn := range tensors {
		params += tn.NElements
		name, _ := GGMLTypeName(tn.Type)
		n := uint64(1)
		for _, d := range tn.Dims {
			n *= d
		}
		if tn.TypeName != name || n != tn.NElements {
			t.Fatalf("tensor %+v (type name %q)", tn, name)
		}
	}
	for _, c := range s.TensorsOfType {
		byType += c
	}
	if params != s.NParams || byType != s.NTensors {
		t.Fatalf("params %d (summary %d), tensors by type %d", params, s.NParams, byType)
	}
	if name, ok := GGMLTypeName(0); name != "F32" || !ok {
		t.Fatalf("type 0 is %q", name)
	}
	if _, ok := GGMLTypeName(100000); ok {
		t.Fatal("type 100000 has a name")
	}
	_, err = g.GetInt("no.such.key")
	mustStatus(t, err, ErrNotFound)
	_, err = g.GetInt("general.architecture")
	mustStatus(t, err, ErrFormat)
	g.Close()
	_, err = g.Summary()
	mustStatus(t, err, ErrInvalidArgument)
	_, err = OpenGGUF(testModel(t) + ".missing")
	mustStatus(t, err, ErrIO)
}

func TestATokenizerFromTheFileEncodesAsTheModelsOwn(t *testing.T) {
	_, m := load(t)
	g, err := OpenGGUF(testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := g.Tokenizer()
	g.Close() // the tokenizer does not need the file
	if err != nil {
		t.Fatal(err)
	}
	defer tok.Close()
	a, _ := tok.Tokenize(streamText, TokenizeAddSpecial)
	b, _ := m.Tokenize(streamText)
	if !slices.Equal(a, b) || len(a) == 0 {
		t.Fatalf("file's tokenizer %v, model's %v", a, b)
	}
	info, err := tok.Info()
	if mi, _ := m.Tokenizer().Info(); err != nil || info != mi || info.Model != "gpt2" || info.EOS < 0 {
		t.Fatalf("info %+v %v, model's %+v", info, err, mi)
	}
	if eog, err := tok.IsEndOfGeneration(info.EOS); !eog || err != nil {
		t.Fatalf("EOS ends generation: %v %v", eog, err)
	}
	ids, _ := tok.Tokenize(streamText, 0)
	var joined []byte
	for _, id := range ids {
		p, err := tok.TokenToPiece(id, 0)
		if err != nil {
			t.Fatal(err)
		}
		joined = append(joined, p...)
	}
	if string(joined) != streamText {
		t.Fatalf("pieces join to %q", joined)
	}
	if text, _ := tok.Detokenize(ids, 0); text != streamText {
		t.Fatalf("detokenize %q", text)
	}
	_, err = tok.TokenToPiece(int32(info.NVocab), 0)
	mustStatus(t, err, ErrInvalidArgument)
	tok.Close()
	_, err = tok.Info()
	mustStatus(t, err, ErrInvalidArgument)
}

func TestDetokenizerStreamedTokenByTokenEqualsDetokenizeOfAllIDs(t *testing.T) {
	_, m := load(t)
	tok := m.Tokenizer()
	ids, _ := tok.Tokenize(streamText, 0)
	partial := false
	for _, id := range ids {
		p, _ := tok.TokenToPiece(id, 0)
		partial = partial || !utf8.Valid(p)
	}
	if !partial {
		t.Fatal("no token is part of a character: the test shows nothing")
	}
	d, err := tok.NewDetokenizer(0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want, _ := tok.Detokenize(ids, 0)
	for round := 0; round < 2; round++ { // Flush readies it for a second stream
		var sb strings.Builder
		for _, id := range ids {
			piece, err := d.Push(id)
			if err != nil || !utf8.ValidString(piece) {
				t.Fatalf("push %d: %q %v", id, piece, err)
			}
			sb.WriteString(piece)
		}
		rest, _ := d.Flush()
		sb.WriteString(rest)
		if sb.String() != want {
			t.Fatalf("round %d: streamed %q, detokenized %q", round, sb.String(), want)
		}
	}
	_, err = d.Push(-1)
	mustStatus(t, err, ErrInvalidArgument)
}

func TestChatApplyTemplateRendersPlainTurnsAsChatRenderDoes(t *testing.T) {
	turns := []ChatMessage{{"system", "Be brief."}, {"user", "Hi"}}
	want := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
	if got, err := ChatApplyTemplate("chatml", "", turns, false); got != want || err != nil {
		t.Fatalf("%q %v", got, err)
	}
	got, err := ChatApplyTemplate("chatml", "", turns, true)
	rendered, err2 := ChatRender(ChatOptions{TemplateName: "chatml"}, []map[string]string{
		{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}})
	if err != nil || err2 != nil || got != want+"<|im_start|>assistant\n" || rendered != got {
		t.Fatalf("%q %v; ChatRender %q %v", got, err, rendered, err2)
	}
	_, err = ChatApplyTemplate("no-such-template", "", turns, true)
	mustStatus(t, err, ErrNotFound)
}

func twoSequences(t *testing.T, m *Model, flags uint32) *Session {
	t.Helper()
	opts := DefaultSessionOptions()
	opts.NCtx, opts.NSeq, opts.Flags = 64, 2, flags
	s, err := NewSessionWith(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestEvalLogitsEqualTheLogitsOfTheSameTokensThroughDecode(t *testing.T) {
	_, m := load(t)
	prompt, _ := m.Tokenize("Once upon a time there was")
	head, last := prompt[:len(prompt)-1], prompt[len(prompt)-1:]
	s := twoSequences(t, m, 0)
	for seq := uint32(0); seq < 2; seq++ {
		if err := s.EvalInto(seq, head, nil); err != nil {
			t.Fatal(err)
		}
	}
	byEval, err := s.Eval(0, last)
	if err != nil {
		t.Fatal(err)
	}
	byDecode, err := s.Decode([]uint32{1}, last)
	if err != nil || !sameBits(byEval, byDecode[0]) || len(byEval) != s.NVocab() {
		t.Fatalf("eval and decode logits differ (%v)", err)
	}
	p0, _ := s.PositionOf(0)
	p1, _ := s.PositionOf(1)
	if p0 != p1 || int(p1) != len(prompt) {
		t.Fatalf("positions %d %d", p0, p1)
	}
	info, _ := m.Tokenizer().Info()
	next := argmax(byEval, int(info.NVocab))
	rows, err := s.Decode([]uint32{0, 1}, []int32{next, next})
	if err != nil || !sameBits(rows[0], rows[1]) {
		t.Fatalf("two equal sequences decoded together differ (%v)", err)
	}
	_, err = s.Decode([]uint32{0, 0}, []int32{next, next})
	mustStatus(t, err, ErrInvalidArgument)
	mustStatus(t, s.DecodeInto([]uint32{0}, []int32{next}, make([]float32, 3)), ErrInvalidArgument)
}

func TestTruncateThenEvalAgainGivesTheSameLogitsBitForBit(t *testing.T) {
	_, m := load(t)
	prompt, _ := m.Tokenize("Once upon a time there was")
	head, last := prompt[:len(prompt)-1], prompt[len(prompt)-1:]
	s, err := NewSession(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.EvalInto(0, head, nil); err != nil {
		t.Fatal(err)
	}
	first, _ := s.Eval(0, last)
	if err := s.EvalInto(0, []int32{11, 12, 13, 14, 15}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Truncate(0, uint32(len(head))); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Position(); int(p) != len(head) {
		t.Fatalf("position after truncate %d", p)
	}
	again, _ := s.Eval(0, last)
	if !sameBits(first, again) {
		t.Fatal("logits after truncate and eval differ from the first time")
	}
	_, err = s.Eval(0, []int32{int32(s.NVocab())})
	mustStatus(t, err, ErrInvalidArgument)
	if p, _ := s.Position(); int(p) != len(prompt) {
		t.Fatalf("a refused eval moved the position to %d", p)
	}
}

func TestDecodeGreedyChainsTheArgmaxOfEachDecodeStep(t *testing.T) {
	_, m := load(t)
	info, _ := m.Tokenizer().Info()
	nTok := int(info.NVocab)
	a, _ := m.Tokenize("Once upon a time")
	b, _ := m.Tokenize("The sky is")
	chained, stepped := twoSequences(t, m, 0), twoSequences(t, m, 0)
	var first []int32
	for seq, p := range [][]int32{a, b} {
		if err := chained.EvalInto(uint32(seq), p, nil); err != nil {
			t.Fatal(err)
		}
		l, err := stepped.Eval(uint32(seq), p)
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, argmax(l, nTok))
	}
	const steps = 5
	got, err := chained.DecodeGreedy([]uint32{0, 1}, first, steps)
	if err != nil {
		t.Fatal(err)
	}
	tokens := first
	for st := 0; st < steps; st++ {
		rows, err := stepped.Decode([]uint32{0, 1}, tokens)
		if err != nil {
			t.Fatal(err)
		}
		tokens = []int32{argmax(rows[0], nTok), argmax(rows[1], nTok)}
		if !slices.Equal(got[st], tokens) {
			t.Fatalf("step %d: chained %v, stepped %v", st, got[st], tokens)
		}
	}
	if p, _ := chained.PositionOf(1); int(p) != len(b)+steps {
		t.Fatalf("position %d after the chain", p)
	}
	_, err = chained.DecodeGreedy([]uint32{0, 1}, first, MaxChainedSteps+1)
	mustStatus(t, err, ErrInvalidArgument)
}

func TestStatsAndKVBytesCountTheCacheASessionHolds(t *testing.T) {
	_, m := load(t)
	prompt, _ := m.Tokenize("Once upon a time")
	opts := DefaultSessionOptions()
	opts.NCtx = 64
	f16, err := NewSessionWith(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer f16.Close()
	opts.KVType = KVF32
	f32, err := NewSessionWith(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer f32.Close()
	if err := f16.EvalInto(0, prompt, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := f16.Stats(); err != nil || st.TokensPrefilled != uint64(len(prompt)) {
		t.Fatalf("stats %+v %v", st, err)
	}
	g, err := OpenGGUF(testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := g.Summary()
	g.Close()
	for layer := uint32(0); layer < s.NLayers; layer++ {
		a, err := f16.LayerKVBytes(layer)
		b, err2 := f32.LayerKVBytes(layer)
		if err != nil || err2 != nil || a == 0 || b != 2*a {
			t.Fatalf("layer %d: F16 %d %v, F32 %d %v", layer, a, err, b, err2)
		}
	}
	_, err = f16.LayerKVBytes(s.NLayers)
	mustStatus(t, err, ErrInvalidArgument)
}

func TestAProfiledSessionTimesEveryKernelItRan(t *testing.T) {
	rt, m := load(t)
	if info, _ := rt.DeviceInfo(); !info.Timestamps {
		t.Skip("the device has no compute timestamps")
	}
	s := twoSequences(t, m, SessionProfile)
	if k, err := s.Profile(); err != nil || len(k) != 0 {
		t.Fatalf("before any step: %v %v", k, err)
	}
	prompt, _ := m.Tokenize("Once upon a time")
	if err := s.EvalInto(0, prompt, nil); err != nil {
		t.Fatal(err)
	}
	kernels, err := s.Profile()
	if err != nil || len(kernels) == 0 {
		t.Fatalf("%v %v", kernels, err)
	}
	for i, k := range kernels {
		if k.Dispatches == 0 || k.Ms < 0 || k.Kernel == "" || (i > 0 && k.Ms > kernels[i-1].Ms) {
			t.Fatalf("kernel %d: %+v", i, k)
		}
	}
	plain := twoSequences(t, m, 0)
	_, err = plain.Profile()
	mustStatus(t, err, ErrInvalidArgument)
}
