package locate

import (
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// query is a Locator made ready to match: the prompt parsed into text, a
// type hint and an ordinal, the fields normalised.
type query struct {
	sceneID  string // e12
	text     string // visible text or description to look for
	quoted   bool   // text came from quotes, so it is meant literally
	typeHint string // from words like "button", "field", "按钮"
	strictID string // resource id, exact or by its entry name
	text2    string // Locator.Text (structured: text only)
	desc     string // Locator.Desc
	typ      string // Locator.Type: a strict filter
	index    int
	indexSet bool // an ordinal or index was given: pick, do not report ambiguity
	last     bool // "the last …"
}

// quotePairs are the quote marks a prompt may use around literal text.
var quotePairs = [][2]string{
	{`"`, `"`}, {"“", "”"}, {"「", "」"}, {"『", "』"}, {"'", "'"}, {"‘", "’"}, {"《", "》"}, {"【", "】"},
}

// typeWords map words of a prompt to scene element types.
var typeWords = map[string]string{
	"button": "button", "btn": "button", "按钮": "button", "键": "button",
	"field": "input", "box": "input", "input": "input", "textbox": "input", "textfield": "input",
	"输入框": "input", "框": "input", "搜索框": "input",
	"tab": "tab", "标签": "tab", "标签页": "tab",
	"checkbox": "checkbox", "复选框": "checkbox",
	"switch": "switch", "toggle": "switch", "开关": "switch",
	"icon": "image", "image": "image", "图标": "image", "图片": "image",
	"link": "text", "label": "text", "text": "text", "文字": "text", "文本": "text",
	"item": "", "entry": "", "option": "", "row": "", "element": "", "menu": "", "项": "", "选项": "",
}

// leadWords are verbs and articles a prompt may start with.
var leadWords = []string{"tap on ", "click on ", "tap ", "click ", "press ", "select ", "choose ", "open ",
	"the ", "a ", "an ", "on ", "点击", "轻触", "单击", "选择", "打开"}

// cjkTypeWords are the non-ASCII type words, longest first, so "输入框"
// is stripped before "框".
var cjkTypeWords = func() []string {
	var ws []string
	for w := range typeWords {
		if !isASCII(w) {
			ws = append(ws, w)
		}
	}
	sort.Slice(ws, func(i, j int) bool {
		if len(ws[i]) != len(ws[j]) {
			return len(ws[i]) > len(ws[j])
		}
		return ws[i] < ws[j]
	})
	return ws
}()

var ordinals = map[string]int{"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4, "第一个": 0, "第二个": 1, "第三个": 2}

// parsePrompt reads a natural-language target into a query.
func parsePrompt(p string, q *query) {
	p = strings.TrimSpace(p)
	if isSceneID(p) {
		q.sceneID = p
		return
	}
	if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") && parseInline(p[1:len(p)-1], q) {
		return
	}
	if text, rest, ok := quoted(p); ok {
		q.text, q.quoted = text, true
		hints(rest, q)
		return
	}
	hints(p, q)
	q.text = strip(p)
}

// parseInline reads "{id: com.shop:id/search, index: 1}" written as text.
func parseInline(s string, q *query) bool {
	parts := strings.Split(s, ",")
	for _, part := range parts {
		k, v, ok := strings.Cut(part, ":")
		if !ok {
			return false
		}
		k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"'`)
		switch k {
		case "id", "resourceId", "resource_id":
			if isSceneID(v) {
				q.sceneID = v
			} else {
				q.strictID = v
			}
		case "text":
			q.text2 = v
		case "desc":
			q.desc = v
		case "type":
			q.typ = v
		case "index":
			n, err := strconv.Atoi(v)
			if err != nil {
				return false
			}
			q.index, q.indexSet = n, true
		default:
			return false
		}
	}
	return true
}

func isSceneID(s string) bool {
	if len(s) < 2 || s[0] != 'e' {
		return false
	}
	for _, r := range s[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// quoted finds the first quoted span and returns it and the text around it.
func quoted(p string) (text, rest string, ok bool) {
	best := -1
	var pair [2]string
	for _, qp := range quotePairs {
		if i := strings.Index(p, qp[0]); i >= 0 && (best < 0 || i < best) {
			if j := strings.Index(p[i+len(qp[0]):], qp[1]); j > 0 {
				best, pair = i, qp
			}
		}
	}
	if best < 0 {
		return "", "", false
	}
	start := best + len(pair[0])
	end := start + strings.Index(p[start:], pair[1])
	return strings.TrimSpace(p[start:end]), p[:best] + " " + p[end+len(pair[1]):], true
}

// hints reads the type word and ordinal out of the words around the text.
func hints(s string, q *query) {
	lower := strings.ToLower(s)
	for _, w := range strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if t, ok := typeWords[w]; ok && t != "" && q.typeHint == "" {
			q.typeHint = t
		}
		if n, ok := ordinals[w]; ok && !q.indexSet {
			q.index, q.indexSet = n, true
		}
		if w == "last" || w == "最后一个" {
			q.last, q.indexSet = true, true
		}
	}
	// Chinese type words are suffixes, not separate words: "搜索框", "确定按钮".
	for _, w := range cjkTypeWords {
		if t := typeWords[w]; t != "" && q.typeHint == "" && strings.HasSuffix(strings.TrimSpace(s), w) {
			q.typeHint = t
		}
	}
}

// strip removes leading verbs and articles, ordinals, and a trailing type
// word, leaving the text a person would see: "the search box" -> "search".
func strip(p string) string {
	s := strings.TrimSpace(p)
	for changed := true; changed; {
		changed = false
		lower := strings.ToLower(s)
		for _, w := range leadWords {
			if strings.HasPrefix(lower, w) && len(s) > len(w) {
				s, changed = strings.TrimSpace(s[len(w):]), true
				break
			}
		}
		lower = strings.ToLower(s)
		for w := range ordinals {
			if strings.HasPrefix(lower, w+" ") || (!isASCII(w) && strings.HasPrefix(s, w) && len(s) > len(w)) {
				s, changed = strings.TrimSpace(s[len(w):]), true
			}
		}
		if strings.HasPrefix(lower, "last ") {
			s, changed = strings.TrimSpace(s[5:]), true
		}
	}
	words := strings.Fields(s)
	if len(words) > 1 {
		if _, ok := typeWords[strings.ToLower(words[len(words)-1])]; ok {
			s = strings.Join(words[:len(words)-1], " ")
		}
	} else if len(words) == 1 {
		for _, w := range cjkTypeWords {
			if strings.HasSuffix(s, w) && len(s) > len(w) {
				s = strings.TrimSuffix(s, w)
				break
			}
		}
	}
	return strings.TrimSpace(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
