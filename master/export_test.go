package master

import (
	"fmt"

	"github.com/brinesalt/brine/state/target"
)

func ParseKindForTest(s string) (target.Kind, error) { return target.ParseKind(s) }

func fmtList(l []string) string { return fmt.Sprint(l) }
