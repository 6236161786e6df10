package agent

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/apexagent/apex/action"
	"github.com/apexagent/apex/check"
	"github.com/apexagent/apex/internal/lazy"
)

// UnderstandError says which sentence of a goal the rule planner could not
// read.
type UnderstandError struct {
	Index    int // 1-based
	Count    int
	Sentence string
}

func (e *UnderstandError) Error() string {
	return fmt.Sprintf("the rule planner could not understand sentence %d of %d: %q; write steps as "+
		`tap "X", type "V" into "X", long press "X", scroll down to "X", wait for "X", go back, open "App", `+
		`turn on "X" / turn "X" off / enable "X" / make sure "X" is on, `+
		`check "X" exists / does not exist / reads "V" / is checked (中文: 点击“X”，在“X”输入“V”，打开“X”，关闭“X”，启动“App”，确认出现“X”); `+
		"see docs/goals.md for every form, "+
		"or configure a model (APEX_MODEL_BASE_URL, APEX_MODEL_NAME, APEX_MODEL_API_KEY)",
		e.Index, e.Count, e.Sentence)
}

// PlanRules turns a goal written in the controlled language (English or
// Chinese) into steps, with no model:
//
//	tap "Search", type "headphones", then check "Results" exists
//	点击“搜索”，输入“耳机”，然后确认出现“结果”
//
// An action followed by a check expects that check's state (so it can be
// skipped when the state already holds); a tap followed by none expects the
// screen to change. The error is an *UnderstandError naming the first
// sentence it could not read.
func PlanRules(goal string) ([]Step, error) {
	sentences := splitSentences(goal)
	if len(sentences) == 0 {
		return nil, fmt.Errorf("the goal is empty")
	}
	var read []ruleStep
	for i, s := range sentences {
		rs, ok := parseSentence(s)
		if !ok {
			return nil, &UnderstandError{Index: i + 1, Count: len(sentences), Sentence: s}
		}
		if rs.app != "" {
			rs = launch(rs.app)
		}
		rs.Sentence = s
		if rs.label != "" {
			// An app by its label: from the home screen, tap its icon.
			home := ruleStep{Step: Step{Call: action.Home.MustCall(nil), Sentence: s}}
			read = append(read, home, ruleStep{Step: Step{Call: tapOn(action.Tap, rs.label), Sentence: s}, touch: true})
			continue
		}
		read = append(read, rs)
	}
	steps := make([]Step, len(read))
	for i, rs := range read {
		st := rs.Step
		st.ID = i + 1
		switch {
		case st.Call.IsZero() || rs.plain || st.Expected != nil:
		case i+1 < len(read) && read[i+1].Call.IsZero() && !read[i+1].Wait:
			c := *read[i+1].Expected
			st.Expected = &c
		case rs.touch:
			st.Expected = &check.Check{Kind: check.LayoutChanged}
		}
		steps[i] = st
	}
	if err := validatePlan(steps); err != nil {
		return nil, err
	}
	return steps, nil
}

// ruleStep is a sentence as the rules read it: its step, and how the
// plan's expectations attach to it.
type ruleStep struct {
	Step
	// touch: a tap or press on an element; with no check after it, the
	// screen must change.
	touch bool
	// plain steps (a timed wait) take no expectation from the check after
	// them.
	plain bool
	// app is an app to open, by package or label; label is set (and the
	// step left empty) for one a launcher shows by its label.
	app, label string
}

// launch opens an app: by package name, or by tapping its label on the
// home screen.
func launch(app string) ruleStep {
	if !strings.Contains(app, ".") {
		return ruleStep{label: app}
	}
	return ruleStep{Step: Step{Call: action.Launch.MustCall(&action.AppParams{App: app})}}
}

// tapOn is a touch of target by a (Tap, DoubleTap: their params are
// TapParams).
func tapOn(a *action.Action, target string) action.Call {
	return a.MustCall(&action.TapParams{Locate: check.ParseTarget(target)})
}

// quotes pairs the opening and closing marks of quoted text.
var quotes = map[rune]rune{'"': '"', '“': '”', '「': '」', '『': '』', '‘': '’', '«': '»', '\'': '\''}

