package main

import (
	"sort"

	"github.com/spf13/pflag"
)

type pflagFlag = pflag.Flag

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
