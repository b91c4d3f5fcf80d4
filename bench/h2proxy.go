// h2proxy: a TLS front for bench/benchserver.py that speaks HTTP/2 to its clients, as a real
// kube-apiserver does (ALPN h2), and HTTP/1.1 to the benchserver behind it. Responses are
// flushed as they arrive, so watch streams stay streams. Go standard library only.
//
//	go build -o h2proxy bench/h2proxy.go
//	h2proxy LISTEN BACKEND_URL CERT KEY CA
//	h2proxy 127.0.0.1:0 https://127.0.0.1:41441 server.crt server.key ca.crt
//
// Prints "listening HOST:PORT" once it accepts connections, then "conn N" for every client
// connection (bench/rss_breakdown.py --h2 counts krc's connections from these lines).
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sync/atomic"
)

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: h2proxy LISTEN BACKEND_URL CERT KEY CA")
		os.Exit(2)
	}
	listen, backend, certFile, keyFile, caFile := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	target, err := url.Parse(backend)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	proxy.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots},
		MaxIdleConnsPerHost: 64}
	var conns int64
	srv := &http.Server{Handler: proxy, ConnState: func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			fmt.Printf("conn %d\n", atomic.AddInt64(&conns, 1))
		}
	}}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tl := tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert},
		NextProtos: []string{"h2", "http/1.1"}})
	fmt.Printf("listening %s\n", ln.Addr())
	fmt.Fprintln(os.Stderr, srv.Serve(tl))
	os.Exit(1)
}
