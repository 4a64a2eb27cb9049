package terraform_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// config is a module or an example evaluated statically, as terraform plan
// would with some variables: its variables, its locals and the modules it
// calls (all but those with for_each), each evaluated the same way, down to
// the resources their outputs read, which fakeResources makes up from the
// inputs as the provider would. Only the Terraform functions the lease
// modules' and examples' values use are known; a value that needs another
// fails the test, naming it.
type config struct {
	m      *mod
	region string // the region of the provider the module is given
	vars   map[string]cty.Value
	locals map[string]cty.Value
	calls  map[string]*call
	ctx    *hcl.EvalContext
}

// call is one module block of a config.
type call struct {
	source  string
	region  string               // its provider's
	inputs  map[string]cty.Value // as written, without the callee's defaults
	counted bool                 // it has count: module.NAME is a list of instances
	known   bool                 // the callee is a lease module, evaluated into modules
	modules []*config            // its instances: none with count = 0
}

// functions are Terraform's functions the values evaluated here use; each
// is go-cty's, which Terraform's is too.
var functions = map[string]function.Function{
	"concat":  stdlib.ConcatFunc,
	"flatten": stdlib.FlattenFunc,
	"join":    stdlib.JoinFunc,
}

// evaluate evaluates m with the variables given (the others take their
// defaults) in a provider of region, over the resources fake makes from
// the variables (nil: none).
func evaluate(t *testing.T, m *mod, region string, given map[string]cty.Value, fake func(vars map[string]cty.Value) map[string]cty.Value) *config {
	t.Helper()
	c := &config{m: m, region: region, vars: map[string]cty.Value{}, locals: map[string]cty.Value{}, calls: map[string]*call{}}
	for _, v := range m.blocks("variable") {
		name := v.Labels[0]
		switch val, ok := given[name]; {
		case ok:
			c.vars[name] = val
		case v.Body.Attributes["default"] != nil:
			d, diags := v.Body.Attributes["default"].Expr.Value(nil)
			if diags.HasErrors() {
				t.Fatalf("%s: var.%s's default: %s", m.dir, name, diags.Error())
			}
			c.vars[name] = d
		default:
			t.Fatalf("%s: var.%s has no default and no value was given", m.dir, name)
		}
	}
	for name := range given {
		if _, ok := c.vars[name]; !ok {
			t.Fatalf("%s: given var.%s, which it does not declare", m.dir, name)
		}
	}
	root := map[string]cty.Value{}
	if fake != nil {
		root = fake(c.vars)
	}
	c.ctx = &hcl.EvalContext{Variables: root, Functions: functions}

	// Locals and module calls refer to each other in any order: evaluate
	// what can be until nothing more can.
	pending := map[string]hclsyntax.Expression{}
	for _, l := range m.blocks("locals") {
		for name, a := range l.Body.Attributes {
			pending[name] = a.Expr
		}
	}
	var calls []*hclsyntax.Block
	for _, b := range m.blocks("module") {
		if b.Body.Attributes["for_each"] == nil {
			calls = append(calls, b)
		}
	}
	var last hcl.Diagnostics
	for progress := true; progress; {
		progress = false
		c.refresh()
		for name, e := range pending {
			v, diags := e.Value(c.ctx)
			if diags.HasErrors() {
				last = diags
				continue
			}
			c.locals[name], progress = v, true
			delete(pending, name)
			c.refresh()
		}
		for i := 0; i < len(calls); i++ {
			cl, diags := c.call(t, calls[i], nil)
			if diags.HasErrors() {
				last = diags
				continue
			}
			c.calls[calls[i].Labels[0]], progress = cl, true
			calls = slices.Delete(calls, i, i+1)
			i--
			c.refresh()
		}
	}
	if len(pending) > 0 || len(calls) > 0 {
		t.Fatalf("%s: could not evaluate local values %v and %d module calls: %s", m.dir, slices.Sorted(maps.Keys(pending)), len(calls), last.Error())
	}
	return c
}

// refresh puts what has been evaluated so far into the evaluation context.
func (c *config) refresh() {
	c.ctx.Variables["var"] = cty.ObjectVal(c.vars)
	c.ctx.Variables["local"] = cty.ObjectVal(c.locals)
	mods := map[string]cty.Value{}
	for name, cl := range c.calls {
		if !cl.known {
			continue
		}
		var outs []cty.Value
		for _, inst := range cl.modules {
			outs = append(outs, inst.outputs())
		}
		if cl.counted {
			mods[name] = cty.TupleVal(outs)
		} else {
			mods[name] = outs[0]
		}
	}
	c.ctx.Variables["module"] = cty.ObjectVal(mods)
}

// call evaluates a module block, as one instance (each, for for_each, set
// to the instance's key and value) or, with count, as that many; it
// evaluates the modules under lease_modules, whose resources fakeResources
// knows, and no other.
func (c *config) call(t *testing.T, b *hclsyntax.Block, each map[string]cty.Value) (*call, hcl.Diagnostics) {
	t.Helper()
	ctx := c.ctx
	if each != nil {
		ctx = c.ctx.NewChild()
		ctx.Variables = map[string]cty.Value{"each": cty.ObjectVal(each)}
	}
	cl := &call{region: c.providerRegion(t, b), inputs: map[string]cty.Value{}}
	for name, a := range b.Body.Attributes {
		switch name {
		case "providers", "for_each", "depends_on":
			continue
		}
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() {
			return nil, diags
		}
		cl.inputs[name] = v
	}
	cl.source = cl.inputs["source"].AsString()
	delete(cl.inputs, "source")
	n := int64(1)
	if count, ok := cl.inputs["count"]; ok {
		delete(cl.inputs, "count")
		cl.counted = true
		n, _ = count.AsBigFloat().Int64()
	}
	fake, known := fakeResources[filepath.Base(cl.source)]
	if !known {
		return cl, nil
	}
	cl.known = true
	for range n {
		callee := load(t, filepath.Join(c.m.dir, cl.source))
		cl.modules = append(cl.modules, evaluate(t, callee, cl.region, cl.inputs, func(vars map[string]cty.Value) map[string]cty.Value {
			return fake(vars, cl.region)
		}))
	}
	return cl, nil
}

