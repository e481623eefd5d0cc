// The branching tags: if, unless and case.

package liquid

// if, unless

type branch struct {
	v       *filtered
	unless  bool // the branch runs when the value is falsy
	nodes   []node
	discard bool
}

type ifNode struct {
	branches []*branch
	els      []node
}

func parseIf(p *parser, tk *topToken, t *tokenizer) (node, error) {
	v, err := t.readFilteredValue()
	if err != nil {
		return nil, err
	}
	n := &ifNode{branches: []*branch{{v: v}}}
	cur := &n.branches[0].nodes
	hasElse := false
	err = p.stream(tk, func(tag *topToken) (bool, bool, error) {
		switch tag.name {
		case "elsif":
			if hasElse {
				return false, false, errorf(tag.begin, "unexpected elsif after else")
			}
			v, err := newTokenizer(p.src, tag.argsBegin, tag.cEnd).readFilteredValue()
			if err != nil {
				return false, false, err
			}
			b := &branch{v: v}
			n.branches = append(n.branches, b)
			cur = &b.nodes
			return true, false, nil
		case "else":
			if err := assertNoArgs(p, tag); err != nil {
				return false, false, err
			}
			if hasElse {
				return false, false, errorf(tag.begin, "duplicated else")
			}
			hasElse = true
			cur = &n.els
			return true, false, nil
		case "endif":
			return true, true, assertNoArgs(p, tag)
		}
		return false, false, nil
	}, func(x node) { *cur = append(*cur, x) })
	return n, err
}

func parseUnless(p *parser, tk *topToken, t *tokenizer) (node, error) {
	v, err := t.readFilteredValue()
	if err != nil {
		return nil, err
	}
	n := &ifNode{branches: []*branch{{v: v, unless: true}}}
	cur := &n.branches[0].nodes
	elseCount := 0
	var scratch []node
	err = p.stream(tk, func(tag *topToken) (bool, bool, error) {
		switch tag.name {
		case "elsif":
			if elseCount > 0 {
				scratch = nil
				cur = &scratch
				return true, false, nil
			}
			v, err := newTokenizer(p.src, tag.argsBegin, tag.cEnd).readFilteredValue()
			if err != nil {
				return false, false, err
			}
			b := &branch{v: v}
			n.branches = append(n.branches, b)
			cur = &b.nodes
			return true, false, nil
		case "else":
			elseCount++
			if elseCount == 1 {
				cur = &n.els
			} else {
				cur = &scratch
			}
			return true, false, nil
		case "endunless":
			return true, true, nil
		}
		return false, false, nil
	}, func(x node) { *cur = append(*cur, x) })
	return n, err
}

func (n *ifNode) render(c *Context, w *emitter) error {
	for _, b := range n.branches {
		v, err := b.v.eval(c)
		if err != nil {
			return err
		}
		if Truthy(v) != b.unless {
			return renderNodes(c, w, b.nodes)
		}
	}
	return renderNodes(c, w, n.els)
}

// case

type caseNode struct {
	v        *filtered
	branches []caseBranch
	els      []node
}

type caseBranch struct {
	values []*value
	nodes  []node
}

func parseCase(p *parser, tk *topToken, t *tokenizer) (node, error) {
	v, err := t.readFilteredValue()
	if err != nil {
		return nil, err
	}
	n := &caseNode{v: v}
	var discard []node
	cur := &discard
	elseCount := 0
	inElse := false
	err = p.stream(tk, func(tag *topToken) (bool, bool, error) {
		switch tag.name {
		case "when":
			if elseCount > 0 {
				return true, false, nil
			}
			wt := newTokenizer(p.src, tag.argsBegin, tag.cEnd)
			var vals []*value
			for !wt.end() {
				x, err := wt.readValueOrThrow()
				if err != nil {
					return false, false, err
				}
				vals = append(vals, x)
				wt.skipBlank()
				if wt.peek() == ',' {
					wt.readTo(",")
				} else {
					wt.readTo("or")
				}
			}
			n.branches = append(n.branches, caseBranch{values: vals})
			i := len(n.branches) - 1
			cur = &n.branches[i].nodes
			inElse = false
			return true, false, nil
		case "else":
			elseCount++
			cur = &n.els
			inElse = true
			return true, false, nil
		case "endcase":
			return true, true, nil
		}
		return false, false, nil
	}, func(x node) {
		if !inElse || elseCount == 1 {
			*cur = append(*cur, x)
		}
	})
	return n, err
}

func (n *caseNode) render(c *Context, w *emitter) error {
	target, err := n.v.eval(c)
	if err != nil {
		return err
	}
	target = toValue(target)
	hit := false
	for _, b := range n.branches {
		for _, v := range b.values {
			x, err := v.eval(c)
			if err != nil {
				return err
			}
			if Equals(target, x) {
				if err := renderNodes(c, w, b.nodes); err != nil {
					return err
				}
				hit = true
				break
			}
		}
	}
	if !hit {
		return renderNodes(c, w, n.els)
	}
	return nil
}
