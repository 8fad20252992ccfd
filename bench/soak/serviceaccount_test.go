package soak

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestWaitServiceAccountReturnsOnceTheControllerMadeIt(t *testing.T) {
	client := fake.NewClientset()
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = client.CoreV1().ServiceAccounts("soak-1-2").Create(context.Background(),
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "soak-1-2"}}, metav1.CreateOptions{})
	}()
	if err := waitServiceAccount(context.Background(), client, "soak-1-2", 10*time.Millisecond, time.Minute); err != nil {
		t.Fatal(err)
	}
}

func TestWaitServiceAccountNamesTheNamespaceWhenItNeverComes(t *testing.T) {
	err := waitServiceAccount(context.Background(), fake.NewClientset(), "soak-1-3", 10*time.Millisecond, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "soak-1-3/default") {
		t.Errorf("err %v, want one naming serviceaccount soak-1-3/default", err)
	}
}
