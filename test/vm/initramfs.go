package vm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"
)

// Program is one binary run in the guest, in order, as root, from /.
type Program struct {
	Name string   // unique; the path of a copied binary in the guest is /tests/<Name>
	Host string   // the static binary on the host, copied into the guest
	Path string   // or, when Host is "", a program already in the guest (e.g. /bin/cat, busybox)
	Args []string // arguments after the program name
	Env  []string // added to the guest's base environment
	// Background starts the program and goes on (a service, e.g. containerd); the guest then stays up
	// after its last program until the host stops it (Guest.Start).
	Background bool
	// WaitFor is a guest path that must exist before the program starts (an earlier service's socket).
	WaitFor string
}

// File is a file put into the guest's initramfs: the host file Host, or Data when Host is "".
type File struct {
	Guest string // absolute path in the guest
	Host  string
	Data  []byte
	Mode  uint32 // permission bits; 0 means 0o755
}

// guestProgram is what the guest init reads from /pressure-vm.json (guestinit.program).
type guestProgram struct {
	Name string
	Path string
	Args []string
	Env  []string
	Dir  string

	Background bool   `json:",omitempty"`
	WaitFor    string `json:",omitempty"`
}

// BaseEnv is every guest program's environment before Program.Env.
var BaseEnv = []string{
	"PATH=/bin", "HOME=/tmp", "TMPDIR=/tmp",
	"PRESSURE_CGROUP2_ROOT=/sys/fs/cgroup",
}

// busyboxApplets are linked to /bin/busybox in the guest (tests exec sleep; sh and the rest help debugging).
var busyboxApplets = []string{"sh", "sleep", "cat", "ls", "mount", "umount", "ps", "echo", "true", "false", "dd",
	"insmod", "ip", "grep", "mkdir", "date"}

// writeInitramfs writes the guest's initramfs to file: /init (the guest init), /bin/busybox and its
// applets, /dev/console (the kernel opens it for init's stdio before devtmpfs is mounted), the programs
// under /tests, the extra files (their directories created) and the manifest.
func writeInitramfs(file, initBin, busybox string, progs []Program, files []File) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	c := NewCpio(bw)
	for _, d := range []string{"bin", "dev", "proc", "sys", "tmp", "tests"} {
		c.Dir(d, 0o755)
	}
	c.CharDev("dev/console", 0o600, 5, 1)
	if err := addHostFile(c, "init", initBin); err != nil {
		f.Close()
		return err
	}
	if err := addHostFile(c, "bin/busybox", busybox); err != nil {
		f.Close()
		return err
	}
	for _, a := range busyboxApplets {
		c.Symlink("bin/"+a, "busybox")
	}
	if err := addPrograms(c, progs); err != nil {
		f.Close()
		return err
	}
	if err := addFiles(c, files); err != nil {
		f.Close()
		return err
	}
	err = c.Close()
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func addPrograms(c *Cpio, progs []Program) error {
	manifest := make([]guestProgram, 0, len(progs))
	for _, p := range progs {
		if p.Name == "" || strings.ContainsAny(p.Name, "/ \n") {
			return fmt.Errorf("guest program name %q: want a non-empty name without slashes or blanks", p.Name)
		}
		guest := p.Path
		if p.Host != "" {
			guest = path.Join("/tests", p.Name)
			if err := addHostFile(c, guest[1:], p.Host); err != nil {
				return err
			}
		}
		env := append(append([]string{}, BaseEnv...), p.Env...)
		manifest = append(manifest, guestProgram{Name: p.Name, Path: guest, Args: p.Args, Env: env, Dir: "/tmp",
			Background: p.Background, WaitFor: p.WaitFor})
	}
	b, err := json.Marshal(manifest)
	if err != nil {
		return fmt.Errorf("guest manifest: %w", err)
	}
	c.File("pressure-vm.json", 0o644, b)
	return nil
}

func addHostFile(c *Cpio, name, host string) error {
	b, err := os.ReadFile(host)
	if err != nil {
		return fmt.Errorf("initramfs %s: %w", name, err)
	}
	c.File(name, 0o755, b)
	return nil
}

// addFiles adds the extra files and the directories above them (each once, parents first).
func addFiles(c *Cpio, files []File) error {
	made := map[string]bool{"bin": true, "dev": true, "proc": true, "sys": true, "tmp": true, "tests": true}
	for _, f := range files {
		name := strings.TrimPrefix(path.Clean(f.Guest), "/")
		if name == "" || name == "." || !path.IsAbs(f.Guest) {
			return fmt.Errorf("guest file %q: want an absolute path", f.Guest)
		}
		var parents []string
		for d := path.Dir(name); d != "." && !made[d]; d = path.Dir(d) {
			parents = append(parents, d)
		}
		for i := len(parents) - 1; i >= 0; i-- {
			c.Dir(parents[i], 0o755)
			made[parents[i]] = true
		}
		data := f.Data
		if f.Host != "" {
			b, err := os.ReadFile(f.Host)
			if err != nil {
				return fmt.Errorf("initramfs %s: %w", name, err)
			}
			data = b
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o755
		}
		c.File(name, mode, data)
	}
	return nil
}
