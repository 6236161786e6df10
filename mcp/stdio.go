package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine bounds one JSON-RPC message over stdio; MaxDepth its nesting.
const (
	MaxLine  = 8 << 20
	MaxDepth = 1000
)

// lineTransport is MCP's stdio transport, newline-delimited JSON-RPC,
// that answers a malformed line (not JSON, not JSON-RPC 2.0, nested
// deeper than MaxDepth, longer than MaxLine) with a JSON-RPC error and
// keeps serving: the SDK's own transport ends the session on one.
type lineTransport struct {
	in  io.ReadCloser
	out io.Writer
}

func (t *lineTransport) Connect(context.Context) (sdk.Connection, error) {
	return &lineConn{in: t.in, r: bufio.NewReaderSize(t.in, 64<<10), out: t.out}, nil
}

type lineConn struct {
	in   io.Closer
	r    *bufio.Reader
	wmu  sync.Mutex
	out  io.Writer
	once sync.Once
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Close() error {
	c.once.Do(func() { c.in.Close() })
	return nil
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		line, err := c.readLine()
		if errors.Is(err, errLineTooLong) {
			c.reject(nil, -32600, fmt.Sprintf("message over %d bytes", MaxLine))
			continue
		}
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		msg, id, code, why := decodeLine(line)
		if msg == nil {
			c.reject(id, code, why)
			continue
		}
		return msg, nil
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads up to '\n', dropping the rest of a line over MaxLine.
func (c *lineConn) readLine() ([]byte, error) {
	var line []byte
	for {
		part, err := c.r.ReadSlice('\n')
		if len(line)+len(part) > MaxLine {
			line = nil
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = c.r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = append(line, part...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		return line, nil
	}
}

// decodeLine is line's message, or why it is none: the JSON-RPC error
// code and the request's id when it has one.
func decodeLine(line []byte) (jsonrpc.Message, any, int, string) {
	if d := depth(line); d > MaxDepth {
		return nil, nil, -32700, fmt.Sprintf("parse error: nested %d deep, more than %d", d, MaxDepth)
	}
	var head struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, nil, -32700, "parse error: " + err.Error()
	}
	var id any
	if len(head.ID) > 0 {
		_ = json.Unmarshal(head.ID, &id)
	}
	if head.JSONRPC != "2.0" {
		return nil, id, -32600, `invalid request: "jsonrpc" must be "2.0"`
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, id, -32600, "invalid request: " + err.Error()
	}
	return msg, nil, 0, ""
}

// depth is how deep line's arrays and objects nest, strings skipped.
func depth(line []byte) int {
	d, most, inString, escaped := 0, 0, false, false
	for _, b := range line {
		switch {
		case escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case b == '"':
			inString = !inString
		case inString:
		case b == '[' || b == '{':
			d++
			most = max(most, d)
		case b == ']' || b == '}':
			d--
		}
	}
	return most
}

// reject answers a line that is no message with a JSON-RPC error.
func (c *lineConn) reject(id any, code int, msg string) {
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	c.writeLine(data)
}

func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}
