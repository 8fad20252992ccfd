package main

import (
	"fmt"
	"io"
	"net"
	"os"
)

// proxy forwards every TCP connection accepted on listen to target (as `/init proxy <listen> <target>`):
// in the kubelet node it puts the API server of the host behind the kubernetes Service's address, so
// in-cluster clients (the chart's agent) reach it without kube-proxy.
func proxy(listen, target string) {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(os.Stderr, "guestinit proxy: %v\n", err)
		os.Exit(1)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Fprintf(os.Stderr, "guestinit proxy: %v\n", err)
			continue
		}
		go forward(c, target)
	}
}

func forward(c net.Conn, target string) {
	defer c.Close()
	u, err := net.Dial("tcp", target)
	if err != nil {
		fmt.Fprintf(os.Stderr, "guestinit proxy: %v\n", err)
		return
	}
	defer u.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(u, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, u); done <- struct{}{} }()
	<-done
}
