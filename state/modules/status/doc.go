// Package status is Salt's status execution module (salt/modules/status.py)
// for Linux: uptime, load, memory, CPU, disk, network and process figures
// read from /proc with the key names and value types of Salt 3006.
//
// The /proc parsers are pure functions over the file text so that tests
// feed fixture files; the registered functions read the live files. Like
// Salt's _number, numeric fields become ints when they are all digits,
// floats when Python's float() would take them, and stay strings
// otherwise.
//
// Not here: master, ping_master, proxy_reconnect and custom (they need a
// minion connection or the status option table), time.
package status
