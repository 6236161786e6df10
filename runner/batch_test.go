package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPlan(t *testing.T) {
	const suite = "../examples/suite"
	rows := filepath.Join(t.TempDir(), "rows.csv")
	os.WriteFile(rows, []byte("user,password,expect\na,b,c\nd,e,f\n"), 0o644)
	cases := []struct {
		name, tags, data string
		files            []string
		want             []string
	}{
		{"a suite in its order, a row a job", "", "", []string{suite}, []string{"sale-popup", "sign-in#1", "sign-in#2", "sign-in#3", "checkout"}},
		{"tags", "smoke", "", []string{suite}, []string{"sale-popup", "sign-in#1", "sign-in#2", "sign-in#3"}},
		{"any of the tags", "popup,checkout", "", []string{suite + "/checkout.yaml", suite + "/sale-popup.yaml", suite + "/sign-in.yaml"}, []string{"checkout", "sale-popup"}},
		{"not a tag", "!accounts", "", []string{suite}, []string{"sale-popup", "checkout"}},
		{"--data replaces the script's rows", "", rows, []string{suite + "/sign-in.yaml"}, []string{"sign-in#1", "sign-in#2"}},
		{"a broken script whatever the tags", "nightly", "", []string{suite + "/flows/search.yaml", suite}, []string{"search!"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			jobs, err := Plan(c.files, PlanOptions{Tags: c.tags, Data: c.data})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, j := range jobs {
				n := strings.TrimSuffix(filepath.Base(j.File), ".yaml")
				switch {
				case j.Err != nil:
					n += "!"
				case j.Row > 0:
					n += "#" + string(rune('0'+j.Row))
					if j.Values["user"] == "" {
						t.Errorf("%s has no values", j.Name())
					}
				}
				got = append(got, n)
			}
			if !slices.Equal(c.want, got) {
				t.Errorf("jobs %v, want %v", got, c.want)
			}
		})
	}
	for _, bad := range []struct {
		o    PlanOptions
		want string
	}{
		{PlanOptions{Tags: "nightly"}, "no script of ../examples/suite has the tags --tags nightly"},
		{PlanOptions{Tags: "a,,b"}, "--tags"},
		{PlanOptions{Data: "nope.csv"}, "--data: data file nope.csv: no such file or directory"},
	} {
		if _, err := Plan([]string{suite}, bad.o); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: err = %v, want %q", bad.o, err, bad.want)
		}
	}
}
