package run

// setUmask does nothing on Windows, which has no umask: Salt's
// salt.utils.files.set_umask is a no-op there too (it yields at once
// when salt.utils.platform.is_windows()).
func setUmask(int) func() { return func() {} }
