package reactor

import "time"

func runtimeGosched() { time.Sleep(time.Millisecond) }
