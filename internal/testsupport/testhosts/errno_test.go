package testhosts_test

import "syscall"

var syscallECONNREFUSED = syscall.ECONNREFUSED
