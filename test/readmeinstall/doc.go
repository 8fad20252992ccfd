// Package readmeinstall follows the README's install and removal steps word for word on the level-2
// test node (package cluster): hack/readme-install.sh runs the shell block between the README's
// install markers, builds the images with make images, imports them with ctr into the node's
// containerd, installs the chart with helm using only the values the README sets, waits for the
// rollouts and runs the plugin; the test then wants the agent Ready, running the README's image and
// version, in dry-run. hack/readme-install.sh --remove runs the README's removal block, after which
// the test wants the release's objects and namespace gone.
//
// What the README leaves to its reader comes from the environment, as for a reader: KUBECONFIG (the
// test control plane's admin kubeconfig), KUBELET_CONFIG (the test kubelet's configuration file, not
// kubeadm's path), CONTAINERD_ADDRESS (the test node's containerd socket, read by ctr) and PATH (the
// pinned helm and kubectl). The steps write bin/ of the checkout (make images, make build), as they
// would in a reader's clone. The package has only tests.
package readmeinstall
