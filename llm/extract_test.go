package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestExtractJSON(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", `{"a": 1}`, `{"a":1}`},
		{"spaces", "  \n{\"a\": [1, 2]}\n ", `{"a":[1,2]}`},
		{"fence", "```json\n{\"pass\": true}\n```", `{"pass":true}`},
		{"fence no info", "Sure:\n```\n{\"pass\": true}\n```\nDone.", `{"pass":true}`},
		{"fence JSON upper", "```JSON\n{\"n\": 2}\n```", `{"n":2}`},
		{"second fence holds it", "```text\nno json\n```\n```json\n{\"n\": 3}\n```", `{"n":3}`},
		{"prose around", `The verdict is {"pass": false, "evidence": "no \"Results\" {here}"} as you can see.`, `{"pass":false,"evidence":"no \"Results\" {here}"}`},
		{"trailing commas", "{\"a\": [1, 2,], \"b\": {\"c\": 3,},}", `{"a":[1,2],"b":{"c":3}}`},
		{"comments", "{\n  // the step\n  \"step\": 1, /* first */ \"ok\": true\n}", `{"step":1,"ok":true}`},
		{"python literals", `{'pass': True, 'value': None, 'list': [False]}`, `{"pass":true,"value":null,"list":[false]}`},
		{"single quotes with double inside", `{'text': 'say "hi"'}`, `{"text":"say \"hi\""}`},
		{"cut off", `{"steps": [{"action": "tap", "target_text": "Sear`, `{"steps":[{"action":"tap","target_text":"Sear"}]}`},
		{"cut after key", `{"pass": true, "evidence":`, `{"pass":true,"evidence":null}`},
		{"object preferred over array", `[1] then {"a": 1}`, `{"a":1}`},
		{"array alone", `Steps: [ "tap", "type", ]`, `["tap","type"]`},
		{"many braces in prose", strings.Repeat("Set {x} to {y}. ", 40) + `{"ok": 2}`, `{"ok":2}`},
		{"comment after prose", "Plan: { // steps\n \"n\": 1 }", `{"n":1}`},
		{"brace in prose first", `Use {curly} braces. {"ok": 1}`, `{"ok":1}`},
		{"chinese", "结果如下：{\"通过\": true, \"证据\": \"出现“结果”\"}", `{"通过":true,"证据":"出现“结果”"}`},
		{"unclosed fence", "```json\n{\"a\": 1", `{"a":1}`},
		{"newline in string", "{\"a\": \"line1\nline2\"}", `{"a":"line1\nline2"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExtractJSON(tt.in)
			if err != nil {
				t.Fatalf("ExtractJSON(%q): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("ExtractJSON(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
	for _, in := range []string{"", "no json here", "{{{{", "]]]", "I'd say true."} {
		if got, err := ExtractJSON(in); !errors.Is(err, ErrNoJSON) {
			t.Errorf("ExtractJSON(%q) = %s, %v; want ErrNoJSON", in, got, err)
		}
	}
}

func TestToolFromText(t *testing.T) {
	tools := []Tool{{Name: "tap"}, {Name: "input"}}
	tests := []struct{ name, in, tool, args, answer, err string }{
		{"tool args", `{"tool": "tap", "args": {"id": "e7"}}`, "tap", `{"id":"e7"}`, "", ""},
		{"name arguments string", `{"name": "input", "arguments": "{\"text\": \"hi\"}"}`, "input", `{"text":"hi"}`, "", ""},
		{"qwen tags", "<tool_call>\n{\"name\": \"tap\", \"arguments\": {\"id\": \"e2\"}}\n</tool_call>", "tap", `{"id":"e2"}`, "", ""},
		{"function object", `{"function": {"name": "tap", "arguments": {"id": "e1"}}}`, "tap", `{"id":"e1"}`, "", ""},
		{"no args", `{"tool": "tap"}`, "tap", `{}`, "", ""},
		{"answer", `{"answer": "nothing to do"}`, "", "", "nothing to do", ""},
		{"unknown tool", `{"tool": "swipe", "args": {}}`, "", "", "", `"swipe", which is not one of tap, input`},
		{"no tool named", `{"x": 1}`, "", "", "", "names no tool"},
		{"prose only", `I tapped it.`, "", "", "", "no JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc, answer, err := toolFromText(tt.in, tools)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if answer != tt.answer {
				t.Errorf("answer = %q, want %q", answer, tt.answer)
			}
			if tt.tool == "" {
				if tc != nil {
					t.Errorf("call = %+v, want none", tc)
				}
				return
			}
			if tc == nil || tc.Name != tt.tool || string(tc.Args) != tt.args {
				t.Errorf("call = %+v, want %s %s", tc, tt.tool, tt.args)
			}
		})
	}
}

func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": 1}`, "```json\n{\"pass\": true}\n```", `x {"a": [1, 2,],} y`, `{'a': True}`,
		`{"steps": [{"action": "tap"`, `[1, {"b": "}"}]`, `/* c */ {"a": // d` + "\n1}", `{"a": "\`, `{"\u00e9": "é"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ExtractJSON(s)
		if err != nil {
			if !errors.Is(err, ErrNoJSON) {
				t.Fatalf("ExtractJSON(%q): error %v does not wrap ErrNoJSON", s, err)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("ExtractJSON(%q) = %q, not valid JSON", s, got)
		}
		// Valid JSON objects come back as they are, wrapped in prose or a
		// fence or not.
		var v map[string]any
		if json.Unmarshal([]byte(s), &v) == nil && v != nil {
			want, _ := ExtractJSON(s)
			for _, wrapped := range []string{"Answer: " + s + " Thanks.", "```json\n" + s + "\n```"} {
				w, err := ExtractJSON(wrapped)
				if err != nil || string(w) != string(want) {
					t.Fatalf("ExtractJSON(%q) = %s, %v; want %s", wrapped, w, err, want)
				}
			}
		}
	})
}

func BenchmarkExtractJSON(b *testing.B) {
	answers := map[string]string{
		"plain":  `{"steps":[{"step_id":1,"action":"tap","target_text":"Search","expected_state":"search box open"}]}`,
		"fenced": "Here is the plan:\n```json\n{\"steps\": [{\"step_id\": 1, \"action\": \"tap\", \"target_text\": \"Search\",},]}\n```\nGood luck.",
		"prose":  strings.Repeat("Thinking about {braces} and [brackets]. ", 50) + `{"pass": true, "confidence": 0.9}`,
	}
	for name, text := range answers {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, err := ExtractJSON(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
