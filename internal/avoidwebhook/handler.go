package avoidwebhook

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Path is where Handler answers admission reviews.
const Path = "/avoid-evicted-node"

// maxReview bounds a request body (the API server's limit on an object is 3 MiB, plus the review).
const maxReview = 8 << 20

// Handler answers AdmissionReview v1 requests for pod creations on Path with Patch over params()'s
// current list, and /healthz with ok. It always allows: a request it cannot read is answered with an
// HTTP error, which failurePolicy Ignore turns into an unchanged pod.
func Handler(params func() []Param, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+Path, func(w http.ResponseWriter, r *http.Request) {
		review, err := readReview(r)
		if err != nil {
			log.Warn("avoidance webhook: bad request", "err", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp := Review(review.Request, params)
		if len(resp.Patch) > 0 {
			log.Info("avoidance webhook: pod avoids nodes", "namespace", review.Request.Namespace,
				"uid", review.Request.UID, "patch", string(resp.Patch))
		}
		out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return mux
}

func readReview(r *http.Request) (*admissionv1.AdmissionReview, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReview))
	if err != nil {
		return nil, fmt.Errorf("read admission review: %w", err)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, fmt.Errorf("decode admission review: %w", err)
	}
	if review.Request == nil {
		return nil, fmt.Errorf("admission review %s has no request", review.APIVersion)
	}
	return &review, nil
}

// Review answers one admission request: allowed, with the avoidance's JSON patch for a pod creation it
// applies to. Anything else (another resource or operation, a subresource, an object that is not a
// pod) is allowed unchanged.
func Review(req *admissionv1.AdmissionRequest, params func() []Param) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if req.Operation != admissionv1.Create || req.SubResource != "" ||
		req.Resource != (metav1.GroupVersionResource{Version: "v1", Resource: "pods"}) {
		return resp
	}
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		resp.Warnings = []string{fmt.Sprintf("pressure avoidance webhook: pod not decoded, unchanged: %v", err)}
		return resp
	}
	ops := Patch(&pod, params())
	if len(ops) == 0 {
		return resp
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		resp.Warnings = []string{fmt.Sprintf("pressure avoidance webhook: patch not encoded, pod unchanged: %v", err)}
		return resp
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = patch, &pt
	return resp
}
