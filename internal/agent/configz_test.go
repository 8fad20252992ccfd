package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kube-pressure/pressure/internal/kubeconv"
)

// configzServer serves /api/v1/nodes/node-a/proxy/configz as the API server's node proxy passes on
// a kubelet's answer: the configz wrapper, then body (repeated until total bytes are written). It
// reports on done how many bytes it wrote and the write error that stopped it, if any.
type configzResult struct {
	written int
	err     error
}

func configzServer(t *testing.T, head, chunk string, total int) (kubernetes.Interface, <-chan configzResult) {
	t.Helper()
	done := make(chan configzResult, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/nodes/node-a/proxy/configz" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		n, err := fmt.Fprint(w, head)
		for err == nil && n < total {
			var m int
			m, err = w.Write([]byte(chunk))
			n += m
		}
		if err == nil {
			_, err = fmt.Fprint(w, `"}}`)
		}
		done <- configzResult{written: n, err: err}
	}))
	t.Cleanup(srv.Close)
	c, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, done
}

const configzHead = `{"kubeletconfig":{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1",` +
	`"evictionHard":{"memory.available":"300Mi"},"padding":"`

func TestConfigzAnswerIsParsedFromTheStream(t *testing.T) {
	c, _ := configzServer(t, configzHead, "x", 0)
	cfg, err := fetchConfigz(context.Background(), c, "node-a")
	if err != nil {
		t.Fatalf("fetchConfigz: %v", err)
	}
	if got := thresholdStrings(cfg); len(got) != 1 || !strings.Contains(got[0], "memory.available<300Mi") {
		t.Errorf("thresholds %v, want memory.available<300Mi", got)
	}
}

// TestConfigzAnswerOverOneMiBIsRefusedWithoutReadingItAll: a 64 MiB answer is refused after 1 MiB,
// and the agent stops reading (the server's writes fail once its socket buffers are full), instead
// of buffering the whole answer before looking at its size.
func TestConfigzAnswerOverOneMiBIsRefusedWithoutReadingItAll(t *testing.T) {
	const total = 64 << 20
	c, done := configzServer(t, configzHead, strings.Repeat("x", 32<<10), total)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := fetchConfigz(ctx, c, "node-a")
	if !errors.Is(err, kubeconv.ErrKubeletConfigTooLarge) {
		t.Errorf("fetchConfigz error %v, want ErrKubeletConfigTooLarge", err)
	}
	select {
	case r := <-done:
		if r.err == nil || r.written >= 16<<20 {
			t.Errorf("the server wrote %d of %d bytes (write error %v): the agent read on past the 1 MiB limit",
				r.written, total, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("the server was still writing 10s after fetchConfigz returned: the connection was not closed")
	}
}
