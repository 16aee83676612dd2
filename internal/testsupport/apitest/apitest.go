// Package apitest runs salt-api end to end for tests and benchmarks: a
// real Brine master and minions (clustertest) and salt-api as a real
// process over HTTPS with a self-signed certificate made here, with
// helpers to log in and call the API.
package apitest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// Options choose what runs.
type Options struct {
	// MasterConf is added to the master config (external_auth and the
	// like). Empty gets DefaultMasterConf.
	MasterConf string
	// APIConf is added to the rest_cherrypy section, indented by the
	// caller's two spaces ("  debug: True\n").
	APIConf string
	// Minions are started (auto_accept is on) and pinged before Start
	// returns.
	Minions []string
	// DisableSSL serves plain HTTP.
	DisableSSL bool
	// Tools are more commands to build (salt-api and the daemons always
	// are).
	Tools []string
	// Thin builds the thin binary beside salt-api, for the ssh client.
	Thin bool
}

// DefaultMasterConf lets anyone in through the auto eauth with every
// right, and enables every client.
const DefaultMasterConf = `auto_accept: True
external_auth:
  auto:
    '*':
      - .*
      - '@runner'
      - '@wheel'
      - '@jobs'
netapi_enable_clients: [local, local_async, local_batch, local_subset, runner, runner_async, ssh, wheel, wheel_async]
`

// API is a running cluster with salt-api in front of it.
type API struct {
	*clustertest.Cluster
	t clustertest.T
	// URL is salt-api's base URL, without a trailing slash.
	URL string
	// Port is salt-api's port on 127.0.0.1.
	Port int
	// CertFile and KeyFile are the self-signed certificate and its key;
	// CAPool trusts the certificate.
	CertFile, KeyFile string
	CAPool            *x509.CertPool
	// HTTP is a client that trusts the certificate.
	HTTP *http.Client
	proc *exec.Cmd
	log  *clustertest.SyncBuffer
}

// Start runs a master, the minions and salt-api, and waits until the
// API answers GET / and every minion answers test.ping.
func Start(t clustertest.T, o Options) *API {
	t.Helper()
	dir := t.TempDir()
	a := &API{t: t, Port: freePort(t)}
	a.CertFile, a.KeyFile, a.CAPool = SelfSigned(t, dir)
	scheme := "https"
	api := fmt.Sprintf("rest_cherrypy:\n  port: %d\n  host: 127.0.0.1\n  ssl_crt: %s\n  ssl_key: %s\n", a.Port, a.CertFile, a.KeyFile)
	if o.DisableSSL {
		scheme = "http"
		api = fmt.Sprintf("rest_cherrypy:\n  port: %d\n  host: 127.0.0.1\n  disable_ssl: True\n", a.Port)
	}
	api += o.APIConf
	mc := o.MasterConf
	if mc == "" {
		mc = DefaultMasterConf
	}
	a.Cluster = clustertest.New(t, mc+"\n"+api, append([]string{"salt-api"}, o.Tools...)...)
	a.URL = fmt.Sprintf("%s://127.0.0.1:%d", scheme, a.Port)
	if o.Thin {
		BuildThin(t, a.Bin)
	}
	a.HTTP = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: a.CAPool}, ForceAttemptHTTP2: false}}
	for _, id := range o.Minions {
		a.StartMinion(id, a.MinionConf(id, id, ""))
	}
	if len(o.Minions) > 0 {
		a.PingUntil("*", o.Minions...)
	}
	a.StartAPI()
	t.Cleanup(a.StopAPI)
	return a
}

// StartAPI starts (or restarts) salt-api and waits until it answers.
func (a *API) StartAPI() {
	a.t.Helper()
	cmd := exec.Command(filepath.Join(a.Bin, "salt-api"), "-c", filepath.Join(a.Dir, "master"), "-l", "debug")
	a.log = &clustertest.SyncBuffer{}
	a.Logs["salt-api"] = a.log
	cmd.Stdout, cmd.Stderr = a.log, a.log
	if err := cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	a.proc = cmd
	a.WaitFor("salt-api", func() bool {
		resp, err := a.HTTP.Get(a.URL + "/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

// StopAPI interrupts salt-api and waits for it.
func (a *API) StopAPI() {
	if a.proc != nil {
		a.proc.Process.Signal(os.Interrupt)
		a.proc.Wait()
		a.proc = nil
	}
}

// Process is the running salt-api process (nil when stopped).
func (a *API) Process() *exec.Cmd { return a.proc }

// Log is salt-api's output so far.
func (a *API) Log() string { return a.log.String() }

// Login posts credentials to /login and returns the session token
// (return[0].token).
func (a *API) Login(user, password, eauth string) string {
	a.t.Helper()
	body, _ := json.Marshal(map[string]string{"username": user, "password": password, "eauth": eauth})
	resp, data := a.Do("POST", "/login", "", "application/json", body)
	if resp.StatusCode != 200 {
		a.t.Fatalf("login %s: %d %s", user, resp.StatusCode, data)
	}
	var out struct {
		Return []struct {
			Token string `json:"token"`
		} `json:"return"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Return) == 0 || out.Return[0].Token == "" {
		a.t.Fatalf("login %s: %v %s", user, err, data)
	}
	return out.Return[0].Token
}

// Do makes a request with the given X-Auth-Token (none when empty) and
// Content-Type, asking for JSON, and returns the response with its
// body read.
func (a *API) Do(method, path, token, contentType string, body []byte) (*http.Response, []byte) {
	a.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, a.URL+path, bytes.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := a.HTTP.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return resp, data
}

// JSON posts v as JSON with token and decodes the JSON answer; it fails
// the test unless the status is want.
func (a *API) JSON(path, token string, v any, want int) map[string]any {
	a.t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		a.t.Fatal(err)
	}
	resp, data := a.Do("POST", path, token, "application/json", body)
	if resp.StatusCode != want {
		a.t.Fatalf("POST %s: status %d, want %d: %s", path, resp.StatusCode, want, data)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		a.t.Fatalf("POST %s: %v: %s", path, err, data)
	}
	return out
}

// Curl runs curl against the API (trusting the certificate) and
// returns its output; args follow the base URL's path.
func (a *API) Curl(args ...string) string {
	a.t.Helper()
	full := append([]string{"-sS", "--cacert", a.CertFile}, args...)
	out, err := exec.Command("curl", full...).CombinedOutput()
	if err != nil {
		a.t.Fatalf("curl %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// SelfSigned makes a self-signed certificate for 127.0.0.1 and
// localhost in dir and returns its files and a pool trusting it.
func SelfSigned(t clustertest.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "salt-api test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "api.crt"), filepath.Join(dir, "api.key")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return certFile, keyFile, pool
}

// BuildThin builds the static thin binary into bin, where salt-api and
// salt-master (salt-ssh from an orchestration) look for it, beside
// their executables.
func BuildThin(t clustertest.T, bin string) {
	t.Helper()
	out := filepath.Join(bin, "salt-thin-linux-"+runtime.GOARCH)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "github.com/brinesalt/brine/cmd/salt-thin")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build thin: %v: %s", err, b)
	}
}

func freePort(t clustertest.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
