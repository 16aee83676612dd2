package jinja

// Statement nodes. Every node records the line it starts on so that
// runtime errors can point at it as Jinja's tracebacks do.

type node interface{ nodeLine() int }

type pos struct{ line int }

func (p pos) nodeLine() int { return p.line }

type (
	dataNode struct {
		pos
		text string
	}
	outputNode struct {
		pos
		expr expr
	}
	ifNode struct {
		pos
		conds     []expr
		condLines []int // the line of each if/elif tag
		bodies    [][]node
		orelse    []node
	}
	forNode struct {
		pos
		target    expr
		iter      expr
		filter    expr
		body      []node
		orelse    []node
		recursive bool
	}
	setNode struct {
		pos
		target expr
		value  expr
	}
	setBlockNode struct {
		pos
		target  expr
		filters []*filterExpr
		body    []node
	}
	macroNode struct {
		pos
		name string
		m    *macroDef
	}
	callBlockNode struct {
		pos
		call   *callExpr
		caller *macroDef
	}
	filterBlockNode struct {
		pos
		filters []*filterExpr
		body    []node
	}
	doNode struct {
		pos
		expr expr
	}
	breakNode    struct{ pos }
	continueNode struct{ pos }
	includeNode  struct {
		pos
		template      expr
		ignoreMissing bool
		withContext   bool
	}
	importNode struct {
		pos
		template    expr
		target      string
		withContext bool
		// loadAs is "yaml", "json" or "text" for Salt's import_* tags.
		loadAs string
	}
	fromImportNode struct {
		pos
		template    expr
		names       [][2]string // name, alias
		withContext bool
	}
	withNode struct {
		pos
		targets []expr
		values  []expr
		body    []node
	}
	// loadNode is Salt's {% load_yaml as x %}...{% endload %}.
	loadNode struct {
		pos
		format string
		target expr
		body   []node
	}
	blockNode struct {
		pos
		name string
		body []node
	}
	extendsNode struct {
		pos
		template expr
	}
	scopeNode struct {
		pos
		body []node
	}
)

// macroDef is the shared shape of macros and call blocks.
type macroDef struct {
	name     string
	params   []string
	defaults []expr // aligned to the tail of params
	body     []node
	// usesCaller, usesVarargs and usesKwargs record whether the body reads
	// those names, which decides what the macro accepts (jinja2 Macro).
	usesCaller, usesVarargs, usesKwargs bool
}

// Expression nodes.

type expr interface{ nodeLine() int }

type (
	constExpr struct {
		pos
		val any
	}
	nameExpr struct {
		pos
		name string
	}
	listExpr struct {
		pos
		items []expr
	}
	tupleExpr struct {
		pos
		items []expr
	}
	dictExpr struct {
		pos
		keys, vals []expr
	}
	getattrExpr struct {
		pos
		obj  expr
		attr string
	}
	getitemExpr struct {
		pos
		obj expr
		key expr
	}
	sliceExpr struct {
		pos
		start, stop, step expr
	}
	callExpr struct {
		pos
		fn      expr
		args    []expr
		kwnames []string
		kwvals  []expr
		star    expr
		dstar   expr
	}
	filterExpr struct {
		pos
		node    expr // nil inside filter blocks
		name    string
		args    []expr
		kwnames []string
		kwvals  []expr
		star    expr
		dstar   expr
	}
	testExpr struct {
		pos
		node   expr
		name   string
		args   []expr
		negate bool
	}
	binExpr struct {
		pos
		op   string
		l, r expr
	}
	unaryExpr struct {
		pos
		op string
		x  expr
	}
	compareExpr struct {
		pos
		first expr
		ops   []string
		rest  []expr
	}
	condExpr struct {
		pos
		cond, then, orelse expr
	}
	concatExpr struct {
		pos
		items []expr
	}
)
