#!/usr/bin/awk -f
# krew-drop-unbuilt.awk filters a filled-in krew manifest (deploy/krew/pressure.yaml after make dist's
# sed) on stdin: a platform entry ("    - selector:" up to the next one or the end of the list) whose
# sha256 is still a @SHA256_<OS>_<ARCH>@ placeholder names an archive this run did not build, and is
# left out. With the Makefile's full CLI_PLATFORMS nothing is left out; with a shorter one (make release
# CLI_PLATFORMS=linux/amd64) the manifest lists exactly the archives built.
function flush() {
	if (buf != "" && buf !~ /@SHA256_[A-Z0-9]+_[A-Z0-9]+@/) printf "%s", buf
	buf = ""
}
inblock && /^[^ ]/ { flush(); inblock = 0 }
/^    - selector:/ { flush(); inblock = 1 }
inblock { buf = buf $0 "\n"; next }
{ print }
END { flush() }
