//go:build !apexlite

package cli

import (
	"fmt"

	"github.com/apexagent/apex/device/ios"
	"github.com/apexagent/apex/internal/yamlerr"
	"github.com/apexagent/apex/llm"
	"github.com/apexagent/apex/wda"
	"gopkg.in/yaml.v3"
)

// wdaURLsFromConfig reads the wda: section of file (a missing file, or
// one without the section, lists none):
//
//	wda:
//	  urls: [http://127.0.0.1:8100, http://10.0.0.7:8100]
func wdaURLsFromConfig(file string) ([]string, error) {
	data, err := readConfig(file)
	if data == nil || err != nil {
		return nil, err
	}
	var doc struct {
		WDA struct {
			URLs yaml.Node `yaml:"urls"`
		} `yaml:"wda"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlerr.Locate(data, err)
		return nil, &llm.ConfigError{File: file, Line: line, Msg: "invalid YAML: " + msg}
	}
	n := &doc.WDA.URLs
	var urls []string
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode: // one URL, or several comma-separated as in APEX_WDA_URLS
		urls = ios.URLsFromEnv(func(string) string { return n.Value })
	case yaml.SequenceNode:
		if err := n.Decode(&urls); err != nil {
			return nil, fmt.Errorf("%s:%d: wda.urls: %w", file, n.Line, err)
		}
	default:
		return nil, fmt.Errorf("%s:%d: wda.urls: expected a list of WebDriverAgent URLs", file, n.Line)
	}
	for _, u := range urls {
		if _, err := wda.ParseURL(u); err != nil {
			return nil, fmt.Errorf("%s:%d: wda.urls: %w", file, n.Line, err)
		}
	}
	return urls, nil
}