// forEach evaluates the inputs of each instance of the module block name,
// which has for_each, by instance key.
func (c *config) forEach(t *testing.T, name string) map[string]*call {
	t.Helper()
	b := c.m.one(t, "module", name)
	set, diags := attr(t, b, "for_each").Value(c.ctx)
	if diags.HasErrors() {
		t.Fatalf("%s: module.%s's for_each: %s", c.m.dir, name, diags.Error())
	}
	out := map[string]*call{}
	for it := set.ElementIterator(); it.Next(); {
		k, v := it.Element()
		cl, diags := c.call(t, b, map[string]cty.Value{"key": k, "value": v})
		if diags.HasErrors() {
			t.Fatalf("%s: module.%s[%q]: %s", c.m.dir, name, k.AsString(), diags.Error())
		}
		out[k.AsString()] = cl
	}
	return out
}

// output evaluates an output's value.
func (c *config) output(t *testing.T, name string) cty.Value {
	t.Helper()
	v, diags := attr(t, c.m.output(t, name), "value").Value(c.ctx)
	if diags.HasErrors() {
		t.Fatalf("%s: output %q: %s", c.m.dir, name, diags.Error())
	}
	return v
}

// outputs is the module's outputs as its caller sees them, module.NAME:
// those that evaluate here.
func (c *config) outputs() cty.Value {
	outs := map[string]cty.Value{}
	for _, o := range c.m.blocks("output") {
		if v, diags := o.Body.Attributes["value"].Expr.Value(c.ctx); !diags.HasErrors() {
			outs[o.Labels[0]] = v
		}
	}
	return cty.ObjectVal(outs)
}

// providerRegion is the region of the AWS provider a module block is
// given (providers = { aws = aws.ALIAS }), or of the config's own provider.
func (c *config) providerRegion(t *testing.T, b *hclsyntax.Block) string {
	t.Helper()
	alias := ""
	if a, ok := b.Body.Attributes["providers"]; ok {
		obj, ok := a.Expr.(*hclsyntax.ObjectConsExpr)
		if !ok || len(obj.Items) != 1 {
			t.Fatalf("%s: providers = %s, want { aws = aws.ALIAS }", a.SrcRange, c.m.source(a.Expr))
		}
		tr, diags := hcl.AbsTraversalForExpr(obj.Items[0].ValueExpr)
		if diags.HasErrors() || len(tr) != 2 || tr.RootName() != "aws" {
			t.Fatalf("%s: providers = %s, want { aws = aws.ALIAS }", a.SrcRange, c.m.source(a.Expr))
		}
		alias = tr[1].(hcl.TraverseAttr).Name
	}
	var providers []*hclsyntax.Block
	for _, p := range c.m.blocks("provider", "aws") {
		a := ""
		if e, ok := p.Body.Attributes["alias"]; ok {
			a = c.m.stringOf(t, e.Expr)
		}
		if a == alias {
			providers = append(providers, p)
		}
	}
	switch {
	case len(providers) == 0 && alias == "":
		return c.region // a module's provider is its caller's
	case len(providers) != 1:
		t.Fatalf("%s: %d aws providers with alias %q, want 1", c.m.dir, len(providers), alias)
	}
	v, diags := attr(t, providers[0], "region").Value(c.ctx)
	if diags.HasErrors() {
		t.Fatalf("%s: the region of provider aws %q: %s", c.m.dir, alias, diags.Error())
	}
	return v.AsString()
}

// fakeResources makes up, for each lease module that examples call, the
// resources its outputs read, with the attributes the AWS provider gives
// them, from the module's variables and its provider's region.
var fakeResources = map[string]func(vars map[string]cty.Value, region string) map[string]cty.Value{
	"aws-s3-lease": func(vars map[string]cty.Value, _ string) map[string]cty.Value {
		bucket := cty.ObjectVal(map[string]cty.Value{
			"id":  vars["bucket_name"],
			"arn": cty.StringVal("arn:aws:s3:::" + vars["bucket_name"].AsString()),
		})
		return map[string]cty.Value{
			"aws_s3_bucket": cty.ObjectVal(map[string]cty.Value{"this": cty.TupleVal([]cty.Value{bucket})}),
			"data":          cty.ObjectVal(map[string]cty.Value{"aws_s3_bucket": cty.ObjectVal(map[string]cty.Value{"existing": cty.TupleVal([]cty.Value{bucket})})}),
		}
	},
	"aws-dynamodb-lease": func(vars map[string]cty.Value, region string) map[string]cty.Value {
		table := cty.ObjectVal(map[string]cty.Value{
			"name":     vars["table_name"],
			"arn":      cty.StringVal(strings.Join([]string{"arn:aws:dynamodb", region, testAccount, "table/" + vars["table_name"].AsString()}, ":")),
			"hash_key": vars["key_attribute"],
		})
		return map[string]cty.Value{
			"aws_dynamodb_table": cty.ObjectVal(map[string]cty.Value{"this": table, "shards": cty.EmptyTupleVal}),
		}
	},
}

// testAccount is the AWS account the fake resources are in.
const testAccount = "123456789012"
