package nodemailerfake

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// selfSigned makes the fake's certificate for 127.0.0.1, ::1 and
// localhost, and the pool a client needs to trust it.
func selfSigned() (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "herald fake smtp"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:    []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// countingListener counts the connections it accepts and wraps each in a
// watchedConn.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.accepted.Add(1)
	return newWatchedConn(c), nil
}

// watchedConn reads its connection ahead into a buffer, so that the fake
// learns the client has gone (EOF) even while the SMTP server, stalled in a
// command, is not reading.
type watchedConn struct {
	net.Conn
	mu   sync.Mutex
	cond *sync.Cond
	buf  bytes.Buffer
	err  error
	gone chan struct{}
}

func newWatchedConn(c net.Conn) *watchedConn {
	w := &watchedConn{Conn: c, gone: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	go w.pump()
	return w
}

func (w *watchedConn) pump() {
	b := make([]byte, 32<<10)
	for {
		n, err := w.Conn.Read(b)
		w.mu.Lock()
		w.buf.Write(b[:n])
		if err != nil {
			w.err = err
			close(w.gone)
		}
		w.cond.Broadcast()
		w.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Read serves what the pump has read. The server sets no read deadline
// (ReadTimeout is 0); Close ends a pending Read through the pump.
func (w *watchedConn) Read(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.buf.Len() == 0 && w.err == nil {
		w.cond.Wait()
	}
	if w.buf.Len() > 0 {
		return w.buf.Read(p)
	}
	return 0, w.err
}

// connOf finds the watchedConn under a server connection (TLS or not).
func connOf(c net.Conn) *watchedConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	w, _ := c.(*watchedConn)
	return w
}
