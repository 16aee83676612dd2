package saltutil

import "syscall"

// signalNames are the names Python's signal module has on Windows that
// signal_job can send (os.kill terminates the process for each).
var signalNames = map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL}
