package netapi

import (
	"errors"
	"fmt"
	"html"
	"net/http"
)

// HTTPError is an answer other than success: the status code and the
// message Salt's rest_cherrypy gives (cherrypy.HTTPError).
type HTTPError struct {
	Code    int
	Message string
}

func (e *HTTPError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// httpError is cherrypy.HTTPError(code, msg); an empty msg is CherryPy's
// default text for the code.
func httpError(code int, msg string) *HTTPError {
	if msg == "" {
		msg = defaultMessage(code)
	}
	return &HTTPError{Code: code, Message: msg}
}

// defaultMessage is the text CherryPy shows for an HTTPError raised
// without one (http.server.BaseHTTPRequestHandler.responses).
func defaultMessage(code int) string {
	switch code {
	case 400:
		return "Bad request syntax or unsupported method"
	case 401:
		return "No permission -- see authorization schemes"
	case 403:
		return "Request forbidden -- authorization will not succeed"
	case 404:
		return "Nothing matches the given URI"
	case 405:
		return "Specified method is invalid for this resource"
	case 406:
		return "URI not available in preferred format"
	case 413:
		return "The entity sent with the request exceeds the maximum allowed bytes."
	case 500:
		return "Server got itself in trouble"
	case 503:
		return "The server cannot process the request due to a high load"
	case 504:
		return "The gateway server did not receive a timely response"
	}
	return http.StatusText(code)
}

// asHTTPError is the error as the client sees it; anything that is not
// already an *HTTPError is Salt's 500 for an unexpected exception.
func asHTTPError(err error) (*HTTPError, bool) {
	var he *HTTPError
	if errors.As(err, &he) {
		return he, true
	}
	return nil, false
}

// errorPage is CherryPy's HTML error page, for clients that accept
// neither JSON nor YAML: the status in the title and heading, the
// message in <p>.
func errorPage(e *HTTPError) []byte {
	status := fmt.Sprintf("%d %s", e.Code, http.StatusText(e.Code))
	return fmt.Appendf(nil, `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html>
<head>
    <meta http-equiv="Content-Type" content="text/html; charset=utf-8"></meta>
    <title>%s</title>
</head>
    <body>
        <h2>%s</h2>
        <p>%s</p>
    </body>
</html>
`, html.EscapeString(status), html.EscapeString(status), html.EscapeString(e.Message))
}

// errNotAMapping is a lowstate chunk that is not a mapping: Salt fails
// on it with an unexpected error (500).
var errNotAMapping = errors.New("lowstate chunk is not a mapping")

// errMasterDown is a master that cannot be reached (Salt's
// SaltDaemonNotRunning): 503.
func errMasterDown(err error) error {
	return fmt.Errorf("%w (%w)", httpError(503, "Salt Master is not available."), err)
}
