package winservice

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc/mgr"
)

// queryConfig is mgr.Service.Config without its hard dependency on the
// optional QueryServiceConfig2 levels: a service manager that does not
// know SERVICE_CONFIG_DELAYED_AUTO_START_INFO or
// SERVICE_CONFIG_SERVICE_SID_INFO (ERROR_INVALID_LEVEL; Wine 8.0's
// services.exe knows neither) reports no delayed start and no SID type
// instead of failing every service.info. Windows since Vista answers
// both.
func queryConfig(s *mgr.Service) (mgr.Config, error) {
	var p *windows.QUERY_SERVICE_CONFIG
	n := uint32(1024)
	for {
		b := make([]byte, n)
		p = (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(&b[0]))
		err := windows.QueryServiceConfig(s.Handle, p, n, &n)
		if err == nil {
			break
		}
		if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) || n <= uint32(len(b)) {
			return mgr.Config{}, err
		}
	}
	cfg := mgr.Config{
		ServiceType:      p.ServiceType,
		StartType:        p.StartType,
		ErrorControl:     p.ErrorControl,
		BinaryPathName:   windows.UTF16PtrToString(p.BinaryPathName),
		LoadOrderGroup:   windows.UTF16PtrToString(p.LoadOrderGroup),
		TagId:            p.TagId,
		Dependencies:     multiSZ(p.Dependencies),
		ServiceStartName: windows.UTF16PtrToString(p.ServiceStartName),
		DisplayName:      windows.UTF16PtrToString(p.DisplayName),
	}
	b, err := queryConfig2(s, windows.SERVICE_CONFIG_DESCRIPTION)
	if err != nil {
		return mgr.Config{}, err
	}
	cfg.Description = windows.UTF16PtrToString((*windows.SERVICE_DESCRIPTION)(unsafe.Pointer(&b[0])).Description)
	switch b, err := queryConfig2(s, windows.SERVICE_CONFIG_DELAYED_AUTO_START_INFO); {
	case err == nil:
		cfg.DelayedAutoStart = (*windows.SERVICE_DELAYED_AUTO_START_INFO)(unsafe.Pointer(&b[0])).IsDelayedAutoStartUp != 0
	case !errors.Is(err, windows.ERROR_INVALID_LEVEL):
		return mgr.Config{}, err
	}
	switch b, err := queryConfig2(s, windows.SERVICE_CONFIG_SERVICE_SID_INFO); {
	case err == nil:
		cfg.SidType = *(*uint32)(unsafe.Pointer(&b[0]))
	case !errors.Is(err, windows.ERROR_INVALID_LEVEL):
		return mgr.Config{}, err
	}
	return cfg, nil
}

func queryConfig2(s *mgr.Service, level uint32) ([]byte, error) {
	n := uint32(1024)
	for {
		b := make([]byte, n)
		err := windows.QueryServiceConfig2(s.Handle, level, &b[0], n, &n)
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) || n <= uint32(len(b)) {
			return nil, err
		}
	}
}

// multiSZ splits a double-NUL-terminated UTF-16 string list.
func multiSZ(p *uint16) []string {
	var out []string
	for p != nil && *p != 0 {
		s := windows.UTF16PtrToString(p)
		out = append(out, s)
		p = (*uint16)(unsafe.Add(unsafe.Pointer(p), (len(windows.StringToUTF16(s)))*2))
	}
	return out
}

// changeStartType changes only the start type (ChangeServiceConfig with
// SERVICE_NO_CHANGE elsewhere, so no other setting is rewritten) and,
// for automatic start, the delayed flag. Clearing a delayed flag that
// the service manager does not know (ERROR_INVALID_LEVEL) is nothing to
// do; setting one is an error.
func changeStartType(s *mgr.Service, t uint32, delayed bool) error {
	if err := windows.ChangeServiceConfig(s.Handle, windows.SERVICE_NO_CHANGE, t, windows.SERVICE_NO_CHANGE,
		nil, nil, nil, nil, nil, nil, nil); err != nil {
		return err
	}
	if t != mgr.StartAutomatic {
		return nil
	}
	info := windows.SERVICE_DELAYED_AUTO_START_INFO{}
	if delayed {
		info.IsDelayedAutoStartUp = 1
	}
	err := windows.ChangeServiceConfig2(s.Handle, windows.SERVICE_CONFIG_DELAYED_AUTO_START_INFO, (*byte)(unsafe.Pointer(&info)))
	if errors.Is(err, windows.ERROR_INVALID_LEVEL) && !delayed {
		return nil
	}
	return err
}
