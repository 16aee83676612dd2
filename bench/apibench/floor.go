package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"time"
)

// floorServer is an HTTPS server in this process answering POST / and
// GET /jobs/<jid> with fixed bodies of the sizes salt-api sends, so
// asyncLoad against it measures what the load generator itself can do on
// this machine: the ceiling any API's figure is read against.
func floorServer(ctx context.Context) (string, error) {
	cert, err := selfSigned()
	if err != nil {
		return "", err
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		return "", fmt.Errorf("listen: %w", err)
	}
	post := []byte(`{"return": [{"jid": "20261202061500123456", "minions": ["api-00001"]}]}`)
	get := []byte(`{"info": [{"jid": "20261202061500123456", "Function": "test.ping", "Arguments": [], "Target": "api-00001", "Target-type": "glob", ` +
		`"User": "bench", "StartTime": "2026, Dec 02 06:15:00.123456", "Minions": ["api-00001"], "Result": {"api-00001": {"return": true, "retcode": 0, "success": true}}}], ` +
		`"return": [{"api-00001": true}]}`)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == "POST" {
			w.Write(post)
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/jobs/") {
			http.NotFound(w, r)
			return
		}
		w.Write(get)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	return "https://" + ln.Addr().String(), nil
}

// selfSigned makes a throwaway P-256 certificate for 127.0.0.1.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generate key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "apibench"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("create certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