// opens reports whether rs[i] opens a quote, and its closing mark. A
// straight single quote inside a word is an apostrophe ("don't"), not a
// quote.
func opens(rs []rune, i int) (rune, bool) {
	c, ok := quotes[rs[i]]
	if ok && rs[i] == '\'' && i > 0 && isWordRune(rs[i-1]) {
		return 0, false
	}
	return c, ok
}

// closes reports whether rs[i] closes the quote that closing ends.
func closes(rs []rune, i int, closing rune) bool {
	if rs[i] != closing {
		return false
	}
	return closing != '\'' || i+1 == len(rs) || !isWordRune(rs[i+1])
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// splitSentences cuts a goal at , ; . and their Chinese forms (outside
// quotes) and at "then"/然后, dropping connectors.
func splitSentences(goal string) []string {
	var out []string
	var cur strings.Builder
	var closing rune
	rs := []rune(goal)
	flush := func() {
		if s := trimConnectors(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for i, r := range rs {
		if closing != 0 {
			cur.WriteRune(r)
			if closes(rs, i, closing) {
				closing = 0
			}
			continue
		}
		if c, ok := opens(rs, i); ok {
			closing = c
			cur.WriteRune(r)
			continue
		}
		switch r {
		case ',', ';', '\n', '，', '。', '；', '！', '!':
			flush()
			continue
		case '.':
			if i+1 == len(rs) || unicode.IsSpace(rs[i+1]) {
				flush()
				continue
			}
		}
		cur.WriteRune(r)
	}
	flush()
	// "A then B" without a comma.
	var res []string
	for _, s := range out {
		res = append(res, splitThen(s)...)
	}
	return res
}

var thenRE = lazy.Regexp(`(?i)\s+(?:and then|then|and)\s+`)

// splitThen splits at " then " outside quotes.
func splitThen(s string) []string {
	masked, _, raw := maskQuotesRaw(s)
	locs := thenRE().FindAllStringIndex(masked, -1)
	if len(locs) == 0 {
		return []string{s}
	}
	var out []string
	prev := 0
	add := func(part string) {
		if p := trimConnectors(unmask(part, raw)); p != "" {
			out = append(out, p)
		}
	}
	for _, l := range locs {
		add(masked[prev:l[0]])
		prev = l[1]
	}
	add(masked[prev:])
	return out
}

var maskRE = lazy.Regexp(`«(\d+)»`)

// unmask puts the quoted texts back.
func unmask(s string, raw []string) string {
	return maskRE().ReplaceAllStringFunc(s, func(m string) string {
		k, _ := strconv.Atoi(m[len("«") : len(m)-len("»")])
		if k < len(raw) {
			return raw[k]
		}
		return m
	})
}

var connectorRE = lazy.Regexp(`(?i)^(?:and then|then|and|next|finally|after that|afterwards|first|please)\s+`)
var zhConnectorRE = lazy.Regexp(`^(?:然后|接着|之后|再|并且|并|最后|首先|请)`)

func trimConnectors(s string) string {
	s = strings.TrimSpace(s)
	for {
		t := connectorRE().ReplaceAllString(s, "")
		t = strings.TrimSpace(zhConnectorRE().ReplaceAllString(t, ""))
		if t == s {
			return s
		}
		s = t
	}
}

// maskQuotes replaces each quoted text by «N» and returns the texts.
func maskQuotes(s string) (string, []string) {
	m, texts, _ := maskQuotesRaw(s)
	return m, texts
}

// maskQuotesRaw is maskQuotes that also returns each quote as written,
// marks included.
func maskQuotesRaw(s string) (string, []string, []string) {
	var b strings.Builder
	var texts, raw []string
	var closing, opening rune
	var cur strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if closing != 0 {
			if closes(rs, i, closing) {
				closing = 0
				texts = append(texts, cur.String())
				raw = append(raw, string(opening)+cur.String()+string(r))
				fmt.Fprintf(&b, "«%d»", len(texts)-1)
				cur.Reset()
				continue
			}
			cur.WriteRune(r)
			continue
		}
		if c, ok := opens(rs, i); ok {
			closing, opening = c, r
			continue
		}
		b.WriteRune(r)
	}
	if closing != 0 { // unterminated quote: take the rest as quoted
		texts = append(texts, cur.String())
		raw = append(raw, string(opening)+cur.String()+string(closing))
		fmt.Fprintf(&b, "«%d»", len(texts)-1)
	}
	return b.String(), texts, raw
}

// pattern maps a sentence template to a step; groups are filled from
// named captures: t (target quote), v (value quote), n (number), u (unit),
// d (direction), k (key), r (region). A build that returns the zero
// ruleStep rejects the match.
type pattern struct {
	re    *regexp.Regexp
	build func(m map[string]string) ruleStep
}

func pat(expr string, build func(m map[string]string) ruleStep) pattern {
	expr = strings.NewReplacer("T", `«(?P<t>\d+)»`, "V", `«(?P<v>\d+)»`).Replace(expr)
	return pattern{regexp.MustCompile(`(?i)^` + expr + `$`), build}
}

// expect builds a check step from a check sentence: its target quote, its
// value quote and its number.
func expect(kind check.Kind) func(m map[string]string) ruleStep {
	return func(m map[string]string) ruleStep {
		c := &check.Check{Kind: kind, Text: m["v"]}
		if t := m["t"]; t != "" {
			c.Target = check.ParseTarget(t)
		}
		c.Number, _ = strconv.ParseFloat(m["n"], 64)
		return ruleStep{Step: Step{Expected: c}}
	}
}

// touch taps the target (Tap, DoubleTap).
func touch(a *action.Action) func(m map[string]string) ruleStep {
	return func(m map[string]string) ruleStep {
		return ruleStep{Step: Step{Call: tapOn(a, m["t"])}, touch: true}
	}
}

// turn sets the switch or checkbox T to a state: a tap on it that expects
// the state, so a T already in that state is not tapped (the orchestrator
// checks a tap's own target's state before acting).
func turn(m map[string]string) ruleStep {
	kind := check.NotChecked
	switch strings.ToLower(m["s"]) {
	case "on", "enable", "tick", "check the box", "打开", "开启", "勾选":
		kind = check.Checked
	}
	return ruleStep{Step: Step{Call: tapOn(action.Tap, m["t"]), Expected: &check.Check{Kind: kind, Target: check.ParseTarget(m["t"])}}}
}

func longPress(m map[string]string) ruleStep {
	c := action.LongPress.MustCall(&action.LongPressParams{Locate: check.ParseTarget(m["t"])})
	return ruleStep{Step: Step{Call: c}, touch: true}
}

// input types the value into the target field, or the focused one.
func input(m map[string]string) ruleStep {
	if m["v"] == "" {
		return ruleStep{}
	}
	p := &action.InputParams{Value: m["v"]}
	if m["t"] != "" {
		l := check.ParseTarget(m["t"])
		p.Locate = &l
	}
	return ruleStep{Step: Step{Call: action.Input.MustCall(p)}}
}

func open(m map[string]string) ruleStep { return ruleStep{app: m["t"]} }

// press presses a key (enter when none is named).
func press(key string) ruleStep {
	if key == "" {
		key = "enter"
	}
	return ruleStep{Step: Step{Call: action.KeyboardPress.MustCall(&action.KeyboardPressParams{KeyName: strings.ToLower(key)})}}
}

func pressKey(m map[string]string) ruleStep { return press(m["k"]) }

func submit(map[string]string) ruleStep { return press("enter") }

// key presses a key of the device with no params (Back, Home).
func key(a *action.Action) func(map[string]string) ruleStep {
	return func(map[string]string) ruleStep { return ruleStep{Step: Step{Call: a.MustCall(nil)}} }
}

// scroll scrolls in direction d (down when none), until the target shows
// when one is given.
func scroll(d, target string) ruleStep {
	if d == "" {
		d = "down"
	}
	p := &action.ScrollParams{Direction: strings.ToLower(d)}
	if target != "" {
		l := check.ParseTarget(target)
		p.UntilVisible = &l
	}
	return ruleStep{Step: Step{Call: action.Scroll.MustCall(p)}}
}

// waitUntil waits for the target to show.
func waitUntil(m map[string]string) ruleStep {
	return ruleStep{Step: Step{Expected: &check.Check{Kind: check.Exists, Target: check.ParseTarget(m["t"])}, Wait: true}}
}

var num = `(?P<n>-?\d+(?:\.\d+)?)`

// control is what may follow a switch's name: the kind of control it is.
const control = `(?: (?:switch|toggle|setting|option|checkbox))?`

// English patterns; the check patterns also serve Assert goals without a
// leading verb.
var enActions = sync.OnceValue(func() []pattern {
	return []pattern{
		pat(`(?:tap|click|press|select|choose|hit|touch)(?: on)?(?: the)? T(?: (?:button|item|icon|link|tab|entry|option|checkbox|switch|toggle))?`, touch(action.Tap)),
		pat(`(?:turn|switch|toggle|set) (?P<s>on|off)(?: the)? T`+control, turn),
		pat(`(?:turn|switch|toggle|set)(?: the)? T`+control+` (?:to )?(?P<s>on|off)`, turn),
		pat(`(?P<s>enable|disable)(?: the)? T`+control, turn),
		pat(`(?:make sure|ensure)(?: that)?(?: the)? T`+control+` is (?:turned |switched )?(?P<s>on|off)`, turn),
		pat(`(?P<s>tick|untick|check the box)(?: the)? T`+control, turn),
		pat(`(?:toggle|switch)(?: the)? T`+control, touch(action.Tap)),
		pat(`double[- ]?(?:tap|click)(?: on)?(?: the)? T`, touch(action.DoubleTap)),
		pat(`long[- ]?(?:press|tap|click)(?: on)?(?: the)? T`, longPress),
		pat(`(?:type|enter|input|write|fill in) V(?: (?:into|in|on|to)(?: the)? T(?: (?:field|box|input))?)?`, input),
		pat(`(?:fill|set)(?: in)?(?: the)? T(?: (?:field|box|input))? (?:with|to) V`, input),
		pat(`(?:in|into)(?: the)? T(?: (?:field|box|input))?,? (?:type|enter|input|write) V`, input),
		pat(`(?:open|launch|start)(?: the)?(?: app)? T(?: app)?`, open),
		pat(`(?:go back|back|press back|navigate back|press the back button)`, key(action.Back)),
		pat(`(?:go home|home|press home|go to the home screen|press the home button)`, key(action.Home)),
		pat(`(?:press|hit|tap)(?: the)? (?P<k>enter|search|tab|delete|escape|space|back|home)(?: key| button)?`, pressKey),
		pat(`submit(?: the form)?`, submit),
		pat(`scroll(?: (?P<d>up|down|left|right))?(?: (?:to|until)(?: the)? T(?: (?:is )?(?:visible|shows|appears|is shown))?)?`, func(m map[string]string) ruleStep { return scroll(m["d"], m["t"]) }),
		pat(`wait(?: for)? `+num+` ?(?P<u>s|sec|secs|seconds?|ms|milliseconds?)`, waitFor),
		pat(`wait (?:for|until)(?: the)? T(?: (?:to )?(?:appear|appears|show|shows|is shown|exists|is visible))?`, waitUntil),
	}
})

var enChecks = sync.OnceValue(func() []pattern {
	return []pattern{
		pat(`(?:there is|there's|I see|you see)(?: an?| the)? T`, expect(check.Exists)),
		pat(`T (?:exists|is shown|is visible|appears|is displayed|is on (?:the )?screen|shows up|is there|shows)`, expect(check.Exists)),
		pat(`T (?:does not exist|doesn't exist|is gone|is not shown|is not visible|disappears|disappeared|is hidden|is absent|is not on (?:the )?screen|does not appear)`, expect(check.NotExists)),
		pat(`(?:there is no|there's no|no) T`, expect(check.NotExists)),
		pat(`T (?:contains|includes) V`, expect(check.TextContains)),
		pat(`T (?:reads|says|equals|is|shows|has text|text is|displays) V`, expect(check.TextEquals)),
		pat(`T (?:shows|appears|is shown) `+num+` times?`, expect(check.Count)),
		pat(`T (?:is )?(?:greater than|more than|above|over|>) `+num, expect(check.NumberGreater)),
		pat(`T (?:is )?(?:less than|fewer than|below|under|<) `+num, expect(check.NumberLess)),
		pat(`T (?:is )?(?:checked|on|enabled|switched on|turned on|ticked|selected)`, expect(check.Checked)),
		pat(`T (?:is )?(?:not checked|unchecked|off|switched off|turned off|unticked|not selected)`, expect(check.NotChecked)),
		pat(`T (?:can be used|is usable)`, expect(check.Enabled)),
		pat(`T (?:is focused|has (?:the )?focus)`, expect(check.Focused)),
		pat(`(?:the )?(?:screen|page|layout) (?:changed|changes|has changed)`, expect(check.LayoutChanged)),
		pat(`T (?:is )?(?:in|at) the (?P<r>top|bottom|left|right|center|centre|header|footer|dialog)(?: of the screen)?`, regionCheck),
	}
})

var zhActions = sync.OnceValue(func() []pattern {
	return []pattern{
		pat(`(?:点击|点一下|点|轻触|轻点|单击|选择|按下)(?:一下)?T(?:按钮|图标|选项|开关)?`, touch(action.Tap)),
		pat(`(?P<s>打开|开启|关闭)T(?:开关|复选框|选项)?`, turn),
		pat(`(?P<s>勾选|取消勾选)T(?:复选框|选项)?`, turn),
		pat(`双击T`, touch(action.DoubleTap)),
		pat(`长按T`, longPress),
		pat(`(?:在T(?:中|里|内|框中|框里|框内)?|向T)?(?:输入|键入|填写|填入)V`, input),
		pat(`(?:启动|进入|打开应用)T(?:应用)?`, open),
		pat(`(?:打开|启动|进入)T应用`, open),
		pat(`(?:返回|后退|按返回键|返回上一页)`, key(action.Back)),
		pat(`(?:回到主屏幕|返回主屏幕|回到桌面|返回桌面|主屏幕|按主页键)`, key(action.Home)),
		pat(`(?:按|按下)(?P<k>回车|确认|搜索)键?`, func(m map[string]string) ruleStep {
			return press(map[string]string{"回车": "enter", "确认": "enter", "搜索": "search"}[m["k"]])
		}),
		pat(`提交`, submit),
		pat(`(?:向(?P<d>上|下|左|右))?(?:滚动|滑动)(?:到T|直到(?:出现)?T(?:出现)?)?`, func(m map[string]string) ruleStep {
			return scroll(map[string]string{"上": "up", "下": "down", "左": "left", "右": "right"}[m["d"]], m["t"])
		}),
		pat(`等待`+num+`(?P<u>秒|毫秒)`, waitFor),
		pat(`等待T(?:出现)?`, waitUntil),
	}
})

var zhChecks = sync.OnceValue(func() []pattern {
	return []pattern{
		pat(`(?:出现|显示|有|看到)T`, expect(check.Exists)),
		pat(`T(?:存在|出现|已出现|显示|已显示|可见)`, expect(check.Exists)),
		pat(`(?:没有|不存在|不显示|看不到)T`, expect(check.NotExists)),
		pat(`T(?:不存在|消失|已消失|不显示|不可见|没有出现)`, expect(check.NotExists)),
		pat(`T(?:包含|含有)V`, expect(check.TextContains)),
		pat(`T(?:显示为|显示|为|是|等于|的内容是|的文字是)V`, expect(check.TextEquals)),
		pat(`T(?:出现|显示)了?`+num+`次`, expect(check.Count)),
		pat(`T(?:大于|多于|超过)`+num, expect(check.NumberGreater)),
		pat(`T(?:小于|少于|低于)`+num, expect(check.NumberLess)),
		pat(`T(?:已勾选|已选中|已打开|已开启|处于开启状态|是开启的)`, expect(check.Checked)),
		pat(`T(?:未勾选|未选中|已关闭|处于关闭状态|是关闭的)`, expect(check.NotChecked)),
		pat(`T(?:可用|可以使用)`, expect(check.Enabled)),
		pat(`T(?:已获得焦点|获得焦点|有焦点)`, expect(check.Focused)),
		pat(`(?:屏幕|页面|界面)(?:已)?(?:变化|改变|发生变化)`, expect(check.LayoutChanged)),
	}
})

var checkVerbRE = lazy.Regexp(`(?i)^(?:check|verify|assert|ensure|confirm|expect|make sure|see)(?: that| if| whether)?\s+`)
var zhCheckVerbRE = lazy.Regexp(`^(?:确认|检查|验证|断言|确保|判断|看看)(?:一下)?`)

// waitFor sleeps for a time.
func waitFor(m map[string]string) ruleStep {
	n, _ := strconv.ParseFloat(m["n"], 64)
	ms := n * 1000
	if u := strings.ToLower(m["u"]); strings.HasPrefix(u, "ms") || strings.HasPrefix(u, "milli") || u == "毫秒" {
		ms = n
	}
	return ruleStep{Step: Step{Call: action.Sleep.MustCall(&action.SleepParams{Ms: int(ms)})}, plain: true}
}

func regionCheck(m map[string]string) ruleStep {
	yes := true
	return ruleStep{Step: Step{Expected: &check.Check{Kind: check.Region, Regions: []check.RegionText{{Name: strings.ToLower(m["r"]), Text: m["t"], MustExist: &yes}}}}}
}

// parseSentence reads one sentence as an action or a check.
func parseSentence(s string) (ruleStep, bool) {
	masked, texts := maskQuotes(strings.TrimSpace(s))
	masked = strings.Join(strings.Fields(masked), " ")
	masked = strings.TrimRight(masked, " .!")
	if st, ok := match(masked, texts, enActions(), zhActions()); ok {
		return st, true
	}
	c := zhCheckVerbRE().ReplaceAllString(checkVerbRE().ReplaceAllString(masked, ""), "")
	return match(strings.TrimSpace(c), texts, enChecks(), zhChecks())
}

// parseChecks reads an assertion goal: one or more check sentences, with or
// without a leading "check".
func parseChecks(goal string) ([]check.Check, error) {
	sentences := splitSentences(goal)
	if len(sentences) == 0 {
		return nil, fmt.Errorf("the assertion is empty")
	}
	var out []check.Check
	for i, s := range sentences {
		masked, texts := maskQuotes(s)
		masked = strings.TrimRight(strings.Join(strings.Fields(masked), " "), " .!?")
		c := zhCheckVerbRE().ReplaceAllString(checkVerbRE().ReplaceAllString(masked, ""), "")
		st, ok := match(strings.TrimSpace(c), texts, enChecks(), zhChecks())
		if !ok {
			return nil, &UnderstandError{Index: i + 1, Count: len(sentences), Sentence: s}
		}
		out = append(out, *st.Expected)
	}
	return out, nil
}

func match(masked string, texts []string, sets ...[]pattern) (ruleStep, bool) {
	zh := strings.TrimSpace(strings.ReplaceAll(masked, " ", ""))
	for _, set := range sets {
		for _, p := range set {
			for _, cand := range []string{masked, zh} {
				m := p.re.FindStringSubmatch(cand)
				if m == nil {
					continue
				}
				groups := map[string]string{}
				ok := true
				for i, name := range p.re.SubexpNames() {
					if name == "" || m[i] == "" {
						continue
					}
					if name == "t" || name == "v" {
						k, _ := strconv.Atoi(m[i])
						if k >= len(texts) {
							ok = false
							break
						}
						groups[name] = strings.TrimSpace(texts[k])
						continue
					}
					groups[name] = m[i]
				}
				if !ok {
					continue
				}
				st := p.build(groups)
				if st.Call.IsZero() && st.Expected == nil && st.app == "" {
					continue
				}
				return st, true
			}
		}
	}
	return ruleStep{}, false
}
