package httpget

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
)

// ErrMalformed means the server's answer is not valid HTTP/1.x.
var ErrMalformed = errors.New("malformed HTTP response")

// ReadResponse reads one HTTP/1.x response to a GET from r. For a
// redirect with a Location, it returns that location and no response;
// otherwise the response with its whole body.
func ReadResponse(r *bufio.Reader) (*Response, string, error) {
	for {
		code, reason, hdr, err := readHead(r)
		if err != nil {
			return nil, "", err
		}
		if code >= 100 && code < 200 {
			continue // 100 Continue and friends precede the real answer
		}
		switch code {
		case 301, 302, 303, 307, 308:
			if loc := hdr.Get("Location"); loc != "" {
				return nil, loc, nil
			}
		}
		body, err := readBody(r, code, hdr)
		if err != nil {
			return nil, "", err
		}
		return &Response{StatusCode: code, Status: reason, Body: body}, "", nil
	}
}

// readHead reads a status line and the header fields after it.
func readHead(r *bufio.Reader) (code int, reason string, hdr textproto.MIMEHeader, err error) {
	tp := textproto.NewReader(r)
	line, err := tp.ReadLine()
	if err != nil {
		return 0, "", nil, noEOF(err)
	}
	proto, rest, _ := strings.Cut(line, " ")
	if !strings.HasPrefix(proto, "HTTP/1.") || len(proto) != len("HTTP/1.1") {
		return 0, "", nil, fmt.Errorf("%w: status line %q", ErrMalformed, trim(line))
	}
	num, reason, _ := strings.Cut(rest, " ")
	code, err = strconv.Atoi(num)
	if err != nil || len(num) != 3 || code < 100 {
		return 0, "", nil, fmt.Errorf("%w: status line %q", ErrMalformed, trim(line))
	}
	hdr, err = tp.ReadMIMEHeader()
	if err != nil {
		return 0, "", nil, fmt.Errorf("%w: %w", ErrMalformed, noEOF(err))
	}
	return code, reason, hdr, nil
}

// readBody reads the body as RFC 9112 section 6.3 frames it for a
// response to a GET.
func readBody(r *bufio.Reader, code int, hdr textproto.MIMEHeader) ([]byte, error) {
	if code == 204 || code == 304 {
		return nil, nil
	}
	if te := hdr.Values("Transfer-Encoding"); len(te) > 0 {
		if len(te) != 1 || !strings.EqualFold(strings.TrimSpace(te[0]), "chunked") {
			return nil, fmt.Errorf("%w: transfer coding %q", ErrMalformed, strings.Join(te, ", "))
		}
		return readChunked(r)
	}
	if cl := hdr.Values("Content-Length"); len(cl) > 0 {
		for _, v := range cl[1:] {
			if v != cl[0] {
				return nil, fmt.Errorf("%w: conflicting Content-Length", ErrMalformed)
			}
		}
		n, err := strconv.ParseInt(strings.TrimSpace(cl[0]), 10, 63)
		if err != nil || n < 0 || strings.HasPrefix(strings.TrimSpace(cl[0]), "+") {
			return nil, fmt.Errorf("%w: Content-Length %q", ErrMalformed, trim(cl[0]))
		}
		body, err := io.ReadAll(io.LimitReader(r, n))
		if err != nil {
			return nil, err
		}
		if int64(len(body)) != n {
			return nil, fmt.Errorf("%w: body ended after %d of %d bytes", ErrMalformed, len(body), n)
		}
		return body, nil
	}
	return io.ReadAll(r) // framed by the end of the connection
}

// readChunked decodes a chunked body and skips its trailer.
func readChunked(r *bufio.Reader) ([]byte, error) {
	tp := textproto.NewReader(r)
	var body []byte
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return nil, fmt.Errorf("%w: chunk size: %w", ErrMalformed, noEOF(err))
		}
		size, _, _ := strings.Cut(line, ";") // chunk extensions are ignored
		size = strings.TrimRight(size, " \t")
		n, err := strconv.ParseUint(size, 16, 63)
		if err != nil || size == "" || len(size) > 16 {
			return nil, fmt.Errorf("%w: chunk size %q", ErrMalformed, trim(line))
		}
		if n == 0 {
			if _, err := tp.ReadMIMEHeader(); err != nil {
				return nil, fmt.Errorf("%w: trailer: %w", ErrMalformed, noEOF(err))
			}
			return body, nil
		}
		buf, err := io.ReadAll(io.LimitReader(r, int64(n)))
		if err != nil {
			return nil, err
		}
		if uint64(len(buf)) != n {
			return nil, fmt.Errorf("%w: chunk ended after %d of %d bytes", ErrMalformed, len(buf), n)
		}
		body = append(body, buf...)
		if crlf, err := tp.ReadLine(); err != nil || crlf != "" {
			return nil, fmt.Errorf("%w: no CRLF after a chunk", ErrMalformed)
		}
	}
}

// noEOF turns an EOF in the middle of a response into an error that says so.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func basicAuth(u *url.Userinfo) string {
	pw, _ := u.Password()
	return base64.StdEncoding.EncodeToString([]byte(u.Username() + ":" + pw))
}
