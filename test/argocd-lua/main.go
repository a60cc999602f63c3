// Command argocd-lua runs an Argo CD resource health script the way Argo CD does (util/lua/lua.go): gopher-lua
// with only the package, base and table libraries open (custom health checks run without the standard
// libraries unless useOpenLibs is set), a 1 s timeout, the Kubernetes object as the global `obj`, and the
// returned table encoded with gopher-json. It prints {"status": ..., "message": ...} on stdout.
//
// Usage: argocd-lua SCRIPT.lua OBJECT.json
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	lua "github.com/yuin/gopher-lua"
	luajson "layeh.com/gopher-json"
)

type healthStatus struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
}

// The codes Argo CD accepts from a health script; anything else becomes Unknown.
var validStatus = map[string]bool{
	"Unknown": true, "Progressing": true, "Suspended": true, "Healthy": true, "Degraded": true, "Missing": true,
}

// decodeValue mirrors Argo CD's conversion of an unstructured object into Lua values.
func decodeValue(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case json.Number:
		// Kubernetes decodes integers as int64 and Argo CD turns them into numbers.
		f, err := v.Float64()
		if err != nil {
			return lua.LString(v)
		}
		return lua.LNumber(f)
	case string:
		return lua.LString(v)
	case []any:
		arr := l.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(decodeValue(l, item))
		}
		return arr
	case map[string]any:
		tbl := l.CreateTable(0, len(v))
		for key, item := range v {
			tbl.RawSetH(lua.LString(key), decodeValue(l, item))
		}
		return tbl
	}
	return lua.LNil
}

func run(scriptPath, objectPath string) (healthStatus, error) {
	script, err := os.ReadFile(scriptPath)
	if err != nil {
		return healthStatus{}, err
	}
	raw, err := os.ReadFile(objectPath)
	if err != nil {
		return healthStatus{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return healthStatus{}, fmt.Errorf("%s: %w", objectPath, err)
	}

	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return healthStatus{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", decodeValue(l, obj))
	if err := l.DoString(string(script)); err != nil {
		return healthStatus{}, err
	}
	ret := l.Get(-1)
	if ret.Type() != lua.LTTable {
		return healthStatus{}, fmt.Errorf("expect table output from Lua script, not %s", ret.Type().String())
	}
	encoded, err := luajson.Encode(ret)
	if err != nil {
		return healthStatus{}, err
	}
	var hs healthStatus
	if err := json.Unmarshal(encoded, &hs); err != nil {
		return healthStatus{}, err
	}
	if !validStatus[hs.Status] {
		return healthStatus{Status: "Unknown", Message: "Lua returned an invalid health status"}, nil
	}
	return hs, nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: argocd-lua SCRIPT.lua OBJECT.json")
		os.Exit(2)
	}
	hs, err := run(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := json.Marshal(hs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}
