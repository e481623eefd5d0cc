package liquid

// Forloop is the forloop (and tablerowloop) variable of a loop.
type Forloop struct {
	i, length int
	name      string
	cols      int  // tablerow only
	table     bool // tablerowloop: row, col, … too
}

func (f *Forloop) next() { f.i++ }

// Prop returns the loop's properties.
func (f *Forloop) Prop(key string) any {
	switch key {
	case "i", "index0":
		return float64(f.i)
	case "index":
		return float64(f.i + 1)
	case "first":
		return f.i == 0
	case "last":
		return f.i == f.length-1
	case "rindex":
		return float64(f.length - f.i)
	case "rindex0":
		return float64(f.length - f.i - 1)
	case "length":
		return float64(f.length)
	case "name":
		return f.name
	}
	if f.table {
		col0 := f.i % f.cols
		switch key {
		case "cols":
			return float64(f.cols)
		case "row":
			return float64(f.i/f.cols + 1)
		case "col0":
			return float64(col0)
		case "col":
			return float64(col0 + 1)
		case "col_first":
			return col0 == 0
		case "col_last":
			return col0+1 == f.cols
		}
	}
	return nil
}

// Value is the loop as JSON, as LiquidJS's valueOf gives it.
func (f *Forloop) Value() any {
	m := NewMap(4)
	m.Set("i", float64(f.i))
	m.Set("length", float64(f.length))
	m.Set("name", f.name)
	if f.table {
		m.Set("cols", float64(f.cols))
	}
	return JSONStringify(m, "")
}
