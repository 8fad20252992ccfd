package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"
)

// input is one stream of go test -json and the name its errors carry.
type input struct {
	name string
	r    io.Reader
}

// openInputs opens the named files (make's FIFOs), or stdin when none is named. On an error it closes
// what it opened and names the file.
func openInputs(names []string) ([]input, func(), error) {
	if len(names) == 0 {
		return []input{{"stdin", os.Stdin}}, func() {}, nil
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	var ins []input
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("open input: %w", err)
		}
		files = append(files, f)
		ins = append(ins, input{n, f})
	}
	return ins, closeAll, nil
}

// merged reads every input at once and yields their lines whole, each as it comes: make runs the
// -race tier and the rest side by side, each into its own FIFO, and the two streams' packages are
// disjoint, so a package's events stay in their order. The reader ends when every input has ended, with
// the first input's read error (naming it), if any.
func merged(ins []input) io.Reader {
	if len(ins) == 1 {
		return ins[0].r
	}
	pr, pw := io.Pipe()
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
	)
	for _, in := range ins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(in.r)
			sc.Buffer(make([]byte, 0, 64<<10), maxLine)
			for sc.Scan() {
				mu.Lock()
				_, err := pw.Write(append(sc.Bytes(), '\n'))
				mu.Unlock()
				if err != nil {
					return // the reader stopped
				}
			}
			if err := sc.Err(); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("read %s: %w", in.name, err)
				}
				mu.Unlock()
			}
		}()
	}
	go func() {
		wg.Wait()
		pw.CloseWithError(firstErr)
	}()
	return pr
}
