// Sorting as V8 sorts: its TimSort, step for step, so that values that do
// not compare consistently (strings beside numbers) end where Node puts them.

package liquid

// fOrderedCompare is LiquidJS's orderedCompare: null and undefined last,
// else JavaScript's < and >.
func fOrderedCompare(a, b any) int {
	an, bn := a == nil || a == Null, b == nil || b == Null
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case Less(a, b):
		return -1
	case Less(b, a):
		return 1
	}
	return 0
}

// fToStringJS is JavaScript's ToString, where an object (a drop) is
// "[object Object]".
func fToStringJS(v any) string {
	if _, ok := v.(Drop); ok {
		return "[object Object]"
	}
	return JSString(v)
}

// fCaseInsensitiveCompare compares the values' lower-cased strings, null
// and undefined last.
func fCaseInsensitiveCompare(a, b any) int {
	an, bn := a == nil || a == Null, b == nil || b == Null
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	c, _ := compare(fLower(fToStringJS(a)), fLower(fToStringJS(b)))
	return c
}

// fJSSort sorts as V8's Array.prototype.sort does (TimSort: natural runs,
// binary insertion below the minimum run length, merges with galloping),
// step for step, so that a comparator that is no consistent order (mixed
// strings and numbers) still gives V8's result. It returns the order of
// keys' indexes.
func fJSSort(keys []any, cmp func(a, b any) int) []int {
	n := len(keys)
	t := &fTimSort{a: make([]int, n), minGallop: 7}
	for i := range t.a {
		t.a[i] = i
	}
	t.cmp = func(x, y int) int { return cmp(keys[x], keys[y]) }
	if n < 2 {
		return t.a
	}
	minRun := n
	r := 0
	for minRun >= 64 {
		r |= minRun & 1
		minRun >>= 1
	}
	minRun += r
	for low, remaining := 0, n; remaining != 0; {
		run := t.countAndMakeRun(low, low+remaining)
		if run < minRun {
			forced := min(minRun, remaining)
			t.binaryInsertionSort(low, low+run, low+forced)
			run = forced
		}
		t.runs = append(t.runs, [2]int{low, run})
		t.mergeCollapse()
		low += run
		remaining -= run
	}
	for len(t.runs) > 1 {
		i := len(t.runs) - 2
		if i > 0 && t.runs[i-1][1] < t.runs[i+1][1] {
			i--
		}
		t.mergeAt(i)
	}
	return t.a
}

type fTimSort struct {
	a         []int
	cmp       func(x, y int) int
	runs      [][2]int // base, length
	minGallop int
}

func (t *fTimSort) binaryInsertionSort(low, start, high int) {
	if start == low {
		start++
	}
	for ; start < high; start++ {
		left, right := low, start
		pivot := t.a[start]
		for left < right {
			mid := left + (right-left)>>1
			if t.cmp(pivot, t.a[mid]) < 0 {
				right = mid
			} else {
				left = mid + 1
			}
		}
		copy(t.a[left+1:start+1], t.a[left:start])
		t.a[left] = pivot
	}
}

func (t *fTimSort) countAndMakeRun(lowArg, high int) int {
	low := lowArg + 1
	if low == high {
		return 1
	}
	run := 2
	desc := t.cmp(t.a[low], t.a[low-1]) < 0
	prev := t.a[low]
	for i := low + 1; i < high; i++ {
		order := t.cmp(t.a[i], prev)
		if desc && order >= 0 || !desc && order < 0 {
			break
		}
		prev = t.a[i]
		run++
	}
	if desc {
		for i, j := lowArg, lowArg+run-1; i < j; i, j = i+1, j-1 {
			t.a[i], t.a[j] = t.a[j], t.a[i]
		}
	}
	return run
}

func (t *fTimSort) established(n int) bool {
	if n < 2 {
		return true
	}
	return t.runs[n-2][1] > t.runs[n-1][1]+t.runs[n][1]
}

func (t *fTimSort) mergeCollapse() {
	for len(t.runs) > 1 {
		n := len(t.runs) - 2
		if !t.established(n+1) || !t.established(n) {
			if t.runs[n-1][1] < t.runs[n+1][1] {
				n--
			}
			t.mergeAt(n)
		} else if t.runs[n][1] <= t.runs[n+1][1] {
			t.mergeAt(n)
		} else {
			break
		}
	}
}

