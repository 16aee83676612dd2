package target_test

import (
	"errors"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/target"
)

func ExampleCompile() {
	m, err := target.Compile("G@os:Debian and ( web* or L@db1,db2 ) and not I@role:test", target.Compound, target.Options{})
	if err != nil {
		panic(err)
	}
	web1 := &target.Minion{
		ID:     "web1",
		Grains: ordered.FromPairs("os", "Debian"),
		Pillar: ordered.FromPairs("role", "prod"),
	}
	fmt.Println(m.Match(web1))
	// Output: true
}

func ExampleSyntaxError() {
	_, err := target.Compile("web* and ( db* or", target.Compound, target.Options{})
	var se *target.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(se.Pos, se.Token)
		fmt.Println(err)
	}
	// Output:
	// 15 or
	// compound target "web* and ( db* or": "or" at position 15: dangling operator at end of expression
}

func ExampleMatchID() {
	ok, _ := target.MatchID("web[12]", target.Glob, "web2", target.Options{})
	fmt.Println(ok)
	// Output: true
}
