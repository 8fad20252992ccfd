package actuate

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// ReasonKubeletConfigNotFound (Warning, node): the agent's kubelet configuration file is missing, empty
// or a directory; the agent stops, and the message says which value to set.
const ReasonKubeletConfigNotFound = "KubeletConfigNotFound"

// WriteNodeEvent writes one Warning Event on node at now, synchronously: for a shell that is about to
// exit, where the recorder's asynchronous sink could drop it. The Event is shaped as the recorder writes
// the agent's (source pressure-agent on node, the node name as UID, namespace default), so the chart's
// admission policy admits it.
func WriteNodeEvent(ctx context.Context, c kubernetes.Interface, node, reason, message string, now time.Time) error {
	t := metav1.NewTime(now)
	ev := &v1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", node, now.UnixNano()), Namespace: metav1.NamespaceDefault},
		InvolvedObject: v1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: node, UID: types.UID(node)},
		Reason:         reason, Message: message, Type: v1.EventTypeWarning, Count: 1,
		Source:         v1.EventSource{Component: Component, Host: node},
		FirstTimestamp: t, LastTimestamp: t,
	}
	if _, err := c.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("write %s event on node %s: %w", reason, node, err)
	}
	return nil
}