func (t *fTimSort) mergeAt(i int) {
	baseA, lenA := t.runs[i][0], t.runs[i][1]
	baseB, lenB := t.runs[i+1][0], t.runs[i+1][1]
	t.runs[i][1] = lenA + lenB
	if i == len(t.runs)-3 {
		t.runs[i+1] = t.runs[i+2]
	}
	t.runs = t.runs[:len(t.runs)-1]
	k := t.gallopRight(t.a, t.a[baseB], baseA, lenA, 0)
	baseA += k
	lenA -= k
	if lenA == 0 {
		return
	}
	lenB = t.gallopLeft(t.a, t.a[baseA+lenA-1], baseB, lenB, lenB-1)
	if lenB == 0 {
		return
	}
	if lenA <= lenB {
		t.mergeLow(baseA, lenA, baseB, lenB)
	} else {
		t.mergeHigh(baseA, lenA, baseB, lenB)
	}
}

// gallopLeft is the offset in [0, length] where key goes in a[base:],
// left of any equal elements; gallopRight right of them.
func (t *fTimSort) gallopLeft(a []int, key, base, length, hint int) int {
	lastOfs, ofs := 0, 1
	if t.cmp(a[base+hint], key) < 0 {
		maxOfs := length - hint
		for ofs < maxOfs && t.cmp(a[base+hint+ofs], key) < 0 {
			lastOfs, ofs = ofs, ofs<<1+1
		}
		ofs = min(ofs, maxOfs)
		lastOfs, ofs = lastOfs+hint, ofs+hint
	} else {
		maxOfs := hint + 1
		for ofs < maxOfs && t.cmp(a[base+hint-ofs], key) >= 0 {
			lastOfs, ofs = ofs, ofs<<1+1
		}
		ofs = min(ofs, maxOfs)
		lastOfs, ofs = hint-ofs, hint-lastOfs
	}
	for lastOfs++; lastOfs < ofs; {
		m := lastOfs + (ofs-lastOfs)>>1
		if t.cmp(a[base+m], key) < 0 {
			lastOfs = m + 1
		} else {
			ofs = m
		}
	}
	return ofs
}

func (t *fTimSort) gallopRight(a []int, key, base, length, hint int) int {
	lastOfs, ofs := 0, 1
	if t.cmp(key, a[base+hint]) < 0 {
		maxOfs := hint + 1
		for ofs < maxOfs && t.cmp(key, a[base+hint-ofs]) < 0 {
			lastOfs, ofs = ofs, ofs<<1+1
		}
		ofs = min(ofs, maxOfs)
		lastOfs, ofs = hint-ofs, hint-lastOfs
	} else {
		maxOfs := length - hint
		for ofs < maxOfs && t.cmp(key, a[base+hint+ofs]) >= 0 {
			lastOfs, ofs = ofs, ofs<<1+1
		}
		ofs = min(ofs, maxOfs)
		lastOfs, ofs = lastOfs+hint, ofs+hint
	}
	for lastOfs++; lastOfs < ofs; {
		m := lastOfs + (ofs-lastOfs)>>1
		if t.cmp(key, a[base+m]) < 0 {
			ofs = m
		} else {
			lastOfs = m + 1
		}
	}
	return ofs
}

func (t *fTimSort) mergeLow(baseA, lenA, baseB, lenB int) {
	a := t.a
	tmp := append([]int(nil), a[baseA:baseA+lenA]...)
	dest, cA, cB := baseA, 0, baseB
	a[dest] = a[cB]
	dest++
	cB++
	lenB--
	if lenB == 0 {
		copy(a[dest:], tmp[cA:cA+lenA])
		return
	}
	if lenA == 1 {
		copy(a[dest:dest+lenB], a[cB:cB+lenB])
		a[dest+lenB] = tmp[cA]
		return
	}
	minGallop := t.minGallop
	for {
		winsA, winsB := 0, 0
		for {
			if t.cmp(a[cB], tmp[cA]) < 0 {
				a[dest] = a[cB]
				dest++
				cB++
				winsB++
				lenB--
				winsA = 0
				if lenB == 0 {
					goto succeed
				}
				if winsB >= minGallop {
					break
				}
			} else {
				a[dest] = tmp[cA]
				dest++
				cA++
				winsA++
				lenA--
				winsB = 0
				if lenA == 1 {
					goto copyB
				}
				if winsA >= minGallop {
					break
				}
			}
		}
		minGallop++
		for first := true; first || winsA >= 7 || winsB >= 7; first = false {
			minGallop = max(1, minGallop-1)
			t.minGallop = minGallop
			winsA = t.gallopRight(tmp, a[cB], cA, lenA, 0)
			if winsA > 0 {
				copy(a[dest:dest+winsA], tmp[cA:cA+winsA])
				dest += winsA
				cA += winsA
				lenA -= winsA
				if lenA == 1 {
					goto copyB
				}
				if lenA == 0 {
					goto succeed
				}
			}
			a[dest] = a[cB]
			dest++
			cB++
			lenB--
			if lenB == 0 {
				goto succeed
			}
			winsB = t.gallopLeft(a, tmp[cA], cB, lenB, 0)
			if winsB > 0 {
				copy(a[dest:dest+winsB], a[cB:cB+winsB])
				dest += winsB
				cB += winsB
				lenB -= winsB
				if lenB == 0 {
					goto succeed
				}
			}
			a[dest] = tmp[cA]
			dest++
			cA++
			lenA--
			if lenA == 1 {
				goto copyB
			}
		}
		minGallop++
		t.minGallop = minGallop
	}
succeed:
	if lenA > 0 {
		copy(a[dest:dest+lenA], tmp[cA:cA+lenA])
	}
	return
copyB:
	copy(a[dest:dest+lenB], a[cB:cB+lenB])
	a[dest+lenB] = tmp[cA]
}

