package evictaudit

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// The shape of kube-apiserver's audit log lines for a dry-run delete (level Request: the dry run is in
// its DeleteOptions), a dry-run create (in its URL), a real patch and a request still in flight
// (v1.36).
const capturedWrites = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","auditID":"d1","requestURI":"/api/v1/namespaces/dry/pods/old","verb":"delete","requestReceivedTimestamp":"2026-12-05T04:58:08.187967Z","user":{"username":"admin"},"userAgent":"janitor-dry/v0","objectRef":{"resource":"pods","namespace":"dry","name":"old","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestObject":{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"preconditions":{"uid":"u1","resourceVersion":"7"},"dryRun":["All"]}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","auditID":"c0","requestURI":"/api/v1/namespaces/dry/configmaps?dryRun=All\u0026fieldManager=m","verb":"create","user":{"username":"admin"},"userAgent":"helm","objectRef":{"resource":"configmaps","namespace":"dry","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","auditID":"p1","requestURI":"/api/v1/nodes/n1/status?fieldManager=x","verb":"patch","user":{"username":"system:node:n1"},"userAgent":"kubelet/v1.36.3","objectRef":{"resource":"nodes","name":"n1","apiVersion":"v1","subresource":"status"},"responseStatus":{"metadata":{},"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"RequestReceived","auditID":"c1","requestURI":"/api/v1/namespaces/dry/configmaps","verb":"create","objectRef":{"resource":"configmaps","namespace":"dry"}}
`

func TestParseWritesMarksDryRunsAndSkipsUnansweredRequests(t *testing.T) {
	got, err := ParseWrites(strings.NewReader(capturedWrites))
	if err != nil {
		t.Fatal(err)
	}
	want := []Write{
		{Verb: "delete", Resource: "pods", Namespace: "dry", Name: "old", User: "admin", UserAgent: "janitor-dry/v0", DryRun: true, Code: 200,
			Received: time.Date(2026, 12, 5, 4, 58, 8, 187967000, time.UTC)},
		{Verb: "create", Resource: "configmaps", Namespace: "dry", User: "admin", UserAgent: "helm", DryRun: true, Code: 201},
		{Verb: "patch", Resource: "nodes", Subresource: "status", Name: "n1", User: "system:node:n1", UserAgent: "kubelet/v1.36.3", Code: 200},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseWrites =\n%+v\nwant\n%+v", got, want)
	}
	if by := By(got, "janitor-dry"); len(by) != 1 || by[0].String() != "delete pods dry/old (200) by janitor-dry/v0 dry-run" {
		t.Errorf("By(janitor-dry) = %v", by)
	}
	if _, err := ParseWrites(strings.NewReader("{\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("ParseWrites of a broken line: %v, want an error naming line 1", err)
	}
}