func (t *fTimSort) mergeHigh(baseA, lenA, baseB, lenB int) {
	a := t.a
	tmp := append([]int(nil), a[baseB:baseB+lenB]...)
	dest, cT, cA := baseB+lenB-1, lenB-1, baseA+lenA-1
	a[dest] = a[cA]
	dest--
	cA--
	lenA--
	if lenA == 0 {
		goto succeed
	}
	if lenB == 1 {
		goto copyA
	}
	for minGallop := t.minGallop; ; {
		winsA, winsB := 0, 0
		for {
			if t.cmp(tmp[cT], a[cA]) < 0 {
				a[dest] = a[cA]
				dest--
				cA--
				winsA++
				lenA--
				winsB = 0
				if lenA == 0 {
					goto succeed
				}
				if winsA >= minGallop {
					break
				}
			} else {
				a[dest] = tmp[cT]
				dest--
				cT--
				winsB++
				lenB--
				winsA = 0
				if lenB == 1 {
					goto copyA
				}
				if winsB >= minGallop {
					break
				}
			}
		}
		minGallop++
		for first := true; first || winsA >= 7 || winsB >= 7; first = false {
			minGallop = max(1, minGallop-1)
			t.minGallop = minGallop
			k := t.gallopRight(a, tmp[cT], baseA, lenA, lenA-1)
			winsA = lenA - k
			if winsA > 0 {
				dest -= winsA
				cA -= winsA
				copy(a[dest+1:dest+1+winsA], a[cA+1:cA+1+winsA])
				lenA -= winsA
				if lenA == 0 {
					goto succeed
				}
			}
			a[dest] = tmp[cT]
			dest--
			cT--
			lenB--
			if lenB == 1 {
				goto copyA
			}
			k = t.gallopLeft(tmp, a[cA], 0, lenB, lenB-1)
			winsB = lenB - k
			if winsB > 0 {
				dest -= winsB
				cT -= winsB
				copy(a[dest+1:dest+1+winsB], tmp[cT+1:cT+1+winsB])
				lenB -= winsB
				if lenB == 1 {
					goto copyA
				}
				if lenB == 0 {
					goto succeed
				}
			}
			a[dest] = a[cA]
			dest--
			cA--
			lenA--
			if lenA == 0 {
				goto succeed
			}
		}
		minGallop++
		t.minGallop = minGallop
	}
succeed:
	if lenB > 0 {
		copy(a[dest-(lenB-1):dest+1], tmp[:lenB])
	}
	return
copyA:
	dest -= lenA
	cA -= lenA
	copy(a[dest+1:dest+1+lenA], a[cA+1:cA+1+lenA])
	a[dest] = tmp[cT]
}

func fSortBy(c *Context, v any, property any, cmp func(a, b any) int) []any {
	arr := fToArray(v)
	keys := arr
	if fTruthyJS(property) {
		path := Stringify(property)
		keys = make([]any, len(arr))
		for i, item := range arr {
			keys[i] = c.GetPath(item, path)
		}
	}
	out := make([]any, len(arr))
	for i, j := range fJSSort(keys, cmp) {
		out[i] = arr[j]
	}
	return out
}
